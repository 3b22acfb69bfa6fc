"""Dialect codecs, their registry, and detection (``detect.py``)."""

from __future__ import annotations

from .base import Codec, StreamItem

__all__ = ["Codec", "StreamItem", "all_codecs", "get_codec"]

_codecs: dict[str, Codec] = {}


def _load() -> None:
    # Imported on first use so that importing one codec does not import all.
    from .sam import SAMCodec
    from .tutorial import TutorialCodec
    from .v0_1 import V01Codec
    from .v0_3 import V03Codec
    from .v1_0 import V1Codec

    for codec in (V1Codec(), V03Codec(), V01Codec(), SAMCodec(), TutorialCodec()):
        _codecs[codec.name] = codec


def all_codecs() -> dict[str, Codec]:
    """Every dialect by name: "1.0", "0.3", "0.1", "sam", "tutorial"."""
    if not _codecs:
        _load()
    return _codecs


def get_codec(name: str) -> Codec:
    codecs = all_codecs()
    try:
        return codecs[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(codecs)}") from None
