"""A task's generation (A2A 1.1, draft): what counts, written once here.

A task is created at generation 1; every event a stream carries (a status or
an artifact update) moves it on by exactly 1 and carries the generation after
it. Entries of the log that are not stream events (a message joining the
history) leave it as it is. So the generation is the log's own count of its
stream events: it survives restarts and is the same on every replica, since
every process writes the log under the same optimistic version check, or (a
write for a turn another process runs) has the store number it in the write's
own transaction (``TaskPort.append``).

The writer (``server/run.py``) numbers events as they are queued (a chunk is
made with its number) and checks a batch by its first event before the store
writes it, renumbering it when the task moved on meanwhile, so that every store
keeps the number with the event; a store
that keeps a log in a form without it (the memory store's packed logs) counts
it again when it reads the log back (``recount``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import TaskGenerationMismatch
from .model import ArtifactUpdate, Event, StatusUpdate, TaskCreated

__all__ = ["after", "last_of", "mismatch", "recount"]


def after(events: Sequence[Event], generation: int) -> int:
    """Number ``events`` on from ``generation`` (the task's before them); the
    generation after them. (The writer has this loop written out.)"""
    for event in events:
        if type(event) is StatusUpdate or type(event) is ArtifactUpdate:
            generation += 1
            event.generation = generation
    return generation


def last_of(events: Sequence[Event]) -> int | None:
    """The task's generation after a numbered batch of its log (None: the batch
    moves it not, holding only history entries). A store keeps it on the
    task's row, so that a read of the row alone has it."""
    for event in reversed(events):  # the last event is nearly always numbered
        kind = type(event)
        if kind is StatusUpdate or kind is ArtifactUpdate:
            return event.generation  # type: ignore[union-attr]
        if kind is TaskCreated:
            return event.task.generation  # type: ignore[union-attr]
    return None


def recount(events: Sequence[Event]) -> None:
    """Number a whole log (it starts with ``TaskCreated``) as its writer did."""
    generation = 0
    for event in events:
        if type(event) is TaskCreated:
            generation = event.task.generation = 1
        elif type(event) is StatusUpdate or type(event) is ArtifactUpdate:
            generation += 1
            event.generation = generation


def mismatch(task_id: str, expected: int, current: int) -> TaskGenerationMismatch:
    """The refusal of a follow-up sent for generation ``expected`` (ifGenerationMatch;
    its ErrorInfo metadata as the draft's §11.6 example has it)."""
    return TaskGenerationMismatch(
        f"Task generation mismatch: expected {expected} but current generation is {current}",
        data={"taskId": task_id, "expectedGeneration": str(expected),
              "currentGeneration": str(current)})
