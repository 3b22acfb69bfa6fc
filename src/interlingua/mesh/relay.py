"""How a gateway's turn takes what the agent on the mesh answers: updates into the
gateway's task log as they come (``relay``), and the final answer ending the
turn as it ended there (``finish``). Shared by the gateway's links to each
topic layout (mesh/gateway.py, mesh/emqx/link.py).

The agent's own task is the reference. Updates can go missing on the way (a broker
that restarts drops what it held; one that a reader does not keep up with drops
the excess; a gateway that restarts was not listening), so before a turn ends here
the gateway compares its copy of the artifacts with the agent's (``reconcile``:
the final Task, or the Task the links read from the agent for a streamed turn,
whose final answer leaves them out) and writes what it lacks into its log, before
the status that ends the turn: the stored task, and every later reader of its log,
has all of it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..client.errors import AgentUnreachable
from ..core.errors import TaskNotFound, UnsupportedOperation
from ..core.lifecycle import RETURN_STATES
from ..core.model import Artifact, ArtifactUpdate, Message, StatusUpdate, Task, TaskState
from ..server.context import Context, TaskCanceled

__all__ = ["FIRST_ANSWER", "QUIET_AFTER", "RECONCILE_WAIT", "RECONCILE_WAIT_AWAY",
           "RECONNECT_WAIT", "Unanswered",
           "canceled_here", "finish", "follow_again", "forwarded", "reconcile", "relay",
           "unread_because"]

log = logging.getLogger("interlingua.mesh")


def canceled_here(ctx: Context, exc: BaseException) -> bool:
    """Whether a gateway's turn ended by ``exc`` ends because its task was canceled
    here (over HTTP: the turn canceled, or a write after the cancel refused), so is to
    be canceled on the mesh too. A turn cut because the gateway stops is no cancel of
    the agent's task, which goes on there (it was canceled, and its gateway's task
    failed: a restart told them apart)."""
    return isinstance(exc, TaskCanceled) or ctx.cancelled.is_set()


def forwarded(ctx: Context) -> dict[str, Any]:
    """The user properties a gateway's request to the agent carries: who asked (SAM's
    ``userId``), and the extensions the caller asked for, which the agent reads as it
    reads ``A2A-Extensions`` over HTTP (they did not reach it)."""
    properties: dict[str, Any] = {"userId": ctx.principal or None}
    extensions = ctx.request.extensions
    if extensions:
        properties["A2A-Extensions"] = ", ".join(extensions)
    return properties


async def relay(ctx: Context, item: Any) -> None:
    """An update from the mesh, written into the gateway's task log. A Task (the
    snapshot a subscription begins with) brings the artifacts the gateway lacks."""
    if isinstance(item, ArtifactUpdate):
        a = item.artifact
        if not item.append and _artifact_of(ctx, a.artifact_id) is not None:
            # a whole artifact the gateway has (a snapshot's, sent again after an
            # outage): only what its copy lacks is written
            await _take(ctx, a, item.last_chunk)
            return
        await ctx.artifact(a.parts, artifact_id=a.artifact_id, name=a.name,
                           description=a.description, append=item.append,
                           last_chunk=item.last_chunk, metadata=a.metadata)
    elif isinstance(item, Task):
        await reconcile(ctx, item.artifacts)
    elif isinstance(item, StatusUpdate):
        state = item.status.state
        if state in RETURN_STATES or state in (TaskState.SUBMITTED, TaskState.CANCELED):
            return  # the final Task says how it ended
        message = item.status.message
        await ctx.update(message.parts if message is not None and message.parts else None,
                         state=state, metadata=item.metadata)


async def finish(ctx: Context, item: Any) -> None:
    """The agent's final answer ends the turn here as it ended there."""
    if isinstance(item, Message):
        await ctx.reply(item.parts)
        return
    if not isinstance(item, Task):
        return
    # a send that was not streamed brings its artifacts here; a streamed one, what its
    # updates did not bring (the link read them from the agent): before the end
    await reconcile(ctx, item.artifacts)
    status = item.status
    content = status.message.parts if status.message is not None and status.message.parts \
        else None
    state = status.state
    if state is TaskState.COMPLETED:
        await ctx.complete(content)
    elif state is TaskState.INPUT_REQUIRED:
        await ctx.require_input(content)
    elif state is TaskState.AUTH_REQUIRED:
        await ctx.require_auth(content)
    elif state is TaskState.REJECTED:
        await ctx.reject(content)
    elif state is TaskState.CANCELED:
        await ctx._end(TaskState.CANCELED, content, None, None, None)
    else:
        await ctx.fail(content)


