"""Which turn of a task a state belongs to, as ``Client.settle`` follows one.

An answer to a message that continues a task (one that waited for input) is
followed to the end of *its* turn. The task's log, replayed from its start, holds
the ends of the turns before (the input-required the message answers), and a store
that lags behind (a replica's) may still give the task as it stood before the
message. A state is placed against the answer, first by the task's generation (A2A
1.1: one more for every event), else by the status timestamp the agent wrote: an
earlier one is an earlier turn's; an end that is final (completed, failed, ...)
never is, since no message continues a task after it. Where the marks cannot tell
(no timestamps, or the same millisecond), the task is read to know; a read is the
task as it stands, so it is this turn's unless its marks say otherwise.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ..core import lifecycle
from ..core.model import TERMINAL_STATES, Task

__all__ = ["Turn"]


class Turn:
    """The turn ``answer`` (a task answered before it settled) belongs to, and the
    task as last heard of within it (``latest``)."""

    def __init__(self, answer: Task) -> None:
        self.answer = answer
        self.latest = answer
        #: a stream of the task's log has come to the answer's own point: what it
        #: brings after is of this turn, in the log's order
        self.reached = False

    def earlier(self, task: Task) -> bool | None:
        """Whether ``task`` (as an event left it, or as read) is of a turn before the
        answer's: True or False, None when its marks cannot tell."""
        if task.status.state in TERMINAL_STATES:
            # a task that has ended takes no message more: no turn follows its end (so
            # no clock's skew between the agent's processes can hide it)
            return False
        answer = self.answer
        if answer.generation and task.generation:
            return task.generation < answer.generation
        ours, theirs = _instant(answer.status.timestamp), _instant(task.status.timestamp)
        if ours is None or theirs is None:
            return None
        if theirs != ours:
            return theirs < ours
        # the same millisecond: the answer's own status, or one either side of it
        return False if task.status == answer.status else None

    def place(self, task: Task) -> bool | None:
        """``task`` as the next event of the task's log, placed as ``earlier`` places
        it; once one is of this turn, every later one is. One of this turn is the
        latest heard of."""
        earlier = False if self.reached else self.earlier(task)
        if earlier is False:
            self.reached = True
            self.latest = task
        return earlier

    def ended(self, task: Task) -> bool:
        """``task``, as read, has ended the answer's turn (finished, or waits for
        input again): a return state that is not an earlier turn's."""
        return task.status.state in lifecycle.RETURN_STATES and self.earlier(task) is not True


def _instant(stamp: str | None) -> datetime | None:
    """The instant of a status timestamp (the codecs give RFC 3339 in UTC)."""
    if stamp is None:
        return None
    try:
        instant = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=UTC)
