"""A call in a dialect's wire form, the same way for every binding."""

from __future__ import annotations

from ..core.calls import Call
from ..core.dialects import Codec
from ..core.errors import UnsupportedOperation
from .errors import DialectMismatch

__all__ = ["encode_call"]


def encode_call(codec: Codec, call: Call, dialect: str) -> tuple[str, bytes]:
    """``codec.encode_call``; a call the dialect lacks is a ``DialectMismatch``
    (every binding refuses it the same way, before anything is sent)."""
    try:
        return codec.encode_call(call)
    except UnsupportedOperation as exc:
        raise DialectMismatch(
            f"{type(call).__name__} has no counterpart in A2A {dialect}: {exc.message}"
        ) from None
