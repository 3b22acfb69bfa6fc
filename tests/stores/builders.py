"""Builders of tasks and events for the store tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from interlingua.core.model import (
    Artifact,
    ArtifactUpdate,
    HistoryAppended,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
    TextPart,
)

_BASE = datetime(2025, 1, 31, 12, 0, tzinfo=UTC)


def ts(seconds: float) -> str:
    """A canonical timestamp ``seconds`` after a fixed base."""
    t = _BASE + timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def user(message_id: str, text: str = "hi") -> Message:
    return Message(message_id=message_id, role=Role.USER, parts=[TextPart(text)])


def agent(message_id: str, text: str = "ok") -> Message:
    return Message(message_id=message_id, role=Role.AGENT, parts=[TextPart(text)])


def created(
    task_id: str,
    ctx: str = "ctx-1",
    *,
    at: str | None = None,
    history: list[Message] | None = None,
    metadata: dict[str, object] | None = None,
) -> TaskCreated:
    return TaskCreated(
        Task(
            id=task_id,
            context_id=ctx,
            status=TaskStatus(TaskState.SUBMITTED, timestamp=at),
            history=list(history or []),
            metadata=metadata,
        )
    )


def status(
    task_id: str,
    state: TaskState,
    at: str | None,
    ctx: str = "ctx-1",
    message: Message | None = None,
) -> StatusUpdate:
    return StatusUpdate(task_id, ctx, TaskStatus(state, message=message, timestamp=at))


def chunk(
    task_id: str,
    artifact_id: str,
    *texts: str,
    append: bool = False,
    last: bool = False,
    name: str | None = None,
    ctx: str = "ctx-1",
) -> ArtifactUpdate:
    artifact = Artifact(artifact_id=artifact_id, parts=[TextPart(t) for t in texts], name=name)
    return ArtifactUpdate(task_id, ctx, artifact, append=append, last_chunk=last)


def said(message: Message) -> HistoryAppended:
    return HistoryAppended(message)
