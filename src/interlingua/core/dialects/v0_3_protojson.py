"""v0.3-ProtoJSON: the v0.3.0 proto's objects (``a2a.v1``) as ProtoJSON, the bodies of
v0.3 HTTP+JSON (``/v1/…``) and of v0.3 gRPC (DIALECTS.md §b, ``v0.3-PJ``; seed 001).

They are v0.3's objects, told apart from its JSON-RPC ones by ProtoJSON's rules
rather than by spelling alone: messages carry ``content``, roles and states are
enum names (``ROLE_USER``, ``TASK_STATE_CANCELLED``), a file part nests
``fileWithUri``/``fileWithBytes``, a data part wraps its object (``{"data": {"data":
…}}``), nothing has a ``kind`` (a send answers ``{"task": …}`` or ``{"message": …}``,
a stream item names its member), and a push config is named by resource
(``tasks/{id}/pushNotificationConfigs/{cid}``). So this codec does not add a table
to the family: it respells documents between the two renderings and leaves every
conversion and check to the v0.3 family codec. A request is read once generically,
respelt, and decoded by the family's typed reader; an answer is the family's
encoding respelt. Only members the v0.3 proto has are written, since protobuf
readers refuse unknown ones (a message's ``referenceTaskIds`` is left out). A request
the family refuses is told of it in this rendering's words, its RPC and the members
it sent (``content``, ``fileWithBytes``), not those it was respelt into (``_as_protojson``).

Reading is lenient as ProtoJSON readers are: snake_case proto names, enum
numbers, ``parts`` for ``content``, ``request`` for ``message`` (the SDK's compat
clients send the proto field name). ``blocking``: proto3 cannot tell an absent
``false`` from a missing member, so in a ``configuration`` that is present an
absent ``blocking`` is ``false``, as the SDK's REST server reads it; without a
``configuration`` the send blocks (§i.31).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from .. import calls as c
from .. import model as m
from ..errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    ContentTypeNotSupported,
    ExtendedCardNotConfigured,
    ExtensionSupportRequired,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    PushNotSupported,
    RateLimitExceeded,
    ResourceUnavailable,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
    VersionNotSupported,
)
from ._common import check_utf8
from .as_sent import Path, renamed
from .base import Codec, StreamItem
from .v0_3 import V03Codec, encode_card_v03, legacy_url
from .v1_0 import decode_status

__all__ = ["ERROR_TYPES", "V03ProtoJSONCodec", "card_from_proto", "name_ids"]

_any = msgspec.json.Decoder()
_encode = msgspec.json.encode

# the proto's unspecified role is a role left out (None: the member is dropped)
_ROLE_IN: dict[Any, str | None] = {
    "ROLE_USER": "user", "ROLE_AGENT": "agent", 1: "user", 2: "agent", "user": "user",
    "agent": "agent", "ROLE_UNSPECIFIED": None, 0: None}
_ROLE_OUT = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_STATE_OUT = {
    "submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING",
    "input-required": "TASK_STATE_INPUT_REQUIRED", "completed": "TASK_STATE_COMPLETED",
    "canceled": "TASK_STATE_CANCELLED", "failed": "TASK_STATE_FAILED",
    "rejected": "TASK_STATE_REJECTED", "auth-required": "TASK_STATE_AUTH_REQUIRED",
    "unknown": "TASK_STATE_UNSPECIFIED",
}
# snake_case proto names -> JSON names
_CAMEL = {
    "message_id": "messageId", "context_id": "contextId", "task_id": "taskId",
    "artifact_id": "artifactId", "mime_type": "mimeType", "file_with_uri": "fileWithUri",
    "file_with_bytes": "fileWithBytes", "last_chunk": "lastChunk",
    "accepted_output_modes": "acceptedOutputModes", "push_notification": "pushNotification",
    "history_length": "historyLength", "push_notification_config": "pushNotificationConfig",
    "config_id": "configId", "status_update": "statusUpdate",
    "artifact_update": "artifactUpdate", "msg": "message",
}

# members each object may carry in the v0.3 proto, in its JSON names
_MESSAGE_OUT = ("messageId", "contextId", "taskId", "role", "content", "metadata",
                "extensions")
_ARTIFACT_OUT = ("artifactId", "name", "description", "parts", "metadata", "extensions")


def _camel(doc: dict[str, Any]) -> dict[str, Any]:
    return {_CAMEL.get(k, k): v for k, v in doc.items()}


# --------------------------------------------------------------------- respelling in


def _part_in(p: Any) -> Any:
    if not isinstance(p, dict) or "kind" in p:
        return p
    p = _camel(p)
    if ("text" in p) + ("file" in p) + ("data" in p) > 1:
        return p  # a proto oneof holds one: the family reader refuses it, none dropped
    out: dict[str, Any] = {}
    if "metadata" in p:
        out["metadata"] = p["metadata"]
    if "text" in p:
        out.update(kind="text", text=p["text"])
    elif "file" in p:
        f = p["file"]
        if isinstance(f, dict):
            f = _camel(f)
            file: dict[str, Any] = {}
            if "fileWithUri" in f:
                file["uri"] = f["fileWithUri"]
            if "fileWithBytes" in f:
                file["bytes"] = f["fileWithBytes"]
            for k in ("uri", "bytes", "mimeType", "name"):
                if k in f:
                    file.setdefault(k, f[k])
            f = file
        out.update(kind="file", file=f)
    elif "data" in p:
        d = p["data"]
        if isinstance(d, dict) and set(d) == {"data"}:
            d = d["data"]  # DataPart wraps its Struct
        out.update(kind="data", data=d)
    else:
        return p  # no member: the family reader names the fault
    return out


def _message_in(doc: Any) -> Any:
    if not isinstance(doc, dict):
        return doc
    doc = _camel(doc)
    out: dict[str, Any] = {"kind": "message"}
    for k, v in doc.items():
        if k == "content" or (k == "parts" and "content" not in doc):
            out["parts"] = [_part_in(p) for p in v] if isinstance(v, list) else v
        elif k == "role":
            role = _ROLE_IN.get(v, v) if not isinstance(v, bool) else v
            if role is not None:
                out["role"] = role
        elif k not in ("parts", "kind"):
            out[k] = v
    return out


def _push_in(doc: Any) -> Any:
    return _camel(doc) if isinstance(doc, dict) else doc


def _int32_in(text: str) -> Any:
    """An int32 as ProtoJSON may write it, in a string ("1"); anything else is left
    for the family reader to refuse."""
    digits = text[1:] if text[:1] == "-" else text
    return int(text) if digits.isascii() and digits.isdigit() and len(digits) <= 10 else text


def _send_in(doc: dict[str, Any]) -> dict[str, Any]:
    doc = _camel(doc)
    message = doc.get("message", doc.get("request"))
    out: dict[str, Any] = {"message": _message_in(message)}
    conf = doc.get("configuration")
    if isinstance(conf, dict):
        conf = _camel(conf)
        config: dict[str, Any] = {"blocking": False}  # proto3: absent is false
        for k, v in conf.items():
            if k == "pushNotification":
                config["pushNotificationConfig"] = _push_in(v)
            elif k == "historyLength" and type(v) is str:
                config[k] = _int32_in(v)
            else:
                config[k] = v
        out["configuration"] = config
    elif conf is not None:
        out["configuration"] = conf
    if "metadata" in doc:
        out["metadata"] = doc["metadata"]
    return out


_CONFIGS = "/pushNotificationConfigs/"


def name_ids(name: Any) -> tuple[str | None, str | None]:
    """A v0.3 resource name -> (task id, config id): ``tasks/{id}`` (``task/{id}``
    too, §i.9) -> (id, None); ``tasks/{id}/pushNotificationConfigs/{cid}`` -> (id,
    cid); anything else -> (None, None). The ids are not escaped in a name (the
    SDKs write them as they are): a task id holding "/" is all that follows
    ``tasks/``, up to the configs' segment when there is one."""
    if not isinstance(name, str):
        return None, None
    head, slash, rest = name.partition("/")
    if head not in ("tasks", "task") or not slash or not rest:
        return None, None
    task, configs, config = rest.partition(_CONFIGS)
    if not configs:
        return rest, None
    return (task, config) if task and config else (None, None)


