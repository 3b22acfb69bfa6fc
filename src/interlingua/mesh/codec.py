"""The dialect spoken on the mesh: SAM's (``tasks/send``, ``tasks/send-streaming``,
``tasks/cancel``, snake_case objects), plus ``tasks/get`` and ``tasks/resubscribe``
in the same spelling, which SAM has no counterpart for and our clients and
gateway use. Tasks made over the mesh are stored as SAM tasks."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from ..core.calls import Call, CancelTask, GetTask, Result, SubscribeToTask
from ..core.dialects._family_wire import Variant, Wire, build_wire
from ..core.dialects.sam import VARIANT as SAM_VARIANT
from ..core.dialects.sam import SAMCodec

__all__ = ["MESH_CODEC", "MESH_PROTOCOL_VERSION", "MQTT_BINDING", "MeshCodec"]

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

    def result_in(self, call: Call, data: bytes) -> Result:
        if isinstance(call, (GetTask, SubscribeToTask)):
            # a Task answers them as it answers a cancel
            return super().result_in(CancelTask(id=call.id), data)
        return super().result_in(call, data)


MESH_CODEC = MeshCodec()
