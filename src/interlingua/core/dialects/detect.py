"""Which dialect a JSON-RPC request speaks (DIALECTS.md §h.3).

Order: the method name; then, where several dialects share a name, the
payload's shape; for ``tasks/get`` / ``tasks/cancel`` / ``tasks/resubscribe``
(identical params from v0.1 to v0.3) the ``A2A-Version`` header, else the
dialect the task was created in (looked up by the caller), else v0.3 — but a
``tasks/cancel`` naming the task ``task_id`` / ``taskId`` is SAM's.

Lenient by default: a payload that mixes generations is read by the dialect
its strongest marker names. ``strict=True`` refuses mixed or ambiguous
payloads with a message naming the conflict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from ..errors import InvalidParams, InvalidRequest, method_not_found

__all__ = ["SHARED_TASK_METHODS", "Detection", "detect"]

V1_METHODS = frozenset({
    "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask",
    "SubscribeToTask", "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
})
V03_ONLY = frozenset({
    "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
    "agent/getAuthenticatedExtendedCard",
})
V01_ONLY = frozenset({"tasks/sendSubscribe", "tasks/pushNotification/set",
                      "tasks/pushNotification/get"})
#: methods whose params are the same in v0.1, v0.2 and v0.3 (and SAM's cancel)
SHARED_TASK_METHODS = frozenset({"tasks/get", "tasks/cancel", "tasks/resubscribe"})

# Key markers are read on the params' shape (``_Params``): only the members of the
# params, the message and its parts count, never what metadata, a data part's data
# or another member nests. On params not shaped as a message, on the raw params: a
# JSON key is a string followed by a colon, which string *values* never are.
_TYPE_KEY = re.compile(rb'"type"\s*:')
_KIND_KEY = re.compile(rb'"kind"\s*:')
_MESSAGE_ID_KEY = re.compile(rb'"messageId"\s*:')
_SNAKE_KEYS = re.compile(rb'"(?:message_id|task_id|context_id|mime_type)"\s*:')
_CANCEL_ID_KEY = re.compile(rb'"(?:task_id|taskId)"\s*:')

_UNSET: Any = msgspec.UNSET


# The shape detection reads: a message's and its parts' own members, everything
# else (metadata, a data part's data, a file's bytes) skipped undecoded.
class _File(msgspec.Struct, omit_defaults=True):
    mime_type: Any = _UNSET


class _Part(msgspec.Struct, omit_defaults=True):
    type: Any = _UNSET
    kind: Any = _UNSET
    file: _File | None = None


class _Message(msgspec.Struct, omit_defaults=True):
    type: Any = _UNSET
    kind: Any = _UNSET
    message_id_camel: Any = msgspec.field(default=_UNSET, name="messageId")
    message_id: Any = _UNSET
    task_id: Any = _UNSET
    context_id: Any = _UNSET
    parts: list[_Part] = []
    # python-a2a's message: one part (or a list) under ``content``
    content: list[_Part] | _Part | None = None


class _Params(_Message):
    """Params with a message, or a bare Message as params (DIALECTS.md §i.3)."""

    id: Any = _UNSET
    message: _Message | None = None


_HEADER_DIALECT = {"0.1": "0.1", "0.2": "0.3", "0.3": "0.3"}


class Detection(msgspec.Struct, frozen=True):
    #: the dialect, or None when the task's recorded dialect decides
    dialect: str | None
    #: for a shared method decided by the task: the task id from params
    task_id: str | None = None
    #: what to use when the task is unknown
    fallback: str = "0.3"


_V10 = Detection("1.0")
_V11 = Detection("1.1")


def detect(
    method: str,
    params: bytes | None,
    headers: Mapping[str, str] | None = None,
    *,
    strict: bool = False,
    header_version: str | None = None,
) -> Detection:
    """The dialect of a request. ``header_version`` is the parsed ``A2A-Version``
    (Major.Minor) when one was sent."""
    if method in V1_METHODS:
        # A2A 1.1 (draft) is v1.0's methods read and answered by its own codec
        return _V11 if header_version == "1.1" else _V10
    if method in V03_ONLY:
        return Detection("0.3")
    if method in V01_ONLY:
        return Detection("0.1")
    raw = params or b""
    if method == "message/send" or method == "message/stream":
        return Detection(_message_send(method, raw, strict))
    if method == "task/subscribe":
        return Detection("tutorial")
    if method == "tasks/send-streaming":
        return Detection("sam")
    if method == "tasks/send":
        return Detection(_tasks_send(raw, strict))
    if method in SHARED_TASK_METHODS:
        if method == "tasks/cancel" and _sam_cancel(raw):
            return Detection("sam")
        if header_version in _HEADER_DIALECT:
            return Detection(_HEADER_DIALECT[header_version])
        return Detection(None, task_id=_task_id(raw), fallback="0.3")
    raise method_not_found(method)


def _message_send(method: str, raw: bytes, strict: bool) -> str:
    shape = _shape(raw)
    if shape is None:  # not a message's shape: its keys decide, the codec says what is wrong
        has_type = _TYPE_KEY.search(raw) is not None
        has_kind = _KIND_KEY.search(raw) is not None
        has_id = _MESSAGE_ID_KEY.search(raw) is not None
    else:
        has_type, has_kind, has_id = _markers(shape)
    if strict and has_type and has_kind:
        raise InvalidRequest(
            f"Invalid Request: {method} mixes v0.1-style \"type\" and v0.2-style \"kind\" "
            "discriminators; use one (strict mode)"
        )
    # The tutorial variant: v0.1-style "type" parts or no messageId.
    if (has_type and not has_kind) or not has_id:
        return "tutorial"
    return "0.3"


def _markers(shape: _Params) -> tuple[bool, bool, bool]:
    """Whether the params' and message's own members and its parts' hold ``type``,
    ``kind`` and ``messageId`` keys (what other members nest is no marker)."""
    msg: _Message = shape.message if shape.message is not None else shape
    part_type = part_kind = False
    for part in _parts(shape):
        part_type = part_type or part.type is not _UNSET
        part_kind = part_kind or part.kind is not _UNSET
    has_type = part_type or msg.type is not _UNSET or shape.type is not _UNSET
    has_kind = part_kind or msg.kind is not _UNSET or shape.kind is not _UNSET
    if has_type and has_kind:
        # the message's own "kind": "message" tags no part: only the parts' tags count
        has_kind = part_kind
    has_id = msg.message_id_camel is not _UNSET or shape.message_id_camel is not _UNSET
    return has_type, has_kind, has_id


def _tasks_send(raw: bytes, strict: bool) -> str:
    shape = _shape(raw)
    if shape is None:  # not a message's shape: read as it is, the codec says what is wrong
        doc = _params_doc(raw)
        has_id, has_message = "id" in doc, isinstance(doc.get("message"), dict)
        snake = _SNAKE_KEYS.search(raw) is not None
    else:
        has_id, has_message = shape.id is not _UNSET, shape.message is not None
        snake = _snake(shape)
    if strict and has_id and snake:
        raise InvalidRequest(
            "Invalid Request: tasks/send has a v0.1 task id but snake_case message fields "
            "of the Solace Agent Mesh variant; use one (strict mode)"
        )
    if has_id:
        return "0.1"
    if has_message or snake:
        # SAM's markers are snake_case keys and untagged parts: a message whose parts
        # are all tagged "type" without one is v0.1's, missing its id (§h.3)
        if not snake and shape is not None and _v01_parts(_parts(shape)):
            return "0.1"
        return "sam"
    return "0.1"  # let the v0.1 codec say what is missing


def _snake(shape: _Params) -> bool:
    """Whether the params' or message's own members, or its files', are SAM's
    snake_case ones (what other members nest is no marker)."""
    for m in (shape, shape.message):
        if m is not None and (m.message_id is not _UNSET or m.task_id is not _UNSET
                              or m.context_id is not _UNSET):
            return True
    return any(p.file is not None and p.file.mime_type is not _UNSET for p in _parts(shape))


def _shape(raw: bytes) -> _Params | None:
    """The params' message and parts, or None when they are not shaped as such."""
    try:
        return msgspec.json.decode(raw, type=_Params)
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None


def _parts(shape: _Params) -> list[_Part]:
    """The parts of the params' message, or of the bare Message that is the params."""
    msg: _Message = shape.message if shape.message is not None else shape
    content = msg.content
    extra = content if isinstance(content, list) else [] if content is None else [content]
    return [*msg.parts, *extra]


def _v01_parts(parts: list[_Part]) -> bool:
    return bool(parts) and all(p.type is not _UNSET and p.kind is _UNSET for p in parts)


def _params_doc(raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        doc = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise InvalidParams("Invalid params: not valid JSON") from None
    except RecursionError:
        raise InvalidParams("Invalid params: nested too deeply") from None
    return doc if isinstance(doc, dict) else {}


def _sam_cancel(raw: bytes) -> bool:
    """SAM's cancel alone names the task ``task_id`` or ``taskId`` instead of ``id``."""
    if _CANCEL_ID_KEY.search(raw) is None:
        return False
    doc = _params_doc(raw)
    return "id" not in doc and ("task_id" in doc or "taskId" in doc)


def _task_id(raw: bytes) -> str | None:
    value = _params_doc(raw).get("id")
    return value if isinstance(value, str) else None