def _push_set_in(doc: dict[str, Any]) -> dict[str, Any]:
    """A ``TaskPushNotificationConfig`` (the route's body) or the whole
    ``CreateTaskPushNotificationConfigRequest`` (what v0.3 SDK clients post)."""
    doc = _camel(doc)
    task_id = doc.get("taskId")
    config_id = doc.get("configId") or None
    inner = doc.get("config")
    named = [("taskId", task_id)]  # (over HTTP+JSON: the path's)
    if isinstance(inner, dict):
        parent_task, _ = name_ids(doc.get("parent"))
        named.append(("parent", parent_task))
        task_id = task_id or parent_task
        doc = _camel(inner)
    named_task, named_config = name_ids(doc.get("name"))
    named.append(("name", named_task))
    task_id = task_id or named_task
    for member, other in named:  # where several name the task, they name one
        if other and task_id and other != task_id:
            raise InvalidParams(f"Invalid params: the request's {member} names task "
                                f"{other!r}, not {task_id!r}")
    push = _push_in(doc.get("pushNotificationConfig"))
    config_ids = [(member, given) for member, given in (
        ("pushNotificationConfig.id", push.get("id") if isinstance(push, dict) else None),
        ("configId", config_id), ("name", named_config)) if given]
    for member, given in config_ids[1:]:  # where several name the config, they name one
        if given != config_ids[0][1]:
            raise InvalidParams(f"Invalid params: the request's {member} names push "
                                f"notification config {given!r}, not {config_ids[0][1]!r}")
    if isinstance(push, dict) and not push.get("id") and config_ids:
        push = {**push, "id": config_ids[0][1]}
    return {"taskId": task_id, "pushNotificationConfig": push}


