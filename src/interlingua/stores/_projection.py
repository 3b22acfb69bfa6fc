"""Turning a task's log into the task a reader sees, with ``core.lifecycle`` rules.

Every store folds with ``lifecycle.apply`` so that the projection rules live in
one place. Two shapes of fold are needed:

* the full fold (``start`` then ``apply`` per event) rebuilds history and
  artifacts;
* the *probe* fold (``advance_probe``) runs a batch of new events over a task
  that carries only its id, context and status (and the history, where a row
  keeps one): it validates the batch against the lifecycle and yields the new
  status without loading the log; artifacts are checked, never folded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import compress, repeat
from operator import is_

import msgspec

from ..core.errors import InvalidParams, LifecycleError
from ..core.generation import after, mismatch
from ..core.lifecycle import (
    ARTIFACT_STATES,
    CHUNKS_IN_C_PAST,
    INTERRUPTED_STATES,
    apply,
    check,
    check_from,
    past_leading_chunks,
)
from ..core.model import (
    Artifact,
    ArtifactUpdate,
    Event,
    HistoryAppended,
    Message,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
)

__all__ = [
    "HISTORY_MAX",
    "adds_messages",
    "advance",
    "advance_probe",
    "as_stored",
    "check_history_length",
    "created_task",
    "fold",
    "own_artifacts",
    "probe",
    "sort_stamp",
    "start",
    "trim_history",
    "view",
]


def created_task(events: Sequence[Event]) -> Task:
    """The task of ``events[0]``, which must be ``TaskCreated``."""
    if not events or not isinstance(events[0], TaskCreated):
        first = type(events[0]).__name__ if events else "nothing"
        raise ValueError(f"a task's log starts with TaskCreated, not {first}")
    return events[0].task


def as_stored(task_id: str, state: TaskState, generation: int, events: Sequence[Event],
              if_generation: int | None) -> None:
    """``events`` written at the version their task is at (``TaskPort.append`` with no
    expected version), read with its ``state`` and ``generation`` in the write's own
    transaction: checked against that state (``LifecycleError``), refused unless the
    task is at ``if_generation`` (``TaskGenerationMismatch``; None: any), and numbered
    on from that generation, in place.

    A message written so is one for a turn that works in another process, which
    hands it to its executor. A task that asks for input or auth has no such turn
    (it ended): the message would sit in its history, read by no one, so it is
    refused (``LifecycleError`` with that state), and its sender answers the
    question with it as any follow-up does, a new turn written with the message at
    the version it read. Decided in the write's own transaction, whatever order
    the turn's last write and this one reach the store in, the message is read
    once: by the turn it reached while working, or by the turn it starts."""
    if state in INTERRUPTED_STATES and HistoryAppended in map(type, events):
        raise LifecycleError(
            f"task {task_id} is {state.value}; a message answers it as a follow-up, "
            "with a turn of its own", state=state)
    check_from(state, task_id, events)
    if if_generation is not None and if_generation != generation:
        raise mismatch(task_id, if_generation, generation)
    after(events, generation)


def start(created: Task) -> Task:
    """A projection that owns its lists, so folding never reaches into the event."""
    return msgspec.structs.replace(
        created, artifacts=own_artifacts(created.artifacts), history=list(created.history)
    )


def fold(events: Iterable[Event]) -> Task:
    """The projection of a log (or of a part of it that starts with ``TaskCreated``)."""
    it = iter(events)
    first = next(it)
    if not isinstance(first, TaskCreated):
        raise ValueError(f"a task's log starts with TaskCreated, not {type(first).__name__}")
    task = start(first.task)
    for event in it:
        apply(task, event)
    return task


def probe(task_id: str, context_id: str, status: TaskStatus) -> Task:
    """A stand-in for the task with what ``lifecycle.check`` reads: id and status."""
    return Task(id=task_id, context_id=context_id, status=status)


def advance(task: Task, events: Iterable[Event]) -> bool:
    """Fold ``events`` into ``task``; True if its status changed.

    Raises ``LifecycleError`` for an event the state does not allow (``task``
    is then partly advanced: pass a probe, not a task others hold).
    """
    before = task.status
    for event in events:
        apply(task, event)
    return task.status is not before


def advance_probe(task: Task, events: Sequence[Event]) -> bool:
    """``advance`` over a probe: every event is checked against the lifecycle,
    status and history are folded, artifacts are not. No store reads a probe's
    artifacts, and folding a stream's chunks would copy the first and extend a
    list with each of the others, for nothing."""
    before = task.status
    if len(events) > CHUNKS_IN_C_PAST:
        # the chunks that lead a streamed batch change nothing a probe holds
        events = past_leading_chunks(before.state, events)
    for event in events:
        if type(event) is ArtifactUpdate:
            # allowed in these states, with no call
            if task.status.state not in ARTIFACT_STATES:
                check(task, event)  # raises, saying why
        else:
            apply(task, event)
    return task.status is not before


#: The stores that keep a task's history beside its status (for listings that
#: need no fold of the log) stop keeping it past this many encoded bytes: the
#: row is rewritten by every write, so it must stay small (and, in SQLite, on
#: its 2 KiB page, beside the row's other columns).
HISTORY_MAX = 1536


def adds_messages(events: Sequence[Event]) -> bool:
    """Whether folding ``events`` may add to a task's history."""
    kinds = set(map(type, events))  # one pass in C: a batch of chunks ends here
    if HistoryAppended in kinds or TaskCreated in kinds:
        return True
    if StatusUpdate in kinds:
        # the status updates picked out in C: a streamed batch's chunks cost no bytecode
        for event in compress(events, map(is_, map(type, events), repeat(StatusUpdate))):
            if event.status.message is not None:  # type: ignore[union-attr]
                return True
    return False


def sort_stamp(status: TaskStatus, now: str) -> str:
    """The time a task is listed under: its status timestamp, else when the
    status was written (a status without a timestamp still sorts sensibly)."""
    return status.timestamp or now


def own_artifacts(artifacts: list[Artifact]) -> list[Artifact]:
    # Appending chunks extends an artifact's parts in place, so each holder of a
    # projection needs its own artifact objects and parts lists.
    return [msgspec.structs.replace(a, parts=list(a.parts)) for a in artifacts]


def check_history_length(history_length: int | None) -> None:
    if history_length is not None and history_length < 0:
        raise InvalidParams(
            f"Invalid params: historyLength must not be negative, got {history_length}"
        )


def trim_history(history: list[Message], history_length: int | None) -> list[Message]:
    """The last ``history_length`` messages (None = all) as a new list."""
    if history_length is None:
        return list(history)
    check_history_length(history_length)
    return history[-history_length:] if history_length else []


def view(task: Task, history_length: int | None, include_artifacts: bool) -> Task:
    """A copy of a live projection that later folds into it do not change."""
    return msgspec.structs.replace(
        task,
        history=trim_history(task.history, history_length),
        artifacts=own_artifacts(task.artifacts) if include_artifacts else [],
    )
