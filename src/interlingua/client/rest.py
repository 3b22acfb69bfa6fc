"""The HTTP+JSON (REST) binding of the client, A2A 1.0 (DIALECTS.md §g.1).

A call is encoded by the v1.0 codec exactly as for JSON-RPC (ProtoJSON); its
request message then becomes a route: the ids go into the path, the other
members of a GET into the query, the whole message of a POST into the body
(the server checks that the body's ids agree with the path's). A tenant puts
its name in front of the path. Answers are the bare result messages; errors
are ``google.rpc.Status`` objects whose ErrorInfo ``reason`` names the error,
read into the same ``A2AError`` classes the JSON-RPC binding raises. A route
the agent does not serve (404 or 405 without such a body) is
``MethodNotFound``, which lets the client fall back to another binding.
Streams are SSE whose events carry bare ``StreamResponse`` objects, resumed
with ``Last-Event-ID`` as JSON-RPC streams are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

import msgspec

from ..core.calls import Call, Result, SendMessage, SubscribeToTask
from ..core.dialects import Codec, get_codec
from ..core.dialects.v1_0 import decode_status
from ..core.errors import A2AError, InvalidAgentResponse, MethodNotFound, UnsupportedOperation
from ..core.sse import SSEEvent
from .card import Endpoint
from .errors import BadResponse, DialectMismatch
from .jsonrpc import HTTP_ERRORS, snippet
from .stream import Connection, _seq, lagged_or
from .transport import HTTPReply, Transport

__all__ = ["RESTBinding", "route_of"]

_json = msgspec.json.Decoder()
_encode = msgspec.json.encode
_MEDIA = "application/a2a+json"


def _seg(value: Any) -> str:
    return quote(str(value), safe="")


def route_of(method: str, params: bytes) -> tuple[str, str, bytes | None]:
    """The v1.0 route of a call (its method and ProtoJSON params): the HTTP
    method, the path with its query, and the body (None for GET and DELETE)."""
    doc = _json.decode(params) if params else {}
    if not isinstance(doc, dict):
        doc = {}
    tenant = doc.get("tenant")
    prefix = "/" + _seg(tenant) if tenant else ""
    body: bytes | None = None
    query: dict[str, Any] = {}
    if method in ("SendMessage", "SendStreamingMessage"):
        verb = "POST"
        path = "/message:send" if method == "SendMessage" else "/message:stream"
        body = params
    elif method == "GetTask":
        verb, path = "GET", f"/tasks/{_seg(doc['id'])}"
        query = {k: doc[k] for k in ("historyLength",) if k in doc}
    elif method == "ListTasks":
        verb, path = "GET", "/tasks"
        query = {k: v for k, v in doc.items() if k != "tenant"}
    elif method == "CancelTask":
        verb, path, body = "POST", f"/tasks/{_seg(doc['id'])}:cancel", params
    elif method == "SubscribeToTask":
        verb, path = "GET", f"/tasks/{_seg(doc['id'])}:subscribe"
    elif method == "CreateTaskPushNotificationConfig":
        verb, body = "POST", params
        path = f"/tasks/{_seg(doc['taskId'])}/pushNotificationConfigs"
    elif method in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        config_id = doc.get("id")
        if not config_id:
            raise DialectMismatch(
                "asking for a task's push config over HTTP+JSON needs the config's id")
        verb = "GET" if method.startswith("Get") else "DELETE"
        path = f"/tasks/{_seg(doc['taskId'])}/pushNotificationConfigs/{_seg(config_id)}"
    elif method == "ListTaskPushNotificationConfigs":
        verb, path = "GET", f"/tasks/{_seg(doc['taskId'])}/pushNotificationConfigs"
        query = {k: doc[k] for k in ("pageSize", "pageToken") if k in doc}
    elif method == "GetExtendedAgentCard":
        verb, path = "GET", "/extendedAgentCard"
    else:
        raise DialectMismatch(f"{method} has no HTTP+JSON route")
    if query:
        path += "?" + urlencode({k: _query_value(v) for k, v in query.items()})
    return verb, prefix + path, body


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class RESTBinding:
    """Calls as HTTP+JSON requests below the endpoint's base URL."""

    def __init__(self, transport: Transport, headers: Mapping[str, str]) -> None:
        self._transport = transport
        self._headers = headers

    def _request(self, endpoint: Endpoint, call: Call, accept: str
                 ) -> tuple[Codec, str, str, bytes | None, dict[str, str]]:
        codec = get_codec(endpoint.dialect)
        try:
            method, params = codec.encode_call(call)
        except UnsupportedOperation as exc:
            raise DialectMismatch(
                f"{type(call).__name__} has no counterpart in A2A {endpoint.dialect}: "
                f"{exc.message}") from None
        verb, path, body = route_of(method, params)
        headers = {**self._headers, "Accept": accept, "A2A-Version": endpoint.dialect}
        if body is not None:
            headers["Content-Type"] = _MEDIA
        return codec, verb, endpoint.url.rstrip("/") + path, body, headers

    async def call(self, endpoint: Endpoint, call: Call) -> tuple[Result, bytes]:
        codec, verb, url, body, headers = self._request(
            endpoint, call, f"{_MEDIA}, application/json")
        reply = await self._transport.request(verb, url, body, headers)
        raw = _result_of(reply)
        try:
            result = codec.decode_result(call, raw)
        except InvalidAgentResponse as exc:
            raise BadResponse(f"{reply.url}: {exc.message}", status=reply.status) from None
        return result, raw

    async def open_stream(
        self, endpoint: Endpoint, call: SendMessage | SubscribeToTask, last_event_id: int | None
    ) -> Connection:
        codec, verb, url, body, headers = self._request(
            endpoint, call, f"text/event-stream, {_MEDIA}, application/json")
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        reply = await self._transport.request_stream(verb, url, body, headers)
        if reply.content_type == "text/event-stream" and 200 <= reply.status < 300:
            return RESTConnection(codec, reply.url, reply=reply)
        # An error before the stream began, or one answer instead of a stream.
        try:
            content = await reply.read()
        finally:
            await reply.aclose()
        raw = _result_of(HTTPReply(reply.status, reply.headers, content, reply.url))
        return RESTConnection(codec, reply.url, single=raw)