_STATE_IN: dict[Any, str] = {v: k for k, v in {
    "submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING",
    "input-required": "TASK_STATE_INPUT_REQUIRED", "completed": "TASK_STATE_COMPLETED",
    "canceled": "TASK_STATE_CANCELLED", "failed": "TASK_STATE_FAILED",
    "rejected": "TASK_STATE_REJECTED", "auth-required": "TASK_STATE_AUTH_REQUIRED",
    "unknown": "TASK_STATE_UNSPECIFIED"}.items()}
_STATE_IN.update({"TASK_STATE_CANCELED": "canceled", 0: "unknown", 1: "submitted",
                  2: "working", 3: "completed", 4: "failed", 5: "canceled",
                  6: "input-required", 7: "rejected", 8: "auth-required"})


def _status_in(s: Any) -> Any:
    if not isinstance(s, dict):
        return s
    s = _camel(s)
    state = s.get("state", 0)
    out: dict[str, Any] = {"state": _STATE_IN.get(state, state)
                           if not isinstance(state, bool) else state}
    if s.get("message") is not None:
        out["message"] = _message_in(s["message"])
    if "timestamp" in s:
        out["timestamp"] = s["timestamp"]
    return out


def _artifact_in(a: Any) -> Any:
    if not isinstance(a, dict):
        return a
    a = _camel(a)
    parts = a.get("parts")
    return {**a, "parts": [_part_in(p) for p in parts] if isinstance(parts, list) else parts}


def _task_in(t: Any) -> Any:
    if not isinstance(t, dict):
        return t
    t = _camel(t)
    out = {**t, "kind": "task", "status": _status_in(t.get("status"))}
    if isinstance(t.get("artifacts"), list):
        out["artifacts"] = [_artifact_in(a) for a in t["artifacts"]]
    if isinstance(t.get("history"), list):
        out["history"] = [_message_in(m) for m in t["history"]]
    return out


def _item_in(doc: Any) -> Any:
    """A ``StreamResponse`` / ``SendMessageResponse`` -> the v0.3 JSON-RPC object."""
    if not isinstance(doc, dict):
        return doc
    doc = _camel(doc)
    if "task" in doc:
        return _task_in(doc["task"])
    if "message" in doc:
        return _message_in(doc["message"])
    if isinstance(doc.get("statusUpdate"), dict):
        ev = _camel(doc["statusUpdate"])
        return {**ev, "kind": "status-update", "status": _status_in(ev.get("status")),
                "final": bool(ev.get("final"))}
    if isinstance(doc.get("artifactUpdate"), dict):
        ev = _camel(doc["artifactUpdate"])
        return {**ev, "kind": "artifact-update", "artifact": _artifact_in(ev.get("artifact"))}
    return doc


def _push_result_in(doc: Any) -> Any:
    if not isinstance(doc, dict):
        return doc
    doc = _camel(doc)
    task_id, _ = name_ids(doc.get("name"))
    return {"taskId": task_id or "", "pushNotificationConfig": _push_in(
        doc.get("pushNotificationConfig"))}


# -------------------------------------------------------------------- respelling out


