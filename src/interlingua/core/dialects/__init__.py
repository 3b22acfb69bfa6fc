"""Dialect codecs and the registry that picks one by JSON-RPC method name."""

from __future__ import annotations

from .base import Codec, StreamItem

__all__ = ["Codec", "StreamItem", "all_codecs", "codec_for_method", "get_codec"]

_codecs: dict[str, Codec] = {}
_by_method: dict[str, Codec] = {}


def _load() -> None:
    # Imported on first use so that importing one codec does not import all.
    from .v0_3 import V03Codec
    from .v1_0 import V1Codec

    for codec in (V1Codec(), V03Codec()):
        _codecs[codec.name] = codec
        for method in codec.methods:
            _by_method[method] = codec


def all_codecs() -> dict[str, Codec]:
    if not _codecs:
        _load()
    return _codecs


def codec_for_method(method: str) -> Codec | None:
    """The dialect that owns a JSON-RPC method name, or None."""
    if not _codecs:
        _load()
    return _by_method.get(method)


def get_codec(name: str) -> Codec:
    codecs = all_codecs()
    try:
        return codecs[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(codecs)}") from None
