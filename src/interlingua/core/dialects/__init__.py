"""Dialect codecs, their registry, and detection (``detect.py``).

Every codec is here, each under its name; what a dialect does differently
outside its wire is a trait its codec declares (``Codec`` in ``base.py``), so
code elsewhere asks the codec and never compares a dialect's name.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import A2AError
from .base import TRAITS, Codec, StreamItem

__all__ = ["SPOKEN", "TRAITS", "V1_CODECS", "Codec", "StreamItem", "all_codecs", "answering", "get_codec", "versions"]

#: the codec of v1.0's methods by the A2A-Version asked for, where it is not "1.0"'s
#: (A2A 1.1, draft: ``v1_1.py``)
V1_CODECS: dict[str | None, str] = {"1.1": "1.1"}

#: the published A2A dialects a client speaks, newest first (the variants and the
#: ProtoJSON rendering aside)
SPOKEN = ("1.0", "0.3", "0.1")

_codecs: dict[str, Codec] = {}


def _load() -> None:
    # Imported on first use so that importing one codec does not import all.
    from .sam import SAMCodec
    from .tutorial import TutorialCodec
    from .v0_1 import V01Codec
    from .v0_3 import V03Codec
    from .v0_3_protojson import V03ProtoJSONCodec
    from .v1_0 import V1Codec
    from .v1_1 import V11Codec

    for codec in (V11Codec(), V1Codec(), V03Codec(), V01Codec(), SAMCodec(), TutorialCodec(),
                  V03ProtoJSONCodec()):
        _codecs[codec.name] = codec


def all_codecs() -> dict[str, Codec]:
    """Every codec by name: "1.1" (draft), "1.0", "0.3", "0.1", "sam", "tutorial" (JSON-RPC) and
    "0.3-pj" (v0.3's objects as ProtoJSON, for HTTP+JSON and gRPC)."""
    if not _codecs:
        _load()
    return _codecs


def get_codec(name: str) -> Codec:
    try:
        return _codecs[name]
    except KeyError:
        pass
    codecs = all_codecs()
    try:
        return codecs[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(codecs)}") from None


def versions() -> tuple[str, ...]:
    """Every ``A2A-Version`` (Major.Minor) some codec takes as its own, newest first."""
    found = {v for codec in all_codecs().values() for v in codec.versions}
    return tuple(sorted(found, key=lambda v: tuple(int(n) for n in v.split(".")),
                        reverse=True))


def answering(method: str, name: str, fallback: str) -> Codec:
    """The codec that answers ``method`` for a task of dialect ``name`` (DIALECTS.md
    §h.3): the dialect's own when it has the method; for a variant's task polled
    with its family's method (a SAM-made task read with ``tasks/get``), one that
    reads as the family and answers as the variant; else ``fallback``'s (a
    v1.0-made task polled with a v0.x method)."""
    # every request comes here: a loaded codec is found with no call of ours
    codec = _codecs.get(name) or get_codec(name)
    if method not in codec.methods:
        if codec.family != codec.name:
            codec = _answered_in(codec.name, codec.family)
        else:
            codec = get_codec(fallback)
    return codec


@functools.cache
def _answered_in(writer_name: str, reader_name: str) -> Codec:
    """A codec that reads calls as ``reader_name`` and writes answers as ``writer_name``."""
    reader, writer = get_codec(reader_name), get_codec(writer_name)
    if reader is writer:
        return reader

    class AnsweredIn(Codec):
        name = writer.name
        methods = reader.methods
        streaming_methods = reader.streaming_methods

        def decode_call(self, method: str, params: bytes | None) -> Any:
            return reader.decode_call(method, params)

        def for_answer(self, call: Any) -> Any:
            return writer.for_answer(call)

        def encode_result(self, call: Any, result: Any) -> bytes:
            return writer.encode_result(call, result)

        def encode_error(self, error: A2AError) -> bytes:
            return writer.encode_error(error)

        def encode_stream_item(self, item: Any) -> bytes:
            return writer.encode_stream_item(item)

        def encode_push_task(self, task: Any) -> bytes:
            return writer.encode_push_task(task)

    for trait in TRAITS:  # the writer's dialect, in everything but reading
        setattr(AnsweredIn, trait, getattr(writer, trait))
    return AnsweredIn()
