"""Agent cards, served by the agent: one family of modules.

``document.py``   the card's JSON in each dialect (v1.0, v0.3, v0.1), one document
``signer.py``     signing it (``CardSigning``, ``CardSigner``) with the key ring
``serving.py``    serving it (``A2AServer``): the interfaces it lists, ETag, variants

A card's signatures themselves (made and checked, by the server and the client
alike) are ``core/card_signing.py``; the keys, shared with push notifications,
are ``server/keyring.py``.
"""

from __future__ import annotations

from .document import card_document
from .serving import A2AServer, CardVariant
from .signer import CardSigner, CardSigning

__all__ = ["A2AServer", "CardSigner", "CardSigning", "CardVariant", "card_document"]