def _part_out(p: Any) -> Any:
    if not isinstance(p, dict):
        return p
    kind = p.get("kind")
    out: dict[str, Any] = {}
    if kind == "text":
        out["text"] = p.get("text", "")
    elif kind == "file":
        f = p.get("file") or {}
        file: dict[str, Any] = {}
        # the proto's oneof holds one: the bytes of a file with both, as in every
        # dialect; a file with neither goes out empty, as in v1.0
        if "uri" in f and "bytes" not in f:
            file["fileWithUri"] = f["uri"]
        else:
            file["fileWithBytes"] = f.get("bytes", "")
        if "mimeType" in f:
            file["mimeType"] = f["mimeType"]
        if "name" in f:
            file["name"] = f["name"]
        out["file"] = file
    elif kind == "data":
        out["data"] = {"data": p.get("data")}
    if "metadata" in p:
        out["metadata"] = p["metadata"]
    return out


def _message_out(m: Any) -> Any:
    if not isinstance(m, dict):
        return m
    out: dict[str, Any] = {}
    for k in _MESSAGE_OUT:
        if k == "content":
            out["content"] = [_part_out(p) for p in m.get("parts", [])]
        elif k == "role":
            out["role"] = _ROLE_OUT.get(m.get("role", ""), "ROLE_UNSPECIFIED")
        elif k in m:
            out[k] = m[k]
    return out


def _status_out(s: Any) -> Any:
    if not isinstance(s, dict):
        return s
    out: dict[str, Any] = {"state": _STATE_OUT.get(s.get("state", ""), "TASK_STATE_UNSPECIFIED")}
    if s.get("message") is not None:
        out["message"] = _message_out(s["message"])
    if "timestamp" in s:
        out["timestamp"] = s["timestamp"]
    return out


def _artifact_out(a: Any) -> Any:
    if not isinstance(a, dict):
        return a
    out = {k: a[k] for k in _ARTIFACT_OUT if k in a}
    out["parts"] = [_part_out(p) for p in a.get("parts", [])]
    return out


def _task_out(t: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": t.get("id"), "contextId": t.get("contextId"),
                           "status": _status_out(t.get("status"))}
    if t.get("artifacts"):
        out["artifacts"] = [_artifact_out(a) for a in t["artifacts"]]
    if t.get("history"):
        out["history"] = [_message_out(m) for m in t["history"]]
    if "metadata" in t:
        out["metadata"] = t["metadata"]
    return out


def _item_out(doc: Any) -> dict[str, Any]:
    """A v0.3 JSON-RPC result/stream item -> a ``StreamResponse`` (its member named)."""
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind == "task":
        return {"task": _task_out(doc)}
    if kind == "message":
        return {"message": _message_out(doc)}
    if kind == "status-update":
        ev = {k: doc[k] for k in ("taskId", "contextId") if k in doc}
        ev["status"] = _status_out(doc.get("status"))
        ev["final"] = bool(doc.get("final"))
        if "metadata" in doc:
            ev["metadata"] = doc["metadata"]
        return {"statusUpdate": ev}
    if kind == "artifact-update":
        ev = {k: doc[k] for k in ("taskId", "contextId", "append", "lastChunk", "metadata")
              if k in doc}
        ev["artifact"] = _artifact_out(doc.get("artifact"))
        return {"artifactUpdate": ev}
    raise InvalidAgentResponse(f"not a v0.3 stream item: {kind!r}")


def _push_out(doc: dict[str, Any]) -> dict[str, Any]:
    push = doc.get("pushNotificationConfig") or {}
    name = f"tasks/{doc.get('taskId')}/pushNotificationConfigs/{push.get('id', '')}"
    return {"name": name, "pushNotificationConfig": push}


def _push_create_out(doc: dict[str, Any]) -> dict[str, Any]:
    """A push config to set -> the proto's ``CreateTaskPushNotificationConfigRequest``,
    the body most official v0.3 servers read (a2a-sdk 0.3 and 1.x's compatibility
    routes parse it as that message, @a2a-js/sdk 0.3 wants its ``config``)."""
    config = _push_out(doc)
    out: dict[str, Any] = {"parent": f"tasks/{doc.get('taskId')}"}
    config_id = config["pushNotificationConfig"].get("id")
    if config_id:
        out["configId"] = config_id
    out["config"] = config
    return out


# ----------------------------------------------------------------------------- codec


# v0.3 HTTP+JSON's statuses where they differ from the error's own (v1.0's): the v0.3
# SDK's 409 for a task that cannot be canceled, 501 for what is not supported, 415,
# 422 for bad params, 502
_STATUS: tuple[tuple[type[A2AError], int], ...] = (
    (TaskNotCancelable, 409),
    (PushNotSupported, 501),
    (UnsupportedOperation, 501),
    (ContentTypeNotSupported, 415),
    (InvalidAgentResponse, 502),
    (ExtendedCardNotConfigured, 404),
    (InvalidParams, 422),
)

