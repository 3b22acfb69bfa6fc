"""What the profile adds to v1.0's JSON-RPC on the wire. Pure: no I/O.

- errors of the MQTT binding itself carry ``data.a2a_error`` (-32003
  ``request_expired``, -32004 ``responder_unavailable``, -32005
  ``transport_protocol_error``);
- an answer is final for its correlation when it is an error, a ``message``, a
  ``task`` or a ``statusUpdate`` in a state that ends the turn (terminal,
  input-required, auth-required); the profile's own responders answer every
  request, ``CancelTask`` too, with ``statusUpdate`` events, which are read here.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ...core import jsonrpc
from ...core.dialects._common import encode_error_member
from ...core.errors import A2AError, RemoteError
from ...core.lifecycle import RETURN_STATES
from ...core.lifecycle import apply as apply_event
from ...core.model import ArtifactUpdate, Message, StatusUpdate, Task, TaskState, TaskStatus

__all__ = ["TRANSPORT_PROTOCOL_ERROR", "TransportProtocolError", "binding_error", "ends_turn",
           "fold", "is_final", "transport_error"]

TRANSPORT_PROTOCOL_ERROR = -32005


class TransportProtocolError(A2AError):
    """The MQTT metadata the profile requires is missing or wrong (-32005): never
    retried by a requester until it is corrected."""

    code = TRANSPORT_PROTOCOL_ERROR


def transport_error(rid: Any, message: str) -> bytes:
    """The JSON-RPC error response of a request whose MQTT metadata is invalid."""
    member = encode_error_member(TRANSPORT_PROTOCOL_ERROR, message,
                                 {"a2a_error": "transport_protocol_error"})
    return jsonrpc.error_response(rid, member)


def binding_error(error: Any) -> A2AError | None:
    """The error an answer carries when it is one of the binding's own (None: it is not)."""
    data = error.get("data") if isinstance(error, dict) else None
    kind = data.get("a2a_error") if isinstance(data, dict) else None
    if not isinstance(kind, str):
        return None
    message = error.get("message")
    code = error.get("code")
    return RemoteError(code if isinstance(code, int) else TRANSPORT_PROTOCOL_ERROR,
                       f"{message} ({kind})" if isinstance(message, str) else kind, data=data)


def is_final(item: Any) -> bool:
    """Whether ``item`` is the last answer to its request."""
    if isinstance(item, Message):
        return True
    if isinstance(item, (Task, StatusUpdate)):
        return item.status.state in RETURN_STATES
    return False


def ends_turn(raw: bytes, task_id: str | None = None) -> bool:
    """Whether the ``result`` ``raw``, read or not, has the shape of a last answer of
    the task ``task_id`` (None: of any): a ``task``, a ``message``, or a status whose
    state ends the turn (v1.0's members, or v0.3's ``kind``), naming that task or none.
    One that cannot be read fails the call; any other is skipped."""
    try:
        doc = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return False
    if not isinstance(doc, dict):
        return False
    member = next((m for m in _LAST if m in doc), None)
    if member is not None:
        body = doc[member]
    elif isinstance(kind := doc.get("kind"), str) and kind in _LAST_V03:
        body, member = doc, _LAST_V03[kind]
    else:
        return False
    if not isinstance(body, dict):
        return member != "statusUpdate"
    named = body.get(_LAST[member])
    if task_id is not None and isinstance(named, str) and named != task_id:
        return False  # (about another task: no answer to this request)
    if member != "statusUpdate":
        return True
    status = body.get("status")
    state = status.get("state") if isinstance(status, dict) else None
    # (v1.0's TASK_STATE_INPUT_REQUIRED is v0.3's input-required)
    name = state.lower().removeprefix("task_state_").replace("_", "-") \
        if isinstance(state, str) else None
    return name in _RETURN_NAMES


#: the members of a last answer, and where each names its task (v0.3's ``kind``s too)
_LAST = {"task": "id", "message": "taskId", "statusUpdate": "taskId"}
_LAST_V03 = {"task": "task", "message": "message", "status-update": "statusUpdate"}
_RETURN_NAMES = frozenset(state.value for state in RETURN_STATES)


def fold(task: Task | None, item: Task | StatusUpdate | ArtifactUpdate) -> Task:
    """``task`` with ``item`` applied (leniently: the peer's order is taken as it
    comes); the first update makes the task."""
    if isinstance(item, Task):
        return msgspec.structs.replace(item, artifacts=list(item.artifacts),
                                       history=list(item.history))
    if task is None:
        status = item.status if isinstance(item, StatusUpdate) else None
        task = Task(id=item.task_id, context_id=item.context_id,
                    status=status or TaskStatus(state=TaskState.WORKING))
        if isinstance(item, StatusUpdate):
            return task
    return apply_event(task, item, checked=True)