class RESTConnection(Connection):
    """A stream whose events are bare ``StreamResponse`` objects, or error bodies."""

    def _event(self, ev: SSEEvent) -> tuple[int | None, bytes]:
        try:
            doc = _json.decode(ev.data)
        except msgspec.DecodeError:
            raise BadResponse(
                f"{self.url} sent a stream event that is not JSON: {ev.data[:120]!r}"
            ) from None
        if ev.event == "error" or (isinstance(doc, dict) and "error" in doc):
            err = decode_status(doc)
            if err is None:
                raise BadResponse(f"{self.url} sent an error event without an A2A reason")
            raise lagged_or(err)
        return _seq(ev.id), ev.data.encode()


def _result_of(reply: HTTPReply) -> bytes:
    """The body of a successful answer; an error body is raised as its error."""
    if reply.ok:
        if not reply.content.strip():
            return b"{}"
        if reply.content_type and not (reply.content_type.endswith("json")):
            raise BadResponse(
                f"{reply.url} answered {reply.content_type}, not JSON{snippet(reply)}",
                status=reply.status,
            )
        return reply.content
    doc: Any = None
    if reply.content.strip():
        try:
            doc = _json.decode(reply.content)
        except msgspec.DecodeError:
            doc = None
    err: A2AError | None = decode_status(doc)
    if err is not None:
        raise err
    cls = HTTP_ERRORS.get(reply.status)
    if cls is not None:
        raise cls(f"{cls.default_message} (HTTP {reply.status} from {reply.url})")
    if reply.status in (404, 405):
        # no such route here: this agent does not speak HTTP+JSON at this URL
        raise MethodNotFound(f"{reply.url} answered HTTP {reply.status}{snippet(reply)}")
    raise BadResponse(
        f"{reply.url} answered HTTP {reply.status}{snippet(reply)}", status=reply.status
    )