# v0.3 HTTP+JSON error bodies: the error's type by name beside its message and code, as
# the official SDK's v0.3 routes answer and its v0.3 REST client reads (the Python SDK
# reads the type, the JavaScript one the JSON-RPC code; a bare 404 is "method not found")
_ERROR_TYPE = {
    "TASK_NOT_FOUND": "TaskNotFoundError",
    "TASK_NOT_CANCELABLE": "TaskNotCancelableError",
    "PUSH_NOTIFICATION_NOT_SUPPORTED": "PushNotificationNotSupportedError",
    "UNSUPPORTED_OPERATION": "UnsupportedOperationError",
    "CONTENT_TYPE_NOT_SUPPORTED": "ContentTypeNotSupportedError",
    "INVALID_AGENT_RESPONSE": "InvalidAgentResponseError",
    # none for "unavailable" (busy, draining, a store out of reach) either: InternalError,
    # as its JSON-RPC code is, and read back as unavailable by its 503
    "RESOURCE_UNAVAILABLE": "InternalError",
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": "ExtendedAgentCardNotConfiguredError",
    # v0.3 has no error of these: its code is InvalidRequest's (-32600, ``_codes.py``),
    # and so is its type, or the two SDKs would read two errors in one body
    "EXTENSION_SUPPORT_REQUIRED": "InvalidRequestError",
    "VERSION_NOT_SUPPORTED": "InvalidRequestError",
    "INVALID_PARAMS": "InvalidParamsError",
    "INVALID_REQUEST": "InvalidRequestError",
    "PARSE_ERROR": "JSONParseError",
    "METHOD_NOT_FOUND": "MethodNotFoundError",
    # a wrong verb (405) is a kind of method not found, whose code (-32601) it carries
    "METHOD_NOT_ALLOWED": "MethodNotFoundError",
    "INTERNAL_ERROR": "InternalError",
}

# v0.3 error bodies name their error by type (DIALECTS.md §f.2)
ERROR_TYPES: dict[str, type[A2AError]] = {
    "TaskNotFoundError": TaskNotFound,
    "TaskNotCancelableError": TaskNotCancelable,
    "PushNotificationNotSupportedError": PushNotSupported,
    "UnsupportedOperationError": UnsupportedOperation,
    "ContentTypeNotSupportedError": ContentTypeNotSupported,
    "InvalidAgentResponseError": InvalidAgentResponse,
    "ExtendedAgentCardNotConfiguredError": ExtendedCardNotConfigured,
    "ExtensionSupportRequiredError": ExtensionSupportRequired,
    "VersionNotSupportedError": VersionNotSupported,
    "InvalidParamsError": InvalidParams,
    "InvalidRequestError": InvalidRequest,
    "JSONParseError": ParseError,
    "MethodNotFoundError": MethodNotFound,
    "InternalError": InternalError,
}

# v0.3's statuses (DIALECTS.md §f.2), for error bodies that carry nothing but a message
# (a2a-sdk 0.3's routes); 404 only on a route that names a task (elsewhere: no such route)
_STATUS_ERRORS: dict[int, type[A2AError]] = {
    401: AuthenticationRequired,
    403: AuthorizationFailed,
    409: TaskNotCancelable,
    415: ContentTypeNotSupported,
    422: InvalidParams,
    429: RateLimitExceeded,
    500: InternalError,
    501: UnsupportedOperation,
    502: InvalidAgentResponse,
}


def _stopped_at(data: Any) -> bool:
    """Whether an error's data says where a stream stopped (its error event has no status)."""
    return isinstance(data, dict) and "lastEventId" in data


