"""The HTTP+JSON endpoint, as a plain ASGI callable: framing only.

A request's route names its operation and its dialect (``routes.py``); the path's
ids, the query and the body become the params of that operation, which the
dialect's codec decodes exactly as it decodes JSON-RPC params (v1.0's ProtoJSON
codec serves both bindings). Everything between the framing and the engine
(authentication, tenant, ``RequestInfo``, version check, streaming capability) is
the front door's (``server/dispatch.py``), as for JSON-RPC. Answers are the
codec's encodings; streams are SSE with bare ``StreamResponse`` objects as data,
with the event ids, ``Last-Event-ID`` replay and heartbeats of JSON-RPC streams.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from functools import partial
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_to_bytes

import msgspec

from ...core import codings
from ...core.calls import Call, DeletePushConfig, GetExtendedCard
from ...core.dialects import Codec, get_codec
from ...core.dialects._common import check_utf8
from ...core.dialects.as_sent import Path, as_spelt, renamed
from ...core.errors import (
    A2AError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    quoted,
)
from ...core.model import AgentCard
from ...core.origins import CrossOrigin, Origins
from ...core.reading import json_fault, without_bom
from ...server.dispatch import FrontDoor, Inbound, Items, parse_version
from ...server.settings import ServiceSettings
from ..http.request import (
    CHUNK,
    BodyTooLarge,
    check_content_type,
    read_body,
    until_gone,
    version_of,
    write_body,
)
from ..http.request_headers import RequestHeaders, given_once
from ..http.sse_writer import Envelope, write_sse
from .errors import MethodNotAllowed, error_body, http_status
from .routes import V1_OPS, Match, NoRoute, match

#: the v0.3 route of the caller's card, answered with the public one when there is
#: no extended card (``GET /v1/card``)
_V03_CARD_OP = "agent/getAuthenticatedExtendedCard"

__all__ = ["RESTEndpoint", "refuse_verb"]

log = logging.getLogger("interlingua.server")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
#: the caller's card and the JSON-RPC URL it names, for ``GET /v1/card``
CardOf = Callable[[Scope, Mapping[str, str]], tuple[AgentCard, str]]

_any = msgspec.json.Decoder()
_encode = msgspec.json.encode

# query parameters per operation: name -> kind ("int", "bool", "str"). A v1.0
# request's ``tenant`` too, as any field its path does not hold (HTTP+JSON's
# transcoding): on the operations without a body.
_QUERY: dict[str, dict[str, str]] = {
    # currentGeneration: A2A 1.1 (draft), a long poll (taken in 1.0 requests too)
    "GetTask": {"historyLength": "int", "currentGeneration": "str", "tenant": "str"},
    "ListTasks": {"contextId": "str", "status": "str", "pageSize": "int", "pageToken": "str",
                  "historyLength": "int", "statusTimestampAfter": "str",
                  "includeArtifacts": "bool", "tenant": "str"},
    "ListTaskPushNotificationConfigs": {"pageSize": "int", "pageToken": "str", "tenant": "str"},
    "GetTaskPushNotificationConfig": {"tenant": "str"},
    "DeleteTaskPushNotificationConfig": {"tenant": "str"},
    "SubscribeToTask": {"tenant": "str"},
    "GetExtendedAgentCard": {"tenant": "str"},
    "tasks/get": {"historyLength": "int"},
}
# the snake_case proto names are read too, as ProtoJSON parsers read them
_SNAKE = {"history_length": "historyLength", "context_id": "contextId", "page_size": "pageSize",
          "page_token": "pageToken", "status_timestamp_after": "statusTimestampAfter",
          "include_artifacts": "includeArtifacts", "current_generation": "currentGeneration"}
_BOOLS = {"true": True, "1": True, "false": False, "0": False}


class _Answer:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        self.status = status
        self.body = body
        self.headers = headers


class _StreamAnswer:
    __slots__ = ("codec", "envelope", "stream")

    def __init__(self, codec: Codec, envelope: Envelope, stream: Items) -> None:
        self.codec = codec
        self.envelope = envelope
        self.stream = stream


def _error_event(codec: Codec, err: A2AError) -> bytes:
    return error_body(err, codec, http_status(err, codec))


#: stream items are the bare StreamResponse objects; errors the binding's error bodies
_ENVELOPE = Envelope(b"", b"", _error_event)


@functools.cache
def _content_type(codec: Codec) -> tuple[bytes, bytes]:
    return (b"content-type", codec.media_type.encode())


class RESTEndpoint:
    """HTTP+JSON framing in front of the front door."""

    def __init__(self, door: FrontDoor, settings: ServiceSettings, *,
                 card_of: CardOf | None = None,
                 other_paths: Mapping[str, tuple[str, ...]] | None = None) -> None:
        self.door = door
        self.settings = settings
        self.card_of = card_of
        #: paths the app serves otherwise (the JSON-RPC URL and its aliases): a wrong
        #: verb there is 405, even where a route's pattern would match the path
        self.other_paths = dict(other_paths or {})
        self.origins = Origins(settings.allowed_origins, [settings.public_url],
                               trust_forwarded=settings.trust_forwarded)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = await self.respond(scope, receive, send)
        if answer is not None:
            await write_sse(send, receive, answer.stream, answer.codec, answer.envelope)

    async def respond(self, scope: Scope, receive: Receive, send: Send) -> _StreamAnswer | None:
        """Answer the request, or return the stream that answers it (written by the
        caller once this frame is gone)."""
        door = self.door
        # Read here, not asked of the door: the engine has started (the app's
        # lifespan starts it) and nobody is authenticated, nearly always.
        if not door.engine.started:
            await door.ensure_started()
        headers = RequestHeaders(scope.get("headers", ()))
        path = _path_of(scope)
        raw_version = version_of(scope, headers)
        version = parse_version(raw_version) if raw_version else None
        method = scope["method"]
        try:
            served = self.other_paths.get(path)
            if served is not None:  # a wrong verb there: GET /tasks/send is no GetTask
                raise NoRoute(path, served)
            route = match(method, path, version=version)
        except NoRoute as exc:
            # (the path the caller sent, its mount's prefix too: /agents/{name}/…)
            await _send(send, self._no_route(method, path, exc, scope["path"]))
            return None
        codec = get_codec(route.codec)
        limit = self.settings.max_body_bytes
        try:
            body = await read_body(receive, limit, headers, self.origins)
        except BodyTooLarge:
            err = InvalidRequest(f"Request body is larger than the limit of {limit} bytes")
            await _send(send, self._error(err, codec, 413))
            return None
        except CrossOrigin as exc:
            await _send(send, self._error(exc, codec))
            return None
        except codings.CodingNotSupported as exc:
            refusal = self._error(InvalidRequest(str(exc)), codec, 415)
            refusal.headers.append(codings.ACCEPT_ENCODING)
            await _send(send, refusal)
            return None
        except codings.BadCoding as exc:
            await _send(send, self._error(ParseError(f"Parse error: {exc}"), codec))
            return None
        try:
            # Authenticated (and rate-limited) before anything is dispatched.
            if door.security.active:
                await door.admit(scope, headers, "rest")
        except A2AError as exc:
            if route.op == _V03_CARD_OP and self.card_of is not None \
                    and door.security.public_card_instead(exc):
                # a public card is read without credentials, as gRPC's GetAgentCard is
                try:
                    public = await self._v03_card(None, scope, headers)
                except A2AError as refused:  # a Host that names no host: 400
                    public = self._error(refused, codec)
                await _send(send, public)
                return None
            await _send(send, self._error(exc, codec))
            return None
        if not _utf8_path(scope):
            bad_path = ParseError("Parse error: the path is not valid UTF-8 once %-decoded")
            await _send(send, self._error(bad_path, codec))
            return None
        try:
            # a call may be held (a long poll) while its caller is there
            answer = await self._handle(route, codec, body, headers, scope, raw_version,
                                        version, partial(until_gone, receive))
        except A2AError as exc:
            answer = self._error(exc, codec)
        except Exception:
            log.exception("internal error handling %s %s", method, path)
            answer = self._error(InternalError(), codec)
        if isinstance(answer, _StreamAnswer):
            return answer
        await _send(send, answer)
        return None

    async def _handle(self, route: Match, codec: Codec, body: bytes, headers: Mapping[str, str],
                      scope: Scope, raw_version: str | None, version: str | None,
                      gone: Callable[[], Awaitable[object]]) -> _Answer | _StreamAnswer:
        door = self.door
        # admitted before the request was read (``respond``)
        inbound = Inbound(binding="rest", scope=scope, headers=headers, codec=codec,
                          decode=self._decode, payload=(route, body), raw_version=raw_version,
                          version=version, streaming=route.streaming, admitted=True,
                          last_event_id=given_once(headers, "last-event-id") if route.streaming
                          else None, gone=gone)
        if route.op == _V03_CARD_OP:
            return await self._v03_card(inbound, scope, headers)
        try:
            result = await door.enter(inbound)
        except InvalidParams as exc:
            if inbound.call is None:  # its decoding's refusal: named as sent already
                raise
            raise self._as_sent(inbound, exc) from None
        if isinstance(result, Items):
            return _StreamAnswer(codec, _ENVELOPE, result)
        call = inbound.call
        assert call is not None
        if isinstance(call, DeletePushConfig):
            out = b"{}"  # google.protobuf.Empty
        else:
            out = codec.encode_result(call, result)
            door.check_answer(len(out))
        return _Answer(200, out, [_content_type(codec)])

    def _decode(self, inbound: Inbound) -> Call:
        """The call of a request (``inbound.payload``: its route and body), with the
        tenant its path names (``inbound.tenant``)."""
        route, body = inbound.payload
        if not _blank(body):
            check_content_type(inbound.headers.get("content-type"),
                               "application/a2a+json or application/json")
        codec = inbound.codec
        sent: dict[str, str] = {}
        try:
            params = self._params(route, body, inbound.scope, sent)
            try:
                call: Call = codec.for_answer(codec.decode_call(route.op, params))
            except InvalidParams as exc:
                raise as_sent(exc, sent, body) from None
        except (InvalidParams, ParseError):
            # Only once a body is refused (nothing more on the usual path): one that
            # opens with a byte order mark is read without it (RFC 8259 §8.1 lets a
            # parser ignore it, and some clients send one); one that is no JSON at
            # all is a parse error, as on JSON-RPC, not params of the wrong shape.
            unmarked = without_bom(body)
            if unmarked is not None:
                inbound.payload = (route, unmarked)
                return self._decode(inbound)
            _check_json(body)
            raise
        inbound.tenant = self._tenant(route, call)
        return call

    def _as_sent(self, inbound: Inbound, exc: InvalidParams) -> InvalidParams:
        """A refusal of a call read already (an id no store can keep, a page token not
        of this server: named by their params paths, as the codecs name members),
        naming each member as the caller sent it, as ``_decode`` names its own: the
        query parameter, the body's member in the spelling it has there."""
        route, body = inbound.payload
        sent: dict[str, str] = {}
        try:
            self._params(route, body, inbound.scope, sent)
        except A2AError:  # (read once already: nothing to refuse, nothing better to say)
            pass
        return as_sent(exc, sent, body)

    # ------------------------------------------------------------------ params

    def _params(self, route: Match, body: bytes, scope: Scope,
                sent: dict[str, str] | None = None) -> bytes:
        """The params of the route's operation, as the codec reads them. ``sent``
        gets how the caller sent each member taken from the query or the path."""
        sent = {} if sent is None else sent
        op = route.op
        if op in ("SendMessage", "SendStreamingMessage", "message/send", "message/stream"):
            if _blank(body):
                raise InvalidParams("Invalid params: the request body must hold the message")
            return body
        doc: dict[str, Any] = {}
        if op in ("CancelTask", "CreateTaskPushNotificationConfig", "SubscribeToTask",
                  "tasks/cancel", "tasks/pushNotificationConfig/set", "tasks/resubscribe") \
                and not _blank(body):
            doc = _object(body)
        kinds = _QUERY.get(op)
        if kinds:
            doc.update(_query(scope, kinds, sent))
        _path_members(route, sent)
        if op in V1_OPS:  # v1.0's params name the task ``id`` or ``taskId``
            if op in ("GetTask", "CancelTask", "SubscribeToTask"):
                _put(doc, "id", route.task_id)
            elif route.task_id is not None:
                _put(doc, "taskId", route.task_id)
                if route.config_id is not None:
                    _put(doc, "id", route.config_id)
        else:
            if op == "tasks/pushNotificationConfig/set":
                doc["taskId"] = route.task_id
            elif route.task_id is not None:
                if op in ("tasks/cancel", "tasks/resubscribe"):
                    _put_name(doc, route.task_id)
                doc["id"] = route.task_id
                if route.config_id is not None:
                    doc["pushNotificationConfigId"] = route.config_id
        return _encode(doc)

    def _tenant(self, route: Match, call: Call) -> str | None:
        """The tenant of the call: the path's, which the body's must agree with (and
        the tenant header's, as on every binding: ``Security.tenant``); None: the
        path names none."""
        given = getattr(call, "tenant", None)
        path = route.tenant
        if path is None:
            return None
        if given and given != path:
            raise InvalidParams(f"Invalid params: the request's tenant {given!r} (its body "
                                f"or query) is not the path's tenant {path!r}")
        if hasattr(call, "tenant"):
            call.tenant = path
        return path

    # ---------------------------------------------------------------- answers

    async def _v03_card(self, inbound: Inbound | None, scope: Scope,
                        headers: Mapping[str, str]) -> _Answer:
        """``GET /v1/card``: the caller's extended card, else the public one, as the
        hybrid card document v0.3 clients read at the well-known URL (the v0.3
        rendering alone could not carry the card's signatures, made over the hybrid
        document and the v1.0 rendering)."""
        from ...core.dialects.v0_3 import encode_card_hybrid

        if self.card_of is None:
            raise MethodNotFound("Method not found: no card here")
        if inbound is None:
            found = None  # a caller with no credentials: the public card
        else:
            inbound.call = GetExtendedCard(public_if_none=True)  # no body, no tenant to read
            try:
                found = await self.door.enter(inbound)
            except A2AError as exc:  # a tenant the caller may not act in: 403, as gRPC's
                if not self.door.security.public_card_instead(exc):
                    raise
                found = None
        card, _ = self.card_of(scope, headers)
        if isinstance(found, AgentCard):
            card = found
        return _Answer(200, _encode(encode_card_hybrid(card)),
                       [(b"content-type", b"application/json")])

    def _error(self, exc: A2AError, codec: Codec, status: int | None = None) -> _Answer:
        headers: list[tuple[bytes, bytes]] = []
        if status is None:
            refused = self.door.refusal(exc)
            if refused is not None:  # 401 / 403 / 429 / 503 with their headers
                status, headers = refused[0], list(refused[1])
            else:
                status = http_status(exc, codec)
        headers.append(_content_type(codec))
        return _Answer(status, error_body(exc, codec, status), headers)

    def _no_route(self, method: str, path: str, exc: NoRoute, shown: str) -> _Answer:
        """``path`` as routed (below the app's mount); ``shown``, as the caller sent it."""
        codec = get_codec("0.3-pj" if path.startswith("/v1/") else "1.0")
        allowed = exc.allowed or self.other_paths.get(path, ())
        if allowed:
            return _not_allowed(method, shown, allowed)
        return self._error(MethodNotFound(
            f"Not found: no A2A route {_request_line(method, shown)}"), codec, 404)


