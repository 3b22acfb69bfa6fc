"""A call in a dialect's wire form, the same way for every binding."""

from __future__ import annotations

from ..core.calls import Call
from ..core.dialects import Codec
from ..core.errors import UnsupportedOperation
from .errors import DialectMismatch
from .generations import GENERATIONS_VERSION, GenerationsNotSupported, needs_generations

__all__ = ["encode_call"]


def encode_call(codec: Codec, call: Call, dialect: str, version: str = "") -> tuple[str, bytes]:
    """``codec.encode_call``; a call the dialect lacks is a ``DialectMismatch``
    (every binding refuses it the same way, before anything is sent). ``version``
    is the ``A2A-Version`` the request carries: task generations go only into a 1.1
    request (whose codec writes them), and asking for them in any other is refused
    here, never left out."""
    if needs_generations(call) and (version != GENERATIONS_VERSION
                                    or GENERATIONS_VERSION not in codec.versions):
        raise GenerationsNotSupported(
            f"task generations need A2A {GENERATIONS_VERSION}, and this request is "
            f"in A2A {version or dialect}")
    try:
        return codec.encode_call(call)
    except UnsupportedOperation as exc:
        raise DialectMismatch(
            f"{type(call).__name__} has no counterpart in A2A {dialect}: {exc.message}"
        ) from None