class V03ProtoJSONCodec(Codec):
    """v0.3 objects in ProtoJSON, over the v0.3 family codec. Its ``methods`` are the
    v0.3 JSON-RPC method names, by which bindings name its operations."""

    name = "0.3-pj"
    inner = V03Codec()
    methods = inner.methods
    streaming_methods = inner.streaming_methods
    # v0.3's objects: tasks made through it are v0.3 tasks to every other binding
    dialect = "0.3"
    family = "0.3"
    versions = inner.versions
    nearest = inner.nearest
    marks_final = inner.marks_final
    protojson = inner.protojson
    grpc_service = "a2a.v1.A2AService"

    def member_path(self, path: list[str]) -> list[str]:
        # the proto's members: a send's ``pushNotification``, a create's whole request
        # (``config``, as the SDK's clients and the gRPC service send it)
        if path[:2] == ["configuration", "pushNotificationConfig"]:
            return ["configuration", "pushNotification", *path[2:]]
        if path[:1] == ["pushNotificationConfig"]:
            return ["config", *path]
        return path

    def http_status(self, error: A2AError) -> int:
        for cls, status in _STATUS:
            if isinstance(error, cls):
                return status
        return error.http_status

    def decode_http_error(self, doc: Any, status: int = 0,
                          task_route: bool = False) -> A2AError | None:
        # a v0.3 route may answer the v1.0 body too (a2a-sdk 1.x's v0.3 compatibility routes)
        err = self._typed_error(doc) or decode_status(doc)
        if type(err) is InternalError and (status == 503 or _stopped_at(err.data)):
            # unavailable, which v0.3 names InternalError: told apart by its 503 or stop
            return ResourceUnavailable(err.message, data=err.data)
        if (err is not None or not isinstance(doc, dict) or "message" not in doc
                or not set(doc) <= {"message", "data"}):
            return err
        message = doc["message"] if isinstance(doc["message"], str) and doc["message"] else None
        data = doc.get("data")
        if status == 404 and task_route:
            return TaskNotFound(message, data=data)
        cls = _STATUS_ERRORS.get(status)
        if cls is None and _stopped_at(data):
            cls = ResourceUnavailable  # a stream's error event (no status): where it stopped
        return cls(message, data=data) if cls is not None else None

    def _typed_error(self, doc: Any) -> A2AError | None:
        """A v0.3 error body -> its error: ``{"message": …, "type": …}`` (the Python SDK's)
        by the type's name, ``{"code": …, "message": …}`` (the JavaScript SDK's) by the
        v0.3 JSON-RPC code; None for a body that is neither."""
        if not isinstance(doc, dict):
            return None
        kind = doc.get("type")
        cls = ERROR_TYPES.get(kind) if isinstance(kind, str) else None
        if cls is not None:
            message = doc.get("message")
            return cls(message if isinstance(message, str) and message else None,
                        data=doc.get("data"))
        code = doc.get("code")
        if isinstance(code, int) and not isinstance(code, bool) \
                and isinstance(doc.get("message"), str):
            return self.decode_error(doc)
        return None

    def encode_http_error(self, error: A2AError, status: int) -> bytes:
        # an error v0.3 names with its type and code (one it has none for, an auth
        # refusal say, is told by its status), and with its data (a lagging
        # stream's resume point, as the JSON-RPC binding gives it)
        kind = _ERROR_TYPE.get(error.reason)
        doc: dict[str, Any] = {"message": error.message} if kind is None else {
            "code": self.inner.code_of(error), "message": error.message, "type": kind}
        if error.data is not None:
            doc["data"] = error.data
        return _encode(doc)

    def decode_call(self, method: str, params: bytes | None) -> c.Call:
        doc: dict[str, Any] | None = None
        if method in ("message/send", "message/stream", "tasks/pushNotificationConfig/set"):
            doc = _read(params)
            respelt = _send_in(doc) if method != "tasks/pushNotificationConfig/set" \
                else _push_set_in(doc)
            params = _encode(respelt)
        try:
            return self.inner.decode_call(method, params)
        except InvalidParams as exc:
            raise _as_protojson(exc, method, doc) from None

    def encode_result(self, call: c.Call, result: c.Result) -> bytes:
        if isinstance(result, m.AgentCard):
            # the v0.3 rendering alone: a proto card has no room for the others
            # (its signatures are made again over it where it is served)
            return _encode(encode_card_v03(result, jsonrpc_url=legacy_url(result)))
        doc = _any.decode(self.inner.encode_result(call, result))
        if isinstance(call, c.SendMessage):
            return _encode(_item_out(doc))
        if isinstance(call, c.GetTask | c.CancelTask):
            return _encode(_task_out(doc))
        if isinstance(call, c.SetPushConfig | c.GetPushConfig):
            return _encode(_push_out(doc))
        if isinstance(call, c.ListPushConfigs):
            return _encode({"configs": [_push_out(d) for d in doc or []], "nextPageToken": ""})
        if isinstance(call, c.DeletePushConfig):
            return b"{}"
        return _encode(doc)

    def encode_error(self, error: A2AError) -> bytes:
        return _encode({"message": error.message})

    def encode_stream_item(self, item: StreamItem) -> bytes:
        return _encode(_item_out(_any.decode(self.inner.encode_stream_item(item))))

    # ------------------------------------------------------------ client side

    def encode_call(self, call: c.Call) -> tuple[str, bytes]:
        """(the operation's v0.3 JSON-RPC method, the request body in ProtoJSON); a
        binding puts the ids of the other calls in its path."""
        method, params = self.inner.encode_call(call)
        if isinstance(call, c.SendMessage):
            return method, _encode(_send_out(_any.decode(params)))
        if isinstance(call, c.SetPushConfig):
            doc = _any.decode(params)
            return method, _encode(_push_create_out(doc))
        return method, params

    def decode_result(self, call: c.Call, result: bytes) -> c.Result:
        try:
            doc = _any.decode(result)
        except msgspec.DecodeError as exc:
            raise InvalidAgentResponse(f"Invalid agent response: {exc}") from None
        if isinstance(call, c.SendMessage):
            doc = _item_in(doc)
        elif isinstance(call, c.GetTask | c.CancelTask | c.SubscribeToTask):
            doc = _task_in(doc)
        elif isinstance(call, c.SetPushConfig | c.GetPushConfig):
            doc = _push_result_in(doc)
        elif isinstance(call, c.ListPushConfigs):
            configs = doc.get("configs") if isinstance(doc, dict) else doc
            doc = [_push_result_in(d) for d in configs or []]
        elif isinstance(call, c.DeletePushConfig):
            return None
        return self.inner.decode_result(call, _encode(doc))

    def decode_stream_item(self, result: bytes) -> StreamItem:
        try:
            doc = _any.decode(result)
        except msgspec.DecodeError as exc:
            raise InvalidAgentResponse(f"Invalid agent response: {exc}") from None
        return self.inner.decode_stream_item(_encode(_item_in(doc)))

    def decode_error(self, error: Any) -> A2AError:
        return self.inner.decode_error(error)


