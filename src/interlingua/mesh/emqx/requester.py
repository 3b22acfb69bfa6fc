"""A requester in the A2A-over-MQTT profile: one connection, one reply topic, and
the answers to each request told apart by their Correlation Data.

Every request carries the Response Topic (this requester's
``$a2a/v1/reply/{org}/{unit}/{requester}/{suffix}``, subscribed before anything is
published) and Correlation Data of its own. As the profile asks, a request not
answered within ``first_reply`` seconds is published again with new
Correlation Data and the same payload (so the same task id: the agent does not
run it twice), up to ``attempts`` times in all, after 1, 2 and 4 s (±20 %);
answers to any of its correlations are taken. Once one answer came, it is never
published again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
import time
from collections.abc import AsyncGenerator
from typing import Any

import msgspec

from ...client.errors import AgentTimeout, AgentUnreachable, BadResponse, ClientError, too_large
from ...client.generations import mismatch_in
from ...client.transport import DEFAULT_MAX_ANSWER_BYTES
from ...core.calls import Call
from ...core.dialects import Codec, get_codec
from ...core.trace_context import inject as inject_trace
from ..broker import Broker, Inbound, MeshUnavailable, PacketTooLarge, publish_wait
from ..reading import ReadingConnection
from ..topics import MeshURL
from .topics import Space
from .wire import binding_error

__all__ = ["EmqxRequester"]

log = logging.getLogger("interlingua.mesh")

CODEC = get_codec("1.0")
#: the profile's defaults: first answer within 15 s, three attempts, backoff 1, 2, 4 s
FIRST_REPLY = 15.0
ATTEMPTS = 3
_BACKOFF = (1.0, 2.0, 4.0)


class _Envelope(msgspec.Struct):
    id: Any = None
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: Any = msgspec.UNSET


_envelope = msgspec.json.Decoder(_Envelope)
_LOST = object()
_TOO_LARGE = object()


class EmqxRequester(ReadingConnection):
    """Requests to agents of one ``{org}/{unit}``; ``timeout``: seconds to wait for
    each answer once one came, and in all for the first (None: for ever)."""

    def __init__(self, url: MeshURL, space: Space, *, requester: str | None = None,
                 timeout: float | None = 60.0, first_reply: float = FIRST_REPLY,
                 attempts: int = ATTEMPTS, properties: dict[str, Any] | None = None,
                 max_answer_bytes: int | None = DEFAULT_MAX_ANSWER_BYTES,
                 codec: Codec = CODEC) -> None:
        self.url = url
        #: what requests are written and errors read in (1.1's: with its fields)
        self.codec = codec
        #: bytes one answer may hold (None: the broker's bound alone)
        self.max_answer_bytes = max_answer_bytes
        self.space = space
        self.requester = requester or f"interlingua-{secrets.token_hex(6)}"
        self.client_id = space.client_id(self.requester)
        self.reply_topic = space.reply(self.requester, secrets.token_hex(8))
        self.timeout = timeout
        self.first_reply = first_reply
        self.attempts = attempts
        self.properties = dict(properties or {})
        self._broker = Broker(url, self.client_id)
        self._reader: asyncio.Task[None] | None = None
        self._pending: dict[bytes, asyncio.Queue[Any]] = {}
        self._lock = asyncio.Lock()

    def _listening(self) -> list[str]:
        return [self.reply_topic]

    async def _read(self) -> None:
        try:
            async for msg in self._broker.messages():
                # an answer with a correlation of no request of ours is not ours
                queue = self._pending.get(msg.correlation or b"")
                if queue is not None and (env := self._answer_in(msg)) is not None:
                    queue.put_nowait(env)
        except MeshUnavailable:
            for queue in self._pending.values():
                queue.put_nowait(_LOST)
            await self._connection_lost()

    def _answer_in(self, msg: Inbound) -> Any:
        """The JSON-RPC answer ``msg`` holds (``_TOO_LARGE``: one beyond the bound).
        None, with a warning, for a message that is no answer (not JSON-RPC, or neither
        a result nor an error): anyone who reads the request may publish under its
        Correlation Data, and such a message fails no call."""
        limit = self.max_answer_bytes
        if limit is not None and len(msg.payload) > limit:
            return _TOO_LARGE
        try:
            env = _envelope.decode(msg.payload)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            log.warning("a message on %s that is no JSON-RPC answer was skipped: %s",
                        msg.topic, exc)
            return None
        if env.error is msgspec.UNSET and isinstance(env.result, msgspec.UnsetType):
            log.warning("a message on %s that holds neither a result nor an error was "
                        "skipped (no answer)", msg.topic)
            return None
        return env

    async def exchange(self, agent: str, call: Call, *,
                       properties: dict[str, Any] | None = None,
                       ) -> AsyncGenerator[bytes, None]:
        """Publish ``call`` to ``agent`` and yield the raw ``result`` of each answer
        (errors are raised); the caller stops when it has what it waits for."""
        await self.ensure()
        method, params = self.codec.encode_call(call)
        rid = secrets.token_hex(8)
        body = (b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(rid) + b',"method":'
                + msgspec.json.encode(method) + b',"params":' + params + b"}")
        props: dict[str, Any] = {**self.properties, **(properties or {})}
        inject_trace(props)  # the user property traceparent, when a span is current
        queue: asyncio.Queue[Any] = asyncio.Queue()
        mine: list[bytes] = []
        try:
            answer = await self._first(agent, body, props, queue, mine)
            while True:
                yield self._result(agent, answer)
                answer = await self._next(agent, queue, self.timeout)
        finally:
            for correlation in mine:
                self._pending.pop(correlation, None)

    async def _first(self, agent: str, body: bytes, props: dict[str, Any],
                     queue: asyncio.Queue[Any], mine: list[bytes]) -> Any:
        """Publish until the first answer comes (then it is returned)."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        for attempt in range(self.attempts):
            if attempt:
                base = _BACKOFF[min(attempt - 1, len(_BACKOFF) - 1)]
                await asyncio.sleep(base * (1 + 0.2 * (2 * random.random() - 1)))
            correlation = secrets.token_hex(8).encode()
            self._pending[correlation] = queue
            mine.append(correlation)
            try:
                await self._broker.publish(self.space.request(agent), body, props,
                                           response_topic=self.reply_topic,
                                           correlation=correlation,
                                           timeout=publish_wait(self.timeout))
            except MeshUnavailable as exc:
                raise AgentUnreachable(str(exc)) from None
            except PacketTooLarge as exc:
                # said at once: published, it would end this connection, unanswered
                raise ClientError(f"the request to {agent} was not sent: {exc}") from None
            wait = self.first_reply
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
            if wait <= 0:
                break
            with contextlib.suppress(AgentTimeout):
                return await self._next(agent, queue, wait)
            if deadline is not None and time.monotonic() >= deadline:
                break
        raise AgentTimeout(f"no answer from {agent} on {self.url.broker} "
                           f"({self.space.request(agent)}) within the timeout")

    async def _next(self, agent: str, queue: asyncio.Queue[Any], wait: float | None) -> Any:
        try:
            async with asyncio.timeout(wait):
                answer = await queue.get()
        except TimeoutError:
            raise AgentTimeout(f"no answer from {agent} on {self.url.broker} within "
                               f"{wait:g} s") from None
        if answer is _LOST:
            raise AgentUnreachable(f"the connection to {self.url.broker} was lost")
        return answer

    def _result(self, agent: str, env: Any) -> bytes:
        if env is _TOO_LARGE:
            raise too_large(f"{agent} on {self.url.broker}", self.max_answer_bytes or 0)
        if env.error is not msgspec.UNSET:
            # (an error is the last answer to its request, as the profile says)
            error = env.error
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                raise BadResponse(f"{agent} answered an error without an integer code")
            raise binding_error(error) or mismatch_in(self.codec.decode_error(error))
        assert not isinstance(env.result, msgspec.UnsetType)  # (``_answer_in``)
        return bytes(env.result)
