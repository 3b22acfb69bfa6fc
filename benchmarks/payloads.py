"""The requests the harness sends, and the checks that a server answered them correctly.

Every server gets the same work: one unary send of a user message with a single text part
``ECHO_TEXT``, answered by a completed task carrying one artifact whose text is
``ECHO_TEXT``. The v1.0 request is ``SendMessage`` with ``A2A-Version: 1.0``; servers that
only speak v0.3 get the same call as ``message/send``, and the v0.3 and v0.1 cases of
interlingua as ``message/send`` and ``tasks/send`` (with a fresh client-chosen task id).

Other cases change the message text, which the echo agents read as a mode: ``stream N``
(a streaming send answered with N artifact chunks) and ``idle`` (one ``working`` status
update, then nothing until the task is canceled). CancelTask bodies are here too.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import msgspec

ECHO_TEXT = "hello"
IDLE_TEXT = "idle"


def stream_text(chunks: int) -> str:
    """The message text that asks a streaming echo agent for ``chunks`` artifact chunks."""
    return f"stream {chunks}"

_SENTINEL = 987654321987


class VerificationError(Exception):
    """A server's answer was not the completed echo task the benchmark expects."""


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    unary_method: str
    stream_method: str
    cancel_method: str
    headers: dict[str, str] = field(default_factory=dict)
    # A substring every successful unary response body contains (checked under load).
    completed_marker: str = ""
    working_state: str = ""
    canceled_state: str = ""
    #: HTTP+JSON: the body is the bare request (v1.0 ``SendMessageRequest``), no envelope
    rest: bool = False

    def body(self, n: int, method: str | None = None, text: str = ECHO_TEXT) -> bytes:
        """The JSON-RPC request body with id ``n`` and message id ``<kind>-<n>``
        (``<kind>-<text>-<n>`` for a text other than ``ECHO_TEXT``).

        Unary and streaming requests get message ids of their own: a server
        answers a repeated message id with the task it already made
        (idempotent send), which is not the work being measured.
        """
        method = method or self.unary_method
        kind = "s" if method == self.stream_method else "u"
        tag = "" if text == ECHO_TEXT else "".join(c for c in text if c.isalnum()) + "-"
        mid = f"{kind}-{tag}{n}"
        message: dict[str, object]
        params: dict[str, object] = {}
        if self.name.startswith("1.0"):
            message = {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]}
        elif self.name == "0.1":
            # v0.1 has no message ids; the client names the task, a new one per request
            params["id"] = f"t-{mid}"
            message = {"role": "user", "parts": [{"type": "text", "text": text}]}
        else:
            message = {
                "kind": "message",
                "messageId": mid,
                "role": "user",
                "parts": [{"kind": "text", "text": text}],
            }
        if self.rest:
            return msgspec.json.encode({**params, "message": message})
        envelope = {
            "jsonrpc": "2.0",
            "id": n,
            "method": method,
            "params": {**params, "message": message},
        }
        return msgspec.json.encode(envelope)

    def body_template(self, method: str | None = None, text: str = ECHO_TEXT) -> str:
        """The body with every occurrence of the request number as a ``%d`` slot.

        Each template carries a fresh nonce in its message ids: load generators
        number requests from 1 on every run, and a server that has already seen
        a message id answers it from its store (idempotent send) — cheaper work
        than the send being measured.
        """
        body = self.body(_SENTINEL, method, text).decode().replace("%", "%%")
        nonce = secrets.token_hex(4)
        body = body.replace(f'-{_SENTINEL}"', f'-{nonce}-{_SENTINEL}"')
        return body.replace(str(_SENTINEL), "%d")

    def cancel_body(self, n: int, task_id: str) -> bytes:
        """A JSON-RPC CancelTask (v0.3: ``tasks/cancel``) of ``task_id``, with id ``n``."""
        params = {"id": task_id}
        envelope = {"jsonrpc": "2.0", "id": n, "method": self.cancel_method, "params": params}
        return msgspec.json.encode(envelope)


