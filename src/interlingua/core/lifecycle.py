"""The task lifecycle: which events each state allows, and how an event changes a task.

Theory of operation
-------------------
A task is the projection of its event log. ``apply(task, event)`` folds one
event into the projection after checking it against ``TRANSITIONS``; an event
the current state does not allow raises ``LifecycleError`` and changes nothing.

* ``TaskCreated`` starts every log; the task begins in ``submitted``.
* ``StatusUpdate`` moves the task to ``status.state``; ``TRANSITIONS`` lists the
  allowed moves. A status update to the *same* non-terminal state is allowed
  (an agent reporting progress while ``working``).
* ``ArtifactUpdate`` is allowed while the agent runs (``submitted``, ``working``).
* ``HistoryAppended`` (a message joining the history, e.g. the user's answer to
  ``input-required``) is allowed in every non-terminal state.
* Terminal states (completed, canceled, failed, rejected) allow nothing: a late
  event from a canceled executor is refused, so ``canceled`` is never
  overwritten.
* Interrupted states (input-required, auth-required) wait for the client; a
  continuation moves them back to ``working``. They may be canceled.

The table is data so that the docs are generated from it
(``python -m interlingua.core.lifecycle`` prints the Markdown table).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from .errors import LifecycleError
from .model import (
    TERMINAL_STATES,
    Artifact,
    ArtifactUpdate,
    Event,
    HistoryAppended,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
)

__all__ = [
    "ARTIFACT_STATES",
    "INTERRUPTED_STATES",
    "LISTABLE_STATES",
    "RETURN_STATES",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "apply",
    "apply_checked",
    "check",
    "check_all",
    "check_from",
    "markdown_table",
    "own_artifact",
]

S = TaskState

INTERRUPTED_STATES = frozenset({S.INPUT_REQUIRED, S.AUTH_REQUIRED})
# A blocking send returns, and a v1.0 stream closes, once one of these is reached.
RETURN_STATES = TERMINAL_STATES | INTERRUPTED_STATES

_ENDINGS = frozenset({S.COMPLETED, S.FAILED, S.CANCELED, S.REJECTED})

TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    # An agent may finish without ever reporting "working".
    S.SUBMITTED: frozenset({S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED}) | _ENDINGS,
    S.WORKING: frozenset({S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED}) | _ENDINGS,
    # Waiting on the client: resumed by a continuation, or canceled / failed
    # (timeouts, restarts) while waiting. Not completed or rejected: the agent
    # is not running.
    S.INPUT_REQUIRED: frozenset({S.WORKING, S.CANCELED, S.FAILED}),
    S.AUTH_REQUIRED: frozenset({S.WORKING, S.CANCELED, S.FAILED}),
    S.UNKNOWN: frozenset({S.WORKING, S.CANCELED, S.FAILED}),
    S.COMPLETED: frozenset(),
    S.CANCELED: frozenset(),
    S.FAILED: frozenset(),
    S.REJECTED: frozenset(),
}

#: states of a task whose turn is under way (or about to be): what a process that
#: is gone leaves unfinished, for another to end
UNFINISHED_STATES = frozenset({S.SUBMITTED, S.WORKING})
# a task takes artifacts while its turn is under way
ARTIFACT_STATES = UNFINISHED_STATES

#: the states tasks can be listed by, in order: v1.0 writes "unknown" as
#: TASK_STATE_UNSPECIFIED, which a ListTasks filter reads as no filter at all
LISTABLE_STATES = tuple(s for s in TaskState if s is not S.UNKNOWN)


def check(task: Task, event: Event) -> None:
    """Raise ``LifecycleError`` if ``event`` is not allowed for ``task`` now."""
    _check(task.id, task.status.state, event)


def check_all(task: Task, events: Sequence[Event]) -> TaskState:
    """Check a batch of events in order without touching ``task``.

    Returns the state the task will be in after them. A batch is checked as a
    whole before it is written, so a refused batch leaves no trace.
    """
    return check_from(task.status.state, task.id, events)


#: a batch of more events than this is worth ``past_leading_chunks``' call (a
#: unary send's short batches are checked event by event, with no call more)
CHUNKS_IN_C_PAST = 4


def past_leading_chunks(state: TaskState, events: Sequence[Event]) -> Sequence[Event]:
    """``events`` from the first that is no artifact update, when ``state`` takes
    artifacts: the updates before it (nearly all of a streamed batch) pass there,
    and change no state. Found in C, no bytecode per event; a batch whose updates
    do not all lead is given back whole."""
    if state in ARTIFACT_STATES:
        kinds = list(map(type, events))
        # counted (a loop in C, no set made): a streamed batch is all chunks, or
        # chunks then the status update that ends it
        leading = kinds.count(ArtifactUpdate)
        if leading == len(kinds) or kinds[:leading].count(ArtifactUpdate) == leading:
            return events[leading:]
    return events


def check_from(state: TaskState, task_id: str, events: Sequence[Event]) -> TaskState:
    """``check_all`` for a task in ``state`` (which may be ahead of any stored task)."""
    if len(events) > CHUNKS_IN_C_PAST:
        events = past_leading_chunks(state, events)
    for event in events:
        kind = type(event)
        if kind is ArtifactUpdate and state in ARTIFACT_STATES:
            continue  # most events of a batch: no call for them
        if kind is StatusUpdate:
            new = event.status.state  # type: ignore[union-attr]
            if new not in TRANSITIONS[state]:
                _check(task_id, state, event)  # raises, saying why
            state = new  # an allowed transition (every batch has one): no call for it
            continue
        _check(task_id, state, event)
    return state


# Dispatch on ``type(event) is``: the model classes are final, and an
# ``isinstance`` that misses costs a metaclass ``__instancecheck__`` call
# (several times the whole check) on every event.


def _check(task_id: str, state: TaskState, event: Event) -> None:
    kind = type(event)
    if kind is ArtifactUpdate:
        if state not in ARTIFACT_STATES:
            raise LifecycleError(
                f"task {task_id} is {state.value}; it takes no more artifacts",
                state=state,
                event=event,
            )
    elif kind is StatusUpdate:
        assert isinstance(event, StatusUpdate)
        new = event.status.state
        if new not in TRANSITIONS[state]:
            raise LifecycleError(
                f"task {task_id} is {state.value}; it cannot become {new.value}",
                state=state,
                event=event,
            )
    elif kind is HistoryAppended:
        if state in TERMINAL_STATES:
            raise LifecycleError(
                f"task {task_id} is {state.value}; it takes no more messages",
                state=state,
                event=event,
            )
    elif kind is TaskCreated:
        raise LifecycleError(f"task {task_id} already exists", state=state, event=event)
    else:
        raise TypeError(f"not a task event: {event!r}")


def apply(task: Task, event: Event, *, checked: bool = False) -> Task:
    """Fold ``event`` into ``task`` in place and return it; refuse illegal events.

    In place, because the engine owns the live projection of a running task and
    copying a task with a long history per event would make every event cost
    as much as the whole task.
    """
    if not checked:  # ``checked``: the caller already ran ``check_all`` on its batch
        check(task, event)
    kind = type(event)
    if kind is ArtifactUpdate:
        assert isinstance(event, ArtifactUpdate)
        _apply_artifact(task, event)
        if event.generation > task.generation:  # a fold of part of a log keeps the latest
            task.generation = event.generation
    elif kind is StatusUpdate:
        assert isinstance(event, StatusUpdate)
        if event.generation > task.generation:
            task.generation = event.generation
        msg = event.status.message
        if msg is not None and (not task.history or task.history[-1].message_id != msg.message_id):
            task.history.append(msg)
        task.status = event.status
    elif kind is HistoryAppended:
        assert isinstance(event, HistoryAppended)
        task.history.append(event.message)
    return task


def apply_checked(task: Task, events: Sequence[Event]) -> None:
    """``apply(task, e, checked=True)`` for each of ``events``, in order: a batch
    that ``check_all`` passed."""
    arts = task.artifacts
    # apply's folds by kind, here: no call per event but an artifact's search
    for event in events:
        # ``type(event) is``, which narrows the type: an assert would cost a call per event
        if type(event) is ArtifactUpdate:
            new = event.artifact
            if event.append and arts:
                # A chunk of the artifact added last, with nothing but parts: the
                # bulk of a streamed batch, extended without a search.
                last = arts[-1]
                if (new.artifact_id == last.artifact_id and new.name is None
                        and new.description is None and not new.metadata
                        and new.extensions is None):
                    last.parts.extend(new.parts)
                    continue
            elif not arts:  # the task's first artifact: nothing to search
                arts.append(msgspec.structs.replace(new, parts=list(new.parts)))
                continue
            _apply_artifact(task, event)
        elif type(event) is StatusUpdate:
            msg = event.status.message
            if msg is not None and (not task.history
                                    or task.history[-1].message_id != msg.message_id):
                task.history.append(msg)
            task.status = event.status
        elif type(event) is HistoryAppended:
            task.history.append(event.message)


def _apply_artifact(task: Task, event: ArtifactUpdate) -> None:
    new = event.artifact
    for i, old in enumerate(task.artifacts):
        if old.artifact_id == new.artifact_id:
            if event.append:
                # Extend in place: a stream of N chunks must cost O(N), not O(N^2).
                old.parts.extend(new.parts)
                if new.name is not None:
                    old.name = new.name
                if new.description is not None:
                    old.description = new.description
                if new.metadata:
                    old.metadata = {**(old.metadata or {}), **new.metadata}
                if new.extensions is not None:
                    old.extensions = new.extensions
            else:
                task.artifacts[i] = own_artifact(new)
            return
    task.artifacts.append(own_artifact(new))


def own_artifact(artifact: Artifact) -> Artifact:
    """``artifact`` with a parts list of its own, so later appends never reach into
    the object that the log and the readers share."""
    return msgspec.structs.replace(artifact, parts=list(artifact.parts))



def markdown_table() -> str:
    """The transition table as Markdown, for ``docs/lifecycle.md``."""
    states = list(TaskState)
    head = "| from \\ to | " + " | ".join(s.value for s in states) + " | artifacts | messages |"
    sep = "|---" * (len(states) + 3) + "|"
    rows = [head, sep]
    for src in states:
        cells = ["yes" if dst in TRANSITIONS[src] else "·" for dst in states]
        art = "yes" if src in ARTIFACT_STATES else "·"
        msg = "·" if src in TERMINAL_STATES else "yes"
        rows.append(f"| **{src.value}** | " + " | ".join(cells) + f" | {art} | {msg} |")
    return "\n".join(rows)