# ---------------------------------------------------------------------- helpers


def _path_of(scope: Scope) -> str:
    """The path below the app's mount, as ``match`` takes it: %-escaped, as it came,
    when it came with escapes. ``match`` undoes them segment by segment, so that an
    id holding "/" (a v0.1 client names its tasks), "%" or ":" is read as one id;
    the ASGI server's ``path`` has them undone already, which split such an id and
    decoded a "%" in it twice."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    raw: bytes | None = scope.get("raw_path")
    if raw is not None and b"%" in raw:
        pieces = raw.decode("latin-1").split("/")
        depth = root.count("/")  # the segments of the mount's prefix
        if unquote("/".join(pieces[:depth + 1])) == root:
            return "/" + "/".join(pieces[depth + 1:])
        # (a prefix the raw path does not hold: a proxy took it off) the path as read
    if root and path.startswith(root):
        path = path[len(root):] or "/"
    return path


def _utf8_path(scope: Scope) -> bool:
    """The path's %-escapes make UTF-8 (the ASGI server reads those that do not as
    U+FFFD, which would name another task)."""
    raw: bytes | None = scope.get("raw_path")
    if not raw or b"%" not in raw:
        return True
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _blank(body: bytes) -> bool:
    """No body, or only whitespace (read without copying the body)."""
    return not body or body.isspace()


def _check_json(body: bytes) -> None:
    """``ParseError`` when ``body`` (not blank) is not JSON at all."""
    if _blank(body):
        return
    try:
        _any.decode(body)
    except RecursionError:
        pass  # well-formed but deep: the codec's own refusal says so
    except msgspec.DecodeError as exc:
        raise ParseError(f"Parse error: the body is not valid JSON ({json_fault(body, exc)})") \
            from None


def _object(body: bytes) -> dict[str, Any]:
    check_utf8(body)
    try:
        doc = _any.decode(body)
    except msgspec.DecodeError:
        raise ParseError("Parse error: the body is not valid JSON") from None
    except RecursionError:
        raise InvalidParams("Invalid params: the body is nested too deeply") from None
    if not isinstance(doc, dict):
        raise InvalidParams("Invalid params: the body must be a JSON object")
    return doc


def _put(doc: dict[str, Any], name: str, value: str | None) -> None:
    """The path's id, which a body that names one must agree with."""
    given = doc.get(name)
    if given not in (None, "", value):
        raise InvalidParams(f"Invalid params: the body's {name} {given!r} is not the "
                            f"path's {value!r}")
    doc[name] = value


