"""The gateway's way to the agents of an A2A-over-MQTT ``{org}/{unit}``
(``interlingua gateway --mesh-profile emqx``): the registered agents from their
retained cards (``presence.Directory``), each turn a request with the gateway's
Response Topic and a Correlation Data of its own. A turn for an agent awaited back
after the broker went away waits for it (``presence``): a request published before
it has subscribed again is lost with a broker that kept nothing.

The gateway's task id is the task id on the mesh (the profile lets the requester
choose it), so a later turn of an input-required task names the same task
there. The agent's events are written into the gateway's log as they come; its
last answer (a ``task``/``message``, or the status that ends the turn) ends the
turn here as it ended there. A cancel over HTTP is made on the mesh with
``CancelTask`` before it is made here, for a running task as for one that waits
for input (``Gateway._canceled_there``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import msgspec

from ...client.errors import AgentTimeout, AgentUnreachable, ClientError
from ...core.calls import CancelTask, GetTask, SendMessage, SubscribeToTask
from ...core.dialects import get_codec
from ...core.errors import A2AError
from ...core.lifecycle import RETURN_STATES
from ...core.model import Message, StatusUpdate, Task
from ...server.context import Context, TaskCanceled
from ..discovery import LiveAgent
from ..instance import Slot, close_link, hold_gateway_id
from ..relay import (
    QUIET_AFTER,
    RECONCILE_WAIT,
    RECONCILE_WAIT_AWAY,
    Unanswered,
    canceled_here,
    finish,
    follow_again,
    forwarded,
    relay,
    unread_because,
)
from ..topics import MeshURL
from ..updates import read_update
from .presence import RETURN_GRACE, Directory
from .requester import EmqxRequester
from .topics import Space
from .wire import ends_turn, is_final

__all__ = ["EmqxLink"]

log = logging.getLogger("interlingua.mesh")

CODEC = get_codec("1.0")


class EmqxLink:
    """A gateway's link to one ``{org}/{unit}`` of the A2A-over-MQTT profile."""

    #: retained cards come as soon as the gateway subscribes
    warmup = 1.0

    def __init__(self, url: MeshURL, org: str, unit: str, gateway_id: str, *,
                 cancel_grace: float = 5.0) -> None:
        self.space = space = Space(org, unit)
        self.cancel_grace = cancel_grace
        #: seconds of silence from the agent after which a turn reads the agent's task:
        #: a final answer the broker dropped would leave the turn waiting for ever
        self.quiet_after = QUIET_AFTER
        #: seconds the agent's task, read once a turn ends, has to come
        self.reconcile_wait = RECONCILE_WAIT
        self.requester = EmqxRequester(url, space, requester=f"gateway-{gateway_id}",
                                       timeout=None)
        self.directory = Directory(url, space)
        self._background: set[asyncio.Task[Any]] = set()
        self._id = (url, f"$a2a/{org}/{unit}", gateway_id)
        self._slot: Slot | None = None

    def hold(self) -> None:
        if self._slot is None:
            url, where, gw = self._id
            self._slot = hold_gateway_id(url, where, gw, self.requester.client_id)

    async def start(self) -> None:
        self.hold()
        await self.requester.ensure()
        await self.directory.start()

    async def stop(self) -> None:
        slot, self._slot = self._slot, None
        await close_link(self._background, self.directory.stop, self.requester.aclose, slot=slot)

    def live(self) -> dict[str, LiveAgent]:
        return self.directory.live()

    async def forward(self, name: str, ctx: Context, streams: bool) -> None:
        task = ctx.task
        # the gateway's ids are the mesh's: the requester names the task there
        message = msgspec.structs.replace(ctx.message, task_id=task.id,
                                          context_id=task.context_id)
        call = SendMessage(message=message, streaming=streams)
        properties = forwarded(ctx)
        if not await self.directory.back(name):
            raise AgentUnreachable(
                f"{name} did not come back within {RETURN_GRACE:g} s of the broker's return")
        try:
            try:
                await self._follow(name, ctx, call, properties)
            except AgentUnreachable:
                # the connection to the broker was lost: the agent may well carry on,
                # and is asked for the task once it is back (it was failed here)
                if not await self._follow_again(name, ctx, task.id, properties, streams):
                    raise
        except (asyncio.CancelledError, TaskCanceled) as exc:
            if canceled_here(ctx, exc):
                self._spawn(self._cancel_on_mesh(name, task.id))
            raise

    async def _follow(self, name: str, ctx: Context, call: SendMessage | SubscribeToTask,
                      properties: dict[str, Any], first_within: float | None = None) -> None:
        """The answers to ``call``, relayed until the last ends the turn (the first
        within ``first_within`` s, else ``Unanswered``). After ``quiet_after`` s without
        a word the agent's task is read: ended there, the turn ends here alike."""
        gen = self.requester.exchange(name, call, properties=properties)
        # the next answer is awaited across quiet spells: a timeout around ``anext``
        # would cancel it and end the generator with the request's correlations
        coming: asyncio.Future[bytes] | None = None
        patience = first_within
        try:
            while True:
                if coming is None:
                    coming = asyncio.ensure_future(anext(gen))
                done, _ = await asyncio.wait(
                    {coming}, timeout=self.quiet_after if patience is None else patience)
                if not done:
                    if patience is not None:
                        raise Unanswered
                    if await self._ended_there(name, ctx, properties):
                        return
                    continue
                raw, coming, patience = coming.result(), None, None
                if await self._took(name, ctx, raw, properties, _streamed(call)):
                    return
        except StopAsyncIteration:
            return
        finally:
            if coming is not None and not coming.done():
                coming.cancel()
                with contextlib.suppress(BaseException):
                    await coming
            await gen.aclose()

    async def _ended_there(self, name: str, ctx: Context, properties: dict[str, Any]) -> bool:
        """Whether the agent's task has ended (then so has the turn here, with it)."""
        task = await self._agent_task(name, ctx.task.id, properties)
        if task is None or task.status.state not in RETURN_STATES:
            return False
        log.warning("task %s: %s ended it (%s) and its answer was lost on the way; "
                    "ended here as there", ctx.task.id, name, task.status.state.value)
        await finish(ctx, task)
        return True

    async def _took(self, name: str, ctx: Context, raw: bytes,
                    properties: dict[str, Any], streamed: bool) -> bool:
        """One answer relayed; True when it ended the turn. A stream's last answer
        leaves the artifacts out (they came as events, unless some were lost on the
        way): they are read from the agent, and what the gateway's copy lacks is
        written before the turn ends (``relay.reconcile``). An answer that is no
        update of the task (it cannot be read, or is about another task) is skipped
        (``read_update``): anyone who reads the request may publish under its
        Correlation Data. A last answer that cannot be read fails the turn."""
        item = read_update(raw, ctx.task.id, name, CODEC, last=ends_turn)
        if item is None:
            return False
        if not is_final(item):
            await relay(ctx, item)  # (a Task: the artifacts the gateway lacks)
            return False
        answer = _as_answer(item)
        if streamed and isinstance(answer, Task) and not answer.artifacts:
            answer = msgspec.structs.replace(
                answer, artifacts=await self._artifacts(name, answer.id, properties))
        await finish(ctx, answer)
        return True

    async def _artifacts(self, name: str, task_id: str,
                         properties: dict[str, Any]) -> list[Any]:
        """The artifacts of the agent's task (none when it cannot say)."""
        task = await self._agent_task(name, task_id, properties, history_length=0)
        return list(task.artifacts) if task is not None else []

    async def _agent_task(self, name: str, task_id: str, properties: dict[str, Any],
                          history_length: int | None = None) -> Task | None:
        """The agent's task ``task_id`` (None when it cannot say)."""
        call = GetTask(id=task_id, history_length=history_length)
        gen = self.requester.exchange(name, call, properties=properties)
        wait = self.reconcile_wait if name in self.live() else RECONCILE_WAIT_AWAY
        try:
            async with asyncio.timeout(wait):
                task = CODEC.decode_result(call, await anext(gen))
        except (A2AError, ClientError, TimeoutError, StopAsyncIteration) as exc:
            log.warning("task %s could not be read from %s: %s", task_id, name,
                        unread_because(exc, wait))
            return None
        finally:
            await gen.aclose()
        return task if isinstance(task, Task) else None

    async def _follow_again(self, name: str, ctx: Context, task_id: str,
                            properties: dict[str, Any], streams: bool) -> bool:
        """After a lost connection: the task subscribed to again once the broker and
        the agent are back, and followed to its end (``relay.follow_again``)."""
        async def ask(patience: float | None) -> None:
            await self._follow(name, ctx, SubscribeToTask(id=task_id), properties, patience)

        async def read() -> None:
            call = GetTask(id=task_id)
            gen = self.requester.exchange(name, call, properties=properties)
            try:
                ended = CODEC.decode_result(call, await anext(gen))
            finally:
                await gen.aclose()
            await finish(ctx, ended)

        async def resend() -> None:
            # (the profile's retry: the same task id, which the agent runs once)
            await self._follow(name, ctx, SendMessage(message=msgspec.structs.replace(
                ctx.message, task_id=task_id, context_id=ctx.task.context_id),
                streaming=streams), properties)

        return await follow_again(ask, read, resend)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def cancel(self, name: str, task_id: str) -> None:
        gen = self.requester.exchange(name, CancelTask(id=task_id))
        try:
            async with asyncio.timeout(self.cancel_grace):
                await anext(gen)
        except (TimeoutError, StopAsyncIteration):
            raise AgentTimeout(f"{name} did not answer the cancel within "
                               f"{self.cancel_grace:g} s") from None
        finally:
            await gen.aclose()

    async def _cancel_on_mesh(self, name: str, task_id: str) -> None:
        try:
            await self.cancel(name, task_id)
        except (A2AError, ClientError) as exc:
            log.info("task %s canceled here; on the mesh: %s", task_id, exc)


def _as_answer(item: Any) -> Task | Message:
    """The last answer as ``finish`` takes it: a final status is the task in that state
    (its artifacts went out as updates before it)."""
    if isinstance(item, StatusUpdate):
        return Task(id=item.task_id, context_id=item.context_id, status=item.status)
    assert isinstance(item, (Task, Message))
    return item


def _streamed(call: SendMessage | SubscribeToTask) -> bool:
    """Whether ``call``'s answers come as a stream, whose last leaves the artifacts out
    (they came as events); a plain send's final task carries them."""
    return isinstance(call, SubscribeToTask) or call.streaming
