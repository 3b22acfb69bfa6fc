"""How a gateway's turn takes what the agent on the mesh answers: updates into the
gateway's task log as they come (``relay``), and the final answer ending the
turn as it ended there (``finish``). Shared by the gateway's links to each
topic layout (mesh/gateway.py, mesh/emqx/link.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ..client.errors import AgentUnreachable
from ..core.errors import UnsupportedOperation
from ..core.lifecycle import RETURN_STATES
from ..core.model import ArtifactUpdate, Message, StatusUpdate, Task, TaskState
from ..server.context import Context, TaskCanceled

__all__ = ["FIRST_ANSWER", "RECONNECT_WAIT", "Unanswered", "canceled_here", "finish",
           "follow_again", "forwarded", "relay"]


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
    """An update from the mesh, written into the gateway's task log."""
    if isinstance(item, ArtifactUpdate):
        a = item.artifact
        await ctx.artifact(a.parts, artifact_id=a.artifact_id, name=a.name,
                           description=a.description, append=item.append,
                           last_chunk=item.last_chunk, metadata=a.metadata)
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
    for a in item.artifacts:  # a send that was not streamed brings its artifacts here
        await ctx.artifact(a.parts, artifact_id=a.artifact_id, name=a.name,
                           description=a.description, last_chunk=True, metadata=a.metadata)
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


#: seconds a gateway waits for the broker to come back before a turn it was following
#: ends failed (the agent may well carry on meanwhile: it is asked again, not given up)
RECONNECT_WAIT = 30.0
#: seconds an agent asked for its task again after an outage has to answer (it answers
#: a subscription at once, with the task) before it is asked once more; and seconds a
#: SAM-layout gateway waits for the first answer to a turn's request before it asks
#: the agent whether it has the request at all
FIRST_ANSWER = 3.0


class Unanswered(Exception):
    """No first answer within the patience a ``follow_again`` ask was given."""


async def follow_again(ask: Callable[[float | None], Awaitable[None]],
                       read: Callable[[], Awaitable[None]]) -> bool:
    """After the connection to the broker was lost while a turn followed a task:
    ``ask(patience)`` subscribes to the task again and follows it to its end, its first
    answer within ``patience`` s (None: however long) or ``Unanswered``. Asked until
    the broker is back, within ``RECONNECT_WAIT``; False if it never came back. An
    agent that refuses the subscription because the task has ended meanwhile (A2A
    1.0's rule) is asked for the task instead (``read``), which ends the turn.

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
        except AgentUnreachable:
            await asyncio.sleep(0.5)
        except Unanswered:
            pass
    return False
