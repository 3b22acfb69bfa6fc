"""The gRPC binding of the client: A2A 1.0 (``lf.a2a.v1.A2AService``) and A2A 0.3
(``a2a.v1.A2AService``) on ``grpc.aio``. Needs the ``grpc`` extra
(``pip install 'interlingua[grpc]'``); the rest of the client works without it.

A call is encoded by the dialect's codec exactly as for the HTTP bindings (v1.0:
ProtoJSON, which is the request message's JSON; v0.3: v0.3-ProtoJSON, with the ids
put into the resource names the v0.3 proto uses) and filled into the request
message with ``grpc_wire/pbjson.py``, the conversion the server uses. Answers
go the other way: the message's ProtoJSON, decoded by the same codec, so every
binding reads the same canonical objects. The request metadata carries
``a2a-version``, and the client's headers (authentication, ``a2a-extensions``) in
lower case.

Errors are gRPC statuses; the ErrorInfo ``reason`` in ``grpc-status-details-bin``
names the ``A2AError`` (``grpc_status.py``), as the HTTP+JSON binding reads it from
its bodies. A method or service the agent does not serve (``UNIMPLEMENTED``) is
``MethodNotFound``, which lets the client fall back to another binding.

Streams resume as the others do: every event an interlingua server streams carries
its sequence number in its metadata under ``interlingua.dev/eventId`` (taken out
before the event is decoded, so the item is what the other bindings give), and a
subscription sent with the metadata ``last-event-id: N`` replays from N + 1.

Where to connect: a card names gRPC endpoints as ``dns:///host:port`` (older cards,
and other agents', as ``host:port``). ``grpcs://`` (or ``https://``) means TLS and
``grpc://`` (or ``http://``) plain text; a ``dns:`` or bare ``host:port`` from a card
read over HTTPS is TLS, otherwise plain text. TLS trusts
the system's roots, or the CA bundle given as ``verify``, and presents ``cert``;
``verify=False`` and an ``ssl.SSLContext`` have no gRPC counterpart and are refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from typing import Any

import msgspec

from ..core.calls import Call, GetTask, Result, SendMessage, SubscribeToTask
from ..core.dialects import Codec, get_codec
from ..core.dialects.v0_3_protojson import card_from_proto
from ..core.errors import A2AError, InvalidAgentResponse, InvalidParams
from ..core.reading import ascii_int
from ..core.trace_context import inject
from .card import Endpoint
from .encoding import encode_call
from .errors import AgentTimeout, BadResponse, ClientError, DialectMismatch, too_large
from .generations import answered
from .grpc_status import DETAILS_KEY, error_of
from .grpc_target import target_of
from .stream import Connection, lagged_or
from .transport import CLOSED, Transport

try:
    import grpc
    from google.protobuf import message_factory
    from google.protobuf.message import Message as PBMessage

    from ..grpc_wire.pbjson import fill, to_doc
    from ..grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
    from ..grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
    from ..grpc_wire.resume import EVENT_ID_KEY, LAST_EVENT_ID
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "the gRPC binding needs the grpc extra: pip install 'interlingua[grpc]' "
        f"({exc})") from None

__all__ = ["GrpcClientBinding", "target_of"]

_json = msgspec.json.Decoder()
_encode = msgspec.json.encode

V1_SERVICE = "lf.a2a.v1.A2AService"
V03_SERVICE = "a2a.v1.A2AService"

# headers that belong to HTTP itself, or that grpc sets: never sent as metadata
_NOT_METADATA = frozenset({
    "accept", "accept-encoding", "connection", "content-length", "content-type", "host",
    "te", "transfer-encoding", "user-agent", "a2a-version", "last-event-id",
})

#: the members of a v1.0 answer that its JSON always holds and ProtoJSON leaves out at
#: their defaults (an empty page): put back, so that a raw answer (``--json``) reads
#: as it does over the other bindings
_V1_ALWAYS: dict[str, dict[str, Any]] = {
    "ListTasks": {"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0},
    "ListTaskPushNotificationConfigs": {"configs": [], "nextPageToken": ""},
}

#: how long a closed stream is read for its end before it is cancelled
_DRAIN_SECONDS = 0.25

#: a channel whose connect failed (refused, unresolved, a handshake refused)
_FAILED = grpc.ChannelConnectivity.TRANSIENT_FAILURE
#: how long calls on a failed channel, which fail at once, are let end when it is replaced
_RETIRE_GRACE_SECONDS = 1.0

_CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", -1),
    # a stream that waits for a long task notices a dead connection
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_permit_without_calls", 0),
    # a channel's own connections: those of grpc's process-wide pool keep the backoff of
    # a failed connect, which a new channel (``_channel``) would wait out as well
    ("grpc.use_local_subchannel_pool", 1),
]


@contextlib.contextmanager
def _cut_by_close(closed: Callable[[], bool]) -> Iterator[None]:
    """Around the await of a call: the call's cancellation by the binding's close (which
    cancels its channel's calls) is raised as ``ClientError(CLOSED)``, as over HTTP, not
    as a CancelledError the caller's task would read as its own. A cancel of that task
    (``cancelling()``) stays a cancel, closed or not."""
    try:
        yield
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if closed() and task is not None and not task.cancelling():
            raise ClientError(CLOSED) from None
        raise


@functools.cache
def _rpc(service: str, name: str) -> tuple[type[PBMessage], type[PBMessage], bool]:
    """(request class, response class, server-streaming) of one RPC, from the protos."""
    module = pb1 if service == V1_SERVICE else pb03
    method = module.DESCRIPTOR.services_by_name["A2AService"].methods_by_name.get(name)
    if method is None:
        raise DialectMismatch(f"{name} is not an RPC of {service}")
    return (message_factory.GetMessageClass(method.input_type),
            message_factory.GetMessageClass(method.output_type),
            method.server_streaming)


# ----------------------------------------------------------------- v0.3 requests


def _drops_history(service: str, call: Call) -> bool:
    """Whether the answers to ``call`` are given without their task's history: a
    length of 0 asked for over v0.3, whose proto cannot say it (its int32 is not
    optional: a 0 is no length asked for, and the agent gives its default)."""
    if service != V03_SERVICE:
        return False
    if isinstance(call, GetTask):
        return call.history_length == 0
    return isinstance(call, SendMessage) and call.config.history_length == 0


def _without_history(answer: PBMessage) -> None:
    """Clears the history of the task in a v0.3 answer: a ``Task`` (GetTask), or a send's
    answer or stream event holding one."""
    if answer.DESCRIPTOR.name == "Task":
        answer.ClearField("history")
    elif answer.WhichOneof("payload") == "task":
        answer.task.ClearField("history")


def _v03_request(method: str, params: bytes) -> tuple[str, dict[str, Any]]:
    """A v0.3 call (its JSON-RPC method, its params in v0.3-ProtoJSON) -> (RPC, the
    request as ProtoJSON): ids become the resource names the v0.3 proto uses."""
    doc = _json.decode(params) if params else {}
    if not isinstance(doc, dict):
        doc = {}
    task = f"tasks/{doc.get('id', '')}"
    if method == "message/send":
        # proto3 cannot tell an absent ``blocking`` from false, and SDK servers read an
        # absent configuration as an empty one: a blocking send says so
        config = doc.get("configuration")
        config = dict(config) if isinstance(config, dict) else {}
        config.setdefault("blocking", True)
        return "SendMessage", {**doc, "configuration": config}
    if method == "message/stream":
        return "SendStreamingMessage", doc
    if method == "tasks/get":
        req: dict[str, Any] = {"name": task}
        if doc.get("historyLength") is not None:
            req["historyLength"] = doc["historyLength"]
        return "GetTask", req
    if method == "tasks/cancel":
        return "CancelTask", {"name": task}
    if method == "tasks/resubscribe":
        return "TaskSubscription", {"name": task}
    if method == "tasks/pushNotificationConfig/set":
        # the codec spells the whole request already: {parent: tasks/{id}, configId,
        # config: the TaskPushNotificationConfig}
        return "CreateTaskPushNotificationConfig", doc
    if method == "tasks/pushNotificationConfig/list":
        return "ListTaskPushNotificationConfig", {"parent": task}
    if method in ("tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/delete"):
        wanted = doc.get("pushNotificationConfigId")
        if not wanted:
            raise DialectMismatch("asking for a task's push config over gRPC needs the "
                                  "config's id")
        rpc = ("GetTaskPushNotificationConfig" if method.endswith("/get")
               else "DeleteTaskPushNotificationConfig")
        return rpc, {"name": f"{task}/pushNotificationConfigs/{wanted}"}
    if method == "agent/getAuthenticatedExtendedCard":
        return "GetAgentCard", {}
    raise DialectMismatch(f"{method} has no gRPC counterpart in A2A 0.3")


def _request(dialect: str, call: Call, version: str = "") -> tuple[Codec, str, str, Any]:
    """(codec, service, RPC, request as ProtoJSON) of ``call`` in ``dialect`` (its
    ``version``: the request's ``a2a-version``)."""
    name = get_codec(dialect).protojson
    if name is None:
        raise DialectMismatch(f"gRPC is spoken in A2A 1.0 and 0.3, not {dialect}")
    # 1.1: its own codec, whose JSON is ProtoJSON as v1.0's is
    codec = get_codec(version if version and version != dialect else name)
    method, params = encode_call(codec, call, dialect, version)
    # v0.3's service names tasks by resource; v1.0's RPCs are its JSON-RPC methods
    service = codec.grpc_service
    if service is None:
        raise DialectMismatch(f"gRPC is spoken in A2A 1.0 and 0.3, not {dialect}")
    if service == V03_SERVICE:
        rpc, doc = _v03_request(method, params)
        return codec, service, rpc, doc
    return codec, service, method, _json.decode(params) if params else {}


def rpc_of(dialect: str, call: Call) -> str:
    """The name of the RPC that carries ``call`` in ``dialect``, as ``Service/RPC``'s tail."""
    return _request(dialect, call)[2]


# ------------------------------------------------------------------- the binding


class GrpcClientBinding:
    """Calls as gRPC requests to the endpoint's ``host:port``, one channel per target."""

    def __init__(self, transport: Transport, headers: Mapping[str, str]) -> None:
        self._headers = headers
        self._timeout: float | None = getattr(transport, "timeout", None)
        self._verify: Any = getattr(transport, "verify", True)
        self._cert: Any = getattr(transport, "cert", None)
        # an answer past the client's max_answer_bytes is refused by the library
        limit = getattr(transport, "max_answer_bytes", None)
        self._limit = limit if isinstance(limit, int) else None
        self._options = [*_CHANNEL_OPTIONS, ("grpc.max_receive_message_length",
                                             limit if isinstance(limit, int) else -1)]
        self._channels: dict[tuple[str, bool], grpc.aio.Channel] = {}
        self._closed = False

    # ------------------------------------------------------------- plumbing

    async def _channel(self, target: str, tls: bool) -> grpc.aio.Channel:
        key = (target, tls)
        found = self._channels.get(key)
        if found is not None and found.get_state() is _FAILED:
            # grpc fails every call on a channel whose connect failed, at once, until a
            # reconnect backoff of its own (1 s, growing) runs out, though the server is
            # back: a new channel dials now, so each attempt (a stream's resumption by
            # ResumePolicy's schedule) reaches the server if it is there
            self._channels[key] = fresh = self._new_channel(target, tls)
            await found.close(_RETIRE_GRACE_SECONDS)
            return fresh
        if found is None:
            self._channels[key] = found = self._new_channel(target, tls)
        return found

    def _new_channel(self, target: str, tls: bool) -> grpc.aio.Channel:
        if tls:
            return grpc.aio.secure_channel(target, self._credentials(), options=self._options)
        return grpc.aio.insecure_channel(target, options=self._options)

    def _credentials(self) -> grpc.ChannelCredentials:
        verify, cert = self._verify, self._cert
        if verify is False or not isinstance(verify, bool | str):
            raise ClientError("TLS over gRPC takes verify=True or a CA bundle's path; "
                              "it cannot skip verification nor use an ssl.SSLContext")
        roots = _read(verify, "the CA bundle") if isinstance(verify, str) else None
        key = chain = None
        if cert is not None:
            if isinstance(cert, str):
                chain = key = _read(cert, "the client certificate")
            else:
                chain = _read(cert[0], "the client certificate")
                key = _read(cert[1], "the client key")
        return grpc.ssl_channel_credentials(root_certificates=roots, private_key=key,
                                            certificate_chain=chain)

    def _metadata(self, version: str) -> list[tuple[str, str]]:
        out = [("a2a-version", version)]
        for name, value in self._headers.items():
            key = name.strip().lower()
            if key and key not in _NOT_METADATA and not key.startswith("grpc-"):
                if not value.isascii() or key.endswith("-bin"):
                    raise ClientError(f"the header {name!r} cannot be sent as gRPC metadata "
                                      "(text metadata is ASCII)")
                out.append((key, value))
        carried: dict[str, str] = {}
        inject(carried)  # traceparent, when a span is current
        out.extend(carried.items())
        return out

    def _prepare(self, endpoint: Endpoint, call: Call
                 ) -> tuple[Codec, str, str, PBMessage, type[PBMessage], bool, str, bool]:
        """(codec, service, RPC, request, response class, streaming, target, tls)."""
        dialect = endpoint.dialect
        codec, service, rpc, doc = _request(dialect, call, endpoint.a2a_version)
        request_cls, response_cls, streaming = _rpc(service, rpc)
        try:
            request = fill(request_cls(), doc if isinstance(doc, dict) else {})
        except (TypeError, ValueError) as exc:
            # what the server would refuse had it been sent (an int32 out of range, a
            # text that is no timestamp, named by its field): refused as it refuses it
            # over the others
            raise InvalidParams(f"Invalid params for {rpc}: {exc}") from None
        target, tls = target_of(endpoint.url)
        return codec, service, rpc, request, response_cls, streaming, target, tls

    def _is_closed(self) -> bool:
        return self._closed

    def _error(self, exc: grpc.aio.AioRpcError, target: str) -> Exception:
        details = None
        for key, value in exc.trailing_metadata() or ():
            if key == DETAILS_KEY and isinstance(value, bytes):
                details = value
        if (self._limit is not None and details is None
                and exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
                and "Received message larger than max" in (exc.details() or "")):
            # the library's own refusal of an answer past max_answer_bytes, as the
            # other bindings say it: no throttling by the agent
            return too_large(target, self._limit)
        return error_of(exc.code().name, exc.details() or "", details, target,
                        timeout=self._timeout)

    # ---------------------------------------------------------------- calls

    async def call(self, endpoint: Endpoint, call: Call) -> tuple[Result, bytes]:
        codec, service, rpc, request, response_cls, _, target, tls = self._prepare(endpoint, call)
        method = (await self._channel(target, tls)).unary_unary(
            f"/{service}/{rpc}", request_serializer=type(request).SerializeToString,
            response_deserializer=response_cls.FromString)
        try:
            with _cut_by_close(self._is_closed):
                response = await method(request, metadata=self._metadata(endpoint.a2a_version),
                                        timeout=self._timeout)
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc, target) from None
        if response is None:  # grpc logs the deserializer's failure, and gives None
            raise _unreadable(target)
        if _drops_history(service, call):
            # before the answer is JSON: the raw answer (--json) holds what the result does
            _without_history(response)
        doc = to_doc(response)
        if rpc == "GetAgentCard":
            doc = card_from_proto(doc)
        elif rpc in _V1_ALWAYS and service == V1_SERVICE:
            doc = {**_V1_ALWAYS[rpc], **doc}
        raw = _encode(doc)
        try:
            result = codec.decode_result(answered(call), raw)
        except InvalidAgentResponse as exc:
            raise BadResponse(f"{target}: {exc.message}") from None
        return result, raw

    async def open_stream(
        self, endpoint: Endpoint, call: SendMessage | SubscribeToTask, last_event_id: int | None
    ) -> Connection:
        codec, service, rpc, request, response_cls, streaming, target, tls = self._prepare(
            endpoint, call)
        metadata = self._metadata(endpoint.a2a_version)
        if last_event_id is not None:
            metadata.append((LAST_EVENT_ID, str(last_event_id)))
        if not streaming:  # pragma: no cover - the codecs name streaming RPCs for streams
            raise DialectMismatch(f"{rpc} does not stream")
        method = (await self._channel(target, tls)).unary_stream(
            f"/{service}/{rpc}", request_serializer=type(request).SerializeToString,
            response_deserializer=response_cls.FromString)
        stream = method(request, metadata=metadata)
        # The first event (or the refusal) is awaited here, so that an error before
        # the stream began is raised by the opening, as over HTTP. Nothing within the
        # timeout is the stream's silence, said by its events as an HTTP stream's is.
        try:
            first = await _next(stream, self._timeout, self._is_closed)
        except grpc.aio.AioRpcError as exc:
            stream.cancel()
            raise self._error(exc, target) from None
        return GrpcConnection(codec, target, stream, first, self._error, self._is_closed,
                              drop_history=_drops_history(service, call),
                              timeout=self._timeout)

    async def aclose(self) -> None:
        self._closed = True  # first: the calls the channels' close cancels read it
        channels, self._channels = self._channels, {}
        for channel in channels.values():
            await channel.close()


class GrpcConnection(Connection):
    """One server-streaming call: its ``StreamResponse`` messages as (seq, ProtoJSON).

    ``timeout``: the seconds each event is waited for (None: no limit), as an HTTP
    stream's every read is; a stream silent for longer is ``AgentTimeout``, which the
    follower ends with ``StreamTimeout`` as over HTTP."""

    def __init__(self, codec: Codec, target: str, stream: Any, first: Any,
                 error: Any, closed: Callable[[], bool], *, drop_history: bool = False,
                 timeout: float | None = None) -> None:
        super().__init__(codec, target)
        self._stream = stream
        self._first = first
        self._to_error = error
        #: whether the binding was closed (which cancels the stream)
        self._closed = closed
        #: the task snapshots are given without their history (``_drops_history``)
        self._drop_history = drop_history
        self._timeout = timeout

    async def events(self) -> AsyncGenerator[tuple[int | None, bytes], None]:
        message = self._first
        while message is not grpc.aio.EOF:
            if message is _SILENT:
                # (the words of an HTTP stream gone quiet, transport.py)
                raise AgentTimeout(f"{self.url} sent nothing for {self._timeout:g} s")
            if message is None:  # not deserialized (grpc logged why)
                raise _unreadable(self.url)
            if self._drop_history:
                _without_history(message)
            yield _event(message)
            try:
                message = await _next(self._stream, self._timeout, self._closed)
            except grpc.aio.AioRpcError as exc:
                err = self._to_error(exc, self.url)
                # a reader that fell too far behind is told where to resume, as over
                # SSE: followed again from there, not raised (it was, over gRPC)
                raise (lagged_or(err) if isinstance(err, A2AError) else err) from None

    async def aclose(self) -> None:
        stream = self._stream
        if not stream.done():
            # A stream left after its final event is ended by the agent at once: read
            # it to its end rather than cancel it, so that the call is over, not still
            # finishing in grpc (which would then call back a loop that may be gone).
            # (a close of the client meanwhile ends the drain: the call is over)
            with contextlib.suppress(TimeoutError, grpc.RpcError, ClientError):
                async with asyncio.timeout(_DRAIN_SECONDS):
                    with _cut_by_close(self._closed):
                        while await stream.read() is not grpc.aio.EOF:
                            pass
        if not stream.done():
            stream.cancel()


#: what ``_next`` gives for a stream that sent nothing within its timeout
_SILENT = object()


async def _next(stream: Any, timeout: float | None, closed: Callable[[], bool]) -> Any:
    """The stream's next message (``grpc.aio.EOF`` at its end), or ``_SILENT`` when none
    came within ``timeout`` seconds. The read given up cancels the call (grpc's way):
    the stream is over. A read the client's close cut
    is ``ClientError(CLOSED)`` (``_cut_by_close``)."""
    try:
        with _cut_by_close(closed):
            async with asyncio.timeout(timeout):
                return await stream.read()
    except TimeoutError:
        return _SILENT


def _unreadable(target: str) -> BadResponse:
    return BadResponse(f"{target} answered with a message protobuf cannot read (one nested "
                       "deeper than protobuf's 100 levels, say)")


def _event(message: Any) -> tuple[int | None, bytes]:
    """A ``StreamResponse`` -> (its sequence number, its ProtoJSON without it)."""
    which = message.WhichOneof("payload")
    if which is None:
        raise BadResponse("a stream event carries none of task, message, status, artifact")
    payload = getattr(message, which)
    seq: int | None = None
    if payload.HasField("metadata"):
        fields = payload.metadata.fields
        if EVENT_ID_KEY in fields:
            value = fields[EVENT_ID_KEY]
            text = value.string_value if value.HasField("string_value") else ""
            seq = ascii_int(text)
            del fields[EVENT_ID_KEY]
            if not fields:
                payload.ClearField("metadata")
    return seq, _encode(to_doc(message))


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ClientError(f"cannot read {what} {path}: {exc}") from None
