"""A client for an agent on the mesh, with the API of the HTTP ``Client``.

``interlingua.client_for("mqtt://127.0.0.1:1883/NS/agent")`` gives one of these. Each call is a
JSON-RPC request in the mesh's dialect (SAM's, plus ``tasks/get`` and
``tasks/resubscribe``) published on the agent's request topic, with
``replyTo`` and ``a2aStatusTopic`` naming topics of this client
(``{ns}/a2a/v1/client/response/{id}/{task}``, ``…/client/status/{id}/{task}``, the
task id percent-encoded: any id is one level, with no wildcard or NUL), which it
subscribes to once, and the MQTT 5 Response Topic (the ``replyTo``)
and Correlation Data (the request's id) on every request. Answers are matched to calls by the JSON-RPC id;
a send's id is the id of the task it creates, as SAM's requesters do.

The card comes from the discovery topic (the next time the agent publishes
it: up to ten seconds, and no longer than the client's ``timeout``). Listing tasks and push notifications have no
counterpart on the mesh. A stream is not resumed after a broken connection
(``subscribe`` picks a running task up again).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import secrets
import ssl
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any
from urllib.parse import quote

import msgspec

from ..client.card import Endpoint
from ..client.errors import (
    AgentTimeout,
    AgentUnreachable,
    BadResponse,
    ClientError,
    DialectMismatch,
    too_large,
)
from ..client.generations import GENERATIONS_VERSION
from ..client.security import CardVerifier
from ..client.stream import StreamEvent
from ..client.timeouts import checked_timeout
from ..client.tls import CertLike
from ..client.transport import DEFAULT_MAX_ANSWER_BYTES, checked_answer_bound, checked_headers
from ..core.calls import (
    Call,
    CancelTask,
    GetTask,
    Result,
    SendMessage,
    SubscribeToTask,
)
from ..core.errors import InvalidAgentResponse
from ..core.model import AgentCard, Message
from ..core.parts import new_id
from ..core.trace_context import inject as inject_trace
from .broker import Broker, MeshUnavailable, PacketTooLarge, publish_wait
from .client_api import MeshClientAPI, http_only, named_for, with_tls
from .codec import MESH_CODEC, MESH_PROTOCOL_VERSION, MQTT_BINDING, id_of
from .reading import ReadingConnection
from .topics import MeshURL, Topics, parse_mesh_url, topic_problem
from .updates import read_update, task_of

__all__ = ["CARD_WAIT", "MeshClient", "Requester", "mesh_card", "read_update", "task_of"]

log = logging.getLogger("interlingua.mesh")

#: how long to wait for an agent's card on the discovery topic (it comes every 10 s)
#: when a client's calls may wait for ever
CARD_WAIT = 12.0


class _Envelope(msgspec.Struct):
    id: str | int | None = None
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: Any = msgspec.UNSET


_envelope = msgspec.json.Decoder(_Envelope)


#: the longest topic level a task id is written as in this client's reply topics
_LEVEL_MAX = 200


def task_level(task_id: str) -> str:
    """``task_id`` as one topic level of this client's reply topics: percent-encoded
    (a wildcard, a NUL or a ``/`` in it cannot end up in a topic), or its hash when
    that is long. The answers are matched by their JSON-RPC id, not by the topic."""
    level = quote(task_id, safe="")
    if len(level) > _LEVEL_MAX:
        level = "sha256-" + hashlib.sha256(task_id.encode("utf-8", "surrogatepass")).hexdigest()
    return level


#: what a call is handed for an answer past ``max_answer_bytes`` (no agent can send it)
_TOO_LARGE = _Envelope(error=None)


class _Pending:
    """What a call waits for: its final answer, and (streams) the updates before it."""

    __slots__ = ("queue",)

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[bool, _Envelope]] = asyncio.Queue()


class Requester(ReadingConnection):
    """One connection that publishes requests to agents and hands each answer to
    the call waiting for it (by JSON-RPC id). ``reply_topic(task)`` and
    ``status_topic(task)`` are where this requester asks for its answers; it
    subscribes to ``listen`` once connected."""

    def __init__(self, url: MeshURL, topics: Topics, client_id: str, *,
                 reply_topic: Callable[[str], str], status_topic: Callable[[str], str],
                 listen: Sequence[str], timeout: float | None = 60.0,
                 properties: dict[str, Any] | None = None,
                 max_answer_bytes: int | None = DEFAULT_MAX_ANSWER_BYTES) -> None:
        self.url = url
        #: bytes one answer may hold (None: the broker's bound alone)
        self.max_answer_bytes = max_answer_bytes
        self.topics = topics
        self.client_id = client_id
        self.reply_topic = reply_topic
        self.status_topic = status_topic
        self.listen = list(listen)
        self.timeout = timeout
        self.properties = dict(properties or {})
        self._status_prefixes = tuple(t.removesuffix("#") for t in self.listen
                                      if "/status/" in t)
        self._broker = Broker(url, client_id)
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[Any, _Pending] = {}
        self._lock = asyncio.Lock()

    @property
    def in_flight(self) -> Any:
        """The request ids whose answers are awaited (a view)."""
        return self._pending.keys()

    def _listening(self) -> list[str]:
        return self.listen

    async def _read(self) -> None:
        try:
            limit = self.max_answer_bytes
            async for msg in self._broker.messages():
                try:
                    if limit is not None and len(msg.payload) > limit:
                        env = _TOO_LARGE
                        rid = id_of(msg.payload).id
                    else:
                        env = _envelope.decode(msg.payload)
                        rid = env.id
                except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
                    # (anyone may publish on these topics: no call's answer, none failed)
                    log.warning("a message on %s that is no JSON-RPC answer was skipped: %s",
                                msg.topic, exc)
                    continue
                if rid is None and msg.correlation is not None:
                    # a refusal made before the request was read (its size, its
                    # credentials, the rate): no id, but the Correlation Data sent
                    rid = msg.correlation.decode("utf-8", "replace")
                pending = self._pending.get(rid)
                if pending is None:
                    continue
                update = msg.topic.startswith(self._status_prefixes)
                if update and env is not _TOO_LARGE and isinstance(env.result, msgspec.UnsetType):
                    # an update is a result; errors and final answers come on the reply
                    # topic: this one is no answer of the agent's, and the call goes on
                    log.warning("a message on %s for request %s that holds no result was "
                                "skipped (not an update)", msg.topic, rid)
                    continue
                pending.queue.put_nowait((update, env))
        except MeshUnavailable:
            for pending in self._pending.values():
                pending.queue.put_nowait((False, _Envelope(error={"lost": True})))
            await self._connection_lost()

    async def publish(self, agent: str, rid: Any, call: Call, task_id: str, *,
                      streaming: bool, properties: dict[str, Any] | None = None,
                      expiry: int | None = None) -> _Pending:
        """Publish ``call`` to ``agent``; the answers to it gather in what is returned
        (``forget(rid)`` when done with it). ``expiry``: seconds after which the broker
        hands the request to no one (MQTT 5 Message Expiry Interval)."""
        await self.ensure()
        method, params = MESH_CODEC.encode_call(call)
        body = (b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(rid) + b',"method":'
                + msgspec.json.encode(method) + b',"params":' + params + b"}")
        props: dict[str, Any] = {
            **self.properties,
            **(properties or {}),
            "replyTo": self.reply_topic(task_id),
            "clientId": self.client_id,
            "timestamp": int(time.time() * 1000),
        }
        if streaming:
            props["a2aStatusTopic"] = self.status_topic(task_id)
        for what in ("replyTo", "a2aStatusTopic"):
            if what in props and (why := topic_problem(props[what])) is not None:
                # published, it would be refused, or end this connection
                raise ClientError(f"the request to {agent} was not sent: its {what} "
                                  f"{props[what]!r} {why}")
        inject_trace(props)  # the user property traceparent, when a span is current
        pending = self._pending[rid] = _Pending()
        try:
            # the MQTT 5 Response Topic and Correlation Data too, which requesters of
            # the A2A-over-MQTT profile's layout always set (SAM's agents read replyTo)
            await self._broker.publish(self.topics.request(agent), body, props,
                                       response_topic=props["replyTo"],
                                       correlation=str(rid).encode(), expiry=expiry,
                                       timeout=publish_wait(self.timeout))
        except MeshUnavailable as exc:
            del self._pending[rid]
            raise AgentUnreachable(str(exc)) from None
        except PacketTooLarge as exc:
            # said at once: published, it would end this connection, unanswered
            del self._pending[rid]
            raise ClientError(f"the request to {agent} was not sent: {exc}") from None
        return pending

    def forget(self, rid: Any) -> None:
        self._pending.pop(rid, None)

    async def next(self, pending: _Pending, agent: str) -> tuple[bool, bytes]:
        """The next answer: (is an update, its raw ``result``); errors are raised."""
        try:
            async with asyncio.timeout(self.timeout):
                status, env = await pending.queue.get()
        except TimeoutError:
            raise AgentTimeout(
                f"no answer from {agent} on {self.url.broker} within "
                f"{self.timeout:g} s") from None
        if env is _TOO_LARGE:
            raise too_large(f"{agent} on {self.url.broker}", self.max_answer_bytes or 0)
        if env.error is not msgspec.UNSET:
            error = env.error
            if isinstance(error, dict) and error.get("lost"):
                raise AgentUnreachable(f"the connection to {self.url.broker} was lost")
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                raise BadResponse(f"{agent} answered an error without an integer code")
            raise MESH_CODEC.decode_error(error)
        if isinstance(env.result, msgspec.UnsetType):
            raise BadResponse(f"{agent} answered neither a result nor an error")
        return status, bytes(env.result)


class MeshClient(MeshClientAPI):
    """An A2A client for one agent on an MQTT 5 mesh (``mqtt://host:port/NS/agent``).

    ``timeout``: seconds a call waits for its answer (None: for ever).
    ``max_answer_bytes``: the largest answer (or card) taken, as ``Client``'s.
    ``headers`` are sent as user properties. ``verify`` and ``cert`` are how an
    ``mqtts://`` broker is reached, and ``card_verifier`` checks the card read on
    the mesh, as for ``Client``. ``dialect`` "1.1" is refused: SAM's layout carries
    SAM's payloads, of v0.3's family, which A2A 1.1 does not extend (another
    ``dialect`` has no effect: the layout has one). The HTTP client's other keyword
    arguments (``binding``, ...) are accepted and have no effect here.
    """

    def __init__(self, url: str, *, dialect: str | None = None,
                 timeout: float | None = 60.0,
                 headers: dict[str, str] | None = None,
                 max_answer_bytes: int | None = DEFAULT_MAX_ANSWER_BYTES,
                 verify: bool | str | ssl.SSLContext = True, cert: CertLike | None = None,
                 card_verifier: CardVerifier | None = None,
                 **_http_only: Any) -> None:
        http_only(_http_only)
        if dialect == GENERATIONS_VERSION:
            raise ValueError(
                f"{url!r} is an agent in SAM's mesh layout, whose payloads are of v0.3's "
                "family: A2A 1.1 is not spoken there (an agent of the A2A-over-MQTT "
                "profile, mqtt://HOST[:PORT]/ORG/UNIT/AGENT, speaks it)")
        parsed = with_tls(parse_mesh_url(url), verify, cert)
        if parsed.namespace is None or parsed.agent is None:
            raise ValueError(f"{url!r}: a mesh agent's URL is mqtt://HOST[:PORT]/NAMESPACE/AGENT")
        self.url = url
        self.card_verifier = card_verifier
        self.mesh: MeshURL = parsed
        self.agent: str = parsed.agent
        self.topics = Topics(parsed.namespace)
        self.timeout = checked_timeout(timeout)
        # (the HTTP client's rule for them: they are the headers the agent's own
        # authentication reads, as user properties)
        self.headers: dict[str, str] = checked_headers(headers)
        self.client_id = f"{parsed.namespace}-client-{secrets.token_hex(6)}"
        topics = self.topics
        self._requester = Requester(
            parsed, topics, self.client_id,
            # (the task id as a level of its own: ids are the agent's, and any string)
            reply_topic=lambda task: topics.client_response(self.client_id, task_level(task)),
            status_topic=lambda task: topics.client_status(self.client_id, task_level(task)),
            listen=[topics.client_response(self.client_id) + "/#",
                    topics.client_status(self.client_id) + "/#"],
            timeout=timeout, properties=self.headers,
            max_answer_bytes=checked_answer_bound(max_answer_bytes))
        self._ids = itertools.count(1)
        self._card: AgentCard | None = None
        self._card_document: bytes | None = None
        #: the raw JSON of the last successful answer's ``result`` member
        self.last_result: bytes | None = None

    async def call(self, call: Call) -> Result:
        """Carry out a canonical call on the mesh (send, get, cancel)."""
        if not isinstance(call, (SendMessage, GetTask, CancelTask)):
            raise DialectMismatch(f"{type(call).__name__} has no counterpart on the mesh")
        rid, task_id = self._ids_for(call)
        requester = self._requester
        pending = await requester.publish(self.agent, rid, call, task_id, streaming=False)
        try:
            while True:
                update, raw = await requester.next(pending, self.agent)
                if not update:
                    break
        finally:
            requester.forget(rid)
        try:
            result = MESH_CODEC.decode_result(call, raw)
        except InvalidAgentResponse as exc:
            raise BadResponse(f"{self.agent}: {exc.message}") from None
        self.last_result = raw
        return result

    def _ids_for(self, call: Call) -> tuple[str, str]:
        """The request id and the task the answers are about."""
        if isinstance(call, SendMessage):
            if call.message.task_id:
                return f"{call.message.task_id}.{next(self._ids)}", call.message.task_id
            # SAM's request id names the new task: made from the message's id, so that a
            # retry is answered with its task (a new one while a send of it is in flight
            # here, whose answers that id routes)
            task_id = named_for(call.message.message_id)
            if task_id in self._requester.in_flight:
                task_id = new_id()
            return task_id, task_id
        task = call.id if isinstance(call, (GetTask, CancelTask, SubscribeToTask)) else "-"
        return f"{task}.{next(self._ids)}", task

    # ------------------------------------------------------------ the agent

    @property
    def dialect(self) -> str:
        return MESH_CODEC.name

    @property
    def card_url(self) -> str:
        return self.topics.discovery()

    @property
    def endpoints(self) -> list[Endpoint]:
        """Where this client's calls go: the agent on the mesh, in SAM's JSON-RPC (of
        v0.3's family, as a mesh-only card's ``MQTT`` interface says), whatever
        HTTP interfaces its card names."""
        return [Endpoint(MESH_PROTOCOL_VERSION, self.url, MQTT_BINDING)]

    async def get_card(self) -> AgentCard:
        """The agent's card as it next publishes it on the discovery topic, within the
        client's ``timeout`` (``CARD_WAIT`` without one; ``AgentTimeout`` after it).
        A timeout shorter than the agent's period (10 s) may end before its card comes."""
        if self._card is None:
            wait = CARD_WAIT if self.timeout is None else self.timeout
            document = await mesh_card(self.mesh, self.topics, self.agent, wait=wait)
            return await self._take_card(document, self.mesh.broker)
        return self._card

    async def _follow(self, call: SendMessage | SubscribeToTask) -> AsyncGenerator[StreamEvent, None]:
        rid, task_id = self._ids_for(call)
        # the task its updates are about: the one the call names; a new send's, as its
        # first update says (the agent may answer a message sent again with its task)
        ours = call.id if isinstance(call, SubscribeToTask) else call.message.task_id
        requester = self._requester
        pending = await requester.publish(self.agent, rid, call, task_id, streaming=True)
        try:
            while True:
                update, raw = await requester.next(pending, self.agent)
                if update:
                    item = read_update(raw, ours, self.agent)
                    if item is not None:
                        ours = ours or task_of(item)
                        yield StreamEvent(None, item, raw)
                    continue
                self.last_result = raw
                try:
                    final = MESH_CODEC.decode_stream_item(raw)
                except InvalidAgentResponse as exc:
                    raise BadResponse(f"{self.agent}: {exc.message}") from None
                if isinstance(final, Message):
                    yield StreamEvent(None, final, raw)
                return
        finally:
            requester.forget(rid)


async def mesh_card(url: MeshURL, topics: Topics, agent: str, *, wait: float = CARD_WAIT) -> bytes:
    """The card the agent ``agent`` (its topic level) next publishes (``AgentTimeout``
    after ``wait`` s)."""
    from .discovery import agent_level

    broker = Broker(url, f"{topics.namespace}-card-{secrets.token_hex(6)}")
    try:
        await broker.connect()
        await broker.subscribe(topics.discovery(), qos=0)

        async def first() -> bytes:
            async for msg in broker.messages():
                # the level its mesh interface names (--mesh-name), not its name's
                if agent_level(msg.payload, topics.namespace) == agent:
                    return msg.payload
            raise MeshUnavailable("the connection ended")

        async with asyncio.timeout(wait):
            return await first()
    except TimeoutError:
        raise AgentTimeout(f"{agent} published no card on {url.broker} within {wait:g} s") \
            from None
    except MeshUnavailable as exc:
        raise AgentUnreachable(str(exc)) from None
    finally:
        await broker.close()
