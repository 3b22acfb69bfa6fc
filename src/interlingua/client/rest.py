"""The HTTP+JSON (REST) binding of the client: A2A 1.0 (DIALECTS.md §g.1) and
A2A 0.3 (§g.2, the same routes under ``/v1``, bodies in v0.3-ProtoJSON).

A call is encoded by the v1.0 codec exactly as for JSON-RPC (ProtoJSON); its
request message then becomes a route: the ids go into the path, the other
members of a GET into the query, the whole message of a POST into the body
(the server checks that the body's ids agree with the path's). A tenant puts
its name in front of the path. Answers are the bare result messages; errors
are ``google.rpc.Status`` objects whose ErrorInfo ``reason`` names the error,
read into the same ``A2AError`` classes the JSON-RPC binding raises (v0.3's
``{"message", "type"}`` bodies by their type's name, the JavaScript SDK's
``{"code", "message"}`` ones by their v0.3 JSON-RPC code, a v1.0 body by its
reason, a bare ``{"message"}`` by v0.3's HTTP status, and a ``Status`` without an
ErrorInfo by its ``status`` name, as gRPC reads that code). A route
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

from ..core.calls import Call, Result, SendMessage, SetPushConfig, SubscribeToTask
from ..core.dialects import Codec, get_codec
from ..core.dialects.v0_3_protojson import V03ProtoJSONCodec
from ..core.errors import (
    A2AError,
    InvalidAgentResponse,
    InvalidParams,
    MethodNotFound,
)
from ..core.reading import past_bom
from ..core.sse import SSEEvent
from ..core.urls import url_below
from .card import Endpoint
from .encoding import encode_call
from .errors import AgentUnreachable, BadResponse, ClientError, DialectMismatch
from .generations import answered, mismatch_in, mismatch_of_status
from .grpc_status import error_of_code
from .jsonrpc import HTTP_ERRORS, snippet, version_refusal_or
from .stream import Connection, _seq, lagged_or, note_retry_after
from .transport import HTTPReply, StreamReply, Transport

__all__ = ["RESTBinding", "route_of", "route_of_v03"]

_json = msgspec.json.Decoder()
_encode = msgspec.json.encode
_MEDIA = "application/a2a+json"
#: the v0.3 JSON-RPC methods, which name the operations of v0.3's routes
_V03_METHODS = V03ProtoJSONCodec.methods


def _wraps_config(body: bytes) -> bool:
    """The body is a whole CreateTaskPushNotificationConfigRequest (v0.3's own), with the
    config under ``config``: what some v0.3 servers read, others reading the config alone."""
    doc = _json.decode(body)
    return isinstance(doc, dict) and isinstance(doc.get("config"), dict)


def _seg(value: Any) -> str:
    """``value`` as one path segment: a segment of dots alone escaped too, which a
    URL would otherwise take for "this" or "the parent" and drop (task ``..``)."""
    text = str(value)
    return "%2E" * len(text) if text in (".", "..") else quote(text, safe="")


def _id_seg(value: Any, key: str, method: str) -> str:
    """The segment of the id ``value`` (the call's ``key``): an empty one is refused as a
    server refuses it (the path would name another route: ``/tasks/`` lists tasks)."""
    if value is None or value == "":
        raise InvalidParams(f"Invalid params for {method}: params.{key} is required and "
                            "must not be empty")
    return _seg(value)


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
        verb, path = "GET", f"/tasks/{_id_seg(doc.get('id'), 'id', method)}"
        query = {k: doc[k] for k in ("historyLength", "currentGeneration") if k in doc}
    elif method == "ListTasks":
        verb, path = "GET", "/tasks"
        query = {k: v for k, v in doc.items() if k != "tenant"}
    elif method == "CancelTask":
        verb, path, body = "POST", f"/tasks/{_id_seg(doc.get('id'), 'id', method)}:cancel", params
    elif method == "SubscribeToTask":
        verb, path = "GET", f"/tasks/{_id_seg(doc.get('id'), 'id', method)}:subscribe"
    elif method == "CreateTaskPushNotificationConfig":
        verb, body = "POST", params
        path = f"/tasks/{_id_seg(doc.get('taskId'), 'taskId', method)}/pushNotificationConfigs"
    elif method in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        config_id = doc.get("id")
        if not config_id:
            raise DialectMismatch(
                "asking for a task's push config over HTTP+JSON needs the config's id")
        verb = "GET" if method.startswith("Get") else "DELETE"
        path = (f"/tasks/{_id_seg(doc.get('taskId'), 'taskId', method)}/pushNotificationConfigs/"
                f"{_seg(config_id)}")
    elif method == "ListTaskPushNotificationConfigs":
        verb = "GET"
        path = f"/tasks/{_id_seg(doc.get('taskId'), 'taskId', method)}/pushNotificationConfigs"
        query = {k: doc[k] for k in ("pageSize", "pageToken") if k in doc}
    elif method == "GetExtendedAgentCard":
        verb, path = "GET", "/extendedAgentCard"
    else:
        raise DialectMismatch(f"{method} has no HTTP+JSON route")
    if query:
        path += "?" + urlencode({k: _query_value(v) for k, v in query.items()})
    return verb, prefix + path, body


#: the v0.3 methods whose routes name a task
_V03_TASK_ROUTES = frozenset({
    "tasks/get", "tasks/cancel", "tasks/resubscribe", "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/delete"})


def route_of_v03(method: str, params: bytes, call: Call) -> tuple[str, str, bytes | None]:
    """The v0.3 route (§g.2) of a call, as ``route_of``: its v0.3 JSON-RPC method
    and its params in v0.3-ProtoJSON."""
    doc = _json.decode(params) if params else {}
    if not isinstance(doc, dict):
        doc = {}
    if method in ("message/send", "message/stream"):
        verb = "POST"
        path = "/v1/message:send" if method == "message/send" else "/v1/message:stream"
        return verb, path, params
    if method == "agent/getAuthenticatedExtendedCard":
        return "GET", "/v1/card", None
    if method not in _V03_TASK_ROUTES:
        raise DialectMismatch(f"{method} has no HTTP+JSON route in A2A 0.3")
    if method == "tasks/pushNotificationConfig/set":
        assert isinstance(call, SetPushConfig)
        task = f"/v1/tasks/{_id_seg(call.task_id, 'taskId', method)}"
    else:
        task = f"/v1/tasks/{_id_seg(doc.get('id'), 'id', method)}"
    configs = task + "/pushNotificationConfigs"
    if method == "tasks/get":
        query = {k: doc[k] for k in ("historyLength",) if k in doc}
        return "GET", task + ("?" + urlencode(query) if query else ""), None
    if method == "tasks/cancel":
        return "POST", task + ":cancel", params
    if method == "tasks/resubscribe":
        return "GET", task + ":subscribe", None
    if method == "tasks/pushNotificationConfig/set":
        return "POST", configs, params
    if method == "tasks/pushNotificationConfig/list":
        return "GET", configs, None
    if method in ("tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/delete"):
        config_id = doc.get("pushNotificationConfigId")
        if not config_id:
            raise DialectMismatch(
                "asking for a task's push config over HTTP+JSON needs the config's id")
        verb = "GET" if method.endswith("/get") else "DELETE"
        return verb, f"{configs}/{_seg(config_id)}", None
    raise DialectMismatch(f"{method} has no HTTP+JSON route in A2A 0.3")


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
        name = get_codec(endpoint.dialect).protojson
        if name is None:
            raise DialectMismatch(f"HTTP+JSON is spoken in A2A 1.0 and 0.3, not {endpoint.dialect}")
        # 1.1: its own codec, whose JSON is ProtoJSON as v1.0's is
        codec = get_codec(endpoint.version or name)
        method, params = encode_call(codec, call, endpoint.dialect, endpoint.a2a_version)
        # v0.3's methods have the v0.3 routes (§g.2), v1.0's the v1.0 ones (§g.1)
        if method in _V03_METHODS:
            verb, path, body = route_of_v03(method, params, call)
        else:
            verb, path, body = route_of(method, params)
        headers = {**self._headers, "Accept": accept, "A2A-Version": endpoint.a2a_version}
        if body is not None:
            headers["Content-Type"] = codec.media_type
        return codec, verb, url_below(endpoint.url, path), body, headers

    async def call(self, endpoint: Endpoint, call: Call) -> tuple[Result, bytes]:
        codec, verb, url, body, headers = self._request(
            endpoint, call, f"{_MEDIA}, application/json")
        reply = await self._transport.request(verb, url, body, headers)
        try:
            raw = _result_of(reply, codec, "/tasks/" in url)
        except InvalidParams:
            if not isinstance(call, SetPushConfig) or body is None or not _wraps_config(body):
                raise
            # v0.3 servers disagree on this body: a2a-sdk's and @a2a-js/sdk 0.3's read the
            # whole CreateTaskPushNotificationConfigRequest (sent first), @a2a-js/sdk 1.x's
            # v0.3 routes only its `config`, as the proto's HTTP mapping says (`body: "config"`).
            body = msgspec.json.encode(_json.decode(body)["config"])
            reply = await self._transport.request(verb, url, body, headers)
            raw = _result_of(reply, codec, True)
        try:
            result = codec.decode_result(answered(call), raw)
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
        answer = HTTPReply(reply.status, reply.headers, content, reply.url)
        try:
            raw = _result_of(answer, codec, "/tasks/" in url)
        except (A2AError, ClientError) as exc:
            note_retry_after(exc, answer)  # a 503 or 429: when to resume
            raise
        return RESTConnection(codec, reply.url, single=raw)


class RESTConnection(Connection):
    """A stream whose events are bare ``StreamResponse`` objects, or error bodies."""

    def __init__(self, codec: Codec, url: str, *, reply: StreamReply | None = None,
                 single: bytes | None = None) -> None:
        super().__init__(codec, url, reply=reply, single=single)

    def _event(self, ev: SSEEvent) -> tuple[int | None, bytes]:
        try:
            doc = _json.decode(ev.data)
        except msgspec.DecodeError:
            raise BadResponse(
                f"{self.url} sent a stream event that is not JSON: {ev.data[:120]!r}"
            ) from None
        if ev.event == "error" or (isinstance(doc, dict) and "error" in doc):
            err = self.codec.decode_http_error(doc)
            if err is not None:
                raise lagged_or(err)
            if not self.codec.named_stream_errors:
                # a v0.3 body without the resume hint (a peer's: ours carries it in
                # "data", as v1.0's does in its ErrorInfo): read as a broken stream
                message = doc.get("message") if isinstance(doc, dict) else None
                raise AgentUnreachable(f"{self.url} broke off the stream: {message}")
            raise BadResponse(f"{self.url} sent an error event without an A2A reason")
        return _seq(ev.id), ev.data.encode()


def _bare_status(error: Any, reply: HTTPReply) -> A2AError | None:
    """A ``google.rpc.Status`` without the ErrorInfo that names its error (a proxy's, a
    non-compliant peer's) -> the error its ``status`` name stands for, the one gRPC
    raises for that code; None for no such Status (then the HTTP status decides)."""
    if not isinstance(error, dict) or not isinstance(error.get("status"), str):
        return None
    code, message = error["status"], error.get("message")
    return error_of_code(code, message if isinstance(message, str) else "",
                         f"HTTP {reply.status} {code} from {reply.url}")


def _result_of(reply: HTTPReply, codec: Codec, task_route: bool = False) -> bytes:
    """The body of a successful answer; an error body is raised as its error
    (``task_route``: the route names a task, so a v0.3 404 says it is not found)."""
    content = past_bom(reply.content)  # (RFC 8259 §8.1)
    if reply.ok:
        if not content.strip():
            return b"{}"
        if reply.content_type and not (reply.content_type.endswith("json")):
            raise BadResponse(
                f"{reply.url} answered {reply.content_type}, not JSON{snippet(reply)}",
                status=reply.status,
            )
        return content
    doc: Any = None
    if content.strip():
        try:
            doc = _json.decode(content)
        except msgspec.DecodeError:
            doc = None
    err = codec.decode_http_error(doc, reply.status, task_route)
    if err is not None:  # v0.3's, which has no error of its own for it: -32600 saying so
        err = version_refusal_or(err)
    if err is None and isinstance(doc, dict):
        # a 1.1 error, by its ErrorInfo; else a Status naming only its code
        err = mismatch_of_status(doc.get("error")) or _bare_status(doc.get("error"), reply)
    if err is not None:
        raise mismatch_in(err)
    cls = HTTP_ERRORS.get(reply.status)
    if cls is not None:
        raise cls(f"{cls.default_message} (HTTP {reply.status} from {reply.url})")
    if reply.status in (404, 405):
        # no such route here: this agent does not speak HTTP+JSON at this URL
        raise MethodNotFound(f"{reply.url} answered HTTP {reply.status}{snippet(reply)}")
    raise BadResponse(
        f"{reply.url} answered HTTP {reply.status}{snippet(reply)}", status=reply.status
    )
