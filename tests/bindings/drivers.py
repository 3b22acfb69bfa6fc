"""One small driver per binding, so a scenario runs unchanged over each of them.

A driver takes canonical calls (``interlingua.core.calls``), puts them on the wire
of its binding and dialect, and hands back canonical results, stream items with
their SSE ids (gRPC: the sequence number in each event's metadata), or a ``Refused``
with the HTTP status (gRPC: the status code's name) and the error's reason or code.
A new binding is one more subclass and one more entry in ``DRIVERS``.

The gRPC drivers call the services with ``grpc.aio`` on a loop of their own (in a
thread), with requests built here from the protobuf classes, not through the
client, so that they test the server on their own. They find the gRPC address in
the card of the URL they are given.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

import httpx
import msgspec

from interlingua.core import calls as c
from interlingua.core.dialects import Codec, StreamItem, get_codec
from interlingua.core.dialects.v0_3_protojson import V03ProtoJSONCodec
from interlingua.core.sse import SSEDecoder

__all__ = ["DRIVERS", "DRIVERS_11", "MQTT", "Driver", "Refused", "token"]

_any = msgspec.json.Decoder()
_enc = msgspec.json.encode


class Refused(Exception):
    """An error answer: its HTTP status, and what the body says (``reason``: the
    ErrorInfo reason or the JSON-RPC code as text; ``message``); ``challenge``: its
    WWW-Authenticate (a header, gRPC's trailing metadata), if any."""

    def __init__(self, status: int, reason: str, message: str, body: Any,
                 challenge: str | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body
        self.challenge = challenge


#: what a string of a corrupted request holds in place of its text: not UTF-8
BAD = b"\xff\xfe"
_TOKEN = re.compile(rb"Zq\d{3}qZ")


def token(n: int) -> str:
    """The ``n``-th marked string of a request: found again in any encoding of it
    (JSON, protobuf, a path, a query), where it is made invalid UTF-8 in place."""
    return f"Zq{n:03d}qZ"


def _json_strings(doc: Any) -> Iterator[str]:
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield k
            yield from _json_strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _json_strings(v)


def json_corruptions(body: bytes) -> Iterator[tuple[str, bytes]]:
    """``body`` once per distinct string of it (member names too), that string's text
    replaced by bytes that are not UTF-8."""
    seen: set[str] = set()
    for text in _json_strings(_any.decode(body)):
        if text in seen:
            continue
        seen.add(text)
        written = _enc(text)
        at = body.find(written)
        assert at >= 0, (text, body)
        yield text, body[:at] + b'"' + BAD + b'"' + body[at + len(written):]


def token_corruptions(data: bytes) -> Iterator[tuple[str, bytes]]:
    """``data`` once per marked string in it, that string's bytes made invalid UTF-8
    with its length kept (so that protobuf's length prefixes still hold)."""
    for found in dict.fromkeys(_TOKEN.findall(data)):
        yield found.decode(), data.replace(found, b"\xff" * len(found))


class Driver:
    name: str
    #: the protocol version it speaks: "1.0" or "0.3"
    version: str
    codec: Codec
    #: what the binding can do
    lists_tasks = True
    has_tenants = True

    def __init__(self, client: httpx.Client, url: str, headers: dict[str, str] | None = None,
                 tenant: str | None = None, again: list[tuple[str, str]] | None = None,
                 edit: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.client = client
        self.url = url.rstrip("/")
        self.headers = dict(headers or {})
        self.tenant = tenant
        #: headers sent after ``headers`` (one of those names once more, say)
        self.again = list(again or ())
        #: query parameters every unary HTTP request carries (a name given twice, say)
        self.query: list[tuple[str, str]] = []
        #: what is done to each request's params (v1.0's ProtoJSON: the JSON-RPC params,
        #: the HTTP+JSON body, the gRPC request) before they are sent: a member the
        #: canonical call cannot say
        self.edit = edit

    def _edited(self, params: bytes) -> bytes:
        if self.edit is None:
            return params
        doc = _any.decode(params)
        self.edit(doc)
        return _enc(doc)

    def _all_headers(self, headers: dict[str, str]) -> list[tuple[str, str]]:
        return [*headers.items(), *self.again]

    def call(self, call: c.Call) -> c.Result:
        raise NotImplementedError

    def stream(self, call: c.SendMessage | c.SubscribeToTask, *, last_event_id: int | None = None,
               limit: int | None = None) -> list[tuple[int | None, StreamItem]]:
        raise NotImplementedError

    def _sse(self, method: str, url: str, *, content: bytes | None, headers: dict[str, str],
             limit: int | None, read: Any) -> list[tuple[int | None, StreamItem]]:
        out: list[tuple[int | None, StreamItem]] = []
        dec = SSEDecoder()
        give_up = time.monotonic() + 30
        with self.client.stream(method, url, content=content, headers=headers) as resp:
            if resp.status_code != 200 or not resp.headers["content-type"].startswith(
                    "text/event-stream"):
                resp.read()  # refused before the stream began: a plain error answer
                raise self._refused(resp)
            for chunk in resp.iter_raw():
                for ev in dec.feed(chunk):
                    if ev.event == "error":
                        raise self._stream_error(ev.data)
                    # the reader's last event id after it (None: none yet), as a
                    # reconnecting reader would send it: a frame without one keeps it
                    out.append((None if ev.id is None else int(ev.id), read(ev.data)))
                    if limit is not None and len(out) >= limit:
                        return out
                assert time.monotonic() < give_up, "the stream did not end"
        return out

    def _refused(self, resp: httpx.Response) -> Refused:
        raise NotImplementedError

    def _stream_error(self, data: bytes) -> Refused:
        raise NotImplementedError

    def corrupted(self, call: c.Call) -> Iterator[tuple[str, Refused | None]]:
        """``call`` sent once per string of its request, that string made invalid
        UTF-8: (which string, the refusal; None: it was taken)."""
        raise NotImplementedError

    def oversized(self, call: c.Call) -> Refused | None:
        """``call`` (a request over the server's size limit) sent: the refusal, or
        None when it was taken."""
        try:
            self.call(call)
        except Refused as exc:
            return exc
        return None


class JSONRPC(Driver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codec = get_codec(self.version)
        if self.version == "1.0":
            self.headers.setdefault("A2A-Version", "1.0")

    def _body(self, call: c.Call) -> bytes:
        if self.tenant is not None and hasattr(call, "tenant"):
            call.tenant = self.tenant
        method, params = self.codec.encode_call(call)
        return (b'{"jsonrpc":"2.0","id":1,"method":' + _enc(method) + b',"params":'
                + self._edited(params) + b"}")

    def call(self, call: c.Call) -> c.Result:
        resp = self.client.post(self.url + "/", content=self._body(call), params=self.query,
                                headers=self._all_headers(
                                    {**self.headers, "Content-Type": "application/json"}))
        doc = resp.json()
        if resp.status_code != 200 or "error" in doc:
            raise self._refused(resp)
        return self.codec.decode_result(call, _enc(doc["result"]))

    def stream(self, call: c.SendMessage | c.SubscribeToTask, *, last_event_id: int | None = None,
               limit: int | None = None) -> list[tuple[int | None, StreamItem]]:
        headers = {**self.headers, "Content-Type": "application/json"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)

        def read(data: bytes) -> StreamItem:
            return self.codec.decode_stream_item(_enc(_any.decode(data)["result"]))

        return self._sse("POST", self.url + "/", content=self._body(call), headers=headers,
                         limit=limit, read=read)

    def _refused(self, resp: httpx.Response) -> Refused:
        doc = resp.json()
        err = doc.get("error", {})
        return Refused(resp.status_code, str(err.get("code")), err.get("message", ""), doc,
                       resp.headers.get("www-authenticate"))

    def corrupted(self, call: c.Call) -> Iterator[tuple[str, Refused | None]]:
        for where, body in json_corruptions(self._body(call)):
            resp = self.client.post(self.url + "/", content=body,
                                    headers={**self.headers, "Content-Type": "application/json"})
            yield where, self._refused(resp) if resp.status_code != 200 or "error" in resp.json() \
                else None

    def _stream_error(self, data: bytes) -> Refused:
        err = _any.decode(data).get("error", {})
        return Refused(200, str(err.get("code")), err.get("message", ""), err)


class JSONRPC10(JSONRPC):
    name = "jsonrpc-1.0"
    version = "1.0"


class JSONRPC03(JSONRPC):
    name = "jsonrpc-0.3"
    version = "0.3"
    lists_tasks = False
    has_tenants = False


class REST(Driver):
    prefix = ""

    def _base(self) -> str:
        tenant = "/" + quote(self.tenant, safe="") if self.tenant else ""
        return self.url + tenant + self.prefix

    def _route(self, call: c.Call) -> tuple[str, str, dict[str, Any], bytes | None]:
        """(HTTP method, path, query, body) of ``call``."""
        q = quote
        if isinstance(call, c.SendMessage):
            verb = "message:stream" if call.streaming else "message:send"
            return "POST", f"/{verb}", {}, self._edited(self.codec.encode_call(call)[1])
        if isinstance(call, c.GetTask):
            query = {} if call.history_length is None else {"historyLength": call.history_length}
            return "GET", f"/tasks/{q(call.id, safe='')}", query, None
        if isinstance(call, c.ListTasks):
            query: dict[str, Any] = {"pageSize": call.page_size}
            if call.context_id:
                query["contextId"] = call.context_id
            if call.status is not None:
                from interlingua.core.dialects._v1_wire import STATE_NAMES

                query["status"] = STATE_NAMES[call.status]
            if call.page_token:
                query["pageToken"] = call.page_token
            if call.include_artifacts:
                query["includeArtifacts"] = "true"
            if call.history_length is not None:
                query["historyLength"] = call.history_length
            if call.status_timestamp_after is not None:
                query["statusTimestampAfter"] = call.status_timestamp_after
            return "GET", "/tasks", query, None
        if isinstance(call, c.CancelTask):
            return "POST", f"/tasks/{q(call.id, safe='')}:cancel", {}, b"{}"
        if isinstance(call, c.SubscribeToTask):
            return "GET", f"/tasks/{q(call.id, safe='')}:subscribe", {}, None
        configs = "/tasks/{}/pushNotificationConfigs"
        if isinstance(call, c.SetPushConfig):
            body = self.codec.encode_call(call)[1]
            return "POST", configs.format(q(call.task_id, safe="")), {}, body
        if isinstance(call, c.GetPushConfig):
            path = configs.format(q(call.task_id, safe="")) + "/" + q(call.config_id or "", safe="")
            return "GET", path, {}, None
        if isinstance(call, c.ListPushConfigs):
            paging = {k: v for k, v in (("pageSize", call.page_size),
                                        ("pageToken", call.page_token)) if v is not None}
            return "GET", configs.format(q(call.task_id, safe="")), paging, None
        if isinstance(call, c.DeletePushConfig):
            path = configs.format(q(call.task_id, safe="")) + "/" + q(call.config_id, safe="")
            return "DELETE", path, {}, None
        if isinstance(call, c.GetExtendedCard):
            return "GET", "/card" if self.version == "0.3" else "/extendedAgentCard", {}, None
        raise TypeError(call)

    def call(self, call: c.Call) -> c.Result:
        method, path, query, body = self._route(call)
        headers = {**self.headers}
        if body is not None:
            headers["Content-Type"] = self.content_type
        resp = self.client.request(method, self._base() + path,
                                   params=[*query.items(), *self.query], content=body,
                                   headers=self._all_headers(headers))
        if resp.status_code != 200:
            raise self._refused(resp)
        if isinstance(call, c.GetExtendedCard) and self.version == "0.3":
            from interlingua.core.dialects.v0_3 import decode_card_v03

            return decode_card_v03(resp.json())
        return self.codec.decode_result(call, resp.content)

    def corrupted(self, call: c.Call) -> Iterator[tuple[str, Refused | None]]:
        method, path, query, body = self._route(call)
        headers = {**self.headers, "Content-Type": self.content_type}

        def send(path: str, query: str, body: bytes | None) -> Refused | None:
            url = self._base() + path + ("?" + query if query else "")
            resp = self.client.request(method, url, content=body, headers=headers)
            return None if resp.status_code == 200 else self._refused(resp)

        plain = urlencode(query)
        for where, bad in json_corruptions(body) if body else ():
            yield f"body {where}", send(path, plain, bad)
        for where in dict.fromkeys(_TOKEN.findall(path.encode())):
            yield f"path {where.decode()}", send(path.replace(where.decode(), "%FF%FE"),
                                                 plain, body)
        for name, value in query.items():
            if _TOKEN.search(str(value).encode()):
                rest = urlencode({k: v for k, v in query.items() if k != name})
                yield f"query {name}", send(path, f"{name}=%FF%FE&{rest}", body)

    def stream(self, call: c.SendMessage | c.SubscribeToTask, *, last_event_id: int | None = None,
               limit: int | None = None) -> list[tuple[int | None, StreamItem]]:
        method, path, _, body = self._route(call)
        headers = {**self.headers}
        if body is not None:
            headers["Content-Type"] = self.content_type
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        return self._sse(method, self._base() + path, content=body, headers=headers,
                         limit=limit, read=self.codec.decode_stream_item)


class REST10(REST):
    name = "rest-1.0"
    version = "1.0"
    content_type = "application/a2a+json"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codec = get_codec("1.0")
        self.headers.setdefault("A2A-Version", "1.0")

    def _refused(self, resp: httpx.Response) -> Refused:
        doc = resp.json()
        err = doc["error"]
        assert err["code"] == resp.status_code, doc
        infos = [d for d in err.get("details", []) if d.get("@type", "").endswith("ErrorInfo")]
        assert infos and infos[0]["domain"] == "a2a-protocol.org", doc
        return Refused(resp.status_code, infos[0]["reason"], err["message"], doc,
                       resp.headers.get("www-authenticate"))

    def _stream_error(self, data: bytes) -> Refused:
        err = _any.decode(data)["error"]
        return Refused(err["code"], err["details"][0]["reason"], err["message"], err)


#: v0.3's error types (its JSON schema's, and its extended card's as interlingua names it)
#: and the JSON-RPC code of each
V03_TYPE_CODES = {
    "TaskNotFoundError": -32001, "TaskNotCancelableError": -32002,
    "PushNotificationNotSupportedError": -32003, "UnsupportedOperationError": -32004,
    "ContentTypeNotSupportedError": -32005, "InvalidAgentResponseError": -32006,
    "AuthenticatedExtendedCardNotConfiguredError": -32007,
    "ExtendedAgentCardNotConfiguredError": -32007, "JSONParseError": -32700,
    "InvalidRequestError": -32600, "MethodNotFoundError": -32601, "InvalidParamsError": -32602,
    "InternalError": -32603,
}


class REST03(REST):
    name = "rest-0.3"
    version = "0.3"
    prefix = "/v1"
    content_type = "application/json"
    lists_tasks = False
    has_tenants = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codec = V03ProtoJSONCodec()

    def _refused(self, resp: httpx.Response) -> Refused:
        doc = resp.json()
        # the v0.3 JSON-RPC code rides beside the type whenever there is one, and the
        # error's data beside either when it has some
        assert set(doc) - {"data"} in ({"message"}, {"code", "message", "type"}), doc
        # the code and the type name one error: the JavaScript SDK reads the one, the
        # Python SDK the other
        if "type" in doc:
            assert V03_TYPE_CODES.get(doc["type"]) == doc["code"], doc
        return Refused(resp.status_code, doc.get("type", ""), doc["message"], doc,
                       resp.headers.get("www-authenticate"))

    def _stream_error(self, data: bytes) -> Refused:
        doc = _any.decode(data)
        return Refused(0, doc.get("type", ""), doc["message"], data)


# ------------------------------------------------------------------------- gRPC

T = TypeVar("T")


class _Loop:
    """One event loop in a thread for every gRPC driver, with a channel per address."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.channels: dict[str, Any] = {}
        threading.Thread(target=self.loop.run_forever, daemon=True,
                         name="grpc drivers").start()

    def run(self, coro: Awaitable[T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)  # type: ignore[arg-type]

    def channel(self, target: str) -> Any:
        import grpc

        async def make() -> Any:
            return grpc.aio.insecure_channel(target)

        async def state(channel: Any) -> Any:
            return channel.get_state()

        channel = self.channels.get(target)
        # a channel to a port whose server is gone backs off and fails fast: a new server
        # on that port gets a new channel
        if channel is None or self.run(state(channel)) in (
                grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN):
            channel = self.channels[target] = self.run(make())
        return channel


_loop: _Loop | None = None


class GRPC(Driver):
    service: str
    streaming_rpcs = ("SendStreamingMessage", "SubscribeToTask", "TaskSubscription")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        global _loop
        super().__init__(*args, **kwargs)
        if _loop is None:
            _loop = _Loop()
        self.loop = _loop
        # Read from the card each time, never remembered by base URL: a later test's server
        # may be given the same HTTP port with another gRPC port.
        card = self.client.get(self.url + "/.well-known/agent-card.json").json()
        (self.target,) = {i["url"] for i in card["supportedInterfaces"]
                          if i["protocolBinding"] == "GRPC"}

    def request(self, call: c.Call) -> tuple[str, Any]:
        """(RPC name, request message) of ``call``."""
        raise NotImplementedError

    def result(self, call: c.Call, response: Any) -> c.Result:
        raise NotImplementedError

    def item(self, doc: dict[str, Any]) -> StreamItem:
        raise NotImplementedError

    def _metadata(self, last_event_id: int | None = None) -> list[tuple[str, str]]:
        out = [(k.lower(), v) for k, v in self._all_headers(self.headers)]
        if not any(k == "a2a-version" for k, _ in out):  # the driver's own unless told
            out.append(("a2a-version", self.version))
        if last_event_id is not None:
            out.append(("last-event-id", str(last_event_id)))
        return out

    def _method(self, rpc: str, request: Any, streaming: bool) -> Any:
        from google.protobuf import message_factory

        method = self.pb.DESCRIPTOR.services_by_name["A2AService"].methods_by_name[rpc]
        response = message_factory.GetMessageClass(method.output_type)
        channel = self.loop.channel(self.target)
        make = channel.unary_stream if streaming else channel.unary_unary
        return make(f"/{self.service}/{rpc}", request_serializer=type(request).SerializeToString,
                    response_deserializer=response.FromString)

    def call(self, call: c.Call) -> c.Result:
        rpc, request = self.request(call)
        return self.result(call, self.unary(rpc, request))

    def unary(self, rpc: str, request: Any) -> Any:
        """``request`` (a message of the service's proto, sent as it is) to ``rpc``: its
        response, or ``Refused``."""
        import grpc

        method = self._method(rpc, request, False)

        async def go() -> Any:
            return await method(request, metadata=self._metadata(), timeout=30)

        try:
            return self.loop.run(go())
        except grpc.aio.AioRpcError as exc:
            raise self._refused_rpc(exc) from None

    def message_of(self, rpc: str, doc: dict[str, Any]) -> Any:
        """The request message of ``rpc`` that ``doc`` (its ProtoJSON) describes."""
        from google.protobuf import json_format, message_factory

        method = self.pb.DESCRIPTOR.services_by_name["A2AService"].methods_by_name[rpc]
        request = message_factory.GetMessageClass(method.input_type)()
        return json_format.ParseDict(doc, request)

    def corrupted(self, call: c.Call) -> Iterator[tuple[str, Refused | None]]:
        import grpc

        rpc, request = self.request(call)
        channel = self.loop.channel(self.target)
        # the bytes as they are: protobuf would not write a string that is not UTF-8
        method = channel.unary_unary(f"/{self.service}/{rpc}",
                                     request_serializer=lambda data: data,
                                     response_deserializer=lambda data: data)

        async def go(data: bytes) -> Any:
            return await method(data, metadata=self._metadata(), timeout=30)

        for where, data in token_corruptions(request.SerializeToString()):
            try:
                self.loop.run(go(data))
            except grpc.aio.AioRpcError as exc:
                yield where, self._refused_rpc(exc)
            else:
                yield where, None

    def oversized(self, call: c.Call) -> Refused | None:
        """A message over the server's receive limit is refused by the gRPC library
        before any handler reads it: its status and text, without A2A details."""
        import grpc

        rpc, request = self.request(call)
        method = self._method(rpc, request, False)

        async def go() -> Any:
            return await method(request, metadata=self._metadata(), timeout=30)

        try:
            self.loop.run(go())
        except grpc.aio.AioRpcError as exc:
            if dict(exc.trailing_metadata() or ()).get("grpc-status-details-bin"):
                return self._refused_rpc(exc)
            return Refused(exc.code().name, "", exc.details() or "", None)  # type: ignore[arg-type]
        return None

    def stream(self, call: c.SendMessage | c.SubscribeToTask, *, last_event_id: int | None = None,
               limit: int | None = None) -> list[tuple[int | None, StreamItem]]:
        import grpc
        from google.protobuf import json_format

        from interlingua.bindings.grpc import EVENT_ID_KEY

        rpc, request = self.request(call)
        method = self._method(rpc, request, True)

        async def go() -> list[Any]:
            got: list[Any] = []
            stream = method(request, metadata=self._metadata(last_event_id))
            try:
                async with asyncio.timeout(30):
                    async for response in stream:
                        got.append(response)
                        if limit is not None and len(got) >= limit:
                            break
            finally:
                stream.cancel()
            return got

        try:
            responses = self.loop.run(go())
        except grpc.aio.AioRpcError as exc:
            raise self._refused_rpc(exc) from None
        out: list[tuple[int | None, StreamItem]] = []
        seq: int | None = None
        for response in responses:
            payload = getattr(response, response.WhichOneof("payload"))
            # an event without an id leaves the reader's last one where it was, as on SSE
            if EVENT_ID_KEY in payload.metadata:
                seq = int(payload.metadata[EVENT_ID_KEY])
                # the sequence number is the stream's, not the item's
                del payload.metadata[EVENT_ID_KEY]
            if not payload.metadata:
                payload.ClearField("metadata")
            out.append((seq, self.item(json_format.MessageToDict(response))))
        return out

    def _refused_rpc(self, exc: Any) -> Refused:
        from tests.bindings.test_grpc import _Status

        trailers = dict(exc.trailing_metadata() or ())
        details = trailers.get("grpc-status-details-bin")
        assert details, f"{exc.code()} without grpc-status-details-bin: {exc.details()}"
        status = _Status.parse(details)
        assert status["code"] == exc.code().value[0] and status["message"] == exc.details()
        (info,) = status["details"]
        assert info["domain"] == "a2a-protocol.org", status
        return Refused(exc.code().name, info["reason"], exc.details(), status,  # type: ignore[arg-type]
                       trailers.get("www-authenticate"))


class GRPC10(GRPC):
    name = "grpc-1.0"
    version = "1.0"
    service = "lf.a2a.v1.A2AService"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2

        self.pb = interlingua_lf_a2a_v1_pb2
        super().__init__(*args, **kwargs)
        self.codec = get_codec("1.0")

    def request(self, call: c.Call) -> tuple[str, Any]:
        from google.protobuf import json_format, message_factory

        if self.tenant is not None and hasattr(call, "tenant"):
            call.tenant = self.tenant
        rpc, params = self.codec.encode_call(call)
        method = self.pb.DESCRIPTOR.services_by_name["A2AService"].methods_by_name[rpc]
        request = message_factory.GetMessageClass(method.input_type)()
        # protobuf's own JSON reader: the v1.0 params are the request message's ProtoJSON
        json_format.Parse(self._edited(params), request)
        return rpc, request

    def result(self, call: c.Call, response: Any) -> c.Result:
        from google.protobuf import json_format

        return self.codec.decode_result(call, json_format.MessageToJson(response).encode())

    def item(self, doc: dict[str, Any]) -> StreamItem:
        return self.codec.decode_stream_item(_enc(doc))


class GRPC03(GRPC):
    name = "grpc-0.3"
    version = "0.3"
    service = "a2a.v1.A2AService"
    lists_tasks = False
    has_tenants = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2

        self.pb = interlingua_a2a_v1_pb2
        super().__init__(*args, **kwargs)
        self.codec = V03ProtoJSONCodec()

    def request(self, call: c.Call) -> tuple[str, Any]:
        from google.protobuf import json_format

        pb = self.pb
        if isinstance(call, c.SendMessage):
            request = json_format.Parse(self.codec.encode_call(call)[1], pb.SendMessageRequest(),
                                        ignore_unknown_fields=True)  # v0.3 part metadata
            return ("SendStreamingMessage" if call.streaming else "SendMessage"), request
        if isinstance(call, c.GetTask):
            return "GetTask", pb.GetTaskRequest(name=f"tasks/{call.id}",
                                                history_length=call.history_length or 0)
        if isinstance(call, c.CancelTask):
            return "CancelTask", pb.CancelTaskRequest(name=f"tasks/{call.id}")
        if isinstance(call, c.SubscribeToTask):
            return "TaskSubscription", pb.TaskSubscriptionRequest(name=f"tasks/{call.id}")
        configs = "tasks/{}/pushNotificationConfigs"
        if isinstance(call, c.SetPushConfig):
            # the codec writes the whole CreateTaskPushNotificationConfigRequest
            return "CreateTaskPushNotificationConfig", json_format.Parse(
                self.codec.encode_call(call)[1], pb.CreateTaskPushNotificationConfigRequest())
        if isinstance(call, c.GetPushConfig):
            name = configs.format(call.task_id) + f"/{call.config_id}"
            return "GetTaskPushNotificationConfig", pb.GetTaskPushNotificationConfigRequest(
                name=name)
        if isinstance(call, c.ListPushConfigs):
            return "ListTaskPushNotificationConfig", pb.ListTaskPushNotificationConfigRequest(
                parent=f"tasks/{call.task_id}")
        if isinstance(call, c.DeletePushConfig):
            name = configs.format(call.task_id) + f"/{call.config_id}"
            return "DeleteTaskPushNotificationConfig", \
                pb.DeleteTaskPushNotificationConfigRequest(name=name)
        if isinstance(call, c.GetExtendedCard):
            return "GetAgentCard", pb.GetAgentCardRequest()
        raise TypeError(call)

    def result(self, call: c.Call, response: Any) -> c.Result:
        from google.protobuf import json_format

        if isinstance(call, c.GetExtendedCard):  # the proto's card, read as the client reads it
            from interlingua.core.dialects.v0_3_protojson import card_from_proto

            doc = card_from_proto(json_format.MessageToDict(response))
            return self.codec.decode_result(call, _enc(doc))
        return self.codec.decode_result(call, json_format.MessageToJson(response).encode())

    def item(self, doc: dict[str, Any]) -> StreamItem:
        return self.codec.decode_stream_item(_enc(doc))


# ------------------------------------------------------------------------- MQTT


class MQTT(Driver):
    """The mesh: JSON-RPC requests in its dialect (SAM's) on the agent's request topic
    of an MQTT broker, each answered on a response topic of the driver's own. Its
    URL is the agent's mesh address, ``mqtt://host:port/namespace/agent``."""

    name = "mqtt-sam"
    version = "sam"
    lists_tasks = False
    has_tenants = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        global _loop
        super().__init__(*args, **kwargs)
        from interlingua.mesh.broker import Broker
        from interlingua.mesh.codec import MESH_CODEC
        from interlingua.mesh.topics import Topics, parse_mesh_url

        if _loop is None:
            _loop = _Loop()
        self.loop = _loop
        self.codec = MESH_CODEC
        where = parse_mesh_url(self.url)
        assert where.namespace and where.agent, self.url
        self.agent = where.agent
        self.topics = Topics(where.namespace)
        me = "parity-" + uuid.uuid4().hex[:10]
        self.inbox = self.topics.client_response(me)
        self.broker = Broker(where, me)
        self.waiting: dict[bytes, asyncio.Future[bytes]] = {}
        self.task_ids: dict[bytes, str] = {}

        async def start() -> None:
            await self.broker.connect()
            await self.broker.subscribe(self.inbox)
            self.reader = asyncio.get_running_loop().create_task(self._read())

        self.loop.run(start())

    async def _read(self) -> None:
        async for msg in self.broker.messages():
            waiter = self.waiting.pop(msg.correlation or b"", None)
            if waiter is not None and not waiter.done():
                waiter.set_result(msg.payload)

    def close(self) -> None:
        async def stop() -> None:
            self.reader.cancel()
            await self.broker.close()

        self.loop.run(stop())

    def exchange(self, payload: bytes) -> Any:
        """Publish one request; the answer on the driver's response topic, decoded."""
        correlation = uuid.uuid4().bytes

        async def go() -> bytes:
            waiter = self.waiting[correlation] = asyncio.get_running_loop().create_future()
            await self.broker.publish(self.topics.request(self.agent), payload,
                                      dict(self.headers), response_topic=self.inbox,
                                      correlation=correlation)
            return await asyncio.wait_for(waiter, 20)

        return _any.decode(self.loop.run(go()))

    def _body(self, call: c.Call) -> bytes:
        method, params = self.codec.encode_call(call)
        return (b'{"jsonrpc":"2.0","id":"' + self._rid(call).encode() + b'","method":'
                + _enc(method) + b',"params":' + params + b"}")

    def _rid(self, call: c.Call) -> str:
        """The request's id. A send's names the task it makes (SAM's requesters choose
        it): a message sent again by this driver is sent with the id it had, as a
        requester's retry repeats its request."""
        if isinstance(call, c.SendMessage):
            return self.task_ids.setdefault(_enc(call.message), uuid.uuid4().hex)
        return uuid.uuid4().hex

    def _answer(self, doc: Any) -> Refused | None:
        if "error" not in doc:
            return None
        err = doc["error"]
        return Refused("reply", str(err.get("code")), err.get("message", ""), doc)

    def call(self, call: c.Call) -> c.Result:
        doc = self.exchange(self._body(call))
        refused = self._answer(doc)
        if refused is not None:
            raise refused
        return self.codec.decode_result(call, _enc(doc["result"]))

    def corrupted(self, call: c.Call) -> Iterator[tuple[str, Refused | None]]:
        for where, body in json_corruptions(self._body(call)):
            yield where, self._answer(self.exchange(body))


# ---------------------------------------------------------------- A2A 1.1 (draft)


class JSONRPC11(JSONRPC):
    """JSON-RPC asking for A2A 1.1 (the v1.0 methods, with generations)."""

    name = "jsonrpc-1.1"
    version = "1.1"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.headers.setdefault("A2A-Version", "1.1")


class REST11(REST10):
    name = "rest-1.1"
    version = "1.1"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.headers["A2A-Version"] = "1.1"
        self.codec = get_codec("1.1")

    def _route(self, call: c.Call) -> tuple[str, str, dict[str, Any], bytes | None]:
        method, path, query, body = super()._route(call)
        if isinstance(call, c.GetTask) and call.current_generation is not None:
            query["currentGeneration"] = str(call.current_generation)
        return method, path, query, body


class GRPC11(GRPC10):
    name = "grpc-1.1"
    version = "1.1"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codec = get_codec("1.1")


#: the drivers that ask for 1.1 (not in DRIVERS: the parity suite compares 1.0 answers)
DRIVERS_11: dict[str, type[Driver]] = {d.name: d for d in (JSONRPC11, REST11, GRPC11)}

DRIVERS: dict[str, type[Driver]] = {d.name: d for d in (JSONRPC10, JSONRPC03, REST10, REST03,
                                                          GRPC10, GRPC03)}
