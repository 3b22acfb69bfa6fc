"""The gRPC binding: both A2A gRPC services in front of the front door.

``lf.a2a.v1.A2AService`` speaks v1.0 and ``a2a.v1.A2AService`` speaks v0.3
(DIALECTS.md §g.3, §h.3: the service name picks the dialect). Like the JSON-RPC
endpoint, this is framing only: a request becomes a canonical call, and the
front door does the rest (authentication from the metadata, rate limits,
tenant, owner scoping, idempotency, push).

v1.0: the usual send requests are read straight from protobuf (``v1_in.py``),
the others as ProtoJSON (``pbjson.py``) by the v1.0 codec; tasks, messages and
stream events are written as wire bytes straight from the canonical objects
(``v1_bytes.py``), the rarer answers from the codec's JSON. v0.3: requests and
answers are the v0.3-ProtoJSON codec's documents (``V03ProtoJSONCodec``, the
one v0.3 HTTP+JSON uses), with the resource names of the requests read in
``v03_requests.py`` and the card in the proto's shape (``v03_card.py``).
Errors are gRPC statuses with a ``google.rpc.ErrorInfo`` in
``grpc-status-details-bin`` (§f.2).

The handlers take and return raw bytes, so that a malformed request is an
``INVALID_ARGUMENT`` of ours rather than grpc's ``INTERNAL``, and each stream
event, once serialized, is kept on its log entry for every other gRPC
subscriber of the same service.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc
import msgspec
from google.protobuf.message import DecodeError, Message

from ...core import model as m
from ...core.calls import Call, GetExtendedCard, ListTasksResult
from ...core.card_signing import canonical_payload
from ...core.dialects import V1_CODECS, Codec, get_codec
from ...core.dialects.v0_3 import encode_card_v03
from ...core.dialects.v1_0 import long_polled
from ...core.errors import (
    A2AError,
    InternalError,
    InvalidParams,
    ParseError,
    ResourceUnavailable,
)
from ...core.model import AgentCard
from ...grpc_wire.pbjson import fill, to_doc
from ...grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
from ...grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
from ...grpc_wire.resume import EVENT_ID_KEY, LAST_EVENT_ID
from ...server.cards.signer import CardSigner
from ...server.dispatch import FrontDoor, Inbound, Items, parse_version
from ...server.streams import Entry, Lagged, Unavailable
from ..http.request import A2A_VERSION
from ..http.request_headers import RequestHeaders, given_once
from ..http.sse_writer import encoded_item
from . import v1_bytes, v1_out
from .field_names import proto_named
from .status import DETAILS_KEY, code_of, status_details
from .v03_card import card_out
from .v03_requests import NAMED_BY, request_in
from .v1_in import send_in

__all__ = ["RPCS", "V03_SERVICE", "V1_SERVICE", "GrpcBinding", "generic_handlers"]

log = logging.getLogger("interlingua.server")

V1_SERVICE = "lf.a2a.v1.A2AService"
V03_SERVICE = "a2a.v1.A2AService"

_decode_json = msgspec.json.Decoder()
_encode_json = msgspec.json.Encoder()


class _Rpc:
    """One RPC: its request and response messages, and whether it streams."""

    __slots__ = ("name", "request", "response", "streaming")

    def __init__(self, name: str, request: type[Message], response: type[Message] | None,
                 streaming: bool = False) -> None:
        self.name = name
        self.request = request
        #: None: google.protobuf.Empty
        self.response = response
        self.streaming = streaming


_V1_RPCS = [
    _Rpc("SendMessage", pb1.SendMessageRequest, pb1.SendMessageResponse),
    _Rpc("SendStreamingMessage", pb1.SendMessageRequest, pb1.StreamResponse, True),
    _Rpc("GetTask", pb1.GetTaskRequest, pb1.Task),
    _Rpc("ListTasks", pb1.ListTasksRequest, pb1.ListTasksResponse),
    _Rpc("CancelTask", pb1.CancelTaskRequest, pb1.Task),
    _Rpc("SubscribeToTask", pb1.SubscribeToTaskRequest, pb1.StreamResponse, True),
    _Rpc("CreateTaskPushNotificationConfig", pb1.TaskPushNotificationConfig,
         pb1.TaskPushNotificationConfig),
    _Rpc("GetTaskPushNotificationConfig", pb1.GetTaskPushNotificationConfigRequest,
         pb1.TaskPushNotificationConfig),
    _Rpc("ListTaskPushNotificationConfigs", pb1.ListTaskPushNotificationConfigsRequest,
         pb1.ListTaskPushNotificationConfigsResponse),
    _Rpc("GetExtendedAgentCard", pb1.GetExtendedAgentCardRequest, pb1.AgentCard),
    _Rpc("DeleteTaskPushNotificationConfig", pb1.DeleteTaskPushNotificationConfigRequest, None),
]

_V03_RPCS = [
    _Rpc("SendMessage", pb03.SendMessageRequest, pb03.SendMessageResponse),
    _Rpc("SendStreamingMessage", pb03.SendMessageRequest, pb03.StreamResponse, True),
    _Rpc("GetTask", pb03.GetTaskRequest, pb03.Task),
    _Rpc("CancelTask", pb03.CancelTaskRequest, pb03.Task),
    _Rpc("TaskSubscription", pb03.TaskSubscriptionRequest, pb03.StreamResponse, True),
    _Rpc("CreateTaskPushNotificationConfig", pb03.CreateTaskPushNotificationConfigRequest,
         pb03.TaskPushNotificationConfig),
    _Rpc("GetTaskPushNotificationConfig", pb03.GetTaskPushNotificationConfigRequest,
         pb03.TaskPushNotificationConfig),
    _Rpc("ListTaskPushNotificationConfig", pb03.ListTaskPushNotificationConfigRequest,
         pb03.ListTaskPushNotificationConfigResponse),
    _Rpc("GetAgentCard", pb03.GetAgentCardRequest, pb03.AgentCard),
    _Rpc("DeleteTaskPushNotificationConfig", pb03.DeleteTaskPushNotificationConfigRequest, None),
]


#: each service's RPCs
RPCS = {V1_SERVICE: _V1_RPCS, V03_SERVICE: _V03_RPCS}


#: what a task that protobuf cannot carry is answered with (an agent's output nested
#: past what ``Limits.max_nesting`` lets a request carry, say)
_TOO_DEEP = ("Internal error: the answer holds values nested too deeply for protobuf to "
             "carry; read it over JSON-RPC or HTTP+JSON")


def _from_json(doc: Any, cls: type[Message]) -> bytes:
    return fill(cls(), doc).SerializeToString()  # type: ignore[no-any-return]


class _Dialect:
    """How one service's messages become its dialect's calls, and back."""

    #: the dialect, as the front door knows it
    name: str
    #: the key under which a stream event's serialization is kept on its log entry
    cache_key: str

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        #: the service's renderings for other minor versions, by A2A-Version (1.1, draft)
        self.newer: dict[str | None, _Dialect] = {}
        #: each rpc's request decoder (``GrpcBinding._decoder``), made at first use
        self.decoders: dict[str, Callable[[Inbound], Call]] = {}

    def call_of(self, rpc: _Rpc, request: Message) -> Call:
        raise NotImplementedError

    def as_sent(self, rpc: _Rpc, exc: InvalidParams) -> InvalidParams:
        """A refusal of a request of ``rpc``, naming the fields its caller set."""
        return proto_named(exc, rpc.request.DESCRIPTOR)

    def answer(self, rpc: _Rpc, call: Any, result: Any) -> bytes:
        raise NotImplementedError

    def encode_event(self, entry: Entry) -> bytes:
        """One stream event as a serialized ``StreamResponse``, its sequence number
        in its metadata (but for a snapshot's items before its last, ``id_follows``)."""
        raise NotImplementedError

    def event(self, entry: Entry) -> bytes:
        """``encode_event``, kept on the log entry for the task's other readers."""
        stored = entry.stored
        if stored is None:  # a lone reader's: never read again
            return self.encode_event(entry)
        return stored.encoding(self.cache_key, self.encode_event, entry)


class _V1(_Dialect):
    name = "1.0"
    cache_key = "grpc:1.0"

    def call_of(self, rpc: _Rpc, request: Message) -> Call:
        if rpc.request is pb1.SendMessageRequest:
            call = send_in(request, rpc.streaming)
            if call is not None:
                return call
        return self.codec.decode_call(rpc.name, _encode_json.encode(to_doc(request)))

    def answer(self, rpc: _Rpc, call: Any, result: Any) -> bytes:
        if rpc.response is None:
            return b""
        # the answers of every request written directly; the rare ones from the codec's JSON
        kind = type(result)
        if kind is m.Task:
            if rpc.name in ("SendMessage", "SendStreamingMessage"):
                return v1_bytes.send_response_bytes(result)
            if not long_polled(call):  # (a long poll's answer names its generation)
                return v1_bytes.task_bytes(result)
        if kind is m.Message:
            return v1_bytes.send_response_bytes(result)
        if kind is ListTasksResult:
            return v1_out.list_tasks_pb(result).SerializeToString()  # type: ignore[no-any-return]
        return _from_json(_decode_json.decode(self.codec.encode_result(call, result)),
                          rpc.response)

    def encode_event(self, entry: Entry) -> bytes:
        return v1_bytes.stream_item_bytes(entry.item, EVENT_ID_KEY, entry.event_id)


class _V11(_V1):
    """A2A 1.1 (draft): v1.0's service, with generations: every request and answer
    through the 1.1 codec's ProtoJSON (int64 members as strings, as protobuf's JSON
    reads them), none on the direct paths of v1.0's, which write no generation."""

    name = "1.1"
    cache_key = "grpc:1.1"

    def call_of(self, rpc: _Rpc, request: Message) -> Call:
        return self.codec.decode_call(rpc.name, _encode_json.encode(to_doc(request)))

    def answer(self, rpc: _Rpc, call: Any, result: Any) -> bytes:
        if rpc.response is None:
            return b""
        return _from_json(_decode_json.decode(self.codec.encode_result(call, result)),
                          rpc.response)

    def encode_event(self, entry: Entry) -> bytes:
        out = fill(pb1.StreamResponse(), _decode_json.decode(encoded_item(entry, self.codec)))
        which = out.WhichOneof("payload")
        if which is not None and not entry.id_follows:  # (the group's last names it)
            getattr(out, which).metadata[EVENT_ID_KEY] = str(entry.seq)
        return out.SerializeToString()  # type: ignore[no-any-return]


class _V03(_Dialect):
    """v0.3: the v0.3-ProtoJSON codec's documents, as the v0.3 proto's messages."""

    name = "0.3"
    cache_key = "grpc:0.3"

    def __init__(self, public_card: Callable[[], tuple[AgentCard, str]],
                 signer: Callable[[], CardSigner | None]) -> None:
        super().__init__(get_codec("0.3-pj"))
        self.public_card = public_card
        self.signer = signer

    def call_of(self, rpc: _Rpc, request: Message) -> Call:
        if rpc.name == "GetAgentCard":  # the caller's card: the public one if none other
            return GetExtendedCard(public_if_none=True)
        return self.codec.decode_call(*request_in(rpc.name, request))

    def as_sent(self, rpc: _Rpc, exc: InvalidParams) -> InvalidParams:
        return proto_named(exc, rpc.request.DESCRIPTOR, NAMED_BY.get(rpc.name))

    def answer(self, rpc: _Rpc, call: Any, result: Any) -> bytes:
        if rpc.response is None:
            return b""
        doc = _decode_json.decode(self.codec.encode_result(call, result))
        if rpc.response is pb03.AgentCard:
            return self.card_answer(doc)
        return _from_json(doc, rpc.response)

    def public_card_answer(self) -> bytes:
        card, rpc_url = self.public_card()
        return self.card_answer(encode_card_v03(card, jsonrpc_url=rpc_url))

    def card_answer(self, doc: dict[str, Any]) -> bytes:
        """A v0.3 JSON card as the proto's card. The card's signatures cover its v1.0
        rendering, which this one cannot be read back into: a signed card is signed
        again over its own ProtoJSON, the document a verifier of it reads."""
        doc = card_out(doc)
        signed = bool(doc.pop("signatures", None))
        message = fill(pb03.AgentCard(), doc)
        signer = self.signer()
        if signed and signer is not None:
            signature = signer.sign_payload(canonical_payload(to_doc(message)))
            fill(message.signatures.add(), msgspec.to_builtins(signature))
        return message.SerializeToString()  # type: ignore[no-any-return]

    def encode_event(self, entry: Entry) -> bytes:
        # the codec's ProtoJSON is shared with v0.3 REST readers of the same entry
        out = fill(pb03.StreamResponse(), _decode_json.decode(encoded_item(entry, self.codec)))
        which = out.WhichOneof("payload")
        if which is not None and not entry.id_follows:  # (the group's last names it)
            getattr(out, which).metadata[EVENT_ID_KEY] = str(entry.seq)
        return out.SerializeToString()  # type: ignore[no-any-return]


def _named_as_sent(exc: A2AError, inbound: Inbound | None, dialect: _Dialect,
                   rpc: _Rpc) -> A2AError:
    """``exc``, naming the request's fields as its caller set them (proto names) when it
    refuses a call already read: the server's own checks (an id no store can keep, a
    page token not of this server) name members by their params paths, as the codecs
    do. (A refusal of the decoding itself was named so by the decoder: no call then.)"""
    if isinstance(exc, InvalidParams) and inbound is not None and inbound.call is not None:
        return dialect.as_sent(rpc, exc)
    return exc


def _scope_of(context: grpc.aio.ServicerContext[Any, Any]) -> dict[str, Any]:
    """An ASGI-like scope of a gRPC call, as the front door reads one: its
    (text) metadata as headers and the peer's address."""
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1", "replace"))
               for k, v in context.invocation_metadata() or ()
               if isinstance(v, str)]
    scope: dict[str, Any] = {"type": "grpc", "headers": headers, "query_string": b""}
    peer = context.peer() or ""
    client = _clients.get(peer)
    if client is None:
        client = _client_of(peer)
        if len(_clients) >= 1024:
            _clients.clear()
        _clients[peer] = client
    if client:
        scope["client"] = client
    return scope


