"""A client for an agent in the A2A-over-MQTT profile, with the API of the HTTP ``Client``.

``interlingua.client_for("mqtt://127.0.0.1:1883/ORG/UNIT/AGENT")`` (three path
levels) gives one of these. Each call is v1.0 JSON-RPC (A2A 1.1's, with the user
property ``a2a-version: 1.1``, when given ``dialect="1.1"``) published on
``$a2a/v1/request/{org}/{unit}/{agent}`` with this client's Response Topic and a
Correlation Data of its own (mesh/emqx/requester.py).

A send names its task: a new task gets a fresh id (and a fresh context unless
one is given), as the profile requires of requesters. Agents of the profile
answer a send either with one result (``{"task"}``/``{"message"}``, as
interlingua's do) or with a stream of events ending in a state that ends the
turn (as the profile's own SDK does); ``send`` takes both and gives the Task
(or Message), folding the events. ``cancel`` takes a Task or the
``statusUpdate`` the profile's SDK answers with. ``subscribe`` follows the task
through input-required and auth-required to its end, as v1.0 over HTTP.

The card is the retained one on ``$a2a/v1/discovery/{org}/{unit}/{agent}``;
``presence`` is the ``a2a-status`` it was published with (``online`` /
``offline``: advisory, as the profile says). Listing tasks and push
notifications have no counterpart here.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import ssl
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from ...client.card import Endpoint
from ...client.errors import AgentUnreachable, BadResponse, DialectMismatch
from ...client.generations import GENERATIONS_VERSION
from ...client.messages import make_message
from ...client.security import CardVerifier
from ...client.stream import StreamEvent
from ...client.timeouts import checked_timeout
from ...client.tls import CertLike
from ...client.transport import DEFAULT_MAX_ANSWER_BYTES, checked_answer_bound, checked_headers
from ...core.calls import Call, CancelTask, GetTask, SendMessage, SubscribeToTask
from ...core.dialects import get_codec
from ...core.errors import InvalidAgentResponse
from ...core.model import (
    TERMINAL_STATES,
    AgentCard,
    FilePart,
    Message,
    Part,
    StatusUpdate,
    Task,
)
from ..broker import Broker, MeshUnavailable
from ..client_api import MeshClientAPI, http_only, named_for, with_tls
from ..topics import MeshURL, parse_mesh_url
from ..updates import read_update, task_of
from .requester import EmqxRequester
from .topics import BINDING, PROTOCOL_VERSION, STATUS, Space
from .wire import ends_turn, fold, is_final

__all__ = ["EmqxClient", "retained_card"]

CODEC = get_codec("1.0")
#: how long a retained card may take to arrive once subscribed
CARD_WAIT = 3.0


class EmqxClient(MeshClientAPI):
    """An A2A client for one agent of the A2A-over-MQTT profile
    (``mqtt://host:port/ORG/UNIT/AGENT``). ``timeout``: seconds a call waits for
    each answer (None: for ever). ``headers`` are sent as user properties.
    ``dialect``: ``"1.0"`` (the default) or ``"1.1"``, whose requests say
    ``a2a-version: 1.1`` and have task generations (``if_generation_match``,
    ``after_generation``); other keyword arguments of the HTTP client are
    accepted and have no effect here."""

    def __init__(self, url: str, *, dialect: str | None = None,
                 timeout: float | None = 60.0,
                 headers: dict[str, str] | None = None,
                 max_answer_bytes: int | None = DEFAULT_MAX_ANSWER_BYTES,
                 verify: bool | str | ssl.SSLContext = True, cert: CertLike | None = None,
                 card_verifier: CardVerifier | None = None,
                 **_http_only: Any) -> None:
        http_only(_http_only)
        if dialect not in (None, PROTOCOL_VERSION, GENERATIONS_VERSION):
            raise ValueError(f"dialect {dialect!r}: the A2A-over-MQTT profile carries A2A "
                             f"{PROTOCOL_VERSION} (or {GENERATIONS_VERSION}, draft) only")
        self.version = dialect or PROTOCOL_VERSION
        self._codec = get_codec(self.version)
        parsed = with_tls(parse_mesh_url(url), verify, cert)
        if parsed.org is None or parsed.unit is None or parsed.agent is None:
            raise ValueError(f"{url!r}: an A2A-over-MQTT agent's URL is "
                             "mqtt://HOST[:PORT]/ORG/UNIT/AGENT")
        self.url = url
        self.card_verifier = card_verifier
        self.mesh: MeshURL = parsed
        self.agent: str = parsed.agent
        self.space = Space(parsed.org, parsed.unit)
        self.timeout = checked_timeout(timeout)
        # (the HTTP client's rule for them: they are the headers the agent's own
        # authentication reads, as user properties)
        self.headers: dict[str, str] = checked_headers(headers)
        properties: dict[str, Any] = dict(self.headers)
        if self.version != PROTOCOL_VERSION:
            # (the profile's requesters send none for 1.0, and are answered in 1.0)
            properties["a2a-version"] = self.version
        self._requester = EmqxRequester(parsed, self.space, timeout=timeout,
                                        properties=properties, codec=self._codec,
                                        max_answer_bytes=checked_answer_bound(max_answer_bytes))
        self._card: AgentCard | None = None
        self._card_document: bytes | None = None
        #: the ``a2a-status`` of the retained card (None: not read yet)
        self.presence: str | None = None
        #: the raw JSON of the last answer's ``result`` member
        self.last_result: bytes | None = None

    _no_listing = "listing tasks has no counterpart in A2A over MQTT"

    # ------------------------------------------------------------- the agent

    @property
    def dialect(self) -> str:
        """v1.0's, 1.1 too (as ``Client.dialect``; ``version`` says which)."""
        return CODEC.name

    @property
    def card_url(self) -> str:
        return self.space.discovery(self.agent)

    @property
    def endpoints(self) -> list[Endpoint]:
        version = "" if self.version == PROTOCOL_VERSION else self.version
        return [Endpoint(PROTOCOL_VERSION, self.url, BINDING, version=version)]

    async def get_card(self) -> AgentCard:
        """The agent's retained card (``AgentUnreachable`` when none is retained: none
        came within ``CARD_WAIT``, or the client's shorter ``timeout``)."""
        if self._card is None:
            wait = CARD_WAIT if self.timeout is None else min(CARD_WAIT, self.timeout)
            document, self.presence = await retained_card(self.mesh, self.space, self.agent,
                                                          wait=wait)
            return await self._take_card(document, self.mesh.broker)
        return self._card

    # ---------------------------------------------------------------- calls

    async def call(self, call: Call) -> Any:
        """A send, get or cancel: the Task (or Message) it comes to."""
        if not isinstance(call, (SendMessage, GetTask, CancelTask)):
            raise DialectMismatch(f"{type(call).__name__} has no counterpart here")
        task: Task | None = None
        gen = self._requester.exchange(self.agent, call)
        try:
            async for raw in gen:
                item = self._decode(call, raw, task.id if task else None)
                if item is None:
                    continue  # (no answer of the agent's to this call: skipped)
                self.last_result = raw
                if not isinstance(call, SendMessage) or isinstance(item, Message):
                    return item
                task = fold(task, item)
                # a non-blocking send is answered by the first answer, as over HTTP
                if is_final(item) or not call.config.blocking:
                    return task
        finally:
            await gen.aclose()
        raise BadResponse(f"{self.agent}: the answers ended before the task did")

    def _decode(self, call: Call, raw: bytes, task_id: str | None = None) -> Any:
        """The answer ``raw`` to ``call`` (None: an event of a send that is no update of
        its task, skipped; ``task_id``: the task its events made so far)."""
        try:
            codec = self._codec
            if isinstance(call, SendMessage):
                # {task}/{message}, or an event of the task the send names
                return read_update(raw, call.message.task_id or task_id, self.agent,
                                   codec, last=ends_turn)
            try:
                return codec.decode_result(call, raw)
            except InvalidAgentResponse:
                # the profile's SDK answers a cancel with the status it came to
                item = codec.decode_stream_item(raw)
                if not isinstance(item, (StatusUpdate, Task)):
                    raise
                return fold(None, item)
        except InvalidAgentResponse as exc:
            raise BadResponse(f"{self.agent}: {exc.message}") from None

    def _message(self, message_or_text: Message | str | Part | Sequence[Part], *,
                 task_id: str | None, context_id: str | None, data: Any,
                 files: Sequence[FilePart | str | os.PathLike[str]] | None) -> Message:
        # the requester names a new task (and its context), as the profile requires:
        # made from the message's id, so that a retry of it names the same task. A
        # message naming a task (a ready-made Message too, as the CLI sends) continues it.
        message = make_message(message_or_text, task_id=task_id, context_id=context_id,
                               data=data, files=files or ())
        if message.task_id is None:
            mid = message.message_id
            message.task_id = named_for(mid)
            if message.context_id is None:
                message.context_id = named_for(mid, "context")
        return message

    async def _follow(self, call: SendMessage | SubscribeToTask,
                      ) -> AsyncGenerator[StreamEvent, None]:
        # the task its answers are about: the one the call names (a send always
        # names one here, unless a ready-made call was given without)
        ours = call.id if isinstance(call, SubscribeToTask) else call.message.task_id
        gen = self._requester.exchange(self.agent, call)
        try:
            async for raw in gen:
                try:
                    item = read_update(raw, ours, self.agent, self._codec, last=ends_turn)
                except InvalidAgentResponse as exc:
                    raise BadResponse(f"{self.agent}: {exc.message}") from None
                if item is None:
                    continue  # (no update of this task: skipped, the stream goes on)
                ours = ours or task_of(item)
                self.last_result = raw
                yield StreamEvent(None, item, raw)
                if is_final(item) and not _goes_on(call, item):
                    return
        finally:
            await gen.aclose()


def _goes_on(call: SendMessage | SubscribeToTask, item: Any) -> bool:
    """Whether a stream goes on past ``item``, which ends a turn: a subscription
    follows the next turns to the task's end, as v1.0's ``SubscribeToTask`` does over
    HTTP; a streaming send ends with its turn."""
    return (isinstance(call, SubscribeToTask) and isinstance(item, (Task, StatusUpdate))
            and item.status.state not in TERMINAL_STATES)


async def retained_card(url: MeshURL, space: Space, agent: str, *,
                        wait: float = CARD_WAIT) -> tuple[bytes, str | None]:
    """The card retained for ``agent`` and its ``a2a-status`` (``AgentUnreachable``
    when none is retained, or the broker cannot be reached)."""
    topic = space.discovery(agent)
    broker = Broker(url, space.client_id(f"interlingua-card-{secrets.token_hex(6)}"))
    try:
        await broker.connect()
        await broker.subscribe(topic)

        async def first() -> tuple[bytes, str | None]:
            async for msg in broker.messages():
                if msg.payload:  # an empty retained message is a registration cleared
                    return msg.payload, msg.properties.get(STATUS)
            raise MeshUnavailable("the connection ended")

        async with asyncio.timeout(wait):
            return await first()
    except TimeoutError:
        raise AgentUnreachable(f"no card of {agent} is retained on {topic} at {url.broker}: "
                               "it is not registered") from None
    except MeshUnavailable as exc:
        raise AgentUnreachable(str(exc)) from None
    finally:
        await broker.close()

