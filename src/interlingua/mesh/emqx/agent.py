"""An agent in the A2A-over-MQTT profile: requests from its request topic through
the front door, every answer on the request's Response Topic.

- A request is v1.0 JSON-RPC (``SendMessage``, ``SendStreamingMessage``,
  ``GetTask``, ``CancelTask``, ``SubscribeToTask``…) published on
  ``$a2a/v1/request/{org}/{unit}/{agent}`` with the MQTT 5 Response Topic and
  Correlation Data, both required: without Correlation Data it is refused
  with -32005 (``transport_protocol_error``) on its Response Topic; without a
  Response Topic nothing can be told, and it is dropped with a warning.
- Every answer echoes the Correlation Data: one JSON-RPC response for a call,
  one per event for a stream (``task`` first, then ``statusUpdate`` /
  ``artifactUpdate``; the last has a state that ends the turn).
  A notification (no ``id``) is never answered: run as over HTTP, unless it is
  a stream (refused, unanswered), as in SAM's layout (``agent.take_notification``).
- The requester chooses the task id (``message.taskId``, required): an id no
  task has makes a new task of that id (what this profile alone allows); the id
  of an existing task goes through the front door as over HTTP: the same message
  again (its message id) is a retry, answered with its task, nothing run again;
  a new one continues an input-required or auth-required task, and is refused
  for any other (``ifGenerationMatch`` checked as over HTTP). A ``contextId``
  other than the task's is refused (-32602).
- Presence: the card is retained on ``$a2a/v1/discovery/{org}/{unit}/{agent}``
  with ``a2a-status: online``; the broker publishes it with ``offline`` (source
  ``lwt``) when the connection ends without a DISCONNECT, and a clean stop
  publishes it with ``offline`` itself.

One instance per agent: the client id the profile requires, ``{org}/{unit}/{agent}``,
cannot be shared (a second process of this host is refused, ``InstanceTaken``; one
started while the first stops waits for it, mesh/instance.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import msgspec

from ...core import jsonrpc
from ...core.calls import GetTask, SendMessage, SubscribeToTask
from ...core.dialects import V1_CODECS, Codec, get_codec
from ...core.errors import A2AError, InternalError, InvalidParams, InvalidRequest, TaskNotFound
from ...core.model import Message, Task
from ...server import dispatch
from ...server.context import RequestInfo
from ...server.dispatch import Entry, FrontDoor, Items, Lagged, Unavailable
from ..agent import past_the_broker, take_notification
from ..broker import Broker, Inbound, MeshUnavailable, PacketTooLarge, Will
from ..instance import InstanceTaken, claim
from ..reading import read_reconnecting
from ..settings import MeshSettings
from ..topics import check_name, topic_problem
from .topics import STATUS, STATUS_SOURCE, Space
from .wire import transport_error

__all__ = ["EmqxAgent"]

log = logging.getLogger("interlingua.mesh")

#: the profile's payloads are v1.0's
CODEC = get_codec("1.0")


def codec_for(raw_version: str | None) -> Codec:
    """The codec of a request asking for ``raw_version`` (the ``a2a-version`` user
    property): a later minor version's of v1.0 (1.1, draft) when it names one,
    else v1.0's, as over HTTP."""
    name = V1_CODECS.get(dispatch.parse_version(raw_version)) if raw_version else None
    return CODEC if name is None else get_codec(name)

#: stream events published and not yet acknowledged, at most
_WINDOW = 64


def _success(rid: Any, result: bytes) -> bytes:
    return jsonrpc.result_response(rid, result)


def _no_batches(items: int) -> None:
    raise InvalidRequest("Invalid Request: batches are not taken on the mesh")


class _Answer:
    """Where the answers to one request go: its Response Topic, with its Correlation Data."""

    __slots__ = ("agent", "codec", "correlation", "rid", "topic")

    def __init__(self, agent: EmqxAgent, topic: str, correlation: bytes | None) -> None:
        self.agent = agent
        #: None for a notification: nothing is answered
        self.topic: str | None = topic
        self.correlation = correlation
        self.rid: Any = None
        #: the codec of the request's version, once it is known
        self.codec = CODEC

    async def send(self, payload: bytes) -> None:
        if self.topic is not None:
            await self.agent._publish(self.topic, payload, self.correlation)

    def payload(self, result: bytes) -> bytes:
        """The answer carrying ``result``; ``AnswerTooLarge`` when the broker would not
        take it (publishing it would end the agent's connection, and its streams)."""
        payload = _success(self.rid, result)
        if self.topic is None:
            return payload
        try:
            self.agent.broker.fits(self.topic, payload, correlation=self.correlation)
        except PacketTooLarge as exc:
            raise past_the_broker(exc) from None
        return payload

    async def result(self, result: bytes) -> None:
        await self.send(self.payload(result))

    async def error(self, err: A2AError) -> None:
        await self.send(jsonrpc.error_response(self.rid, self.codec.encode_error(err)))