def _put_name(doc: dict[str, Any], task_id: str) -> None:
    """v0.3's path's task, which a body that names one (its resource ``name``,
    ``tasks/{id}``, or an ``id``) must agree with."""
    name = doc.get("name")
    if name not in (None, "", f"tasks/{task_id}"):
        raise InvalidParams(f"Invalid params: the body's name {name!r} is not the "
                            f"path's {'tasks/' + task_id!r}")
    _put(doc, "id", task_id)


def _path_members(route: Match, sent: dict[str, str]) -> None:
    """How the members the path gives (as ``_params`` puts them) are named to its
    caller (``as_sent``)."""
    task, config = "the path's task id", "the path's config id"
    if route.task_id is None:
        return
    if route.op in ("GetTask", "CancelTask", "SubscribeToTask"):
        sent["id"] = task
    elif route.op in V1_OPS:
        sent["taskId"] = task
        if route.config_id is not None:
            sent["id"] = config
    elif route.op == "tasks/pushNotificationConfig/set":
        sent["taskId"] = task
    else:
        sent["id"] = sent["name"] = task
        if route.config_id is not None:
            sent["pushNotificationConfigId"] = config


def as_sent(exc: InvalidParams, sent: Mapping[str, str], body: bytes = b"") -> InvalidParams:
    """``exc`` naming each member as the HTTP+JSON caller sent it, not by its path
    in JSON-RPC params: a query parameter or a part of the path (``sent``), else
    the body's member (``configuration.ifGenerationMatch``, or
    ``configuration.if_generation_match`` where the body spells it so)."""
    doc: Any = None
    if not _blank(body):
        try:
            doc = _any.decode(body)
        except (msgspec.DecodeError, RecursionError):
            pass  # (the codec's refusal names no member of it)

    def named(path: Path) -> Path:
        if path and path[0] in sent:
            return [sent[path[0]], *path[1:]]
        return as_spelt(doc, path)

    return renamed(exc, named)



