"""The front door: what every binding does between its framing and the engine.

A binding (JSON-RPC, HTTP+JSON, gRPC, MQTT, or one of its own) parses its
envelope and encodes its answers. Everything else is here, once, behind one
entry: ``FrontDoor.enter(inbound)``. An ``Inbound`` carries what every binding
has (its name, the headers or metadata, the peer in ``scope``, the codec, the
raw ``A2A-Version``, the call or how to decode it, whether it streams, the
``Last-Event-ID``); ``enter`` does, in this order: authentication and the rate
limit (unless the binding admitted the caller already, once per transport
request: ``admit``), the version negotiation, the decoding, the bounds of the
fields no other limit holds (``core.bounds``), the tenant and the
``RequestInfo`` the engine gets (with the extensions asked for), the request
hooks (spans and metrics, labelled with the binding's name), the streaming
capability, and the call itself (the engine refuses sends while it drains and
answers a repeated message id with its task). It gives back the result, or for
a streaming call the ``Items`` to write. A refusal is an ``A2AError`` that
carries its codes; ``refusal()`` gives its HTTP status and headers.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, TypeVar

import msgspec

from ..core.bounds import call_fault
from ..core.calls import Call, GetTask, Result, SendMessage, SetPushConfig, SubscribeToTask
from ..core.dialects import V1_CODECS, Codec, answering, versions
from ..core.dialects.as_sent import joined
from ..core.dialects.detect import Detection
from ..core.errors import (
    A2AError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    StoreDown,
    StreamingNotSupported,
    VersionNotSupported,
    header_text,
)
from ..core.errors import quoted as _shown
from ..core.ids import id_fault
from ..hooks import Hooks, ended, started
from ..signals import DONE
from ..stores.base import LeaseLost, StoreUnavailable
from .agent import Agent
from .auth.runtime import Security, refusal
from .context import RequestInfo
from .engine import Engine
from .long_poll import CLIENT_GONE
from .settings import ServiceSettings
from .streams import Entry, Heartbeat, Lagged, Stream, StreamOutput, Unavailable

# what ``Items`` yields, here too: a binding needs this module and the codecs only
__all__ = ["CLIENT_GONE", "SUPPORTED_VERSIONS", "AnswerTooLarge", "Entry", "FrontDoor", "Heartbeat", "Inbound",
           "Items", "Lagged", "StoreDown", "StreamOutput", "Unavailable", "parse_version"]

log = logging.getLogger("interlingua.server")

T = TypeVar("T")

#: the codecs of later minor versions of a dialect (A2A 1.1, draft)
_MINORS = frozenset(V1_CODECS.values())

#: every A2A-Version some codec takes as its own, newest first: ("1.0", "0.3", "0.2", "0.1")
SUPPORTED_VERSIONS = versions()


# Clients send the same few header values on every request.
@functools.lru_cache(maxsize=64)
def parse_version(value: str) -> str | None:
    """``"1"``, ``"1.0"``, ``"1.0.2"`` -> ``"1.0"``; None when it is not a version.
    A list (``"1.1, 1.0"``: a header given more than once, RFC 9110 §5.3) is its one
    version when every member names the same, else None: none is picked."""
    if "," in value:
        named = {parse_version(v) for v in value.split(",") if v.strip()}
        return named.pop() if len(named) == 1 else None
    parts = value.strip().split(".")
    # ASCII digits only (str.isdigit() also takes "²", which int() refuses), and
    # short: no version has a component of more than a few digits.
    if not parts or len(parts) > 3 or not all(
            p.isascii() and p.isdigit() and len(p) <= 6 for p in parts):
        return None
    major = int(parts[0])
    minor = int(parts[1]) if len(parts) > 1 else 0
    return f"{major}.{minor}"


class Inbound(msgspec.Struct, kw_only=True):
    """One call as a binding hands it to ``FrontDoor.enter``.

    - ``binding``: the binding's name, as metrics and spans label the call.
    - ``scope``: the request's scope (a mapping the binding owns): the peer's
      address under ``client`` (``(host, port)``), and the principal once admitted.
    - ``headers``: the HTTP headers, gRPC metadata or MQTT user properties, with
      lower-case names.
    - ``codec``: the registry's codec that reads the call and writes its answer.
    - ``call``: the decoded call; or None, and it is decoded once the version is
      checked: by ``decode(inbound)`` (from ``payload``, as the binding reads it),
      else by the codec from ``method`` and its params, ``payload`` (JSON bytes, as
      JSON-RPC carries them). ``enter`` leaves the call here.
    - ``raw_version``: the ``A2A-Version`` as given (None: none); ``version`` that
      version as Major.Minor, when the binding has parsed it already.
    - ``tenant``: the tenant the binding's framing names (a path's); None: the
      call's own ``tenant``, else the tenant header.
    - ``agent_tenant``: the call's own ``tenant`` named the agent, not a tenant (a
      gRPC port several agents share): the tenant header alone names one.
    - ``streaming``: a streaming call; ``last_event_id`` where its replay starts.
    - ``admitted``: the binding has admitted the caller already (``FrontDoor.admit``,
      once for a transport request that carries several calls).
    - ``gone``: what a call held while its caller is there (a long poll) awaits to
      learn that the caller went (an HTTP disconnect); None: the binding cannot tell
      (a gRPC deadline or cancellation ends such a call itself).
    - ``request``: the ``RequestInfo`` the call was made with, left by ``enter``.
    """

    binding: str
    scope: MutableMapping[str, Any]
    headers: Mapping[str, str]
    codec: Codec
    call: Call | None = None
    decode: Callable[[Inbound], Call] | None = None
    method: str = ""
    payload: Any = None
    raw_version: str | None = None
    version: str | None = None
    tenant: str | None = None
    agent_tenant: bool = False
    streaming: bool = False
    last_event_id: str | None = None
    admitted: bool = False
    gone: Callable[[], Awaitable[object]] | None = None
    request: RequestInfo | None = None


class Items:
    """A stream as the front door gives it: an async iterator of the batches of
    canonical stream outputs (``Entry``, ``Heartbeat``, ``Lagged``,
    ``Unavailable``) that are ready at once, each batch written in one go; it ends
    with the stream. While nothing is ready it waits. ``close()`` stops it
    (idempotent): a binding closes it when its reader goes away or it is done.

    (Batches, not single items: everything that is ready leaves in one write, and
    the loop under them is the one the stream's ``poll()`` drives.)"""

    __slots__ = ("stream",)

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def __aiter__(self) -> Items:
        return self

    async def __anext__(self) -> list[StreamOutput]:
        stream = self.stream
        while True:
            got = stream.poll()
            if type(got) is list:
                if got:
                    return got
                raise StopAsyncIteration
            await got  # type: ignore[misc]  # idle: one bare future (news, a tick)

    def close(self) -> None:
        self.stream.close()


class FrontDoor:
    """Transport-neutral admission and dispatch of A2A calls to one engine.

    ``hooks.requests`` are called around each call and each stream's opening
    (default: the engine's hooks)."""

    def __init__(self, engine: Engine, security: Security, agent: Agent,
                 settings: ServiceSettings, hooks: Hooks | None = None) -> None:
        self.engine = engine
        self.security = security
        self.agent = agent
        self.settings = settings
        self.hooks = hooks if hooks is not None else engine.hooks
        self._request_hooks = self.hooks.requests
        #: checks of each call as it is read, before it is made: one raises the refusal
        #: (an ``A2AError``). A host adds its own: the mesh's gateway refuses a task id
        #: its topics cannot hold, before a task of that id is made
        self.checks: list[Callable[[Call], None]] = []

    # Both are awaited by every binding on every request, and nearly always have
    # nothing to do: then they return DONE, not a coroutine.

    def ensure_started(self) -> Awaitable[None]:
        """Start the engine unless it has started (the app's lifespan starts it)."""
        return DONE if self.engine.started else self.engine.ensure_started()

    # ------------------------------------------------------------ admitting

    def admit(self, scope: MutableMapping[str, Any], headers: Mapping[str, str],
              binding: str = "") -> Awaitable[object]:
        """Authenticate the caller (and count it against the rate limit) once per
        HTTP request; raises the refusal (told to the request hooks as a request of
        ``binding`` refused). Its principal stays in ``scope``."""
        if not self.security.active:
            return DONE
        if not self._request_hooks:
            return self.security.admit(scope, headers)
        return self._admit_told(scope, headers, binding)

    def spend(self, scope: MutableMapping[str, Any]) -> Awaitable[object]:
        """Count one more request of the caller ``admit`` let in for this HTTP request
        against its rate (each request of a JSON-RPC batch after the first: a batch is
        as many requests as it holds); raises the refusal."""
        if not self.security.active:
            return DONE
        return self.security.spend(scope)

    async def _admit_told(self, scope: MutableMapping[str, Any], headers: Mapping[str, str],
                          binding: str) -> object:
        try:
            return await self.security.admit(scope, headers)
        except A2AError as exc:
            self.refused_unread(binding, None, headers, exc)
            raise

    def refused_unread(self, binding: str, codec: Codec | None, headers: Mapping[str, str],
                       exc: A2AError, *, method: str = "unread") -> None:
        """A request of ``binding`` refused before its call was read (its caller, a
        method no dialect has), told to the request hooks (a binding calls it for a
        refusal made before ``enter``; no hooks: nothing done). ``method``: the call's
        name where the binding knows it unread, else "unread"."""
        if self._request_hooks:
            request = RequestInfo(dialect=codec.dialect if codec is not None else "",
                                  binding=binding, headers=headers)
            ended(started(self._request_hooks, method, None, request), exc)

    @staticmethod
    def refusal(exc: A2AError) -> tuple[int, list[tuple[bytes, bytes]]] | None:
        """The HTTP status and headers of an auth or rate refusal (None: not one)."""
        return refusal(exc)

    # ---------------------------------------------------------------- entry

    async def enter(self, inbound: Inbound) -> Result | Items:
        """The call ``inbound`` carries, admitted, checked and made: its result, or
        for a streaming call its ``Items``. Raises the refusal (an ``A2AError``)."""
        if not inbound.admitted and self.security.active:
            # authenticated (and rate-limited) before anything is read
            await self._admit_inbound(inbound)
        try:
            request = inbound.request  # set when the binding had ``admitted`` prepare it
            if request is None:
                request = self._request_of(inbound)
        except A2AError as exc:
            if self._request_hooks:
                self._refused(inbound, exc)
            raise
        call = inbound.call
        assert call is not None
        if inbound.streaming:
            if self._request_hooks:
                return Items(await self.stream(call, request, inbound.last_event_id))
            return Items(await self._open(call, request, inbound.last_event_id))
        if type(call) is GetTask and inbound.gone is not None:
            # the one call held while its caller is there (a long poll): the
            # caller's going, from whichever binding can tell of it
            CLIENT_GONE.set(inbound.gone)
        if self._request_hooks:
            return await self._hooked(type(call).__name__, call, request, self._call)
        # _call's body, here: no call more per request when nothing is hooked
        try:
            return await self.engine.handle(call, request)
        except _STORE_DOWN as exc:
            raise _store_down(exc) from None

    async def admitted(self, inbound: Inbound) -> RequestInfo:
        """``enter``'s steps but the call: the caller admitted, the version checked,
        the call decoded (``inbound.call``); the ``RequestInfo`` to make it with, left
        on ``inbound.request``, so that ``enter(inbound)`` then only makes the call.
        For a binding that looks at a call before it is made (the mesh names the task
        of a send, and hands a cancel to the instance that runs the task)."""
        if not inbound.admitted and self.security.active:
            await self._admit_inbound(inbound)
        inbound.admitted = True  # counted against the rate limit once
        try:
            return self._request_of(inbound)
        except A2AError as exc:
            if self._request_hooks:
                self._refused(inbound, exc)
            raise

    async def answer_beside(self, inbound: Inbound,
                            run: Callable[[Call, RequestInfo], Awaitable[T]]) -> T:
        """``enter``'s steps with ``run(call, request)`` in place of the engine: a
        call a binding answers itself (v0.2's extended-card route builds the card
        for the host it was asked at) still admitted, checked and told to the
        request hooks as every other binding's."""
        request = await self.admitted(inbound)
        call = inbound.call
        assert call is not None
        if self._request_hooks:
            return await self._hooked(_method_of(call, False), call, request, run)
        return await run(call, request)

    async def _admit_inbound(self, inbound: Inbound) -> None:
        try:
            await self.security.admit(inbound.scope, inbound.headers)
        except A2AError as exc:
            # nothing of the request read yet: told with no dialect, as every
            # binding tells a caller it refuses before reading its request
            self.refused_unread(inbound.binding, None, inbound.headers, exc)
            raise

    def refused(self, inbound: Inbound, exc: A2AError) -> None:
        """A call its binding refuses once it is read (``admitted``), before it is made
        (the mesh: an id no topic can hold), told to the request hooks as ``enter``
        tells its own refusals."""
        if self._request_hooks:
            self._refused(inbound, exc)

    def _refused(self, inbound: Inbound, exc: A2AError) -> None:
        """A call refused before it is made (its caller, its rate, its version, a call
        that does not read), told to the request hooks as a request answered so: it
        was not counted at all. Its method is the call's when it was read, else
        "unread" (not the name the caller sent: a label of its choosing each)."""
        call = inbound.call
        if call is None:
            self.refused_unread(inbound.binding, inbound.codec, inbound.headers, exc)
            return
        request = inbound.request or RequestInfo(
            dialect=inbound.codec.dialect, binding=inbound.binding, headers=inbound.headers,
            streaming=inbound.streaming)
        ended(started(self._request_hooks, _method_of(call, inbound.streaming), call,
                      request), exc)

    def _request_of(self, inbound: Inbound) -> RequestInfo:
        """The version checked, the call decoded, and who is calling, in which
        tenant, as the engine sees it (left on ``inbound.request``)."""
        codec = inbound.codec
        raw = inbound.raw_version
        strict = self.settings.strict_versions
        if raw or strict:
            version = inbound.version or (parse_version(raw) if raw else None)
            # leniently, a version this server knows needs nothing more
            if strict or version not in SUPPORTED_VERSIONS:
                self.check_version(codec, raw, version)
        call = inbound.call
        if call is None:
            decode = inbound.decode
            # by default the codec reads the method's params (``payload``: JSON bytes)
            inbound.call = call = decode(inbound) if decode is not None else \
                codec.for_answer(codec.decode_call(inbound.method, inbound.payload))
        for check in self.checks:
            check(call)
        # the fields no other limit holds (core.bounds): a send that has none of
        # them, nearly every one, is told apart here, with no call
        if type(call) is SendMessage:
            message, config = call.message, call.config
            if (message.reference_task_ids is not None or message.extensions is not None
                    or config.accepted_output_modes is not None
                    or config.push_config is not None):
                _check_bounds(inbound, call)
        elif type(call) is SetPushConfig:
            _check_bounds(inbound, call)
        headers = inbound.headers
        # the tenant the call names: its binding's (a path's), else its member ("" is
        # ProtoJSON's unset; not where it named the agent); None: none, and the
        # tenant header may name one
        tenant = inbound.tenant
        if tenant is None and not inbound.agent_tenant:
            tenant = getattr(call, "tenant", None) or None
        if tenant:  # a key of every store's indexes: one no store can keep is refused
            fault = id_fault(tenant)
            if fault is not None:
                raise InvalidParams(f"Invalid params: tenant {fault}")
        # the extension URIs asked for (A2A-Extensions, or v0.3's X-A2A-Extensions)
        raw_extensions = headers.get("a2a-extensions") or headers.get("x-a2a-extensions")
        inbound.request = request = self.security.request_of(
            inbound.scope, tenant,
            headers,
            extensions=[e.strip() for e in raw_extensions.split(",") if e.strip()]
            if raw_extensions else (),
            dialect=codec.dialect,
            streaming=inbound.streaming,
            binding=inbound.binding,
        )
        if codec.name in _MINORS:  # a later minor version's codec (A2A 1.1)
            request.minor = codec.name
        return request

    # --------------------------------------------------------------- limits

    def check_size(self, size: int) -> None:
        """``InvalidRequest`` for a request of more than ``max_body_bytes``, for a
        binding handed whole requests (the mesh; HTTP reads a body against the
        limit as it comes, gRPC's library refuses a message over it)."""
        limit = self.settings.max_body_bytes
        if size > limit:
            raise InvalidRequest(f"Request body is larger than the limit of {limit} bytes")

    def check_batch(self, items: int) -> None:
        """``InvalidRequest`` for a batch of more than ``max_batch_items`` requests
        (checked before any of them is read, let alone run)."""
        limit = self.settings.max_batch_items
        if items > limit:
            raise InvalidRequest(
                f"Invalid Request: a batch of {items} requests is over the limit of {limit}")

    def check_answer(self, size: int, room: int | None = None) -> None:
        """``AnswerTooLarge`` when an answer of ``size`` bytes would pass
        ``max_answer_bytes``, or the ``room`` a batch's earlier answers leave."""
        limit = self.settings.max_answer_bytes
        if size <= (limit if room is None else room):
            return
        within = "" if room is None else " with the rest of the batch"
        raise AnswerTooLarge(
            f"Internal error: this answer ({size} bytes) would pass the limit of {limit} "
            f"bytes for one answer{within}; ask for less (a smaller pageSize, no artifacts)")

    # ------------------------------------------------------------- dialects

    def check_version(self, codec: Codec, raw: str | None, version: str | None) -> None:
        """The ``A2A-Version`` header against the codec the request is read with
        (leniently unless ``strict_versions``: DIALECTS.md §h.3)."""
        strict = self.settings.strict_versions
        if not raw:
            if strict and codec.needs_version_header:
                raise VersionNotSupported(
                    "No A2A-Version header: it is read as 0.3, which does not have "
                    "this method; send A2A-Version: 1.0"
                )
            return
        if version is None and "," in raw:
            # two versions, not a bad one: which one was meant is not for the server to guess
            raise VersionNotSupported(
                f"A2A-Version is given more than once ({_shown(header_text(raw))}); send one "
                "version; supported versions: " + ", ".join(SUPPORTED_VERSIONS),
                data={"supportedVersions": list(SUPPORTED_VERSIONS)},
            )
        if version is None or version not in SUPPORTED_VERSIONS:
            raise VersionNotSupported(
                f"A2A-Version {_shown(header_text(raw))} is not supported; supported "
                "versions: " + ", ".join(SUPPORTED_VERSIONS),
                data={"supportedVersions": list(SUPPORTED_VERSIONS)},
            )
        if strict and version not in codec.versions:
            # the codec's versions, not its dialect's name: SAM and the tutorial are
            # no values of the header
            accepted = sorted(codec.versions)
            raise VersionNotSupported(
                f"A2A-Version {_shown(header_text(raw))} does not match the method's protocol; "
                "versions accepted for this method: " + ", ".join(accepted),
                data={"supportedVersions": accepted},
            )

    async def stored_dialect(self, scope: Mapping[str, Any], headers: Mapping[str, str],
                             task_id: str) -> str | None:
        """The dialect the caller's task ``task_id`` was created in (None: no such task
        of the caller's: another principal's task tells nothing)."""
        security = self.security
        principal = security.principal_of(scope)
        info = RequestInfo(principal=principal.id, owner=principal.owner,
                           tenant=security.tenant(principal, None, headers, scope))
        try:
            return await self.engine.dialect_of(info, task_id)
        except _STORE_DOWN as exc:
            raise _store_down(exc) from None

    async def task_codec(self, scope: Mapping[str, Any], headers: Mapping[str, str],
                         method: str, found: Detection) -> Codec:
        """The codec of a request its method and params leave open (DIALECTS.md §h.3:
        tasks/get, tasks/cancel, tasks/resubscribe read the same in v0.1-v0.3): the
        one answering for the dialect the caller's task was created in, resolved
        through the registry, else ``found.fallback``'s. Chosen before the call
        reaches the engine."""
        name = found.fallback
        if found.task_id:
            name = await self.stored_dialect(scope, headers, found.task_id) or name
        return answering(method, name, found.fallback)

    def running_here(self, request: RequestInfo, task_id: str) -> bool:
        """The caller's task ``task_id`` has a turn running in this process (a binding
        whose requests are shared among processes hands a cancel to the one that
        runs the task)."""
        run = self.engine.runs.get(request.scope, task_id)
        return run is not None and run.turn is not None and not run.turn.done()

    # ----------------------------------------------------------------- calls

    async def call(self, call: Call, request: RequestInfo, *, counted: bool = True) -> Result:
        """Carry out ``call``; ``counted=False``: a call a binding makes on a request's
        behalf (the mesh reads the task a stream ended with), not a request of its own,
        so not seen by the request hooks (metrics, spans)."""
        if self._request_hooks and counted:
            return await self._hooked(type(call).__name__, call, request, self._call)
        # _call's body, here: no call more per request when nothing is hooked
        try:
            return await self.engine.handle(call, request)
        except _STORE_DOWN as exc:
            raise _store_down(exc) from None

    async def _call(self, call: Call, request: RequestInfo) -> Result:
        try:
            return await self.engine.handle(call, request)
        except _STORE_DOWN as exc:
            raise _store_down(exc) from None

    def stream(self, call: Call, request: RequestInfo, last_event_id: str | None = None,
               *, counted: bool = True) -> Awaitable[Stream]:
        """A streaming send or subscription; ``last_event_id`` as the header gave it
        (``counted`` as for ``call``)."""
        if self._request_hooks and counted:
            return self._hooked(_method_of(call, True), call, request,
                                lambda c, r: self._open(c, r, last_event_id))
        return self._open(call, request, last_event_id)

    async def _hooked(self, method: str, call: Call, request: RequestInfo,
                      run: Callable[[Call, RequestInfo], Awaitable[T]]) -> T:
        """``run(call, request)`` within the request hooks."""
        ends = started(self._request_hooks, method, call, request)
        try:
            result = await run(call, request)
        except BaseException as exc:
            ended(ends, exc)
            raise
        ended(ends, None, result)
        return result

    async def _open(self, call: Call, request: RequestInfo,
                    last_event_id: str | None) -> Stream:
        if not self.agent.streaming:
            raise StreamingNotSupported(
                "This agent does not stream (its card says streaming: false)")
        if not isinstance(call, SendMessage | SubscribeToTask):
            raise InvalidParams(f"Invalid params: {type(call).__name__} does not stream")
        try:
            return await self.engine.open_stream(call, request,
                                                 last_event_id=_last_event_id(last_event_id))
        except _STORE_DOWN as exc:
            raise _store_down(exc) from None


def _method_of(call: Call, streaming: bool) -> str:
    """A call's method as the request hooks name it (a streamed send's own name)."""
    return "SendStreamingMessage" if streaming and isinstance(call, SendMessage) \
        else type(call).__name__


class AnswerTooLarge(InternalError):
    """An answer the server will not write: over ``max_answer_bytes``. An internal
    error on every binding (500, gRPC ``INTERNAL``, -32603, as the spec's system
    errors are), never ``RESOURCE_EXHAUSTED``: that is HTTP's 429, and tells a caller
    to back off and ask the same again, which would be refused the same way."""


#: what a request's store call may fail with that is answered 503 (``_store_down``)
_STORE_DOWN = (StoreUnavailable, LeaseLost)


def _store_down(exc: StoreUnavailable | LeaseLost) -> StoreDown:
    if isinstance(exc, LeaseLost):
        # This process was paused past its lease, and another revoked it: a write of
        # a turn begun under it is refused, and nothing of the request was written.
        log.warning("a write was refused: %s (this process missed its heartbeats)", exc)
        return StoreDown("This server's lease on the task store lapsed; nothing was "
                         "written: try again shortly")
    log.warning("the task store is unavailable: %s", exc)
    return StoreDown("The task store is unavailable; try again shortly")


_MAX_EVENT_ID = 2**63 - 1


def _last_event_id(raw: str | None) -> int | None:
    if raw is None or raw.strip() == "":
        return None
    raw = raw.strip()
    # ASCII digits, and no more than a 64-bit sequence number holds
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 19 and int(raw) <= _MAX_EVENT_ID):
        raise InvalidParams(
            f"Invalid params: Last-Event-ID {_shown(raw)} is not an event id of this server "
            "(they are integers from 0 to 2^63-1)"
        )
    return int(raw)


def _check_bounds(inbound: Inbound, call: Call) -> None:
    """The refusal of a field of ``call`` past its bound, named by its path in the
    params of the call's dialect (a binding names it as its caller sent it, as any
    refusal of a call once read)."""
    fault = call_fault(call)
    if fault is None:
        return
    path, what = fault
    raise InvalidParams(
        f"Invalid params: params.{joined(inbound.codec.member_path(path))} {what}")
