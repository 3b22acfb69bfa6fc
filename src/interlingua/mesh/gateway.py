"""A gateway: every agent heard on a mesh, served as an ordinary A2A agent over HTTP.

``GET /agents`` lists the live agents; ``/agents/{name}/`` is each one's
JSON-RPC endpoint (every dialect interlingua serves) and the base of its
HTTP+JSON routes (``/agents/{name}/message:send``, ``…/v1/…`` for v0.3), with
its card under ``/agents/{name}/.well-known/agent-card.json``; ``{name}`` is
the agent's topic level on the mesh (``discovery.agent_level``).

Each mesh agent gets a whole interlingua server of its own in this process,
whose executor forwards the turn to the agent on the mesh: the task id the
gateway's engine makes is the JSON-RPC id (so the task's id) on the mesh, the
status and artifact updates that come back on the gateway's status topic are
written into the gateway's own task log as they arrive, and the final Task
ends the turn. So everything an HTTP client can do with a task works as with
any interlingua agent: blocking and non-blocking sends, streams, ``tasks/get``,
resubscribe with ``Last-Event-ID`` (replayed from the gateway's store). A cancel over
HTTP goes to the agent first, as ``tasks/cancel``, whether a turn of the task runs here
or it waits for input: once the agent has canceled it, it is canceled here (its turn
stopped); one the agent refuses, or cannot be told of (it has left the mesh, or does not
answer within ``cancel_grace``), is refused here too, and the task is left as it was.
A task canceled on the mesh is canceled here.

Answers come back on ``{ns}/a2a/v1/gateway/response/{gateway}/{task}`` and
``{ns}/a2a/v1/gateway/status/{gateway}/{task}``, matched to the turn by id.

A gateway knows an agent from its card, which comes every ten seconds: until it
has listened for one such period (``warmup``), an agent not heard yet may well
be there, and its URLs answer 503 with ``Retry-After`` rather than 404.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import msgspec

from ..bindings.http.request_headers import RequestHeaders
from ..client.card import parse_card
from ..client.errors import AgentTimeout, AgentUnreachable, ClientError
from ..core.asgi_json import send_json
from ..core.calls import Call, CancelTask, GetTask, SendMessage, SubscribeToTask
from ..core.errors import A2AError, ResourceUnavailable, TaskNotCancelable, TaskNotFound
from ..core.lifecycle import RETURN_STATES
from ..core.model import Role, StatusUpdate, Task
from ..host.app import create_app
from ..host.cors import cors_layer, first_sight
from ..host.hosts import HostNotAllowed, HostPolicy
from ..server.agent import Agent
from ..server.context import Context, TaskCanceled
from ..server.engine import EngineConfig
from .client import Requester
from .codec import MESH_CODEC
from .discovery import CARD_INTERVAL, DEFAULT_TTL, Discovery, LiveAgent
from .instance import Slot, close_link, hold_gateway_id
from .relay import (
    FIRST_ANSWER,
    QUIET_AFTER,
    RECONCILE_WAIT,
    RECONCILE_WAIT_AWAY,
    RECONNECT_WAIT,
    Unanswered,
    canceled_here,
    finish,
    follow_again,
    forwarded,
    relay,
    unread_because,
)
from .topics import MeshURL, Topics, check_name, check_task_id
from .updates import read_update

__all__ = ["Gateway", "Link", "SamLink"]

log = logging.getLogger("interlingua.mesh")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


#: seconds a running turn waits for its agent once it has left the mesh (withdrawn, aged
#: out of the registry, offline) before the turn fails
AWAY_GRACE = 10.0


class Gateway:
    """The ASGI app of a gateway to the mesh at ``url`` in ``namespace``.

    ``store``: where each agent's tasks are kept: ``memory://`` (default), or
    ``sqlite:///DIR`` for one SQLite file per agent in DIR. ``gateway_id``
    names this gateway in its reply topics (default: random). ``warmup``: seconds
    after the start during which an agent not heard yet is "not yet" (503), not
    "not there" (404): the agents' card interval.
    """

    def __init__(self, url: MeshURL, namespace: str | None, *, store: str = "memory://",
                 gateway_id: str | None = None, ttl: float = DEFAULT_TTL,
                 cancel_grace: float = 5.0, warmup: float | None = None,
                 link: Link | None = None, allowed_hosts: Sequence[str] | None = None,
                 allowed_origins: Sequence[str] = ()) -> None:
        self.url = url
        #: the web pages whose browsers may call the agents, as ``create_app``'s
        self.allowed_origins = list(allowed_origins)
        #: the CORS layer in front of every agent and the listing (``host/cors.py``)
        self._cors = cors_layer(self, self.allowed_origins) if self.allowed_origins else None
        #: the Host names answered (None: any), as ``create_app``'s ``allowed_hosts``
        self.allowed_hosts = list(allowed_hosts) if allowed_hosts else None
        self._hosts = HostPolicy(self.allowed_hosts) if self.allowed_hosts else None
        self.gateway_id = gw = check_name("gateway id", gateway_id or secrets.token_hex(6))
        if store.startswith("sqlite:///"):
            # read now, as each agent's file will be (a ValueError here, not a 500 at
            # the first request)
            from ..stores.sqlite import parse_sqlite_url

            parse_sqlite_url(store)
        elif not store.startswith("memory:"):
            raise ValueError(f"a gateway keeps its agents' tasks in memory:// or "
                             f"sqlite:///DIR, not {store.partition('://')[0]}://")
        self.store = store
        #: how the gateway reaches the mesh's agents: SAM's layout in ``namespace``
        #: unless another layout's link is given (mesh/emqx/link.py)
        if link is None:
            if namespace is None:
                raise ValueError("a gateway to a SAM-layout mesh needs its namespace")
            link = SamLink(url, namespace, gw, ttl=ttl, cancel_grace=cancel_grace)
        self.link = link
        self.warmup = link.warmup if warmup is None else warmup
        #: when the gateway began listening to the discovery topic (monotonic)
        self._listening_since: float | None = None
        self._apps: dict[str, Any] = {}
        self._making = asyncio.Lock()
        #: seconds between two checks that the agent of a running turn is still live
        self.live_check = 1.0
        #: seconds a running turn waits for an agent that has left the mesh before it
        #: fails: one that withdrew as it stops still ends the turns it has in hand
        self.away_grace = AWAY_GRACE
        self._stack = AsyncExitStack()

    @property
    def discovery(self) -> Any:
        """The SAM link's discovery (the cards heard)."""
        return getattr(self.link, "discovery", None)

    # ------------------------------------------------------------- lifecycle

    def hold(self) -> None:
        """Hold this gateway's id (its MQTT client id) on this host, as ``start`` does:
        ``InstanceTaken`` when a live gateway of this host holds it (two connections
        with one client id would take the session from each other in turn)."""
        self.link.hold()

    async def start(self) -> None:
        await self.link.start()
        self._listening_since = time.monotonic()

    async def stop(self) -> None:
        await self._stack.aclose()
        await self.link.stop()

    def live(self) -> dict[str, LiveAgent]:
        """The live agents by the name they have in URLs."""
        return self.link.live()

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            return
        if self._cors is not None and first_sight(scope):
            await self._cors(scope, receive, send)
            return
        if self._hosts is not None:
            try:
                self._hosts.check(self._hosts.host_of(scope, RequestHeaders(
                    scope.get("headers", ()))))
            except HostNotAllowed as exc:
                await send_json(send, 400, {"error": {"code": 400, "message": str(exc)}})
                return
        root = scope.get("root_path", "")
        path: str = scope["path"]
        if root and path.startswith(root):
            path = path[len(root):]
        if path.rstrip("/") in ("/agents", ""):
            await self._list(scope, send)
            return
        if not path.startswith("/agents/"):
            await send_json(send, 404, {"error": {"code": 404, "message": "not found"}})
            return
        name, _, _rest = path[len("/agents/"):].partition("/")
        app = await self._app_for(name)
        if app is None or (_rest.rstrip("/") == "healthz" and name not in self.live()):
            # (an agent that has left keeps its app, for its tasks here: not its health)
            await self._absent(name, send)
            return
        child = dict(scope)
        child["root_path"] = f"{root}/agents/{name}"
        if not _rest and not path.endswith("/"):
            child["path"] = scope["path"] + "/"
        await app(child, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _absent(self, name: str, send: Send) -> None:
        """404 for an agent not heard; 503 with ``Retry-After`` while the gateway has
        not yet listened for a whole card interval."""
        since = self._listening_since
        heard_for = 0.0 if since is None else time.monotonic() - since
        if heard_for < self.warmup:
            wait = max(1, math.ceil(self.warmup - heard_for))
            await send_json(send, 503, {"error": {"code": 503, "message": (
                f"the gateway has listened to the mesh for {heard_for:.1f} s and has not "
                f"heard {name!r} yet (agents publish their cards every {self.warmup:g} s): "
                f"try again in {wait} s")}}, [(b"retry-after", str(wait).encode())])
            return
        await send_json(send, 404, {"error": {"code": 404, "message": (
            f"no agent {name!r} is live on the mesh (none heard in {heard_for:.0f} s)")}})

    async def _list(self, scope: Scope, send: Send) -> None:
        base = _base_url(scope)
        rows = [{"name": a.name, "description": a.description, "url": f"{base}/agents/{n}/",
                 "card": f"{base}/agents/{n}/.well-known/agent-card.json",
                 "instances": len(a.instances)} for n, a in sorted(self.live().items())]
        await send_json(send, 200, {"agents": rows})

    # ---------------------------------------------------------------- agents

    async def _app_for(self, name: str) -> Any:
        app = self._apps.get(name)
        if app is not None:
            # (also once the agent has left: its tasks here are read and canceled as
            # before, and a new turn is refused, ``_refused_while_away``)
            return app
        live = self.live().get(name)
        if live is None:
            return None
        async with self._making:
            app = self._apps.get(name)
            if app is None:
                # A task this gateway left unfinished when it stopped goes on where
                # the agent has it: its turn runs again, asking the agent for the
                # message it sent (the agent keeps one task a message), not ended
                app = create_app(self._agent_for(name, live), store=self._store_for(name),
                                 engine_config=EngineConfig(restart_policy="rerun"),
                                 freeze_gc=False, young_gc_threshold=None,
                                 allowed_hosts=self.allowed_hosts,
                                 allowed_origins=self.allowed_origins)
                # a task id the caller names is refused before its task is made here
                app.state.service.door.checks.append(_task_id_on_the_mesh)
                app.state.service.door.checks.append(self._refused_while_away(name))
                app.state.service.engine.before_cancel.append(self._canceled_there(name))
                await self._stack.enter_async_context(app.router.lifespan_context(app))
                self._apps[name] = app
        return app

    def _store_for(self, name: str) -> str:
        """The store of the agent ``name``: a file of its own in the folder of an
        ``sqlite:///DIR`` URL (read as serve reads it: %-escapes decoded, its options
        kept for each agent's file)."""
        if self.store.startswith("sqlite:///"):
            from ..stores.sqlite import parse_sqlite_url

            where, _, options = self.store.partition("?")
            folder = Path(parse_sqlite_url(where).path)
            folder.mkdir(parents=True, exist_ok=True)
            path = quote(str(folder / (name + ".db")))
            return f"sqlite:///{path}" + (f"?{options}" if options else "")
        return self.store

    def _agent_for(self, name: str, live: LiveAgent) -> Agent:
        card = parse_card(live.card)
        streams = bool(card.capabilities.streaming)
        return Agent(
            # (discovery drops a card without a name; one another kind of link hands
            # over is served by the name of its path)
            card.name if card.name.strip() else name, card.description,
            self._forwarder(name, streams),
            version=card.version, skills=card.skills, provider=card.provider,
            input_modes=card.default_input_modes, output_modes=card.default_output_modes,
            streaming=True, documentation_url=card.documentation_url, icon_url=card.icon_url,
            # the agent on the mesh may answer with a bare message: relayed as one
            replies_with_messages=True,
        )

    def _forwarder(self, name: str, streams: bool) -> Callable[[Context], Awaitable[None]]:
        async def forward(ctx: Context) -> None:
            await self._while_live(name, self.link.forward(name, ctx, streams))

        return forward

    def _refused_while_away(self, name: str) -> Callable[[Call], None]:
        """A send to an agent that has left the mesh is refused at once, before a task
        is made (its tasks here are still read and canceled)."""
        def check(call: Call) -> None:
            if isinstance(call, SendMessage) and name not in self.live():
                raise ResourceUnavailable(
                    f"no agent {name!r} is live on the mesh (it has left: its card is no "
                    "longer heard); its tasks here can still be read")

        return check

    def _canceled_there(self, name: str) -> Callable[[Task], Awaitable[None]]:
        """A cancel is passed on to the agent before it is made here, whether a turn of
        the task runs here or it waits for its caller. One the agent refuses, or cannot
        be told of, is refused here saying so: the task is left as it was, not canceled
        here while the agent ends it otherwise."""
        async def cancel(task: Task) -> None:
            why = "it is not live on the mesh"
            if name in self.live():
                try:
                    await self.link.cancel(name, task.id)
                    return
                except A2AError as exc:
                    raise TaskNotCancelable(f"Task {task.id} was not canceled: {name} "
                                            f"refused: {exc.message}") from None
                except ClientError as exc:
                    why = str(exc)
            raise TaskNotCancelable(
                f"Task {task.id} was not canceled: {name} could not be told ({why}); the "
                f"task is left {task.status.state.value}")

        return cancel

    async def _while_live(self, name: str, turn: Awaitable[None]) -> None:
        """``turn``, failed (``AgentUnreachable``) once its agent has left the mesh (its
        card aged out of the registry, or it withdrew or went offline) and has not come
        back within ``away_grace`` s: a turn waits for the agent's answers, which a
        killed agent never sends (a stopping one ends the turns it has in hand)."""
        work = asyncio.ensure_future(turn)
        clock = time.monotonic
        seen = clock()
        try:
            while True:
                done, _ = await asyncio.wait({work}, timeout=self.live_check)
                if done:
                    return work.result()
                if name in self.live():
                    seen = clock()
                elif clock() - seen >= self.away_grace:
                    break
        finally:
            if not work.done():
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
        raise AgentUnreachable(
            f"{name} left the mesh while it worked on the task (it is no longer heard on "
            f"{self.url.broker}): the task's end there is not known here")


class Link(Protocol):
    """A gateway's way to the agents of one topic layout."""

    #: seconds after the start during which an agent not heard yet may still be there
    warmup: float

    def hold(self) -> None:
        """Hold the link's client id on this host (``InstanceTaken``: a live process
        holds it); done by ``start`` if not before, released by ``stop``."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def live(self) -> dict[str, LiveAgent]:
        """The live agents by the name they have in URLs."""
        ...

    async def forward(self, name: str, ctx: Context, streams: bool) -> None:
        """One turn of a task, carried out by the agent ``name`` on the mesh."""
        ...

    async def cancel(self, name: str, task_id: str) -> None:
        """The agent ``name``'s task canceled: raises its refusal (an ``A2AError``), or
        a ``ClientError`` when it cannot be told (no answer within ``cancel_grace``)."""
        ...


class SamLink:
    """The gateway's way to agents in SAM's layout: their cards on the discovery
    topic, requests with the gateway's reply and status topics."""

    warmup = CARD_INTERVAL

    def __init__(self, url: MeshURL, namespace: str, gateway_id: str, *,
                 ttl: float = DEFAULT_TTL, cancel_grace: float = 5.0) -> None:
        self.topics = topics = Topics(check_name("namespace", namespace))
        gw = gateway_id
        self.cancel_grace = cancel_grace
        #: seconds a turn's request may wait for the agent to take it (then the turn
        #: fails, and the request is of no use past that: it expires on the broker)
        self.take_within = RECONNECT_WAIT
        #: seconds of silence from the agent after which a turn reads the agent's task:
        #: a final answer the broker dropped would leave the turn waiting for ever
        self.quiet_after = QUIET_AFTER
        #: seconds the agent's task, read to check the gateway's copy, has to come
        self.reconcile_wait = RECONCILE_WAIT
        self.requester = Requester(
            url, topics, f"{namespace}-gateway-{gw}",
            reply_topic=lambda task: topics.gateway_response(gw, task),
            status_topic=lambda task: topics.gateway_status(gw, task),
            listen=[topics.gateway_response(gw) + "/#", topics.gateway_status(gw) + "/#"],
            timeout=None,
        )
        self.discovery = Discovery(url, topics, ttl=ttl)
        self._background: set[asyncio.Task[Any]] = set()
        self._id = (url, namespace, gw)
        self._slot: Slot | None = None

    def hold(self) -> None:
        if self._slot is None:
            url, namespace, gw = self._id
            self._slot = hold_gateway_id(url, namespace, gw, self.requester.client_id)

    async def start(self) -> None:
        self.hold()
        await self.requester.ensure()
        await self.discovery.start()

    async def stop(self) -> None:
        slot, self._slot = self._slot, None
        await close_link(self._background, self.discovery.stop, self.requester.aclose, slot=slot)

    def live(self) -> dict[str, LiveAgent]:
        # by the topic level the card's mesh interface says (--mesh-name), not its name
        return {a.agent: a for a in self.discovery.live()}

    async def forward(self, name: str, ctx: Context, streams: bool) -> None:
        """One turn (streamed when the agent's card says it streams: its updates
        then reach the gateway's log as they happen)."""
        task = ctx.task
        turns = sum(1 for m in task.history if m.role is Role.USER)
        if turns <= 1:
            # the first turn: the request's id names the task on the mesh
            message = msgspec.structs.replace(ctx.message, task_id=None)
            rid = task.id
        else:
            message = msgspec.structs.replace(ctx.message, task_id=task.id)
            rid = f"{task.id}.{turns}"
        call = SendMessage(message=message, streaming=streams)

        async def send() -> None:
            await self._send(name, ctx, rid, call, turns <= 1)

        try:
            await send()
        except AgentTimeout:
            # the agent never said it had the request: no connection was lost. The
            # turn fails, so the request must not run later: it has expired on the
            # broker (a session that is away drops it), and a cancel follows it there,
            # for a broker that kept it or an agent that took it just now
            self._spawn(self._cancel_on_mesh(name, task.id))
            raise
        except AgentUnreachable:
            # the connection to the broker was lost: the agent may well carry on, and
            # is asked for the task once it is back (it was failed here, for good,
            # while the agent completed it); an agent that never got the request
            # (lost with the broker) is sent it again
            if not await self._follow_again(name, ctx, task.id, send):
                raise
        except (asyncio.CancelledError, TaskCanceled) as exc:
            if canceled_here(ctx, exc):
                # (a cancel over HTTP was made there first, ``_canceled_there``: this
                # one is for a turn stopped here otherwise, and is refused there if not)
                self._spawn(self._cancel_on_mesh(name, task.id))
            raise
        finally:
            self.requester.forget(rid)

    async def _send(self, name: str, ctx: Context, rid: str, call: SendMessage,
                    first_turn: bool) -> None:
        """The turn's request, followed to its end. A request the broker dropped (sent
        before the agent subscribed again, after a broker restart) is never answered:
        with no answer within ``FIRST_ANSWER``, the agent is asked whether it has it,
        and the request is published again (the same id and message: the agent runs it
        once) until it has, for up to ``take_within`` (then ``AgentTimeout``). Each
        publish expires on the broker at that deadline: a request kept for an agent
        that is away is dropped then, not run once it is back."""
        requester, task_id = self.requester, ctx.task.id
        properties = forwarded(ctx)
        loop = asyncio.get_running_loop()
        end = loop.time() + self.take_within
        for attempt in itertools.count(1):
            # not taken by then, the turn fails: the request is not to run after that
            # (kept for an agent that is away, it would run once the agent is back)
            expiry = max(1, math.ceil(end - loop.time()))
            pending = await requester.publish(name, rid, call, task_id, streaming=call.streaming,
                                              properties=properties, expiry=expiry)
            streamed = call.streaming
            try:
                await self._follow(name, ctx, pending, FIRST_ANSWER, streamed=streamed)
                return
            except Unanswered:
                pass
            has = await self._has(name, task_id, call.message.message_id, first_turn, attempt)
            if has is not False or not pending.queue.empty():
                # it has it: as long as it takes
                await self._follow(name, ctx, pending, streamed=streamed)
                return
            if loop.time() >= end:
                raise AgentTimeout(f"{name} did not take the request on {self.requester.url.broker} "
                                   f"within {self.take_within:g} s")
            log.info("task %s: %s has not got its request; publishing it again", task_id, name)

    async def _has(self, name: str, task_id: str, message_id: str, first_turn: bool,
                   attempt: int) -> bool | None:
        """Whether the agent has the turn's message (None: it cannot tell us). An agent
        silent for ``FIRST_ANSWER`` has not: not subscribed yet, it lost this ask too."""
        rid = f"{task_id}.has{attempt}"
        requester = self.requester
        try:
            pending = await requester.publish(name, rid, GetTask(id=task_id), task_id,
                                              streaming=False)
            async with asyncio.timeout(FIRST_ANSWER):
                _, raw = await requester.next(pending, name)
        except (TimeoutError, TaskNotFound):
            return False
        except A2AError:
            return None  # (no tasks/get there, as at SAM's agents)
        finally:
            requester.forget(rid)
        task = MESH_CODEC.decode_result(GetTask(id=task_id), raw)
        if not isinstance(task, Task):
            return None
        if first_turn:
            return True  # the task is the request's
        if not task.history:
            return None
        return any(m.message_id == message_id for m in task.history)

    async def _follow(self, name: str, ctx: Context, pending: Any,
                      first_within: float | None = None, *, streamed: bool = False) -> None:
        """The answers to one request, relayed until the last ends the turn (the first
        within ``first_within`` s, else ``Unanswered``). The final Task of a
        ``streamed`` one leaves its artifacts out (they came as updates, unless some
        were lost on the way): they are read from the agent, and what the gateway's
        copy lacks is written before the turn ends (``relay.reconcile``)."""
        patience = first_within
        #: the status a stream ended with, before its last answer (the Task)
        said: StatusUpdate | None = None
        while True:
            try:
                answer = await self._next(name, ctx, pending, patience)
            except A2AError:
                if said is None:
                    raise
                # the agent ended the task and could not send the Task after the final
                # status (past its max_answer_bytes, history and all): the status says
                # how it ended, as it does in the A2A-over-MQTT layout
                answer = False, Task(id=said.task_id, context_id=said.context_id,
                                     status=said.status)
            if answer is None:
                return
            (update, item), patience = answer, None
            if update:
                if isinstance(item, StatusUpdate) and item.status.state in RETURN_STATES:
                    said = item
                await relay(ctx, item)
                continue
            if streamed and isinstance(item, Task) and not item.artifacts:
                item = msgspec.structs.replace(item, artifacts=await self._artifacts(
                    name, item.id))
            await finish(ctx, item)
            return

    async def _next(self, name: str, ctx: Context, pending: Any,
                    patience: float | None) -> tuple[bool, Any] | None:
        """The next answer to a request: whether it is an update, and the item; the first
        within ``patience`` s, else ``Unanswered`` (None: as long as the agent takes).
        After ``quiet_after`` s of silence the agent's task is read: ended there, the
        turn is ended here alike (None)."""
        while True:
            try:
                async with asyncio.timeout(self.quiet_after if patience is None else patience):
                    return await self._answer(name, ctx.task.id, pending)
            except TimeoutError:
                if patience is not None:
                    raise Unanswered from None
            task = await self._agent_task(name, ctx.task.id)
            if task is not None and task.status.state in RETURN_STATES:
                # it ended there, and its answer never came: ended here as there
                log.warning("task %s: %s ended it (%s) and its answer was lost on the "
                            "way; ended here as there", ctx.task.id, name,
                            task.status.state.value)
                await finish(ctx, task)
                return None

    async def _answer(self, name: str, task_id: str, pending: Any) -> tuple[bool, Any]:
        """The next answer to a request about the task ``task_id``: whether it is an
        update, and the item. An update that cannot be read, or is about another task,
        is skipped (``read_update``): the status topics are shared, and such a message
        is no answer of the agent's to this turn."""
        while True:
            update, raw = await self.requester.next(pending, name)
            if not update:
                return False, MESH_CODEC.decode_stream_item(raw)
            item = read_update(raw, task_id, name)
            if item is not None:
                return True, item

    async def _artifacts(self, name: str, task_id: str) -> list[Any]:
        """The artifacts of the agent's task ``task_id`` (none when it cannot say: then
        the gateway's copy stands as the updates made it)."""
        task = await self._agent_task(name, task_id)
        return list(task.artifacts) if task is not None else []

    async def _agent_task(self, name: str, task_id: str) -> Task | None:
        """The agent's task ``task_id`` as it is now (None when it cannot say)."""
        # (an id of its own: ``_follow_again``'s read of the task may be waiting on
        # ``.read`` meanwhile, and a second publish under it would take its answers)
        rid = f"{task_id}.check"
        requester = self.requester
        wait = self.reconcile_wait if name in self.live() else RECONCILE_WAIT_AWAY
        try:
            pending = await requester.publish(name, rid, GetTask(id=task_id, history_length=0),
                                              task_id, streaming=False)
            async with asyncio.timeout(wait):
                _, raw = await requester.next(pending, name)
            task = MESH_CODEC.decode_result(GetTask(id=task_id), raw)
        except (A2AError, ClientError, TimeoutError) as exc:
            log.warning("task %s: it could not be read from %s to check the gateway's "
                        "copy: %s", task_id, name, unread_because(exc, wait))
            return None
        finally:
            requester.forget(rid)
        return task if isinstance(task, Task) else None

    async def _follow_again(self, name: str, ctx: Context, task_id: str,
                            send: Callable[[], Awaitable[None]]) -> bool:
        """After a lost connection: the task subscribed to again once the broker and
        the agent are back, and followed to its end (``relay.follow_again``); the
        request ``send`` again when the agent has no such task."""
        attempts = itertools.count(1)

        async def ask(patience: float | None) -> None:
            rid = f"{task_id}.again{next(attempts)}"
            pending = await self.requester.publish(
                name, rid, SubscribeToTask(id=task_id), task_id, streaming=True)
            try:
                await self._follow(name, ctx, pending, patience, streamed=True)
            finally:
                self.requester.forget(rid)

        async def read() -> None:
            rid = f"{task_id}.read"
            pending = await self.requester.publish(name, rid, GetTask(id=task_id), task_id,
                                                   streaming=False)
            try:
                await self._follow(name, ctx, pending)
            finally:
                self.requester.forget(rid)

        return await follow_again(ask, read, send)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def cancel(self, name: str, task_id: str) -> None:
        rid = f"{task_id}.cancel"
        requester = self.requester
        try:
            pending = await requester.publish(name, rid, CancelTask(id=task_id), task_id,
                                              streaming=False)
            async with asyncio.timeout(self.cancel_grace):
                await requester.next(pending, name)
        except TimeoutError:
            raise AgentTimeout(f"{name} did not answer the cancel within "
                               f"{self.cancel_grace:g} s") from None
        finally:
            requester.forget(rid)

    async def _cancel_on_mesh(self, name: str, task_id: str) -> None:
        try:
            await self.cancel(name, task_id)
        except (A2AError, ClientError) as exc:
            log.info("task %s canceled here; on the mesh: %s", task_id, exc)


def _task_id_on_the_mesh(call: Call) -> None:
    """Refuse a send naming a new task (v0.1's and SAM's ``params.id``) by an id that
    cannot be a topic level: it names the task on the mesh, and in SAM's layout the
    topics its answers come back on (the agent would refuse it where the gateway does
    not listen)."""
    if isinstance(call, SendMessage) and call.client_task_id:
        check_task_id(call.client_task_id)


def _base_url(scope: Scope) -> str:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1")
               for k, v in scope.get("headers", ())}
    host = headers.get("host")
    if host is None:
        server = scope.get("server") or ("localhost", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}"