V1_0 = Dialect(
    name="1.0",
    unary_method="SendMessage",
    stream_method="SendStreamingMessage",
    cancel_method="CancelTask",
    headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    completed_marker='"TASK_STATE_COMPLETED"',
    working_state="TASK_STATE_WORKING",
    canceled_state="TASK_STATE_CANCELED",
)
# v1.0 SendMessage over HTTP+JSON: POST /message:send with the bare SendMessageRequest
V1_0_REST = Dialect(
    name="1.0-rest",
    unary_method="SendMessage",
    stream_method="SendStreamingMessage",
    cancel_method="CancelTask",
    headers={"Content-Type": "application/a2a+json", "A2A-Version": "1.0"},
    completed_marker='"TASK_STATE_COMPLETED"',
    working_state="TASK_STATE_WORKING",
    canceled_state="TASK_STATE_CANCELED",
    rest=True,
)
V0_3 = Dialect(
    name="0.3",
    unary_method="message/send",
    stream_method="message/stream",
    cancel_method="tasks/cancel",
    headers={"Content-Type": "application/json"},
    completed_marker='"completed"',
    working_state="working",
    canceled_state="canceled",
)

V0_1 = Dialect(
    name="0.1",
    unary_method="tasks/send",
    stream_method="tasks/sendSubscribe",
    cancel_method="tasks/cancel",
    headers={"Content-Type": "application/json"},
    completed_marker='"completed"',
    working_state="working",
    canceled_state="canceled",
)


# Typed views of the answers, just deep enough to check them.


class _Part(msgspec.Struct):
    text: str | None = None


class _Artifact(msgspec.Struct):
    parts: list[_Part] = []


class _Status(msgspec.Struct):
    state: str


class _Task(msgspec.Struct):
    status: _Status
    artifacts: list[_Artifact] = []


class _Error(msgspec.Struct):
    code: int
    message: str = ""


class _V1Result(msgspec.Struct):
    task: _Task | None = None


class _V1Response(msgspec.Struct):
    id: int | str | None = None
    result: _V1Result | None = None
    error: _Error | None = None


class _V03Response(msgspec.Struct):
    id: int | str | None = None
    result: _Task | None = None
    error: _Error | None = None


def _check_task(task: _Task | None, completed: str) -> None:
    if task is None:
        raise VerificationError("the result holds no task")
    if task.status.state != completed:
        raise VerificationError(f"task state is {task.status.state!r}, expected {completed!r}")
    if len(task.artifacts) != 1:
        raise VerificationError(f"task has {len(task.artifacts)} artifacts, expected 1")
    texts = [p.text for p in task.artifacts[0].parts]
    if texts != [ECHO_TEXT]:
        raise VerificationError(f"artifact texts are {texts!r}, expected [{ECHO_TEXT!r}]")


def verify_unary(dialect: Dialect, request_id: int, status: int, body: bytes) -> None:
    """Raise VerificationError unless ``body`` is the completed echo task for ``request_id``."""
    if status != 200:
        raise VerificationError(f"HTTP {status}: {body[:300]!r}")
    try:
        if dialect.rest:
            rest = msgspec.json.decode(body, type=_V1Result)
            rid, error, task = request_id, None, rest.task
            completed = "TASK_STATE_COMPLETED"
        elif dialect.name == "1.0":
            v1 = msgspec.json.decode(body, type=_V1Response)
            rid, error, task = v1.id, v1.error, (v1.result.task if v1.result else None)
            completed = "TASK_STATE_COMPLETED"
        else:
            v03 = msgspec.json.decode(body, type=_V03Response)
            rid, error, task = v03.id, v03.error, v03.result
            completed = "completed"
    except msgspec.DecodeError as exc:
        raise VerificationError(f"undecodable answer ({exc}): {body[:300]!r}") from exc
    if error is not None:
        raise VerificationError(f"JSON-RPC error {error.code}: {error.message}")
    if rid != request_id:
        raise VerificationError(f"response id {rid!r}, expected {request_id!r}")
    _check_task(task, completed)
    if dialect.completed_marker not in body.decode():
        raise VerificationError(f"the load check marker {dialect.completed_marker} is missing")


# ---- idle streams and CancelTask ----------------------------------------------------