def _query(scope: Scope, kinds: Mapping[str, str],
           sent: dict[str, str] | None = None) -> dict[str, Any]:
    """The operation's query parameters; ``sent`` gets each one's name as given."""
    qs: bytes = scope.get("query_string", b"")
    out: dict[str, Any] = {}
    if not qs:
        return out
    try:
        # strict: a %-escape that is not UTF-8 is refused, not read as U+FFFD
        pairs = parse_qsl(qs.decode("utf-8"), keep_blank_values=True, strict_parsing=False,
                          errors="strict")
    except UnicodeDecodeError:
        raise ParseError("Parse error: the query string is not valid UTF-8") from None
    for raw_name, value in pairs:
        name = _SNAKE.get(raw_name, raw_name)
        kind = kinds.get(name)
        if kind is None:
            continue  # not a parameter of this operation (A2A-Version, a cache buster …)
        if name in out:  # each is one value: which of two was meant is not ours to guess
            raise InvalidParams(f"Invalid params: query parameter {name} is given more "
                                f"than once")
        if sent is not None:
            sent[name] = f"query parameter {raw_name}"
        if kind == "int":
            out[name] = _query_int(raw_name, value)
        elif kind == "bool":
            b = _BOOLS.get(value.strip().lower())
            if b is None:
                raise InvalidParams(
                    f"Invalid params: query parameter {raw_name} must be true or false, "
                    f"got {value[:40]!r}")
            out[name] = b
        else:
            out[name] = value
    return out