class EmqxAgent:
    """One agent's binding to a broker in the A2A-over-MQTT profile."""

    def __init__(self, door: FrontDoor, card: bytes, name: str, settings: MeshSettings) -> None:
        if settings.org is None or settings.unit is None:
            raise ValueError("the A2A-over-MQTT profile needs an org and a unit")
        self.door = door
        self.card = card
        self.name = check_name("agent name", name)
        self.settings = settings
        self.space = Space(settings.org, settings.unit)
        self.client_id = self.space.client_id(self.name)
        # the client id is the profile's, one per agent: a second process of this
        # host would take the connection from the first in turn
        try:
            self._slot = claim(settings.broker_url(), f"$a2a/{settings.org}/{settings.unit}",
                               self.name, "a2a")
        except InstanceTaken:
            raise InstanceTaken(
                f"{self.client_id} is already served by another process of this host: A2A "
                "over MQTT has one connection per agent (its client id)") from None
        self.broker = Broker(settings.broker_url(), self.client_id, clean_start=False,
                             session_expiry=settings.session_expiry, manual_ack=True)
        self._loop_task: asyncio.Task[None] | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._taking = True
        #: requests answered (tests and the log read it)
        self.handled = 0

    @property
    def request_topic(self) -> str:
        return self.space.request(self.name)

    # ------------------------------------------------------------ lifecycle

    def _presence(self, status: str, source: str) -> dict[str, str]:
        return {STATUS: status, STATUS_SOURCE: source}

    async def start(self) -> None:
        """Connect with the offline card as last will, subscribe, publish the online
        card (retained), then serve in the background."""
        await self.door.ensure_started()
        # the will is fixed when connecting: the card as rendered by now
        self.broker.will = Will(self.space.discovery(self.name), self.card,
                                self._presence("offline", "lwt"), qos=1, retain=True)
        await self.broker.connect()
        await self._online()
        self._loop_task = asyncio.create_task(self._serve(), name=f"a2a-mqtt:{self.client_id}")
        log.info("on the mesh at %s as %s (A2A over MQTT, %s/%s)", self.broker.url.broker,
                 self.name, self.space.org, self.space.unit)

    async def _online(self) -> None:
        await self.broker.subscribe(self.request_topic)
        await self.broker.publish(self.space.discovery(self.name), self.card,
                                  self._presence("online", "agent"), retain=True)

    async def stop(self, grace: float = 5.0) -> None:
        """Say offline (the retained card), let requests in hand finish (up to
        ``grace`` s), disconnect (no will: the card already says so)."""
        if self._stopping:
            return
        self._stopping = True
        # a restart begun meanwhile waits for the client id rather than be refused
        # (``grace``, and the offline card and the disconnect)
        self._slot.releasing(grace + 2.0)
        try:
            with contextlib.suppress(MeshUnavailable):
                if self.broker.connected:
                    await self.broker.publish(self.space.discovery(self.name), self.card,
                                              self._presence("offline", "agent"), retain=True)
            self._taking = False
            if self._loop_task is not None:
                self._loop_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._loop_task
            if self._handlers:
                _, pending = await asyncio.wait(set(self._handlers), timeout=grace)
                for task in pending:
                    task.cancel()
            await self.broker.close()
        finally:
            self._slot.release()

    async def _serve(self) -> None:
        await read_reconnecting(
            self.broker, self._take, on_connect=self._reconnected,
            delay=self.settings.reconnect_delay,
            warning=f"%s; reconnecting in {self.settings.reconnect_delay:g}s",
            stopping=lambda: self._stopping)

    async def _reconnected(self) -> None:
        await self._online()
        log.info("reconnected to the broker at %s", self.broker.url.broker)

    def _take(self, msg: Inbound) -> None:
        if not self._taking:
            return  # not acknowledged: the broker sends it again to the resumed session
        self.broker.ack(msg)
        task = asyncio.create_task(self._handle(msg))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _publish(self, topic: str, payload: bytes, correlation: bytes | None) -> None:
        try:
            await self.broker.publish(topic, payload, correlation=correlation)
        except ValueError as exc:
            log.warning("an answer to %r was not published: %s", topic, exc)
        except MeshUnavailable as exc:
            log.warning("an answer to %s was lost: %s", topic, exc)

    # ------------------------------------------------------------- requests

    async def _handle(self, msg: Inbound) -> None:
        topic = msg.response_topic
        if not topic or topic_problem(topic) is not None:
            log.warning("a request on %s is dropped: its Response Topic %s", msg.topic,
                        repr(topic) + " " + str(topic_problem(topic)) if topic else "is missing")
            return
        answer = _Answer(self, topic, msg.correlation)
        if not msg.correlation:
            await answer.send(transport_error(_rid_in(msg.payload), (
                "Missing MQTT v5 Correlation Data: A2A over MQTT needs it on every request")))
            return
        headers = {k.lower(): v for k, v in msg.properties.items()}
        if "a2a-authorization" in headers:  # the profile's name for the credentials
            headers.setdefault("authorization", headers["a2a-authorization"])
        scope: dict[str, Any] = {"type": "mqtt"}
        try:
            self.door.check_size(len(msg.payload))
            await self.door.admit(scope, headers)
            req = jsonrpc.parse(msg.payload, _no_batches)
            if isinstance(req, jsonrpc.Batch):
                raise InvalidRequest("Invalid Request: batches are not taken on the mesh")
            answer.rid = req.id
            await self._dispatch(req, answer, scope, headers)
        except A2AError as exc:
            if isinstance(exc.data, dict) and "id" in exc.data:
                answer.rid = exc.data["id"]
                exc.data = None
            await answer.error(exc)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("internal error handling a mesh request")
            await answer.error(InternalError())
        else:
            self.handled += 1

    async def _dispatch(self, req: jsonrpc.Request, answer: _Answer, scope: dict[str, Any],
                        headers: dict[str, str]) -> None:
        # the profile speaks v1.0: a request is read as such, or as the later minor
        # version its ``a2a-version`` asks for
        raw_version = headers.get("a2a-version") or "1.0"
        answer.codec = codec = codec_for(raw_version)
        take_notification(req, codec, answer)
        streaming = req.method in codec.streaming_methods
        inbound = dispatch.Inbound(binding="mqtt", scope=scope, headers=headers, codec=codec,
                                   method=req.method, payload=req.params,
                                   raw_version=raw_version, streaming=streaming, admitted=True)
        info = await self.door.admitted(inbound)
        call = inbound.call
        if isinstance(call, SendMessage):
            if not call.message.task_id:
                await answer.send(transport_error(req.id, (
                    "Missing required Task.id (message.taskId): the requester names the task "
                    "in A2A over MQTT")))
                return
            await self._place(call, info)
        result = await self.door.enter(inbound)
        if isinstance(result, Items):
            await self._pump(result, info, answer)
            return
        assert call is not None
        body = codec.encode_result(call, result)
        try:  # held to max_answer_bytes, as the other bindings' answers are
            self.door.check_answer(len(body))
        except A2AError as exc:
            await answer.error(exc)
            return
        await answer.result(body)

    async def _place(self, call: SendMessage, info: RequestInfo) -> None:
        """Where the send goes: a new task of the requester's id, or the task it names,
        which the front door then treats as over HTTP (a follow-up, a retry of a
        message it has, or a refusal: ``ifGenerationMatch``, a finished task)."""
        message = call.message
        task_id = message.task_id
        assert task_id is not None
        try:
            # (read for the send: not a request of its own)
            task = await self.door.call(GetTask(id=task_id, history_length=0), info,
                                        counted=False)
        except TaskNotFound:
            # the requester's id names the new task (only this profile lets it)
            if (why := topic_problem(task_id)) is not None:
                raise InvalidParams(f"Invalid params: message.taskId {task_id!r} {why}") \
                    from None
            message.task_id = None
            call.client_task_id = task_id
            return
        assert isinstance(task, Task)
        if message.context_id and message.context_id != task.context_id:
            raise InvalidParams(f"Invalid params: message.contextId {message.context_id!r} is "
                                f"not the context of task {task_id} ({task.context_id!r})")

    async def _pump(self, items: Items, info: RequestInfo, answer: _Answer) -> None:
        """Each event of a stream, on the Response Topic, in order."""
        inflight: list[asyncio.Future[None]] = []
        task_id: str | None = None
        try:
            while True:
                lagged: Lagged | None = None
                async for got in items:
                    out: list[bytes] = []
                    for o in got:
                        if isinstance(o, Entry):
                            item = o.item
                            if isinstance(item, Task):
                                task_id = item.id
                            elif not isinstance(item, Message):
                                task_id = item.task_id
                            # encoded before anything is awaited: a snapshot is the live task
                            out.append(answer.codec.encode_stream_item(item))
                        elif isinstance(o, Lagged):
                            lagged = o
                            break
                        elif isinstance(o, Unavailable):
                            raise InternalError(f"the task's events are gone: {o.message}")
                    for data in out:
                        # (one the broker would not take ends the stream with the refusal)
                        payload = answer.payload(data)
                        # the broker keeps one connection's order: no wait for each ack
                        inflight.append(asyncio.ensure_future(answer.send(payload)))
                        if len(inflight) >= _WINDOW:
                            await inflight.pop(0)
                    if lagged is not None:
                        break
                if lagged is None:
                    return
                assert task_id is not None
                items.close()  # fell behind: on from the log where it left off
                items = Items(await self.door.stream(SubscribeToTask(id=task_id), info,
                                                     str(lagged.seq), counted=False))
        finally:
            items.close()
            if inflight:
                await asyncio.gather(*inflight)


class _Rid(msgspec.Struct):
    id: str | int | None = None


def _rid_in(payload: bytes) -> Any:
    """The JSON-RPC id of a request, when one can be read (for a refusal)."""
    try:
        return msgspec.json.decode(payload, type=_Rid).id
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
