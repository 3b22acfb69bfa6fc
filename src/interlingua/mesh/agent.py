"""An agent on the mesh: requests from broker topics through the front door.

This binding is framing only, as the JSON-RPC endpoint is for HTTP. A request
is a JSON-RPC document published on ``{ns}/a2a/v1/agent/request/{agent}``; its
user properties say where the answers go:

- ``replyTo``: the final answer (a Task, or a Message), or an error;
  without it the MQTT 5 response topic, else ``{ns}/a2a/v1/client/response/{clientId}``;
- ``a2aStatusTopic`` (streaming sends): each status and artifact update, a
  JSON-RPC success response with the event as ``result``; without it
  ``{ns}/a2a/v1/client/status/{clientId}/{task}``.

The JSON-RPC ``id`` of a send is the id of the task it creates, as SAM's
requesters choose it. Artifacts of a streamed task reach the requester as
updates and are not repeated in its final Task. The MQTT 5 correlation data of
a request is echoed on every answer to it.

Several instances of one agent share its request topic (an MQTT 5 shared
subscription): each request goes to one of them. A cancel may reach one that
does not run the task; that one hands it on the agent's control topic, which
every instance hears, and the instance running the task answers it (or, if
none does within a moment, the one that got it cancels through the store).

Where a send's answers go is kept with the task: the user message it carries
is stored with its reply route under the metadata key ``interlingua_mesh_reply``
(taken out of the Tasks the mesh answers with). If
the instance running the turn dies, the instance whose lease keeper ends the
task (store leases, server/recovery.py) reads the route there and publishes
the final status and Task where the requester waits for them.

A malformed request is answered with a JSON-RPC error when a reply topic can
be told; otherwise it is logged. Nothing a request holds stops the consumer.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from ..bindings.http.sse_writer import encoded_item
from ..core import jsonrpc
from ..core.calls import CancelTask, GetTask, SendMessage, SubscribeToTask
from ..core.dialects import Codec
from ..core.errors import A2AError, InternalError, InvalidRequest, ResourceUnavailable
from ..core.lifecycle import RETURN_STATES
from ..core.model import TERMINAL_STATES, Message, StatusUpdate, Task, TaskState
from ..server import dispatch
from ..server.context import RequestInfo
from ..server.dispatch import AnswerTooLarge, Entry, FrontDoor, Items, Lagged, Unavailable
from ..server.run import Run
from .broker import Broker, Inbound, MeshUnavailable, PacketTooLarge
from .codec import MESH_CODEC, id_of
from .discovery import CARD_PERIOD, agent_level
from .instance import claim
from .reading import read_reconnecting
from .settings import MeshSettings
from .topics import Topics, check_name, check_task_id, topic_problem

__all__ = ["REPLY_ROUTE", "MeshAgent", "MeshSettings", "Reply", "past_the_broker",
           "take_notification"]

log = logging.getLogger("interlingua.mesh")

#: updates of one stream published and not yet acknowledged, at most
_WINDOW = 64

#: the user property that marks a cancel handed on between instances
FORWARDED_BY = "a2aForwardedBy"
#: the user property of a card naming the instance that published it
INSTANCE = "a2aInstance"
#: the metadata key of a stored user message that holds its send's reply route
REPLY_ROUTE = "interlingua_mesh_reply"
#: the user property of the message a stopping instance sends itself on the control
#: topic: once it comes back, every request delivered before it has been taken
DRAINED = "a2aDrained"
#: a peer is live while its cards come at most this many card intervals apart
_PEER_INTERVALS = 3
#: seconds a stopping instance waits for its own withdrawal, or its marker, to come back
_ECHO_WAIT = 2.0


@dataclass
class Reply:
    """Where the answers to one request go."""

    topic: str | None
    status: str | None
    client_id: str | None
    correlation: bytes | None

    @classmethod
    def of(cls, msg: Inbound, topics: Topics) -> Reply:
        props = msg.properties
        client_id = props.get("clientId") or None
        topic = props.get("replyTo") or msg.response_topic or (
            topics.client_response(client_id) if client_id else None)
        return cls(topic=topic, status=props.get("a2aStatusTopic") or None,
                   client_id=client_id, correlation=msg.correlation)

    @staticmethod
    def problem(msg: Inbound) -> str | None:
        """Why the answers to ``msg`` could not all be published where it says
        (None: they can), found before anything of it runs."""
        props = msg.properties
        for what, value in (("replyTo", props.get("replyTo")),
                            ("the response topic", msg.response_topic),
                            ("a2aStatusTopic", props.get("a2aStatusTopic")),
                            ("clientId", props.get("clientId"))):
            if value and (why := topic_problem(value)) is not None:
                return f"{what} {value!r} {why}"
        return None

    @staticmethod
    def error_topic(msg: Inbound, topics: Topics) -> str | None:
        """A topic the refusal of ``msg`` can go to: the first of its reply topics
        that can be published to (None: none)."""
        client_id = msg.properties.get("clientId")
        for topic in (msg.properties.get("replyTo"), msg.response_topic,
                      topics.client_response(client_id) if client_id else None):
            if topic and topic_problem(topic) is None:
                return topic
        return None

    def status_topic(self, topics: Topics, task_id: str) -> str | None:
        if self.status:
            return self.status
        return topics.client_status(self.client_id, task_id) if self.client_id else None

    def route(self, rid: Any, streaming: bool) -> dict[str, Any]:
        """What is stored with the send's message, for another instance to answer it."""
        route: dict[str, Any] = {"id": rid, "reply_to": self.topic, "streaming": streaming}
        if self.status:
            route["status_topic"] = self.status
        if self.client_id:
            route["client_id"] = self.client_id
        if self.correlation is not None:
            route["correlation"] = base64.b64encode(self.correlation).decode()
        return route

    @classmethod
    def stored(cls, route: Any) -> tuple[Reply, Any, bool] | None:
        """The reply, request id and streaming flag of a stored route (None: not one)."""
        if not isinstance(route, dict) or not isinstance(route.get("reply_to"), str):
            return None
        status, client_id = route.get("status_topic"), route.get("client_id")
        correlation = route.get("correlation")
        try:
            data = base64.b64decode(correlation) if isinstance(correlation, str) else None
        except ValueError:
            data = None
        reply = cls(topic=route["reply_to"], status=status if isinstance(status, str) else None,
                    client_id=client_id if isinstance(client_id, str) else None,
                    correlation=data)
        return reply, route.get("id"), route.get("streaming") is True