def _query_int(name: str, value: str) -> int:
    """An integer query parameter, read as the JSON-RPC codecs read a number given
    as a string (ProtoJSON: ``"100"``, ``"1e2"``, ``"1.0"``; no spaces, no ``+``),
    so that one value gets one verdict on both bindings."""
    if len(value) > 24:  # (past any bound of A2A's: not read, however long)
        raise InvalidParams(f"Invalid params: query parameter {name} is out of range, "
                            f"got {value[:40]!r}")
    try:
        number: int = msgspec.convert(value, int, strict=False)
    except msgspec.ValidationError:
        raise InvalidParams(f"Invalid params: query parameter {name} must be an integer, "
                            f"got {value[:40]!r}") from None
    return number  # (its range is the codec's to check, as for a JSON-RPC call)


def _not_allowed(method: str, path: str, allowed: Sequence[str]) -> _Answer:
    codec = get_codec("0.3-pj" if path.startswith("/v1/") else "1.0")
    err = MethodNotAllowed(
        f"Method not allowed: {_request_line(method, path)} (allowed: {', '.join(allowed)})")
    return _Answer(405, error_body(err, codec, 405),
                   [_content_type(codec), (b"allow", ", ".join(allowed).encode())])


async def refuse_verb(send: Send, method: str, path: str, allowed: Sequence[str]) -> None:
    """405 with ``Allow`` and HTTP+JSON's error body, for a verb ``path`` does not take:
    the JSON-RPC URL, which takes POST alone, answers a GET as a route here does."""
    await _send(send, _not_allowed(method, path, allowed))


async def _send(send: Send, answer: _Answer) -> None:
    if len(answer.body) > CHUNK:  # other requests go between its writes
        await write_body(send, answer.status, answer.headers, [answer.body])
        return
    headers = [*answer.headers, (b"content-length", str(len(answer.body)).encode())]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})


def _request_line(method: str, path: str) -> str:
    """The caller's method and path as a refusal names them: the path ``quoted``
    (cut), the method too unless it is a usual one, so that no refusal echoes a
    20,000-character path whole."""
    verb = method if len(method) <= 16 and method.isalpha() else quoted(method)
    return f"{verb} {quoted(path)}"