#: the addresses of recent peers: a connection's calls all name the same one
_clients: dict[str, tuple[str, int] | tuple[()]] = {}


def _client_of(peer: str) -> tuple[str, int] | tuple[()]:
    """``ipv4:127.0.0.1:5555`` -> ("127.0.0.1", 5555); () for a peer of another kind."""
    kind, _, address = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return ()
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port) if port.isascii() and port.isdigit() else 0


#: the longest message a refusal carries: it goes twice into the trailers (grpc-message,
#: %-escaped byte by byte, and the status details), which a peer refuses past 16 KiB
MAX_MESSAGE = 512


def _unreadable(rpc: _Rpc, exc: DecodeError) -> A2AError:
    """The refusal of bytes that are not a request of ``rpc``, wherever they are read
    (a port of one agent, or of several, which reads the tenant first): a string whose
    bytes are not UTF-8 is every binding's parse error."""
    name = rpc.request.DESCRIPTOR.full_name
    if "UTF-8" in str(exc):
        return ParseError(f"Parse error: a string of the {name} is not valid UTF-8")
    return InvalidParams(f"Invalid params: the request is not a valid {name}")


async def _abort(context: grpc.aio.ServicerContext[Any, Any], door: FrontDoor | None,
                 error: A2AError) -> None:
    """Abort the call with ``error``: its status, its message (cut to fit the trailers)
    and its ``google.rpc.Status``; with ``door``, the headers its refusal carries too
    (``None``: a port's own refusal, before any agent's door)."""
    if len(error.message) > MAX_MESSAGE:  # a caller's 20,000-character task id, quoted
        error.message = (f"{error.message[:MAX_MESSAGE]}... (cut from "
                         f"{len(error.message)} characters)")
    trailers: list[tuple[str, str | bytes]] = [(DETAILS_KEY, status_details(error))]
    refused = door.refusal(error) if door is not None else None
    if refused is not None:  # WWW-Authenticate, Retry-After as metadata
        trailers.extend((k.decode("latin-1").lower(), v.decode("latin-1"))
                        for k, v in refused[1])
    await context.abort(code_of(error), error.message, trailing_metadata=tuple(trailers))


