"""The dialect spoken on the mesh: SAM's (``tasks/send``, ``tasks/send-streaming``,
``tasks/cancel``, snake_case objects), plus ``tasks/get`` and ``tasks/resubscribe``
in the same spelling, which SAM has no counterpart for and our clients and
gateway use. Tasks made over the mesh are stored as SAM tasks."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import msgspec

from ..core.calls import Call, CancelTask, GetTask, Result, SubscribeToTask
from ..core.dialects._family_wire import Variant, Wire, build_wire
from ..core.dialects.sam import VARIANT as SAM_VARIANT
from ..core.dialects.sam import SAMCodec
from ..core.dialects.v1_0 import V1Codec, decode_status
from ..core.errors import A2AError

__all__ = ["MESH_CODEC", "MESH_PROTOCOL_VERSION", "MQTT_BINDING", "MeshCodec", "id_of"]

#: the binding name of a mesh interface on a card (ours: A2A defines no MQTT binding)
MQTT_BINDING = "MQTT"
#: its protocol version: the payloads are SAM's JSON-RPC, of v0.3's family
MESH_PROTOCOL_VERSION = "0.3"

VARIANT = dataclasses.replace(
    SAM_VARIANT,
    methods={**SAM_VARIANT.methods, "get": "tasks/get", "resubscribe": "tasks/resubscribe"},
)


class MeshCodec(SAMCodec):
    """SAM's codec with ``tasks/get`` and ``tasks/resubscribe``."""

    variant: ClassVar[Variant] = VARIANT
    wire: ClassVar[Wire] = build_wire(VARIANT)
    lax: ClassVar[Wire] = build_wire(VARIANT, lax=True)

    def encode_error(self, error: A2AError) -> bytes:
        """SAM's code and message; for an error SAM's codes do not tell apart
        (authentication, authorization, the rate: -32600 or -32603), v1.0's ErrorInfo
        in ``data`` too, which SAM's requesters pass over and our clients read (over
        HTTP the status says which)."""
        out = super().encode_error(error)
        doc = msgspec.json.decode(out)
        if doc.get("data") is not None or type(super().decode_error(doc)) is type(error):
            return out  # (an error path: the round trip costs nothing a request pays)
        doc["data"] = msgspec.json.decode(_V1.encode_error(error)).get("data")
        return msgspec.json.encode(doc)

    def decode_error(self, error: Any) -> A2AError:
        data = error.get("data") if isinstance(error, dict) else None
        if isinstance(data, list):  # v1.0's ErrorInfo: its reason names the error
            named = decode_status({"error": {"message": error.get("message"),
                                             "details": data}})
            if named is not None:
                return named
        return super().decode_error(error)

    def result_in(self, call: Call, data: bytes) -> Result:
        if isinstance(call, (GetTask, SubscribeToTask)):
            # a Task answers them as it answers a cancel
            return super().result_in(CancelTask(id=call.id), data)
        return super().result_in(call, data)


class _Id(msgspec.Struct):
    id: Any = None


#: the ``id`` of a JSON-RPC document, the rest parsed past, not built (a request not
#: otherwise read, an answer too large to take); DecodeError when it is no JSON object
id_of = msgspec.json.Decoder(_Id).decode

_V1 = V1Codec()
MESH_CODEC = MeshCodec()