async def reconcile(ctx: Context, artifacts: list[Artifact]) -> int:
    """Write into the gateway's log what its copy of the task lacks of ``artifacts``
    (the agent's): an artifact it does not have, the rest of one whose parts it has
    the beginning of, or the whole of one it has otherwise (parts went missing in
    the middle: written again, replacing its copy). The number of artifacts written.

    Only adds: an artifact the agent's list leaves out is kept (a streamed task's
    final answer leaves them all out)."""
    if not artifacts:
        return 0
    await ctx._sink.emit([])  # what is queued, written: the copy compared is whole
    written = 0
    for a in artifacts:
        written += await _take(ctx, a, True)
    if written:
        log.warning("task %s: %d artifact(s) completed from the agent's copy (updates "
                    "from it were lost on the way)", ctx.task_id, written)
    return written


def _artifact_of(ctx: Context, artifact_id: str) -> Artifact | None:
    return next((a for a in ctx.task.artifacts if a.artifact_id == artifact_id), None)


async def _take(ctx: Context, a: Artifact, last_chunk: bool) -> int:
    """The agent's artifact ``a`` into the gateway's log, as little of it as its copy
    lacks (1: something was written)."""
    mine = _artifact_of(ctx, a.artifact_id)
    if mine is not None and mine.parts == a.parts:
        return 0
    if mine is not None and mine.parts and a.parts[:len(mine.parts)] == mine.parts \
            and (mine.name, mine.description, mine.metadata) == (a.name, a.description,
                                                                  a.metadata):
        await ctx.artifact(a.parts[len(mine.parts):], artifact_id=a.artifact_id,
                           append=True, last_chunk=last_chunk)
    else:
        await ctx.artifact(a.parts, artifact_id=a.artifact_id, name=a.name,
                           description=a.description, last_chunk=last_chunk,
                           metadata=a.metadata)
    return 1


#: seconds a gateway waits for the broker to come back before a turn it was following
#: ends failed (the agent may well carry on meanwhile: it is asked again, not given up)
RECONNECT_WAIT = 30.0
#: seconds an agent asked for its task again after an outage has to answer (it answers
#: a subscription at once, with the task) before it is asked once more; and seconds a
#: SAM-layout gateway waits for the first answer to a turn's request before it asks
#: the agent whether it has the request at all
FIRST_ANSWER = 3.0
#: seconds a SAM-layout gateway's turn hears nothing from the agent before it reads the
#: agent's task (an answer the broker dropped: a turn whose task ended there ends)
QUIET_AFTER = 30.0
#: seconds a gateway waits for the agent's task, read to check its copy's artifacts
#: before a streamed turn ends
RECONCILE_WAIT = 10.0
#: the same wait for an agent not heard on the mesh now: one that is stopping withdrew
#: its card and answers no more (the turn's end waited 10 s for nothing), while one
#: not heard yet by a gateway that has just started answers as fast as any
RECONCILE_WAIT_AWAY = 1.0


def unread_because(exc: BaseException, waited: float) -> str:
    """Why the agent's task could not be read, as a warning says it: a timeout, whose
    own message is empty, as the wait it ended."""
    if isinstance(exc, TimeoutError):
        return f"no answer within {waited:g} s"
    return str(exc) or type(exc).__name__


class Unanswered(Exception):
    """No first answer within the patience a ``follow_again`` ask was given."""


async def follow_again(ask: Callable[[float | None], Awaitable[None]],
                       read: Callable[[], Awaitable[None]],
                       resend: Callable[[], Awaitable[None]] | None = None) -> bool:
    """After the connection to the broker was lost while a turn followed a task:
    ``ask(patience)`` subscribes to the task again and follows it to its end, its first
    answer within ``patience`` s (None: however long) or ``Unanswered``. Asked until
    the broker is back, within ``RECONNECT_WAIT``; False if it never came back. An
    agent that refuses the subscription because the task has ended meanwhile (A2A
    1.0's rule) is asked for the task instead (``read``), which ends the turn. One
    that has no such task never got the request (lost with the broker that held it):
    it is sent again (``resend``: the same id and message, which the agent runs once)
    and followed to its end.

    Silence is asked again: a restarted broker keeps no session, so a request sent
    before the agent has subscribed again is lost (the turn waited for ever). The last
    ask waits as long as the agent takes."""
    loop = asyncio.get_running_loop()
    end = loop.time() + RECONNECT_WAIT
    while loop.time() < end:
        patience = FIRST_ANSWER if loop.time() + FIRST_ANSWER < end else None
        try:
            await ask(patience)
            return True
        except UnsupportedOperation:
            await read()
            return True
        except TaskNotFound:
            if resend is None:
                raise
            log.info("the agent has no task of the request it was sent: sending it again")
            await resend()
            return True
        except AgentUnreachable:
            await asyncio.sleep(0.5)
        except Unanswered:
            pass
    return False