class GrpcBinding:
    """The two A2A services of one agent, as grpc handlers over its front door.

    ``public_card()`` gives the card as served and its JSON-RPC URL, which the
    v0.3 ``GetAgentCard`` answers with when no extended card is configured.
    """

    def __init__(self, door: FrontDoor,
                 public_card: Callable[[], tuple[AgentCard, str]], *,
                 tenant: str | None = None, agent_tenant: bool = False) -> None:
        self.door = door
        #: the tenant every call acts in; None: the request's own
        self.tenant = tenant
        #: the request's tenant names the agent (several agents on one port,
        #: ``tenants.py``): the tenant header names the tenant, else the default one
        self.agent_tenant = agent_tenant
        self._v1 = _V1(get_codec("1.0"))
        self._v1.newer = {version: _V11(get_codec(name)) for version, name in V1_CODECS.items()}
        self._v03 = _V03(public_card, lambda: door.security.signer)

    def methods(self) -> dict[str, list[tuple[_Rpc, Any]]]:
        """Service name -> each RPC with its handling function (unary: ``(bytes,
        context) -> bytes``; streaming: an async iterator of bytes)."""
        out: dict[str, list[tuple[_Rpc, Any]]] = {}
        for service, dialect, rpcs in ((V1_SERVICE, self._v1, _V1_RPCS),
                                       (V03_SERVICE, self._v03, _V03_RPCS)):
            out[service] = [(rpc, self._streaming(dialect, rpc) if rpc.streaming
                             else self._unary(dialect, rpc)) for rpc in rpcs]
        return out

    def handlers(self) -> list[grpc.GenericRpcHandler]:
        return generic_handlers(self.methods())

    # ------------------------------------------------------------- admitting

    @staticmethod
    def _decoder(dialect: _Dialect, rpc: _Rpc) -> Callable[[Inbound], Call]:
        """How a request of ``rpc`` (its bytes: ``inbound.payload``) becomes its call."""
        parse = rpc.request.FromString
        call_of = dialect.call_of

        def decode(inbound: Inbound) -> Call:
            try:
                request = parse(inbound.payload)
            except DecodeError as exc:
                raise _unreadable(rpc, exc) from None
            try:
                return call_of(rpc, request)
            except InvalidParams as exc:  # (named as sent only once refused)
                raise dialect.as_sent(rpc, exc) from None

        return decode

    def _inbound(self, dialect: _Dialect, rpc: _Rpc, decode: Callable[[Inbound], Call],
                 data: bytes, context: grpc.aio.ServicerContext[Any, Any]
                 ) -> tuple[Inbound, _Dialect]:
        """The call's ``Inbound``, and the dialect that reads and answers it: the
        service's, or its rendering for the minor version asked for (1.1)."""
        scope = _scope_of(context)
        headers = RequestHeaders(scope["headers"])
        # (a version given twice is their list, as over HTTP: the front door refuses it)
        raw_version = headers.combined(A2A_VERSION)
        if raw_version is not None and dialect.newer:
            newer = dialect.newer.get(parse_version(raw_version))
            if newer is not None:
                dialect = newer
                decode = newer.decoders.get(rpc.name) or newer.decoders.setdefault(
                    rpc.name, self._decoder(newer, rpc))
        return Inbound(binding="grpc", scope=scope, headers=headers, codec=dialect.codec,
                       decode=decode, payload=data, raw_version=raw_version,
                       tenant=self.tenant, agent_tenant=self.agent_tenant,
                       streaming=rpc.streaming,
                       last_event_id=given_once(headers, LAST_EVENT_ID) if rpc.streaming else None
                       ), dialect

    # ----------------------------------------------------------------- unary

    def _unary(self, dialect: _Dialect, rpc: _Rpc) -> Callable[
            [bytes, grpc.aio.ServicerContext[Any, Any]], Awaitable[bytes]]:
        door = self.door
        decode = self._decoder(dialect, rpc)
        # v0.3's GetAgentCard is the card itself: a public one is read without
        # credentials, as the well-known card is over HTTP
        card = dialect if isinstance(dialect, _V03) and rpc.name == "GetAgentCard" else None

        async def handle(data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            error: A2AError
            inbound: Inbound | None = None
            spoken = dialect
            try:
                await door.ensure_started()
                inbound, spoken = self._inbound(dialect, rpc, decode, data, context)
                result = await door.enter(inbound)
                if result is None and card is not None:
                    # v0.3's GetAgentCard is the card itself: the public one, then
                    # (a delete's None is its Empty)
                    return card.public_card_answer()
                answer = spoken.answer(rpc, inbound.call, result)
                door.check_answer(len(answer))
                return answer
            except A2AError as exc:
                if card is not None and door.security.public_card_instead(exc):
                    return card.public_card_answer()
                error = _named_as_sent(exc, inbound, spoken, rpc)
            except RecursionError:  # protobuf's conversion of a value nested too deeply
                error = InternalError(_TOO_DEEP)
            except Exception:
                log.exception("internal error handling gRPC %s", rpc.name)
                error = InternalError()
            await _abort(context, door, error)
            raise AssertionError("abort returns by raising")

        return handle

    # ------------------------------------------------------------- streaming

    def _streaming(self, dialect: _Dialect, rpc: _Rpc) -> Callable[
            [bytes, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[bytes]]:
        door = self.door
        decode = self._decoder(dialect, rpc)

        async def handle(data: bytes,
                         context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[bytes]:
            error: A2AError | None = None
            items: Items
            inbound: Inbound | None = None
            spoken = dialect
            try:
                await door.ensure_started()
                inbound, spoken = self._inbound(dialect, rpc, decode, data, context)
                opened = await door.enter(inbound)
                assert isinstance(opened, Items)
                items = opened
            except A2AError as exc:
                error = _named_as_sent(exc, inbound, spoken, rpc)
            except Exception:
                log.exception("internal error opening gRPC %s", rpc.name)
                error = InternalError()
            if error is not None:
                await _abort(context, door, error)
                return
            try:
                event = spoken.event
                async for got in items:
                    # The whole batch is encoded before anything is awaited: an entry
                    # may be the live task projection, which moves on meanwhile.
                    # (Heartbeats send nothing: gRPC's keepalive pings do their work.)
                    ready = []
                    for out in got:
                        if type(out) is Entry:
                            ready.append(event(out))
                        elif type(out) is Lagged:
                            error = ResourceUnavailable(
                                f"This stream fell too far behind; subscribe again with "
                                f"{LAST_EVENT_ID}: {out.seq} to continue from the log",
                                data={"lastEventId": out.seq, "resumable": True})
                            break
                        elif type(out) is Unavailable:
                            error = ResourceUnavailable(
                                out.message,
                                data={"lastEventId": out.after, "resumable": False})
                            break
                    del got
                    for data in ready:
                        yield data
                    if error is not None:
                        break
            except A2AError as exc:
                error = exc
            except RecursionError:
                error = InternalError(_TOO_DEEP)
            except Exception:
                log.exception("gRPC stream %s failed", rpc.name)
                error = InternalError()
            finally:
                items.close()
            if error is not None:
                await _abort(context, door, error)

        return handle


def generic_handlers(methods: dict[str, list[tuple[_Rpc, Any]]]) -> list[grpc.GenericRpcHandler]:
    """grpc's handlers of ``methods`` (``GrpcBinding.methods()``'s form)."""
    out = []
    for service, rpcs in methods.items():
        table: dict[str, grpc.RpcMethodHandler] = {}
        for rpc, handle in rpcs:
            table[rpc.name] = grpc.unary_stream_rpc_method_handler(handle) if rpc.streaming \
                else grpc.unary_unary_rpc_method_handler(handle)
        out.append(grpc.method_handlers_generic_handler(service, table))
    return out


#: connections the gRPC port holds at once, as the HTTP port's cap in all: past it grpc
#: closes a new one at once (it has no cap per address; docs/security.md)
MAX_CONNECTIONS = 2048


def server_options(max_message_bytes: int) -> Sequence[tuple[str, Any]]:
    """grpc server options: requests up to the body limit (larger ones are
    ``RESOURCE_EXHAUSTED``), keepalive pings from long-lived streams allowed, and
    ``MAX_CONNECTIONS`` at once (without it, one client could hold connections up to
    the process's open-file limit, which the HTTP port shares), and a port of its own."""
    return [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", -1),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.max_allowed_incoming_connections", MAX_CONNECTIONS),
        # grpc binds with SO_REUSEPORT by default: a second server on a port another
        # one listens on was let in, and the two shared its calls (and its tasks)
        ("grpc.so_reuseport", 0),
    ]