class _Message(msgspec.Struct):
    parts: list[_Part] = []


class _EventStatus(msgspec.Struct):
    state: str
    message: _Message | None = None


class _EventTask(msgspec.Struct, rename="camel"):
    # v1.0 ``task`` / v0.3 ``kind: task`` carry ``id``; status updates ``taskId``
    id: str | None = None
    task_id: str | None = None
    status: _EventStatus | None = None


class _V1Event(msgspec.Struct, rename="camel"):
    task: _EventTask | None = None
    status_update: _EventTask | None = None


class _V1EventEnvelope(msgspec.Struct):
    result: _V1Event | None = None
    error: _Error | None = None


class _V03EventEnvelope(msgspec.Struct):
    result: _EventTask | None = None
    error: _Error | None = None


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """What an idle stream's event says: its task, the state, the status message text."""

    task_id: str
    state: str
    text: str


def sse_data(event: bytes) -> bytes:
    """The ``data:`` payload of one SSE event (its ``data`` lines joined)."""
    lines = [
        line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")
    ]
    return b"\n".join(lines)


def stream_event(dialect: Dialect, event: bytes) -> StreamEvent:
    """Decode a task or status-update event of a stream; VerificationError otherwise."""
    data = sse_data(event)
    try:
        if dialect.name == "1.0":
            v1 = msgspec.json.decode(data, type=_V1EventEnvelope)
            error = v1.error
            item = None if v1.result is None else (v1.result.task or v1.result.status_update)
        else:
            v03 = msgspec.json.decode(data, type=_V03EventEnvelope)
            error, item = v03.error, v03.result
    except msgspec.DecodeError as exc:
        raise VerificationError(f"undecodable stream event ({exc}): {event[:300]!r}") from exc
    if error is not None:
        raise VerificationError(f"stream event is JSON-RPC error {error.code}: {error.message}")
    task_id = None if item is None else (item.task_id or item.id)
    if item is None or item.status is None or not task_id:
        raise VerificationError(f"stream event is neither a task nor a status: {event[:300]!r}")
    message = item.status.message
    text = "".join(p.text or "" for p in message.parts) if message else ""
    return StreamEvent(task_id=task_id, state=item.status.state, text=text)


def verify_idle_events(dialect: Dialect, events: list[bytes]) -> str:
    """Check the opening of an idle stream (its task, then ``working`` with the idle
    text, nothing final) and return the task id."""
    decoded = [stream_event(dialect, e) for e in events]
    if not decoded:
        raise VerificationError("the idle stream sent no event")
    task_ids = {e.task_id for e in decoded}
    if len(task_ids) != 1:
        raise VerificationError(f"the idle stream's events name several tasks: {task_ids}")
    last = decoded[-1]
    if last.state != dialect.working_state or last.text != IDLE_TEXT:
        raise VerificationError(
            f"the idle stream's last event is {last.state!r} {last.text!r}, "
            f"expected {dialect.working_state!r} {IDLE_TEXT!r}"
        )
    return last.task_id


class _CancelResponse(msgspec.Struct):
    id: int | str | None = None
    result: _Task | None = None
    error: _Error | None = None


def verify_cancel(dialect: Dialect, request_id: int, status: int, body: bytes) -> None:
    """Raise VerificationError unless ``body`` is the canceled task for ``request_id``."""
    if status != 200:
        raise VerificationError(f"cancel: HTTP {status}: {body[:300]!r}")
    try:
        answer = msgspec.json.decode(body, type=_CancelResponse)
    except msgspec.DecodeError as exc:
        raise VerificationError(f"cancel: undecodable answer ({exc}): {body[:300]!r}") from exc
    if answer.error is not None:
        raise VerificationError(f"cancel: JSON-RPC error {answer.error.code}: {answer.error.message}")
    if answer.id != request_id:
        raise VerificationError(f"cancel: response id {answer.id!r}, expected {request_id!r}")
    state = answer.result.status.state if answer.result else None
    if state != dialect.canceled_state:
        raise VerificationError(f"cancel: task state {state!r}, expected {dialect.canceled_state!r}")
