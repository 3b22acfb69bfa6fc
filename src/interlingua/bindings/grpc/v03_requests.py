"""The v0.3 service's requests as the v0.3-ProtoJSON codec's calls.

What the body of a v0.3 HTTP+JSON route carries is the request message itself
(send, push config set), read by ``V03ProtoJSONCodec`` as ProtoJSON; what the
route's path carries, a gRPC request names by resource (``tasks/{id}``,
``tasks/{id}/pushNotificationConfigs/{cid}``, DIALECTS.md §g.2). This reads
those names, the gRPC counterpart of the REST routes' paths, and leaves every
respelling and check to the codec.
"""

from __future__ import annotations

from typing import Any

import msgspec
from google.protobuf.message import Message

from ...core.dialects.v0_3_protojson import name_ids
from ...core.errors import InvalidParams
from ...grpc_wire.pbjson import to_doc

__all__ = ["NAMED_BY", "request_in"]

_encode = msgspec.json.encode


_ONE = {"id": "name"}
_TWO = {"id": "name", "pushNotificationConfigId": "name"}
#: each RPC's params made of a resource name (``request_in``), by the field naming it
NAMED_BY: dict[str, dict[str, str]] = {
    "GetTask": _ONE, "CancelTask": _ONE, "TaskSubscription": _ONE,
    "CreateTaskPushNotificationConfig": {"taskId": "parent"},
    "GetTaskPushNotificationConfig": _TWO, "DeleteTaskPushNotificationConfig": _TWO,
    "ListTaskPushNotificationConfig": {"id": "parent"},
}


def _name_ids(name: Any, field: str, parts: int) -> list[str]:
    """``tasks/{id}`` (parts=1) or ``tasks/{id}/pushNotificationConfigs/{cid}`` (parts=2);
    an id may hold "/" (``name_ids``)."""
    task, config = name_ids(name) if isinstance(name, str) and name.startswith("tasks/") \
        else (None, None)
    if task is None or (config is None) != (parts == 1):
        shape = "tasks/{id}" if parts == 1 else "tasks/{id}/pushNotificationConfigs/{configId}"
        raise InvalidParams(f"Invalid params: {field} must be {shape}, got {name!r}")
    return [task] if config is None else [task, config]


def _send(request: Any) -> bytes:
    # a part with no member reads as {} in ProtoJSON: named here, in the proto's words
    for part in request.request.content:
        if part.WhichOneof("part") is None:
            raise InvalidParams("Invalid params: a part of the message has none of text, "
                                "file, data")
    return _encode(to_doc(request))


def request_in(rpc: str, request: Message) -> tuple[str, bytes]:
    """A v0.3 gRPC request -> (the codec's method, its params as JSON)."""
    if rpc == "SendMessage":
        return "message/send", _send(request)
    if rpc == "SendStreamingMessage":
        return "message/stream", _send(request)
    req: Any = request
    if rpc == "GetTask":
        (task_id,) = _name_ids(req.name, "name", 1)
        params: dict[str, Any] = {"id": task_id}
        # proto3 cannot tell 0 from unset, and the v0.3 proto reads 0 as no length
        # asked for: the agent's default (a client asking for none drops it itself)
        if req.history_length:
            params["historyLength"] = req.history_length
        return "tasks/get", _encode(params)
    if rpc == "CancelTask":
        return "tasks/cancel", _encode({"id": _name_ids(req.name, "name", 1)[0]})
    if rpc == "TaskSubscription":
        return "tasks/resubscribe", _encode({"id": _name_ids(req.name, "name", 1)[0]})
    if rpc == "CreateTaskPushNotificationConfig":
        _name_ids(req.parent, "parent", 1)
        if not req.HasField("config"):
            raise InvalidParams("Invalid params: config (the TaskPushNotificationConfig) "
                                "is required")
        return "tasks/pushNotificationConfig/set", _encode(to_doc(request))
    if rpc == "GetTaskPushNotificationConfig":
        task_id, config_id = _name_ids(req.name, "name", 2)
        return "tasks/pushNotificationConfig/get", _encode(
            {"id": task_id, "pushNotificationConfigId": config_id})
    if rpc == "ListTaskPushNotificationConfig":
        (task_id,) = _name_ids(req.parent, "parent", 1)
        return "tasks/pushNotificationConfig/list", _encode({"id": task_id})
    if rpc == "DeleteTaskPushNotificationConfig":
        task_id, config_id = _name_ids(req.name, "name", 2)
        return "tasks/pushNotificationConfig/delete", _encode(
            {"id": task_id, "pushNotificationConfigId": config_id})
    if rpc == "GetAgentCard":
        return "agent/getAuthenticatedExtendedCard", b"{}"
    raise AssertionError(rpc)
