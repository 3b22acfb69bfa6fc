"""The well-known card: one document every client generation can read.

v1.0 clients read ``supportedInterfaces`` and the oneof-wrapped security
schemes; v0.1 clients read ``url`` and ``authentication``; v0.2/v0.3 clients read ``url``, ``preferredTransport``,
``protocolVersion``, ``additionalInterfaces`` and the ``type``-tagged schemes.
The two renderings share most field names (name, skills, capabilities ...), so
the document is the v0.3 rendering deep-merged with the v1.0 one
(DIALECTS.md §e, §i.24).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...core.model import AgentCard

__all__ = ["card_document", "merge"]


def merge(a: Any, b: Any) -> Any:
    """Deep-merge JSON objects: keys of both; for a key in both, objects merge
    and other values come from ``b``. Lists of objects merge item by item."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(a[k], v) if k in a else v
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(
        isinstance(x, dict) for x in a + b
    ):
        return [merge(x, y) for x, y in zip(a, b, strict=True)]
    return b


def card_document(card: AgentCard, *, jsonrpc_url: str) -> bytes:
    from ...core.dialects.v0_1 import encode_card_v01
    from ...core.dialects.v0_3 import encode_card_v03
    from ...core.dialects.v1_0 import encode_card_v1

    v03 = encode_card_v03(card, jsonrpc_url=jsonrpc_url)
    v1 = encode_card_v1(card)
    # v0.1 readers add `authentication` and `capabilities.stateTransitionHistory`.
    doc = merge(merge(v03, v1), encode_card_v01(card, url=jsonrpc_url))
    # v0.3 readers take "security" as their requirement list; v1.0 readers
    # take "securityRequirements"; both stay.
    return msgspec.json.encode(doc)