class _CardName(msgspec.Struct):
    name: str


def _success(rid: Any, result: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(rid) + b',"result":' + result + b"}"


def _failure(rid: Any, err: A2AError) -> bytes:
    return jsonrpc.error_response(rid, MESH_CODEC.encode_error(err))


def _unrouted(task: Task) -> Task:
    """``task`` without the reply routes stored in its history (they are the mesh's
    bookkeeping, not the conversation)."""
    if not any(m.metadata and REPLY_ROUTE in m.metadata for m in task.history):
        return task
    history = [m if not (m.metadata and REPLY_ROUTE in m.metadata) else
               msgspec.structs.replace(m, metadata={k: v for k, v in m.metadata.items()
                                                    if k != REPLY_ROUTE} or None)
               for m in task.history]
    return msgspec.structs.replace(task, history=history)


class _BatchRefused(InvalidRequest):
    """A batch, refused before any of its requests is read."""


def _no_batches(items: int) -> None:
    raise _BatchRefused("Invalid Request: batches are not taken on the mesh")


def _request_id(payload: bytes) -> Any:
    """The JSON-RPC id of a request not otherwise read (None: none can be read)."""
    try:
        rid = id_of(payload).id
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


def _task_named_by(rid: Any) -> str | None:
    """The id of the task a send's JSON-RPC id names: a string as it is, a number as
    its decimal digits (SAM's agents take ``str(id)``, so a requester that sent 7
    reads task "7"); none for an empty or null id (the agent chooses one)."""
    if isinstance(rid, int) and not isinstance(rid, bool):
        return str(rid)
    return rid if isinstance(rid, str) and rid else None


def past_the_broker(exc: PacketTooLarge) -> AnswerTooLarge:
    """The refusal of an answer the broker would not take, said as one over
    ``max_answer_bytes`` is (publishing it would end the agent's connection)."""
    return AnswerTooLarge(
        f"Internal error: this answer ({exc.size} bytes) would pass the limit of {exc.limit} "
        "bytes for one message that the broker takes (its Maximum Packet Size); ask for "
        "less (no artifacts, a shorter history)")


class _Answers(Protocol):
    #: where a request's answers go (None: nowhere)
    topic: str | None


def take_notification(req: jsonrpc.Request, codec: Codec, answers: _Answers) -> None:
    """A notification (a request without an id) is never answered (JSON-RPC 2.0 §4.1):
    ``answers`` are sent nowhere. As over HTTP, it is run, unless it is a stream, which
    is refused (``InvalidRequest``, unanswered too): a stream's events are answers.
    Both mesh layouts read requests by this rule."""
    if req.has_id:
        return
    answers.topic = None
    if req.method in codec.streaming_methods:
        raise InvalidRequest("Invalid Request: a streaming request needs an id")


def _rid_of(exc: A2AError) -> Any:
    data = exc.data
    if isinstance(data, dict) and "id" in data:
        exc.data = None
        return data["id"]
    return None


class MeshAgent:
    """One agent's binding to a broker, in front of its front door."""

    def __init__(self, door: FrontDoor, card: bytes, name: str, settings: MeshSettings) -> None:
        self.door = door
        self.card = card
        self.name = check_name("agent name", name)
        #: the name the card gives (the registry's key), which the topic level may spell otherwise
        self.card_name: str = msgspec.json.decode(card).get("name", name)
        self.settings = settings
        self.topics = Topics(check_name("namespace", settings.namespace))
        if settings.instance is not None:
            check_name("instance", settings.instance)
        # a name that is the same on every start (mesh/instance.py), held while this runs
        self._slot = claim(settings.broker_url(), settings.namespace, self.name,
                           settings.instance)
        self.instance = check_name("instance", self._slot.name)
        self.client_id = f"{settings.namespace}-{self.name}-{self.instance}"
        self.group = check_name("group", settings.group or self.name)
        # a request is acknowledged when it is taken: one that arrives while this
        # instance stops is left unacknowledged, for the session's next holder
        self.broker = Broker(settings.broker_url(), self.client_id, clean_start=False,
                             session_expiry=settings.session_expiry, manual_ack=True)
        self._loop_task: asyncio.Task[None] | None = None
        self._card_task: asyncio.Task[None] | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._stopping = False
        #: whether requests are taken (and acknowledged); not once a stop has decided
        #: to leave them to the session
        self._taking = True
        #: the other live instances of this agent: instance -> when its card was heard
        self._peers: dict[str, float] = {}
        #: the agents of other cards heard on this agent's topic level, warned of once
        self._others_warned: set[tuple[str, str]] = set()
        self._echo = asyncio.Event()
        self._drained = asyncio.Event()
        #: set while the request and control topics are subscribed on the connection
        self._subscribed = asyncio.Event()
        self._card_now = asyncio.Event()
        #: requests answered by this instance (tests and the log read it)
        self.handled = 0
        # from now on, also the tasks the engine's start-up ends
        door.engine.on_orphan_ended(self._orphan_ended)

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Connect and subscribe (``MeshUnavailable`` when the broker cannot be
        reached), then serve in the background."""
        await self.door.ensure_started()
        await self.broker.connect()
        await self._subscribe()
        self._loop_task = asyncio.create_task(self._serve(), name=f"mesh:{self.client_id}")
        self._card_task = asyncio.create_task(self._announce(), name=f"mesh-card:{self.client_id}")
        log.info("on the mesh at %s as %s (namespace %s, instance %s)",
                 self.broker.url.broker, self.name, self.topics.namespace, self.instance)

    async def stop(self, grace: float = 5.0) -> None:
        """Withdraw the card, let requests in hand finish (up to ``grace`` s), disconnect.

        When other instances of the agent are live, this one leaves the shared
        subscription first, so that its share of the requests goes to them. The last
        one keeps its session as it is: requests sent meanwhile, and those that came
        after the stop began (never acknowledged), wait for its restart."""
        if self._stopping:
            return
        self._stopping = True
        # a restart begun meanwhile waits for this name, and resumes its session: the
        # hand-over's two waits, ``grace``, the cancel of turns past it, the disconnect
        self._slot.releasing(grace + 2 * _ECHO_WAIT + 2.0)
        try:
            await self._stop(grace)
        finally:
            self._slot.release()

    async def _stop(self, grace: float) -> None:
        if self._card_task is not None:
            self._card_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._card_task
        if not self._live_peers():
            # the session is kept for a restart: a request that comes while the card is
            # withdrawn waits for it too, rather than being refused as sent to a server
            # shutting down (the drain that began this stop)
            self._taking = False
        try:
            if self.broker.connected and self._subscribed.is_set():
                await self._hand_over()
        except MeshUnavailable as exc:
            log.debug("stopping: %s", exc)
        self._taking = False  # from now on, requests are left to the session
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._loop_task
        if self._handlers:
            _, pending = await asyncio.wait(set(self._handlers), timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1)
        await self.broker.close()

    async def _hand_over(self) -> None:
        """Withdraw the card; then, if another instance is live, leave the shared
        subscription and take what the broker delivered before it was left.

        The withdrawal comes back to this instance after those of the instances that
        stopped before it (one broker, one order): so of several stopped at once, the
        last to withdraw sees no live peer and keeps its subscription for a restart."""
        await self.broker.publish(self.topics.withdrawals(), msgspec.json.encode(
            {"name": self.card_name, "instance": self.instance, "agent": self.name}))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_ECHO_WAIT):
                await self._echo.wait()
        if not self._echo.is_set():
            return  # the order is unknown: keep the session, as the last one does
        live = self._live_peers()
        if not live or not self._taking:
            return  # kept (none was live as the stop began: what came since is unread)
        await self.broker.unsubscribe(self.topics.shared_request(self.name, self.group))
        # every request delivered before the unsubscription was acknowledged comes
        # before this in the one connection's order: once it is back, all are taken
        await self.broker.publish(self.topics.control(self.name), b"{}",
                                  {DRAINED: self.instance})
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_ECHO_WAIT):
                await self._drained.wait()
        log.info("left the shared subscription to %s", ", ".join(live))

    def _live_peers(self) -> list[str]:
        """The other instances of this agent whose cards were heard lately."""
        now = time.monotonic()
        return sorted(i for i, seen in self._peers.items()
                      if now - seen <= _PEER_INTERVALS * self.settings.card_interval)

    async def _subscribe(self) -> None:
        await self.broker.subscribe(self.topics.shared_request(self.name, self.group),
                                    self.topics.control(self.name),
                                    self.topics.discovery_filter())
        self._subscribed.set()

    async def _serve(self) -> None:
        await read_reconnecting(
            self.broker, self._take, on_connect=self._reconnected,
            delay=self.settings.reconnect_delay,
            warning=f"%s; reconnecting in {self.settings.reconnect_delay:g}s",
            stopping=lambda: self._stopping,
            # no card until the subscriptions are back: a requester that hears
            # one may publish at once, and a request no one subscribes to is dropped
            on_lost=self._subscribed.clear)

    async def _reconnected(self) -> None:
        await self._subscribe()
        log.info("reconnected to the broker at %s", self.broker.url.broker)
        self._card_now.set()  # back: say so at once

    async def _announce(self) -> None:
        """The card on the discovery topic every ``card_interval`` seconds, while
        subscribed (and at once after a reconnection)."""
        while True:
            if self._subscribed.is_set() and self.broker.connected:
                try:
                    # its period said, for consumers to keep it between cards
                    await self.broker.publish(self.topics.discovery(), self.card, {
                        INSTANCE: self.instance,
                        CARD_PERIOD: f"{self.settings.card_interval:g}"}, qos=0)
                except MeshUnavailable as exc:
                    log.debug("card not published: %s", exc)
                except PacketTooLarge as exc:
                    log.warning("the card was not published: %s", exc)
            # aiomqtt waits for a publish with asyncio.wait_for, which on Python 3.11
            # loses a cancel that comes as the publish completes: the stop is also
            # said by this flag, set before the cancel
            if self._stopping:
                return
            self._card_now.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.settings.card_interval):
                    await self._card_now.wait()

    def _take(self, msg: Inbound) -> None:
        if msg.topic.startswith(self._discovery_prefix):
            self.broker.ack(msg)
            self._heard(msg)
            return
        control = msg.topic == self.topics.control(self.name)
        if control and msg.properties.get(DRAINED) == self.instance:
            self.broker.ack(msg)
            self._drained.set()
            return
        if not self._taking:
            return  # not acknowledged: the broker sends it again to the resumed session
        self.broker.ack(msg)
        if control and msg.properties.get(FORWARDED_BY) == self.instance:
            return  # our own hand-on
        task = asyncio.create_task(self._handle(msg, forwarded=control))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    @property
    def _discovery_prefix(self) -> str:
        return self.topics.discovery_filter().removesuffix("#")

    def _heard(self, msg: Inbound) -> None:
        """Keep track of the other live instances of this agent (cards, withdrawals)."""
        if msg.topic == self.topics.withdrawals():
            try:
                gone = msgspec.json.decode(msg.payload)
            except (msgspec.DecodeError, RecursionError):
                return
            if not isinstance(gone, dict) or gone.get("name") != self.card_name:
                return
            if gone.get("instance") == self.instance:
                self._echo.set()
            else:
                self._peers.pop(str(gone.get("instance")), None)
            return
        instance = msg.properties.get(INSTANCE)
        if instance == self.instance:
            return
        try:
            name = msgspec.json.decode(msg.payload, type=_CardName).name
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return
        if name == self.card_name:
            if instance is not None:  # (SAM's agents name none)
                self._peers[instance] = time.monotonic()
        elif agent_level(msg.payload, self.topics.namespace) == self.name:
            self._another_agent_here(name, instance)

    def _another_agent_here(self, name: str, instance: str | None) -> None:
        """Say (once for each) that an agent of another card serves on this agent's
        topic level: the broker shares the requests sent to it between the two, which
        answer them each as itself. No process can stop the other (they may be on other
        hosts): the log is where an operator sees it."""
        key = (name, instance or "")
        if key in self._others_warned:
            return
        self._others_warned.add(key)
        log.warning("another agent, %r (instance %s), is on the mesh as %r too: the "
                    "requests sent to %r are shared between it and %r; give one of them "
                    "another name (--mesh-name)", name, instance or "not named", self.name,
                    self.name, self.card_name)

    # ------------------------------------------------------------- requests

    def _fits(self, topic: str, payload: bytes, reply: Reply) -> None:
        """``AnswerTooLarge`` for an answer the broker would not take (checked before
        it is published: the broker would end the connection, and every stream on it)."""
        try:
            self.broker.fits(topic, payload, correlation=reply.correlation)
        except PacketTooLarge as exc:
            raise past_the_broker(exc) from None

    async def _publish(self, topic: str, payload: bytes, reply: Reply) -> None:
        try:
            await self.broker.publish(topic, payload, correlation=reply.correlation)
        except ValueError as exc:  # a topic no publish can have: checked on receipt
            log.warning("an answer to %r was not published: %s", topic, exc)
        except MeshUnavailable as exc:
            # while disconnected the loss of the connection was said once already
            log.log(logging.WARNING if self.broker.connected else logging.DEBUG,
                    "an answer to %s was lost: %s", topic, exc)

    async def _answer(self, reply: Reply, rid: Any, result: bytes) -> None:
        """The final answer on the reply topic; past ``max_answer_bytes`` (as the other
        bindings' answers are held) or what the broker takes, the refusal instead."""
        assert reply.topic is not None
        payload = _success(rid, result)
        try:
            self.door.check_answer(len(result))
            self._fits(reply.topic, payload, reply)
        except A2AError as exc:
            await self._answer_error(reply, rid, exc, str(exc))
            return
        await self._publish(reply.topic, payload, reply)

    async def _answer_error(self, reply: Reply, rid: Any, err: A2AError, why: str) -> None:
        if reply.topic is None:
            log.warning("a request on %s cannot be answered (a notification, or no "
                        "replyTo, response topic or clientId): %s",
                        self.topics.request(self.name), why)
            return
        await self._publish(reply.topic, _failure(rid, err), reply)

    async def _handle(self, msg: Inbound, *, forwarded: bool) -> None:
        reply = Reply.of(msg, self.topics)
        # a request whose answers cannot all be published is refused before it runs
        unroutable = Reply.problem(msg)
        if unroutable is not None:
            reply.topic = Reply.error_topic(msg, self.topics)
            if reply.topic is None:
                log.warning("a request on %s is dropped: %s, and no reply topic can take "
                            "the refusal", msg.topic, unroutable)
                return
        rid: Any = None
        # the caller as the front door sees it: the user properties are its headers
        # (authentication, when the agent has any, reads its credentials there)
        headers = {k.lower(): v for k, v in msg.properties.items()}
        scope: dict[str, Any] = {"type": "mqtt"}
        try:
            try:
                self.door.check_size(len(msg.payload))
                # authenticated before the request is read, as on every binding
                await self.door.admit(scope, headers, "mqtt")
                parsed = jsonrpc.parse(msg.payload, _no_batches)
            except A2AError as exc:
                if isinstance(exc, _BatchRefused):  # counted as every refusal is, by
                    # the error its caller reads
                    self.door.refused_unread("mqtt", None, headers, InvalidRequest(exc.message))
                rid = _rid_of(exc)
                if rid is None and len(msg.payload) <= self.door.settings.max_body_bytes:
                    # refused before it was read (its credentials, the rate): its id
                    # said all the same, for a requester that matches answers by id
                    # alone (SAM's; ours read the Correlation Data too)
                    rid = _request_id(msg.payload)
                if not forwarded:
                    await self._answer_error(reply, rid, exc, exc.message)
                return
            if isinstance(parsed, jsonrpc.Batch):
                err = InvalidRequest("Invalid Request: batches are not taken on the mesh")
                self.door.refused_unread("mqtt", None, headers, err)  # as every refusal is
                await self._answer_error(reply, None, err, err.message)
                return
            rid = parsed.id
            take_notification(parsed, MESH_CODEC, reply)
            if unroutable is not None:
                err = InvalidRequest(f"Invalid Request: {unroutable}")
                self.door.refused_unread("mqtt", MESH_CODEC, headers, err)
                raise err
            await self._dispatch(parsed, msg, reply, forwarded, scope, headers)
        except A2AError as exc:
            if not forwarded:
                await self._answer_error(reply, rid, exc, exc.message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("internal error handling a mesh request")
            if not forwarded:
                await self._answer_error(reply, rid, InternalError(), repr(exc))
        else:
            self.handled += 1

    async def _dispatch(self, req: jsonrpc.Request, msg: Inbound, reply: Reply,
                        forwarded: bool, scope: dict[str, Any], headers: dict[str, str]) -> None:
        codec = MESH_CODEC
        streaming = req.method in codec.streaming_methods
        # admitted before the request was read (``_handle``); SAM's requesters send no
        # version, one that does is held to it, as on HTTP
        inbound = dispatch.Inbound(binding="mqtt", scope=scope, headers=headers, codec=codec,
                                   method=req.method, payload=req.params,
                                   raw_version=headers.get("a2a-version"), streaming=streaming,
                                   admitted=True)
        # the version checked before the params are read; the call as the mesh sees it
        # before it is made
        info = await self.door.admitted(inbound)
        call = inbound.call
        assert call is not None
        if forwarded and not isinstance(call, CancelTask):
            return  # only cancels are handed on
        try:
            self._route(call, req, reply, streaming)
        except A2AError as exc:  # told to the request hooks, as the front door's refusals
            self.door.refused(inbound, exc)
            raise
        if isinstance(call, CancelTask) and not self.door.running_here(info, call.id):
            # the instance that runs the task answers its cancel
            if forwarded:
                return  # not ours: the instance running it answers
            if await self._hand_on(call, info, msg):
                return
        result = await self.door.enter(inbound)
        if isinstance(result, Items):
            task_id = call.id if isinstance(call, SubscribeToTask) else None
            await self._pump(result, info, req.id, reply, task_id=task_id)
            return
        if isinstance(result, Task):
            result = _unrouted(result)
        if reply.topic is not None:
            await self._answer(reply, req.id, codec.encode_result(call, result))

    def _route(self, call: Any, req: jsonrpc.Request, reply: Reply, streaming: bool) -> None:
        """Where a call's answers go, checked before it is made: a send's task named by
        its request id (SAM's), its route kept with the task, its updates' topic."""
        if isinstance(call, SendMessage):
            named = _task_named_by(req.id)
            if named is not None and call.message.task_id is None:
                # SAM's requesters name the task: the request id is its id, and the
                # id names the topics of its updates
                check_task_id(named)
                call.client_task_id = named
            # kept with the task, for whichever instance ends it (and never the
            # requester's own: only this binding says where answers go)
            metadata = {k: v for k, v in (call.message.metadata or {}).items()
                        if k != REPLY_ROUTE}
            if reply.topic is not None:
                metadata[REPLY_ROUTE] = reply.route(req.id, streaming)
            call.message.metadata = metadata or None
            if streaming:
                self._check_status_topic(reply, call.message.task_id or call.client_task_id)
        if isinstance(call, SubscribeToTask):
            self._check_status_topic(reply, call.id)

    def _check_status_topic(self, reply: Reply, task_id: str | None) -> None:
        """Refuse a stream whose updates' topic (it names the task) cannot be published."""
        topic = reply.status_topic(self.topics, task_id) if task_id else None
        if topic is not None and (why := topic_problem(topic)) is not None:
            raise InvalidRequest(f"Invalid Request: the status topic {topic!r} {why}")

    async def _hand_on(self, call: CancelTask, info: RequestInfo, msg: Inbound) -> bool:
        """Hand a cancel to the instance that runs the task; True once one has taken
        it. False: no instance did (the task is finished, unknown, or ran nowhere),
        and the caller cancels it here, through the store."""
        try:
            task = await self.door.call(GetTask(id=call.id, history_length=0), info,
                                        counted=False)
        except A2AError:
            return False
        if not isinstance(task, Task) or task.status.state in TERMINAL_STATES:
            return False
        await self.broker.publish(self.topics.control(self.name), msg.payload,
                                  {**msg.properties, FORWARDED_BY: self.instance},
                                  response_topic=msg.response_topic,
                                  correlation=msg.correlation)
        deadline = time.monotonic() + self.settings.cancel_grace
        while time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            try:
                task = await self.door.call(GetTask(id=call.id, history_length=0), info,
                                            counted=False)
            except A2AError:
                return True
            if isinstance(task, Task) and task.status.state is TaskState.CANCELED:
                return True  # taken and answered elsewhere
            if isinstance(task, Task) and task.status.state in TERMINAL_STATES:
                # it ended otherwise meanwhile (finished, or failed for an instance
                # gone): nobody answers this cancel but the caller, with the refusal
                return False
        return False

    async def _pump(self, items: Items, info: RequestInfo, rid: Any, reply: Reply,
                    task_id: str | None = None) -> None:
        """Publish a stream's updates on the status topic, then the final answer."""
        codec = MESH_CODEC
        final: bytes | None = None
        inflight: deque[asyncio.Future[None]] = deque()
        try:
            while True:
                lagged: Lagged | None = None
                async for got in items:
                    # encoded before anything is awaited: a snapshot is the live task
                    out: list[tuple[str, bytes]] = []
                    for o in got:
                        if isinstance(o, Entry):
                            item = o.item
                            if isinstance(item, Message):
                                final = codec.encode_result(SendMessage(message=item), item)
                                continue
                            if isinstance(item, Task):
                                # the status alone: its artifacts, whole, could pass the
                                # broker's packet size (a requester that missed chunks
                                # reads the task at the turn's end, relay.reconcile)
                                task_id = item.id
                                data = codec.encode_stream_item(StatusUpdate(
                                    task_id=item.id, context_id=item.context_id,
                                    status=item.status, metadata=item.metadata))
                            else:
                                task_id = item.task_id
                                data = encoded_item(o, codec)
                            topic = reply.status_topic(self.topics, task_id)
                            if topic is not None:
                                out.append((topic, data))
                        elif isinstance(o, Lagged):
                            lagged = o
                            break
                        elif isinstance(o, Unavailable):
                            raise InternalError(f"the task's events are gone: {o.message}")
                    for topic, data in out:
                        payload = _success(rid, data)
                        # one the broker would not take ends this stream with the
                        # refusal on the reply topic (_handle answers it)
                        self._fits(topic, payload, reply)
                        # Published without waiting for each ack (the broker keeps the
                        # order of one connection's messages), up to a window of them.
                        inflight.append(asyncio.ensure_future(
                            self._publish(topic, payload, reply)))
                        if len(inflight) >= _WINDOW:
                            await inflight.popleft()
                    if lagged is not None:
                        break
                if lagged is None:
                    break
                # fell behind: follow on from the log where it left off
                assert task_id is not None
                items.close()
                # (the same request going on: not counted as one more)
                items = Items(await self.door.stream(SubscribeToTask(id=task_id), info,
                                                     str(lagged.seq), counted=False))
        finally:
            items.close()
            if inflight:
                await asyncio.gather(*inflight)
        if reply.topic is None:
            return
        if final is None and task_id is not None:
            # the stream's last answer, read for it: not a request of its own
            task = await self.door.call(GetTask(id=task_id), info, counted=False)
            assert isinstance(task, Task)
            if task.status.state not in RETURN_STATES:
                # the stream ended before its task did (this server stops, past its
                # drain): an error, not a "final" task still working
                await self._answer_error(reply, rid, ResourceUnavailable(
                    f"This agent stopped while task {task_id} was "
                    f"{task.status.state.value}; ask for it again once it is back"),
                    "stopped")
                return
            # the artifacts went out as updates
            task = msgspec.structs.replace(_unrouted(task), artifacts=[])
            final = codec.encode_result(GetTask(id=task_id), task)
        if final is not None:
            await self._answer(reply, rid, final)

    # ------------------------------------------------- tasks of instances gone

    def _orphan_ended(self, run: Run) -> None:
        """A task whose instance is gone was ended here: its requester is told."""
        if self._stopping or not MESH_CODEC.recorded(run.dialect):
            return  # a task made over HTTP: its callers do not wait on the mesh
        task = asyncio.create_task(self._tell_ended(run.task))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _tell_ended(self, task: Task) -> None:
        """The final status (on the status topic of a streaming send) and the final Task
        (on its reply topic), as the instance that ran the turn would have sent them,
        once connected and subscribed."""
        await self._subscribed.wait()
        route = next((m.metadata[REPLY_ROUTE] for m in reversed(task.history)
                      if m.metadata and REPLY_ROUTE in m.metadata), None)
        stored = Reply.stored(route)
        if stored is None:
            return  # not sent over the mesh, or by a requester that asked for no answer
        reply, rid, streaming = stored
        task = _unrouted(task)
        codec = MESH_CODEC
        if streaming:
            status = reply.status_topic(self.topics, task.id)
            if status is not None:
                event = codec.encode_stream_item(StatusUpdate(
                    task_id=task.id, context_id=task.context_id, status=task.status))
                await self._publish(status, _success(rid, event), reply)
            task = msgspec.structs.replace(task, artifacts=[])  # they went out as updates
        assert reply.topic is not None
        await self._publish(reply.topic,
                            _success(rid, codec.encode_result(GetTask(id=task.id), task)), reply)
        log.info("told the requester of task %s how it ended (its instance is gone)", task.id)
