"""A refusal naming a gRPC request's fields by their proto names.

The codecs read a request as its ProtoJSON (``pbjson.to_doc``) and name a refused
member by its path in JSON-RPC params (``params.message.messageId``); a gRPC caller
set proto fields (``message.message_id``). Once a request is refused, each path is
walked down the request's descriptor, from JSON name to field name.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from ...core.dialects.as_sent import Path, renamed
from ...core.errors import InvalidParams

__all__ = ["proto_named"]

# messages whose members are the caller's own (metadata), not fields
_OPAQUE = frozenset({"google.protobuf.Struct", "google.protobuf.Value",
                     "google.protobuf.ListValue"})


@functools.cache
def _fields(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """A message's fields by JSON name, and by proto name."""
    fields = {f.json_name: f for f in descriptor.fields}
    fields.update((f.name, f) for f in descriptor.fields)
    return fields


def _proto_path(descriptor: Descriptor, path: Path, top: Mapping[str, str]) -> Path:
    out: Path = []
    at: Descriptor | None = descriptor
    for seg in path:
        if seg.startswith("["):
            out.append(seg)
            continue
        if not out and seg in top:  # a member the binding made of another field (a name)
            out.append(top[seg])
            at = None
            continue
        field = _fields(at).get(seg) if at is not None else None
        if field is None:
            out.append(seg)
            at = None
            continue
        out.append(field.name)
        message = field.message_type
        at = message if message is not None and message.full_name not in _OPAQUE \
            and not message.GetOptions().map_entry else None
    return out


def proto_named(exc: InvalidParams, descriptor: Descriptor,
                top: Mapping[str, str] | None = None) -> InvalidParams:
    """``exc`` naming each member of a ``descriptor`` request by its proto field; ``top``:
    the params' members that are another field of the request (v0.3's ``id``, read
    from its ``name``)."""
    return renamed(exc, lambda path: _proto_path(descriptor, path, top or {}),
                   whole="the request")
