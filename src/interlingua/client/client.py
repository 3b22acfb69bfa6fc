"""``Client``: talk to any A2A agent in the dialect it speaks.

Theory of operation
-------------------
Given an agent's base URL, the client reads its card (lazily, on the first
call, or at once with ``Client.connect``) and takes the endpoints the card
names in a binding it speaks (``bindings.py``: JSON-RPC, HTTP+JSON, gRPC), a v1.0
interface first and a v0.2/v0.3 one next, in the card's order within a
version. ``binding`` keeps it to one binding. A card read over HTTPS is not taken to
an interface in clear text on another host (``interfaces.py``). Given a ``dialect``, it skips
the card and speaks that dialect to the URL (JSON-RPC unless ``binding``
says otherwise; for gRPC the URL is ``host:port``, ``grpcs://`` for TLS).

Every call is a canonical call (``interlingua.core.calls``) encoded by the
dialect's codec; answers are decoded by the same codec into the canonical
model, and error members into the ``A2AError`` subclass they name.

Agents do not always say truthfully what they speak. When the first call to
an agent is refused as an unknown method (-32601, or a route an HTTP+JSON
agent does not serve) or an unsupported version, the call is tried at the
card's next endpoint (another binding or dialect), then in the other dialect
at the same URL; whichever works is kept for the rest of the client's life.

Streams (``stream``, ``subscribe``) are read as they arrive and resumed with
``Last-Event-ID`` when the connection breaks; ``stream.py`` tells how.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
import msgspec

from ..core import lifecycle
from ..core.calls import (
    Call,
    CancelTask,
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    ListTasks,
    ListTasksResult,
    Result,
    SendConfig,
    SendMessage,
    SubscribeToTask,
)
from ..core.dialects import SPOKEN, get_codec
from ..core.dialects._common import format_timestamp
from ..core.dialects.base import StreamItem
from ..core.errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    ExtendedCardNotConfigured,
    MethodNotFound,
    UnsupportedOperation,
    VersionNotSupported,
    no_push_config,
)
from ..core.lifecycle import LISTABLE_STATES
from ..core.model import (
    TERMINAL_STATES,
    AgentCard,
    FilePart,
    Message,
    Metadata,
    Part,
    PushConfig,
    StatusUpdate,
    Task,
    TaskState,
)
from ..core.parts import new_id
from ..core.urls import lower_scheme
from ..grpc_wire.address import dns_target
from .bindings import (
    BINDINGS,
    GRPC_MISSING,
    Binding,
    BindingSpec,
    binding_spec,
    check_binding,
)
from .card import Endpoint, FetchedCard, endpoints, fetch_card, url_fault
from .errors import (
    BadResponse,
    CardNotOffered,
    ClientError,
    DialectMismatch,
    NotConnected,
    TaskNotSettled,
    too_deep,
)
from .generations import (
    GENERATIONS_VERSION,
    GenerationsNotSupported,
    check_generation,
    generation_of,
    long_poll,
    long_poll_asked,
    needs_generations,
)
from .interfaces import carry_query_keys, secure_only
from .messages import file_from_path, make_message
from .security import CardVerifier, CertLike, UnverifiedCard
from .session import Session
from .standing import to_where_it_stands
from .stream import Connection, ResumePolicy, StreamEvent, follow
from .timeouts import checked_timeout
from .transport import (
    CLOSED,
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_TIMEOUT,
    HTTPXTransport,
    Transport,
    checked_headers,
)
from .turn import Turn

__all__ = ["BINDINGS", "DIALECTS", "Client", "file_from_path", "make_message"]

#: the dialects this client speaks, best first
DIALECTS = SPOKEN

R = TypeVar("R")


def _check_url(url: str) -> None:
    """``ValueError`` naming ``url`` when no agent can be reached at it (a port past
    65535, a bracket left open): said now, not as a failure deep in the first call."""
    fault = url_fault(url)
    if fault is not None:
        raise ValueError(fault)


class Client:
    """An A2A client for one agent.

    ``url`` is the agent's base URL (its card is read from the well-known
    paths below it) or the URL of its card; with ``dialect`` (``"1.0"`` or
    ``"0.3"``) it is the endpoint itself and no card is needed. ``binding``
    (``"jsonrpc"``, ``"rest"`` or ``"grpc"``) uses that binding only; without it
    the card's interfaces decide (JSON-RPC when ``dialect`` is given). A gRPC address,
    ``grpc://host:port`` (``grpcs://`` for TLS) or a bare ``host:port`` with
    ``binding="grpc"``, needs no card (``get_card()`` asks for it over gRPC). gRPC needs
    the ``grpc`` extra; without it, cards' gRPC interfaces are passed over.
    ``timeout`` (seconds, 60; None: none) bounds each call's whole answer, over
    HTTP as over gRPC, not each read of it; a stream, which may last, is held to it
    read by read over HTTP (whose agents send heartbeats) and event by event over gRPC
    (whose streams carry none: an agent quiet for longer between events needs a longer
    timeout; docs/grpc.md): one quiet for longer ends with ``StreamTimeout``, not resumed.
    ``httpx_client`` lets the caller bring (and own) the HTTP client: its
    settings then win over ``timeout`` and ``verify``. ``resume`` says how
    broken streams are resumed (``ResumePolicy()``: 5 attempts with backoff).
    ``verify`` is True (system CAs), a CA bundle path, or False; ``cert`` is
    a client certificate for mutual TLS; ``card_verifier`` checks the card's
    signatures before it is used (``CardVerifier``). ``max_answer_bytes`` bounds
    one answer, or one stream event (64 MiB; None: no bound): an agent that sends
    more gets ``BadResponse`` (over gRPC too, where the library refuses it) before it
    fills the caller's memory. A card read over HTTPS that names an interface on plain
    HTTP (or gRPC without TLS) on another host than this one would have the caller's
    credentials cross the network in clear text: such an interface is passed over, and
    a card naming no other is refused (``InsecureInterface``), unless
    ``allow_insecure_interfaces`` is True. An API key in ``url``'s query that the card
    declares (``apiKey``, ``in: query``) is carried to its JSON-RPC and HTTP+JSON
    interfaces (``interfaces.py``).

    Use as ``async with Client(url) as client:``, or ``await
    Client.connect(url)`` (which reads the card at once) and ``aclose()``.
    An agent on an MQTT mesh (``mqtt://``) is reached with
    ``interlingua.client_for(url)`` instead, which picks the client by URL.
    """

    def __init__(
        self,
        url: str,
        *,
        dialect: str | None = None,
        binding: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        verify: bool | str | ssl.SSLContext = True,
        cert: CertLike | None = None,
        card_verifier: CardVerifier | None = None,
        httpx_client: httpx.AsyncClient | None = None,
        transport: Transport | None = None,
        resume: ResumePolicy | None = None,
        max_answer_bytes: int | None = DEFAULT_MAX_ANSWER_BYTES,
        allow_insecure_interfaces: bool = False,
    ) -> None:
        url = lower_scheme(url)
        if url.startswith(("mqtt://", "mqtts://")):
            # the mesh has a client of its own, with this API (docs/mesh.md)
            raise ValueError(f"{url!r} is an agent on an MQTT mesh: reach it with "
                             "interlingua.client_for(url), which gives a MeshClient")
        version = ""
        if dialect == GENERATIONS_VERSION:
            # 1.1 is v1.0's wire plus task generations: the 1.0 dialect, asked for as 1.1
            dialect, version = "1.0", GENERATIONS_VERSION
        if dialect is not None and dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}; use one of "
                             f"{', '.join((GENERATIONS_VERSION, *DIALECTS))}")
        checked_timeout(timeout)
        if url[:4].lower() == "dns:":
            # a card's gRPC interface URL, taken as it is: a plain-text gRPC address
            url = "grpc://" + dns_target(url)
        elif "://" not in url and binding is not None and binding.strip().lower() == "grpc":
            # a bare host:port given for gRPC is that plain-text address (TLS is grpcs://)
            url = "grpc://" + url
        grpc_address = url.startswith(("grpc://", "grpcs://"))
        if not grpc_address:
            _check_url(url)
        if grpc_address:
            if binding is not None and binding.strip().lower() != "grpc":
                raise ValueError(f"{url!r} is a gRPC address, not one of the {binding} binding")
            binding = "grpc"  # an address of a gRPC service has no other binding
        spec = check_binding(binding, dialect)
        if spec is not None and not spec.available():
            raise ClientError(GRPC_MISSING)
        #: the binding this client keeps to (None: the card's choice)
        self.binding = spec.name if spec is not None else None
        self.url = url
        self.headers: dict[str, str] = checked_headers(headers)
        self._timeout = timeout
        self._transport = transport or HTTPXTransport(
            httpx_client, timeout=timeout, verify=verify, cert=cert,
            max_answer_bytes=max_answer_bytes)
        #: what checks the card's signatures (None: nothing does)
        self.card_verifier = card_verifier
        #: whether a card read over HTTPS may send calls to interfaces in clear text
        self.allow_insecure_interfaces = allow_insecure_interfaces
        self._closed = False
        self._fetched: FetchedCard | None = None
        self._forced = dialect is not None
        self._endpoints: list[Endpoint] = []
        self._endpoint: Endpoint | None = None
        if dialect is not None:
            self._endpoint = Endpoint(dialect, url, (spec or BINDINGS["jsonrpc"]).card_name,
                                      version=version)
        elif grpc_address:
            # no card to read at a gRPC address: v1.0, then v0.3 if the agent has not it
            self._endpoints = [Endpoint(d, url, "GRPC") for d in ("1.0", "0.3")]
            self._endpoint = self._endpoints[0]
        # True once the agent has answered at the current endpoint: no more fallback.
        self._settled = self._forced
        self._bindings: dict[str, Binding] = {}
        #: the raw JSON of the last successful answer's ``result`` member
        self.last_result: bytes | None = None
        #: how broken streams are resumed
        self.resume = resume if resume is not None else ResumePolicy()
        # whether the agent's tasks have been seen carrying a generation (None: not yet)
        self._generations: bool | None = None

    @classmethod
    async def connect(cls, url: str, **kwargs: Any) -> Self:
        """A client whose card is already read (and dialect chosen)."""
        client = cls(url, **kwargs)
        try:
            await client.get_card()
            await client.resolve()
        except BaseException:
            await client.aclose()
            raise
        return client

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        for binding in self._bindings.values():
            close = getattr(binding, "aclose", None)
            if close is not None:
                await close()
        self._bindings.clear()
        await self._transport.aclose()

    # ---------------------------------------------------------------- the agent

    @property
    def card(self) -> AgentCard | None:
        """The agent's card once read (``get_card()`` reads it)."""
        return self._fetched.card if self._fetched is not None else None

    @property
    def card_document(self) -> bytes | None:
        """The card exactly as the agent served it, once read."""
        return self._fetched.document if self._fetched is not None else None

    @property
    def card_url(self) -> str | None:
        return self._fetched.url if self._fetched is not None else None

    @property
    def dialect(self) -> str | None:
        """The dialect in use: ``"1.0"`` or ``"0.3"`` (None until chosen)."""
        return self._endpoint.dialect if self._endpoint is not None else None

    @property
    def version(self) -> str | None:
        """The ``A2A-Version`` requests carry: ``"1.1"`` with an agent whose card offers
        it (task generations), else the dialect's (None until chosen)."""
        return self._endpoint.a2a_version if self._endpoint is not None else None

    @property
    def endpoint(self) -> Endpoint | None:
        """Where calls go, in which binding and dialect (None until chosen)."""
        return self._endpoint

    def _spoken(self) -> dict[str, tuple[str, ...]]:
        """Card binding name -> dialects, for the bindings this client may use."""
        specs = ([binding_spec(self.binding)] if self.binding
                 else [spec for spec in BINDINGS.values() if spec.available()])
        return {spec.card_name: spec.dialects for spec in specs}

    def _binding_for(self, endpoint: Endpoint) -> Binding:
        found = self._bindings.get(endpoint.binding)
        if found is None:
            if self._closed:  # (a gRPC binding would open new channels, never closed)
                raise ClientError(CLOSED)
            spec: BindingSpec = binding_spec(endpoint.binding)
            found = self._bindings[endpoint.binding] = spec.make(self._transport, self.headers)
        return found

    @property
    def endpoints(self) -> list[Endpoint]:
        """Every endpoint of the card this client could use, best first."""
        return list(self._endpoints)

    async def get_card(self) -> AgentCard:
        """The agent's card, read once from the well-known paths below ``url`` (at a
        gRPC address, which has none, asked for over gRPC)."""
        if self._fetched is None:
            at_address = self.url.startswith(("grpc://", "grpcs://"))
            if at_address and self.card_verifier is not None:
                # not yet: signatures are made over the JSON card, which gRPC does not
                # carry as it was signed; said, not passed over
                raise UnverifiedCard(
                    f"the card of {self.url} would come over gRPC, which does not carry "
                    "the JSON its signatures are made over: verify it at the agent's HTTP "
                    "URL (its card's JSONRPC or HTTP+JSON interface)")
            if at_address:
                fetched = await self._card_over_grpc()
            else:
                fetched = await fetch_card(self._transport, self.url, self.headers)
            if self.card_verifier is not None:
                # a card that does not verify is never used
                await self.card_verifier.verify(fetched, self._transport)
            # A card naming nothing this client speaks is still a card; the
            # mismatch is raised when a call needs an endpoint. (A client made for a
            # gRPC address keeps to it.) One whose every interface it speaks has a URL
            # no agent is at is InvalidCard, raised here and not kept; so is one read
            # over HTTPS that names them only in clear text (InsecureInterface).
            if not at_address:
                with contextlib.suppress(DialectMismatch):
                    self._endpoints = self._card_endpoints(fetched)
            self._fetched = fetched
        return self._fetched.card

    def _card_endpoints(self, fetched: FetchedCard) -> list[Endpoint]:
        """The endpoints of ``fetched`` calls may go to, best first: none in clear text
        from a card read over HTTPS (unless allowed), each carrying the API key the
        caller's URL holds where the card says to put it in the query."""
        found = endpoints(fetched.card, fetched.url, self._spoken())
        if not (self.allow_insecure_interfaces or self._forced):
            # (with a dialect given, calls go to the URL given, never to the card's)
            found = secure_only(found, fetched.url)
        return carry_query_keys(found, fetched.card, self.url)

    async def _card_over_grpc(self) -> FetchedCard:
        """The card of the agent at a gRPC address, asked for over each gRPC service
        (the dialect asked for first): v1.0's gives the extended card, if the agent has
        one and the caller may read it; v0.3's ``GetAgentCard`` the public card."""
        first = [self._endpoint.dialect] if self._forced and self._endpoint else []
        refusals: list[str] = []
        refused_caller: A2AError | None = None
        for dialect in dict.fromkeys([*first, *BINDINGS["grpc"].dialects]):
            endpoint = Endpoint(dialect, self.url, "GRPC")
            try:
                card, raw = await self._binding_for(endpoint).call(endpoint, GetExtendedCard())
            except (AuthenticationRequired, AuthorizationFailed) as exc:
                # (v1.0's extended card may need what v0.3's public one does not)
                refused_caller = exc
                continue
            except (MethodNotFound, UnsupportedOperation, ExtendedCardNotConfigured) as exc:
                refusals.append(f"v{dialect}: {exc.message}")
                continue
            if not isinstance(card, AgentCard):
                raise BadResponse(f"{self.url} answered for a card with a {type(card).__name__}")
            # keys for its signatures: the verifier's own, or at the origin of the HTTP
            # interface it names (a gRPC address has none of its own)
            origin = next((i.url for i in card.interfaces
                           if i.url.startswith(("https://", "http://"))), self.url)
            return FetchedCard(card, raw, origin)
        if refused_caller is not None:
            # the caller's credentials, not the agent's cards, are what is missing
            raise refused_caller
        # it answered (so not CardNotFound, an AgentUnreachable: nothing is there)
        raise CardNotOffered(f"{self.url} gives no card over gRPC ({'; '.join(refusals)}): "
                             "read it at the agent's HTTP URL")

    async def resolve(self) -> Endpoint:
        """The endpoint calls go to, reading the card first if needed."""
        if self._endpoint is None:
            await self.get_card()
            assert self._fetched is not None
            if not self._endpoints:
                self._endpoints = self._card_endpoints(self._fetched)
            self._endpoint = self._endpoints[0]
        elif self._fetched is None and self.card_verifier is not None:
            # an endpoint known without the card (a dialect given, a gRPC address): the
            # card is still read and verified before the first call, as it is asked
            await self.get_card()
        return self._endpoint

    def session(self, *, context_id: str | None = None, task: Task | None = None) -> Session:
        """A conversation with this agent that keeps its context id and open task
        between calls: ``send`` continues a task that waits for input, ``start`` runs
        one in the background to poll (``session.py``). ``context_id``/``task``: one to
        take up."""
        return Session(self, context_id=context_id, task=task)

    # ------------------------------------------------------------------ calls

    async def send(
        self,
        message_or_text: Message | str | Part | Sequence[Part],
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        data: Any = None,
        files: Sequence[FilePart | str | os.PathLike[str]] | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        metadata: Metadata | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        push: PushConfig | None = None,
        if_generation_match: int | None = None,
    ) -> Task | Message:
        """Send a message; the answer is the task it started or continued, or a message.

        ``message_or_text`` is text, a part or parts, or a whole ``Message``;
        ``data`` adds a data part and ``files`` a file part each (a
        ``FilePart``, or a path read inline). A blocking send (the default) returns once the task is finished or
        waits for input; ``blocking=False`` returns at once (in v0.1, whose sends all
        block, once the agent has the task this client named: read by its id). An
        agent that answers a blocking send before then (some never block) is followed until it does, within
        the client's ``timeout``: by subscribing to the task when its card says it
        streams (the end is heard as it happens, on one request), then reading the task
        once; else, or when the subscription is refused, by polling ``GetTask``. Past
        the timeout, ``TaskNotSettled`` carries the task as last heard of.
        ``push`` registers a webhook for the task's updates with the send.

        ``if_generation_match`` (A2A 1.1): continue the task only if it is still at
        this generation; else the agent refuses with ``TaskGenerationMismatch``
        (``expected_generation``, ``current_generation``). Ignored by the agent when the
        message starts a task. An agent not spoken to in 1.1 cannot check it:
        ``GenerationsNotSupported`` is raised and nothing is sent.
        """
        msg = make_message(
            message_or_text, task_id=task_id, context_id=context_id, data=data, files=files or ()
        )
        if if_generation_match is not None:
            check_generation("if_generation_match", if_generation_match, minimum=1)
            await self._need_generations("if_generation_match")
            if self._generations is None and msg.task_id is not None:
                # Not yet seen to number its tasks: look before sending, since an agent
                # that only says it speaks 1.1 would drop the check and take the message.
                await self.get_task(msg.task_id, history_length=0)
                await self._need_generations("if_generation_match")
        # A dialect whose client names its tasks (v0.1) has no send without waiting:
        # the id made here lets the task be read while the send is still held.
        named = msg.task_id is None and get_codec((await self.resolve()).dialect) \
            .client_names_tasks
        call = SendMessage(
            message=msg,
            config=SendConfig(
                accepted_output_modes=list(accepted_output_modes)
                if accepted_output_modes is not None
                else None,
                history_length=history_length,
                blocking=blocking,
                push_config=push,
                if_generation_match=if_generation_match,
            ),
            metadata=metadata,
            client_task_id=new_id() if named else None,
        )
        result = await (self.call(call) if blocking or not named else self._named_early(call))
        if isinstance(result, Task):
            if blocking and result.status.state not in lifecycle.RETURN_STATES:
                # the agent answered before the task settled although blocking was asked
                # (fasta2a never blocks): follow it, as a blocking send promises
                return await self.settle(result, history_length)
            return result
        if isinstance(result, Message):
            return result
        raise _wrong_type("a task or a message", result)

    async def _named_early(self, call: SendMessage) -> Result:
        """``call`` (a send that blocks, naming its new task) answered without waiting:
        the task as the agent has it once it has it, else the answer if that comes
        first. The held send is then dropped; the agent's turn goes on without it."""
        assert call.client_task_id is not None
        read = GetTask(id=call.client_task_id, history_length=call.config.history_length)
        sent = asyncio.ensure_future(self.call(call))
        try:
            pause = 0.1
            while not (await asyncio.wait({sent}, timeout=pause))[0]:
                # refused while the agent has not written the task yet (TaskNotFound)
                with contextlib.suppress(A2AError):
                    return await self._task_of(read)
                pause = min(pause * 1.5, 1.0)
            return sent.result()
        finally:
            if not sent.done():
                sent.cancel()
                await asyncio.wait({sent})
            if not sent.cancelled():
                sent.exception()  # (retrieved: an answer left behind is not an error)

    async def settle(self, task: Task, history_length: int | None = None) -> Task:
        """Follow ``task``, answered before it settled, until the turn the answer
        belongs to finishes or waits for input, within the client's timeout;
        ``TaskNotSettled`` past it.

        Subscribing first, when the card says the agent streams: the agent tells the
        end the moment it happens, on one held request, where polling hears of it up
        to a pause late (pauses grow to 1 s) for a request per pause. The task is then
        read once (``GetTask``, with the history asked for): the answer is the agent's
        whole task, as a blocking answer would have been. Polling is the fallback,
        since every agent answers ``GetTask``: with no card (a given ``dialect``), a
        card without streaming, or a subscription that is refused (an
        unsupported operation, an unknown method) or ends early.

        A message that answered a task waiting for input starts a new turn of it: the
        ends of the turns before (the input-required it answered), which the task's
        log replays and a lagging store may still give, are not taken for its end
        (``turn.py`` tells how they are told apart).
        """
        limit = self._timeout
        deadline = None if limit is None else time.monotonic() + limit
        raw = self.last_result
        turn = Turn(task)
        card = self.card
        if card is not None and card.capabilities.streaming:
            ended: Task | None = None
            # refused, broken or out of time: the polling below carries on (or times out)
            with contextlib.suppress(TimeoutError, A2AError, ClientError):
                async with asyncio.timeout(limit):
                    ended = await self._watch(turn, history_length)
            if ended is not None:
                return ended
            task = turn.latest
        pause = 0.05
        while not turn.ended(task):
            if deadline is not None and time.monotonic() + pause > deadline:
                self.last_result = raw
                raise TaskNotSettled(
                    f"task {task.id} is still {task.status.state.value} after {limit:g} s",
                    task,
                )
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, 1.0)
            read = await self.get_task(task.id, history_length=history_length)
            if turn.earlier(read) is not True:  # (else a lagging store's: asked again)
                task = read
        return task

    async def _watch(self, turn: Turn, history_length: int | None) -> Task | None:
        """The task once ``turn`` has ended, as subscriptions hear it (then read once);
        None when they end before."""
        last: int | None = 0
        while True:
            # From the log's start (Last-Event-ID 0), not a fresh subscription: a
            # task that ended since its answer (a quick agent's) is refused a fresh
            # one in v1.0, an error on the agent's side for every send, where a
            # resume brings its few events. (An agent without event ids ignores it.)
            before = last
            # (the turn tells an earlier turn's end itself: no GetTask at each, as
            # subscribe asks in older dialects)
            followed = self._subscription(turn.answer.id, last, await self.resolve())
            async with contextlib.aclosing(followed) as events:
                async for event in events:
                    last = event.seq if event.seq is not None else last
                    ended = await self._heard(turn, event.item, history_length)
                    if ended is not None:
                        return ended
            if last == before:
                return None
            # Ended at an earlier turn's input-required, as streams before v1.0 end:
            # on from the last event heard.

    async def _heard(self, turn: Turn, item: StreamItem,
                     history_length: int | None) -> Task | None:
        """The task, read, when the event ``item`` ended ``turn``; else None."""
        if isinstance(item, StatusUpdate):
            item = msgspec.structs.replace(turn.latest, status=item.status,
                                           generation=item.generation)
        if not isinstance(item, Task) or turn.place(item) is True \
                or item.status.state not in lifecycle.RETURN_STATES:
            return None
        # The end of this turn, or (not placed) perhaps of the one before: the task as
        # it stands says, read with the history asked for.
        task = await self.get_task(item.id, history_length=history_length)
        if turn.ended(task):
            return task
        if turn.earlier(task) is not True:
            turn.latest = task
        return None

    async def get_task(self, task_id: str, history_length: int | None = None, *,
                       after_generation: int | None = None,
                       wait: float | None = None) -> Task:
        """The task as it stands.

        ``after_generation=n`` (A2A 1.1) is a long poll: the agent answers once the
        task is past generation ``n`` (at once if it already is), or when its own
        longest hold runs out, with the task as it stands then. ``wait`` (seconds)
        is how long the caller will wait for that: held answers that come back
        unchanged are asked again until then, and when it runs out the task is
        returned as it stands, unchanged or not (compare ``generation``). Without
        ``wait``, one long poll, as long as the agent holds it (and the client's
        ``timeout`` allows). An agent not spoken to in 1.1 has no generations:
        ``GenerationsNotSupported`` is raised rather than a poll that would return
        at once; the same when its answer carries generation 0 (it does not
        number its tasks, spec §3.2.7).
        """
        if not long_poll_asked(after_generation, wait):
            return await self._task_of(GetTask(id=task_id, history_length=history_length))
        assert after_generation is not None
        await self._need_generations("after_generation")
        return await long_poll(self._task_of, task_id, history_length, after_generation, wait)

    async def _task_of(self, call: GetTask) -> Task:
        result = await self.call(call)
        if isinstance(result, Task):
            return result
        raise _wrong_type("a task", result)

    async def _need_generations(self, what: str) -> None:
        """Raise ``GenerationsNotSupported`` unless calls go to an agent in A2A 1.1."""
        endpoint = await self.resolve()
        if self._generations is False and not self._forced:
            raise GenerationsNotSupported(
                f"{what} needs task generations, and the agent at {endpoint.url} answered "
                "without them (generation 0): it does not speak A2A "
                f"{GENERATIONS_VERSION}, whatever its card says")
        if endpoint.version != GENERATIONS_VERSION:
            # a client given its dialect, or made for a gRPC address, reads no card to
            # choose its version: 1.1 is had by asking for it
            ask = f"ask for it with dialect='{GENERATIONS_VERSION}' (--dialect {GENERATIONS_VERSION})"
            if self._forced:
                why = f" (the dialect this client was given; {ask})"
            elif self.url.startswith(("grpc://", "grpcs://")):
                why = (" (a client made for a gRPC address reads no card to choose its "
                       f"version; {ask})")
            elif any(ep.version == GENERATIONS_VERSION for ep in self._endpoints):
                why = (f" (the agent refused A2A {GENERATIONS_VERSION}, which its card "
                       "offers)")
            else:
                why = (f" (its card offers no {GENERATIONS_VERSION} interface this client "
                       "can use)")
            raise GenerationsNotSupported(
                f"{what} needs A2A {GENERATIONS_VERSION} (task generations), and the agent at "
                f"{endpoint.url} is spoken to in A2A {endpoint.a2a_version}{why}")

    async def list_tasks(
        self,
        context_id: str | None = None,
        status: TaskState | str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        history_length: int | None = None,
        include_artifacts: bool = False,
        status_timestamp_after: str | datetime | None = None,
    ) -> ListTasksResult:
        """One page of the agent's tasks, newest first (A2A 1.0 only)."""
        if isinstance(status, str):
            try:
                status = TaskState(status)
            except ValueError:
                known = ", ".join(s.value for s in LISTABLE_STATES)
                raise ValueError(f"unknown task state {status!r}; use one of {known}") from None
        if status is TaskState.UNKNOWN:
            # the page would hold every task (LISTABLE_STATES says why)
            known = ", ".join(s.value for s in LISTABLE_STATES)
            raise ValueError(f"tasks cannot be listed by the state 'unknown'; use one of {known}")
        if isinstance(status_timestamp_after, datetime):
            # at or after: a finer instant is taken up to the next millisecond
            status_timestamp_after = format_timestamp(status_timestamp_after, ceil=True)
        call = ListTasks(
            context_id=context_id,
            status=status,
            page_token=page_token,
            history_length=history_length,
            include_artifacts=include_artifacts,
            status_timestamp_after=status_timestamp_after,
        )
        if page_size is not None:
            call.page_size = page_size
        result = await self.call(call)
        if isinstance(result, ListTasksResult):
            return result
        raise _wrong_type("a page of tasks", result)

    async def cancel(self, task_id: str, *, metadata: Metadata | None = None) -> Task:
        result = await self.call(CancelTask(id=task_id, metadata=metadata))
        if isinstance(result, Task):
            return result
        raise _wrong_type("a task", result)

    # ---------------------------------------------------------------- streams

    async def stream(
        self,
        message_or_text: Message | str | Part | Sequence[Part],
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        data: Any = None,
        files: Sequence[FilePart | str | os.PathLike[str]] | None = None,
        metadata: Metadata | None = None,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        resume: ResumePolicy | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Send a message and follow what the agent does, event by event.

        Use as ``async for event in client.stream("..."):``. ``event.item`` is
        a ``Task`` (first, as created), ``StatusUpdate``, ``ArtifactUpdate``,
        or a ``Message`` when the agent answers without a task. The iteration
        ends when the task finishes or waits for input; a broken connection
        is resumed (``resume``, default the client's policy) without losing
        or repeating an event; a stream that ends, or whose resumption is refused,
        before its final event while the task has finished ends with the task read
        then (``GetTask``: its final state and artifacts; ``event.reconciled``). An
        error the agent sends mid-stream is raised as its ``A2AError``;
        ``StreamInterrupted`` when resuming failed; ``StreamTimeout`` when nothing came
        within the client's timeout.
        """
        msg = make_message(
            message_or_text, task_id=task_id, context_id=context_id, data=data, files=files or ()
        )
        call = SendMessage(
            message=msg,
            config=SendConfig(
                accepted_output_modes=list(accepted_output_modes)
                if accepted_output_modes is not None
                else None,
                history_length=history_length,
            ),
            metadata=metadata,
            streaming=True,
        )
        endpoint = await self.resolve()
        async for event in follow(self._open_stream, call, policy=resume or self.resume,
                                  finished=self._finished,
                                  reconcile=self._reconcile if endpoint.version else None):
            yield event

    async def subscribe(
        self,
        task_id: str,
        *,
        last_event_id: int | None = None,
        resume: ResumePolicy | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Follow a task that is already running, event by event.

        Without ``last_event_id`` the stream starts with the task as it stands
        (a v1.0 agent refuses a task that has finished; a v0.3 one sends its
        final state once). With ``last_event_id=N`` (the ``seq`` of the last
        event you have) it starts with the event after N, finished task or
        not. A v1.0 agent's stream goes on through input-required and
        auth-required until the task ends; older dialects end it there, as
        ``stream`` does, once ``GetTask`` finds the task still there: one it has
        left (replayed after ``last_event_id``, or answered meanwhile) is passed,
        and the events after it are asked for again. Resumes and raises as
        ``stream`` does.
        """
        if last_event_id is not None and last_event_id < 0:
            raise ValueError("last_event_id must be a non-negative integer")
        endpoint = await self.resolve()

        def after(seq: int | None) -> AsyncGenerator[StreamEvent, None]:
            return self._subscription(task_id, seq, endpoint, resume)

        async def read() -> tuple[Task, bytes]:
            return await self._task_now(task_id)

        # an older dialect's stream ends at each question, replayed or live: one the
        # task has left is passed (standing.py)
        async with contextlib.aclosing(to_where_it_stands(after, read, last_event_id)) \
                as events:
            async for event in events:
                yield event

    def _subscription(self, task_id: str, last_event_id: int | None, endpoint: Endpoint,
                      resume: ResumePolicy | None = None
                      ) -> AsyncGenerator[StreamEvent, None]:
        """One subscription's events, resumed when it breaks, up to its end (in older
        dialects, the first status that ends a turn, whether the task is still there)."""
        finished = self._ended if get_codec(endpoint.dialect).follows_interruptions \
            else self._finished
        return follow(self._open_stream, SubscribeToTask(id=task_id),
                      last_event_id=last_event_id, policy=resume or self.resume,
                      finished=finished, through_interruptions=True,
                      reconcile=self._reconcile if endpoint.version else None)

    async def _reconcile(self, task_id: str) -> tuple[Task, bytes]:
        """The task as it stands and its answer as sent: what fills a generation gap."""
        task = await self._task_of(GetTask(id=task_id))
        return task, self.last_result or b""

    async def _task_now(self, task_id: str) -> tuple[Task, bytes]:
        """The task as it stands and its answer as sent (without its history)."""
        task = await self.get_task(task_id, history_length=0)
        return task, self.last_result or b""

    async def _ended(self, task_id: str) -> tuple[Task, bytes] | None:
        """The task and its answer as sent, once it is in a terminal state (without its
        history: asked at each end of a stream, whose events carry none)."""
        task, raw = await self._task_now(task_id)
        return (task, raw) if task.status.state in TERMINAL_STATES else None

    async def _finished(self, task_id: str) -> tuple[Task, bytes] | None:
        """The task and its answer as sent, once its turn is over (without its history)."""
        task, raw = await self._task_now(task_id)
        return (task, raw) if task.status.state in lifecycle.RETURN_STATES else None

    async def _open_stream(
        self, call: SendMessage | SubscribeToTask, last_event_id: int | None
    ) -> Connection:
        endpoint = await self.resolve()
        return await self._negotiate(
            call, endpoint, lambda ep: self._open_stream_at(ep, call, last_event_id)
        )

    async def _open_stream_at(
        self, endpoint: Endpoint, call: SendMessage | SubscribeToTask, last_event_id: int | None
    ) -> Connection:
        if endpoint.tenant is not None and call.tenant is None:
            call = msgspec.structs.replace(call, tenant=endpoint.tenant)
        try:
            return await self._binding_for(endpoint).open_stream(endpoint, call, last_event_id)
        except RecursionError:  # an answer deeper than the decoder goes
            raise too_deep(endpoint.url) from None

    async def call(self, call: Call) -> Result:
        """Carry out any canonical call; the typed methods above are built on this."""
        endpoint = await self.resolve()
        if isinstance(call, ListTasks) and not get_codec(endpoint.dialect).lists_tasks:
            raise DialectMismatch(
                "listing tasks needs A2A 1.0, and this agent is spoken to in "
                f"A2A {endpoint.dialect}"
            )
        unnamed = isinstance(call, GetPushConfig) and not call.config_id
        if unnamed and not get_codec(endpoint.dialect).push_config_id_is_task_id:
            # v1.0 requires the config's id (agents refuse it empty), and a binding whose
            # route names the config (HTTP+JSON, v0.3's gRPC) cannot send none: on every
            # binding, the task's configs read and the one chosen as the server chooses
            # (push/service.py). (A dialect whose only config is named by its task, which
            # has no list, is asked as it is.)
            assert isinstance(call, GetPushConfig)
            return await self._own_push_config(call.task_id)
        try:
            result = await self._negotiate(call, endpoint, lambda ep: self._call_at(ep, call))
        except DialectMismatch:
            if not unnamed:
                raise
            assert isinstance(call, GetPushConfig)
            return await self._own_push_config(call.task_id)
        if type(result) is Task and self._endpoint is not None and self._endpoint.version:
            self._numbered(result, call)
        return result

    async def _own_push_config(self, task_id: str) -> PushConfig:
        """The config a get without an id answers with: the one named by the task's
        id, else the task's first."""
        configs = await self.call(ListPushConfigs(task_id=task_id))
        if not isinstance(configs, list) or not configs:
            raise no_push_config(task_id)
        return next((c for c in configs if c.id == task_id), configs[0])

    def _numbered(self, task: Task, call: Call) -> None:
        """A task answered in 1.1: does the agent number its tasks? (spec §3.2.7)"""
        if not task.generation and self.last_result is not None:
            # a codec that left the generation out: as the agent sent it
            task.generation = generation_of(self.last_result,
                                            streamed=isinstance(call, SendMessage))
        if task.generation:
            self._generations = True
        elif self._endpoint is not None and not self._forced:
            # Generation 0: an agent that takes A2A-Version 1.1 without speaking it
            # (a2a-sdk 1.3.0 takes any 1.x). 1.0 from now on; what needs 1.1 is refused.
            self._generations = False
            self._endpoint = _without_version(self._endpoint)

    async def _negotiate(
        self, call: Call, endpoint: Endpoint, attempt: Callable[[Endpoint], Awaitable[R]]
    ) -> R:
        """``attempt`` at ``endpoint``; until the agent has answered once, a refusal
        of the method or version is tried again at the next endpoint (``_fallback``).
        An endpoint nothing listens at (no connection made, so nothing sent) is passed
        over for the one after it; one that took the call and failed is not: the call
        may have been carried out there."""
        tried = {endpoint}
        #: the refusal at the first endpoint that answered (the card's choice, or the one in use)
        first: A2AError | None = None
        #: the last endpoint that refused, and its refusal: the next is chosen after it
        #: (until one refuses, after the first tried)
        refused, refusal = endpoint, first
        #: endpoints that could not be reached, and why
        dead: set[Endpoint] = set()
        unreached: list[NotConnected] = []
        while True:
            try:
                result = await attempt(endpoint)
            except (MethodNotFound, VersionNotSupported) as exc:
                first = first or exc
                refused, refusal = endpoint, exc
            except NotConnected as exc:
                if self._settled:
                    raise  # the endpoint in use: said as it is
                # A card naming an address not served: the next one is tried.
                dead.add(endpoint)
                unreached.append(exc)
            except A2AError:
                self._settled = True
                self._endpoint = endpoint  # understood here, though refused
                raise
            else:
                self._settled = True
                self._endpoint = endpoint
                return result
            other = None if self._settled else self._reachable(refused, call, tried, dead)
            if other is None or other in tried:
                if refusal is None:
                    raise _none_reached(unreached)
                assert first is not None
                if needs_generations(call) and isinstance(refusal, VersionNotSupported):
                    # the agent does not take 1.1 after all: 1.0 from now on, and what
                    # needs 1.1 is refused here, never sent without its field
                    if refused.version and not self._forced:
                        self._endpoint = _without_version(refused)
                    raise GenerationsNotSupported(
                        f"the agent at {refused.url} refused A2A-Version "
                        f"{refused.a2a_version} ({refusal.message}); task generations "
                        f"need A2A {GENERATIONS_VERSION}") from refusal
                self._settled = True
                beside = "".join(f"; {exc}" for exc in unreached)
                if first is not refusal and isinstance(refusal, MethodNotFound):
                    # The fallbacks did not know the method, which says nothing of
                    # the call: the first refusal is the answer, theirs told with it.
                    raise type(first)(f"{first.message}; in A2A {refused.dialect}: "
                                      f"{refusal.message}{beside}", data=first.data
                                      ) from refusal
                if first is refusal and beside:
                    # the only other place to ask could not be reached: said beside it
                    raise type(first)(f"{first.message}{beside}", data=first.data) from first
                raise refusal
            # Not understood (or not reached) here: try the next endpoint.
            tried.add(other)
            endpoint = other

    def _reachable(self, endpoint: Endpoint, call: Call, tried: set[Endpoint],
                   dead: set[Endpoint]) -> Endpoint | None:
        """``_fallback``'s choice after ``endpoint``, passing over those at a URL
        already found dead (another dialect there would not be reached either)."""
        gone = {ep.url for ep in dead}
        other = self._fallback(endpoint, call, tried, dead)
        while other is not None and other not in tried and other.url in gone:
            tried.add(other)  # (not dead: a dialect never asked is not one refused)
            other = self._fallback(endpoint, call, tried, dead)
        return other

    def _fallback(self, endpoint: Endpoint, call: Call,
                  tried: frozenset[Endpoint] | set[Endpoint] = frozenset(),
                  dead: frozenset[Endpoint] | set[Endpoint] = frozenset()) -> Endpoint | None:
        """The endpoint to try after ``endpoint`` refused ``call``, or None; ``dead``:
        those of ``tried`` that could not be reached (a dialect tried only there is not
        one the agent refused)."""
        if needs_generations(call):
            # only where 1.1 is spoken: another of the card's 1.1 endpoints, or none
            for ep in self._endpoints:
                if ep.version and ep not in tried and ep != endpoint:
                    return ep
            return None
        if endpoint.version:
            # 1.1 refused (an agent whose card says more than it speaks): the same
            # endpoint in 1.0 first, which every 1.1 agent speaks too
            twin = _without_version(endpoint)
            if twin not in tried:
                return twin
        if isinstance(call, ListTasks):
            # only v1.0 lists tasks: another binding of it, never another dialect
            for ep in self._endpoints:
                if get_codec(ep.dialect).lists_tasks and ep not in tried and ep != endpoint:
                    return ep
            return None
        # The card's other endpoints first, in its order of preference ...
        for ep in self._endpoints:
            if ep not in tried and ep != endpoint:
                return ep
        # ... then the nearest other generation at the same URL, in the same binding.
        dialects = binding_spec(endpoint.binding).dialects
        done = {ep.dialect for ep in tried if ep.binding == endpoint.binding and ep not in dead}
        for nxt in get_codec(endpoint.dialect).nearest:
            if nxt in dialects and nxt not in done:
                return Endpoint(nxt, endpoint.url, endpoint.binding, tenant=endpoint.tenant)
        return None

    async def _call_at(self, endpoint: Endpoint, call: Call) -> Result:
        if endpoint.tenant is not None and getattr(call, "tenant", "") is None:
            # the card's interface names the tenant its requests carry
            call = msgspec.structs.replace(call, tenant=endpoint.tenant)
        try:
            result, raw = await self._binding_for(endpoint).call(endpoint, call)
        except RecursionError:  # an answer deeper than the decoder goes
            raise too_deep(endpoint.url) from None
        self.last_result = raw
        return result


def _none_reached(unreached: list[NotConnected]) -> NotConnected:
    """The error of a call no endpoint could be reached for: each named."""
    if len(unreached) == 1:
        return unreached[0]
    return NotConnected("; ".join(str(exc) for exc in unreached))


def _without_version(endpoint: Endpoint) -> Endpoint:
    """``endpoint`` spoken in its dialect itself (1.0 for a 1.1 one)."""
    return Endpoint(endpoint.dialect, endpoint.url, endpoint.binding, tenant=endpoint.tenant)


def _wrong_type(expected: str, result: object) -> ClientError:
    return BadResponse(f"expected {expected} in the answer, got {type(result).__name__}")
