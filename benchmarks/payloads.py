"""The requests the harness sends, and the checks that a server answered them correctly.

Every server gets the same work: one unary send of a user message with a single text part
``ECHO_TEXT``, answered by a completed task carrying one artifact whose text is
``ECHO_TEXT``. The v1.0 request is ``SendMessage`` with ``A2A-Version: 1.0``; servers that
only speak v0.3 get the same call as ``message/send``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import msgspec

ECHO_TEXT = "hello"
_SENTINEL = 987654321987


class VerificationError(Exception):
    """A server's answer was not the completed echo task the benchmark expects."""


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    unary_method: str
    stream_method: str
    headers: dict[str, str] = field(default_factory=dict)
    # A substring every successful unary response body contains (checked under load).
    completed_marker: str = ""

    def body(self, n: int, method: str | None = None) -> bytes:
        """The JSON-RPC request body with id ``n`` and message id ``<kind>-<n>``.

        Unary and streaming requests get message ids of their own: a server
        answers a repeated message id with the task it already made
        (idempotent send), which is not the work being measured.
        """
        method = method or self.unary_method
        mid = f"{'s' if method == self.stream_method else 'u'}-{n}"
        message: dict[str, object]
        if self.name == "1.0":
            message = {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": ECHO_TEXT}]}
        else:
            message = {
                "kind": "message",
                "messageId": mid,
                "role": "user",
                "parts": [{"kind": "text", "text": ECHO_TEXT}],
            }
        envelope = {
            "jsonrpc": "2.0",
            "id": n,
            "method": method,
            "params": {"message": message},
        }
        return msgspec.json.encode(envelope)

    def body_template(self, method: str | None = None) -> str:
        """The body with every occurrence of the request number as a ``%d`` slot.

        Each template carries a fresh nonce in its message ids: load generators
        number requests from 1 on every run, and a server that has already seen
        a message id answers it from its store (idempotent send) — cheaper work
        than the send being measured.
        """
        text = self.body(_SENTINEL, method).decode().replace("%", "%%")
        nonce = secrets.token_hex(4)
        text = text.replace(f'-{_SENTINEL}"', f'-{nonce}-{_SENTINEL}"')
        return text.replace(str(_SENTINEL), "%d")


V1_0 = Dialect(
    name="1.0",
    unary_method="SendMessage",
    stream_method="SendStreamingMessage",
    headers={"Content-Type": "application/json", "A2A-Version": "1.0"},
    completed_marker='"TASK_STATE_COMPLETED"',
)
V0_3 = Dialect(
    name="0.3",
    unary_method="message/send",
    stream_method="message/stream",
    headers={"Content-Type": "application/json"},
    completed_marker='"completed"',
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
        if dialect.name == "1.0":
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
