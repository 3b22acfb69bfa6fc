"""The well-known card: one document every client generation can read.

The document is the v0.3 rendering deep-merged with the v1.0 and v0.1 ones
(``encode_card_hybrid``); the v0.3 dialect's card answers are the same document.
It is made from the card alone, so it is the document the card's signature covers
wherever it is served (the extended card's path, a mesh address ...).
"""

from __future__ import annotations

import msgspec

from ...core.dialects.v0_3 import encode_card_hybrid
from ...core.model import AgentCard

__all__ = ["card_document"]


def card_document(card: AgentCard) -> bytes:
    return msgspec.json.encode(encode_card_hybrid(card))