def _send_out(doc: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"message": _message_out(doc.get("message"))}
    conf = doc.get("configuration")
    conf = conf if isinstance(conf, dict) else {}
    config = {k: v for k, v in conf.items() if k != "pushNotificationConfig"}
    if "pushNotificationConfig" in conf:
        config["pushNotification"] = conf["pushNotificationConfig"]
    # Always said: a server reads an absent `blocking`, or an absent configuration,
    # as proto3's false (a2a-sdk 0.3's routes do), and a send blocks by default.
    config.setdefault("blocking", True)
    out["configuration"] = config
    if "metadata" in doc:
        out["metadata"] = doc["metadata"]
    return out


# ------------------------------------------------------------------ refusals, as sent

#: v0.3's operations by the proto's RPCs, as its HTTP+JSON and gRPC callers know them
_RPCS = {
    "message/send": "SendMessage", "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask", "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "TaskSubscription",
    "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfig",
    "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
    "agent/getAuthenticatedExtendedCard": "GetAgentCard",
}
# ProtoJSON writes no null: a null where a value must be is a member left out
_NULL = re.compile(r"Expected `[^`]+`, got `null` - at (`params[^`]*`)")
_ROLE_AT = " - at `params.message.role`"
#: the v0.3 JSON-RPC file's members, by the proto's (``FilePart``'s oneof)
_FILE_MEMBERS = {"bytes": "fileWithBytes", "uri": "fileWithUri"}


def _as_protojson(exc: InvalidParams, method: str, doc: dict[str, Any] | None
                  ) -> InvalidParams:
    """A refusal in the v0.3 JSON-RPC codec's words, in those of the v0.3 proto its
    caller speaks: the RPC, not the method, and, of a body this codec respelt, the
    members the caller sent (``content``, ``fileWithBytes``, ``pushNotification``)."""
    rpc = _RPCS.get(method, method)
    head = f"Invalid params for {rpc}: "
    message = exc.message.replace(f"Invalid params for {method}: ", head, 1)
    message = _NULL.sub(lambda m: f"{m.group(1)[1:-1]} is required", message)
    sent = _sent_message(doc)
    if message.endswith(_ROLE_AT) and sent is not None and sent.get("role") is not None:
        message = f"{head}params.message.role must be ROLE_USER or ROLE_AGENT, got " \
                  f"{sent['role']!r}"
    refused = type(exc)(message, data=exc.data)
    if doc is None:
        return refused
    return renamed(refused, lambda path: _protojson_path(path, doc, method), root="params")


def _sent_message(doc: dict[str, Any] | None) -> dict[str, Any] | None:
    """The message of a send as its caller sent it (``_send_in``'s choice)."""
    if doc is None:
        return None
    sent = _camel(doc)
    message = sent.get("message", sent.get("request"))
    return _camel(message) if isinstance(message, dict) else None


def _protojson_path(path: Path, doc: dict[str, Any], method: str) -> Path:
    """A path of the respelt params (``_send_in``, ``_push_set_in``) -> the caller's."""
    sent = _camel(doc)
    if method == "tasks/pushNotificationConfig/set":
        if path[:1] == ["pushNotificationConfig"] and isinstance(sent.get("config"), dict):
            return ["config", *path]  # (the whole CreateTaskPushNotificationConfigRequest)
        return path
    if path[:2] == ["configuration", "pushNotificationConfig"]:
        conf = sent.get("configuration")
        if isinstance(conf, dict) and "pushNotification" in _camel(conf):
            path[1] = "pushNotification"
        return path
    if path[:1] != ["message"]:
        return path
    if "message" not in sent and "request" in sent:
        path[0] = "request"
    message = _sent_message(doc) or {}
    if path[1:2] == ["parts"]:  # (``parts`` is read too, where no ``content`` is sent)
        path[1] = "parts" if "parts" in message and "content" not in message else "content"
        _part_path(path, message.get(path[1]))
    return path


def _part_path(path: Path, content: Any) -> None:
    """``path`` (``message.content[n]…``) into a part as its caller sent it: a file's
    ``fileWithBytes`` where v0.3 JSON-RPC says ``bytes``, a data part's ``data.data``."""
    if len(path) < 4 or not path[2].startswith("[") or not isinstance(content, list):
        return
    index = int(path[2][1:-1])
    part = _camel(content[index]) if index < len(content) and isinstance(
        content[index], dict) else {}
    if path[3] == "file" and len(path) > 4 and path[4] in _FILE_MEMBERS:
        file = part.get("file")
        if isinstance(file, dict) and path[4] not in file:
            path[4] = _FILE_MEMBERS[path[4]]
    elif path[3] == "data":
        data = part.get("data")
        if isinstance(data, dict) and set(data) == {"data"}:
            path.insert(4, "data")  # (DataPart wraps its Struct)


def _read(params: bytes | None) -> dict[str, Any]:
    if params is None:
        raise InvalidParams("Invalid params: a body is required")
    check_utf8(params)
    try:
        doc = _any.decode(params)
    except msgspec.DecodeError:
        raise ParseError("Parse error: the body is not valid JSON") from None
    except RecursionError:
        raise InvalidParams("Invalid params: the body is nested too deeply") from None
    if not isinstance(doc, dict):
        raise InvalidParams("Invalid params: the body must be a JSON object")
    return doc


# ------------------------------------------------------------------ the proto card


def _requirements_in(reqs: Any) -> Any:
    if not isinstance(reqs, list):
        return reqs
    return [{k: (v or {}).get("list", []) for k, v in (r.get("schemes") or {}).items()}
            for r in reqs if isinstance(r, dict)]


_SCHEMES_IN = {
    "apiKeySecurityScheme": "apiKey", "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2", "openIdConnectSecurityScheme": "openIdConnect",
    "mtlsSecurityScheme": "mutualTLS",
}


def card_from_proto(doc: dict[str, Any]) -> dict[str, Any]:
    """The v0.3 proto's ``AgentCard`` (ProtoJSON) -> the v0.3 JSON card: its
    security schemes and requirements are spelt as the JSON card spells them."""
    out = dict(doc)
    schemes = doc.get("securitySchemes")
    if isinstance(schemes, dict):
        converted: dict[str, Any] = {}
        for name, wrapped in schemes.items():
            if not isinstance(wrapped, dict) or len(wrapped) != 1:
                continue
            ((key, inner),) = wrapped.items()
            kind = _SCHEMES_IN.get(key)
            if kind is None or not isinstance(inner, dict):
                continue
            scheme = {**inner, "type": kind}
            if kind == "apiKey":
                scheme["in"] = scheme.pop("location", "header")
            converted[name] = scheme
        out["securitySchemes"] = converted
    if "security" in doc:
        out["security"] = _requirements_in(doc["security"])
    skills = []
    for skill in doc.get("skills") or ():
        if isinstance(skill, dict) and "security" in skill:
            skill = {**skill, "security": _requirements_in(skill["security"])}
        skills.append(skill)
    out["skills"] = skills
    return out
