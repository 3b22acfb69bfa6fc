"""The JSON-RPC endpoint, as a plain ASGI callable.

It is the hot path, so it skips Starlette's Request/Response objects: the
body is read once with a size limit, parsed once (params stay raw until the
dialect's codec decodes them into typed structs), and the answer is written
as one pre-encoded body.

The dialect is chosen by the method name; the ``A2A-Version`` header is
checked against it (leniently by default: DIALECTS.md §h.3). Everything
between the envelope and the engine (authentication, tenant, the request's
``RequestInfo``, capability checks) is the front door's (``dispatch.py``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from functools import partial
from typing import Any

import msgspec

from ...core import codings, jsonrpc
from ...core.dialects import Codec, answering, get_codec
from ...core.dialects.detect import V1_METHODS, detect
from ...core.errors import (
    A2AError,
    ContentTypeNotSupported,
    InternalError,
    InvalidRequest,
    ParseError,
)
from ...core.origins import CrossOrigin, Origins
from ...server.dispatch import FrontDoor, Inbound, Items, parse_version
from ...server.settings import ServiceSettings
from ..http.request import (
    A2A_VERSION,
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

__all__ = ["JSONRPCEndpoint", "jsonrpc_envelope", "parse_version"]

log = logging.getLogger("interlingua.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON_HEADERS = [(b"content-type", b"application/json")]

#: (method, A2A-Version) -> the codec that answers it, for v1.0's methods: their
#: dialect follows from the method and the version alone (``detect``), and the
#: codecs are a fixed set. Bounded: a client may send any version.
_ANSWERING: dict[tuple[str, str | None], Codec] = {}
_MAX_ANSWERING = 256


class _Answer:
    """A response body with its HTTP status; ``None`` body = no content (notification);
    ``parts``: a large body (a batch's, an answer of megabytes) as the pieces it is
    written from, never joined."""

    __slots__ = ("body", "headers", "parts", "status")

    def __init__(self, status: int, body: bytes | None,
                 headers: list[tuple[bytes, bytes]] | None = None,
                 parts: list[bytes] | None = None) -> None:
        self.status = status
        self.body = body
        self.headers = headers
        self.parts = parts

    def pieces(self) -> list[bytes]:
        if self.parts is not None:
            return self.parts
        return [] if self.body is None else [self.body]


class _StreamAnswer:
    """An SSE stream: its items, the codec that encodes them and the request id."""

    __slots__ = ("codec", "rid", "stream")

    def __init__(self, codec: Codec, rid: Any, stream: Items) -> None:
        self.codec = codec
        self.rid = rid
        self.stream = stream


def jsonrpc_envelope(rid: Any) -> Envelope:
    """Stream items as JSON-RPC responses to the request ``rid`` (its ``result``),
    errors as error responses to it."""
    head = b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(rid)

    def error(codec: Codec, err: A2AError) -> bytes:
        return head + b',"error":' + codec.encode_error(err) + b"}"

    return Envelope(head + b',"result":', b"}", error)


class JSONRPCEndpoint:
    """JSON-RPC framing in front of the front door: envelopes in, envelopes out."""

    def __init__(self, door: FrontDoor, settings: ServiceSettings) -> None:
        self.door = door
        self.settings = settings
        self.fallback_codec = get_codec("0.3")
        self.origins = Origins(settings.allowed_origins, [settings.public_url],
                               trust_forwarded=settings.trust_forwarded)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = await self.respond(scope, receive, send)
        if answer is not None:
            await write_sse(send, receive, answer.stream, answer.codec,
                            jsonrpc_envelope(answer.rid))

    async def respond(self, scope: Scope, receive: Receive, send: Send) -> _StreamAnswer | None:
        """Answer the request, or return the stream that answers it, for the
        caller to write once this frame is gone (an open stream holds less)."""
        door = self.door
        # Read here, not asked of the door: the engine has started (the app's
        # lifespan starts it) and nobody is authenticated, nearly always.
        if not door.engine.started:
            await door.ensure_started()
        headers = RequestHeaders(scope.get("headers", ()))
        limit = self.settings.max_body_bytes
        try:
            body = await read_body(receive, limit, headers, self.origins)
        except BodyTooLarge:
            err = InvalidRequest(f"Request body is larger than the limit of {limit} bytes")
            await _send(send, _Answer(413, self._error(None, err, self.fallback_codec)))
            return None
        except CrossOrigin as exc:
            await _send(send, _Answer(403, self._error(None, exc, self.fallback_codec)))
            return None
        except codings.CodingNotSupported as exc:
            await _send(send, _Answer(415, self._error(None, InvalidRequest(str(exc)),
                                                       self.fallback_codec),
                                      headers=[codings.ACCEPT_ENCODING]))
            return None
        except codings.BadCoding as exc:
            await _send(send, _Answer(200, self._error(None, ParseError(f"Parse error: {exc}"),
                                                       self.fallback_codec)))
            return None
        try:
            # Authenticated (and rate-limited) before anything is dispatched.
            if door.security.active:
                await door.admit(scope, headers, "jsonrpc")
            media = headers.content_type  # (read with the body's framing: no look-up more)
            if media is not None and media != b"application/json":
                # a body sent as another type than JSON is refused, as HTTP+JSON does
                check_content_type(headers.get("content-type"), "application/json")
        except ContentTypeNotSupported as exc:
            await _send(send, self._refused(body, headers, scope, exc, status=415))
            return None
        except A2AError as exc:
            await _send(send, self._refused(body, headers, scope, exc))
            return None
        answer: _Answer | _StreamAnswer | None
        try:
            parsed = jsonrpc.parse(body, door.check_batch)
        except A2AError as exc:
            answer = _Answer(200, self._error(_id_from(exc), exc, self.fallback_codec))
        else:
            if isinstance(parsed, jsonrpc.Batch):
                answer = await self._batch(parsed, headers, scope)
            else:
                # a call may be held (a long poll) while its caller is there
                answer = await self._one(parsed, headers, scope, in_batch=False,
                                         gone=partial(until_gone, receive))
                if isinstance(answer, _StreamAnswer):
                    return answer
        await _send(send, answer or _Answer(204, None))
        return None

    async def _batch(self, batch: jsonrpc.Batch, headers: RequestHeaders, scope: Scope) -> _Answer:
        out: list[bytes] = []  # the array's pieces: "[", answers, commas
        # what the answers so far leave of max_answer_bytes (brackets and commas too)
        room = self.settings.max_answer_bytes - 2
        # Each later item keeps room for an error answer of its own, so that the
        # results before it cannot push the whole past the limit.
        reserves = [_reserve(item) for item in batch.items]
        later = sum(reserves)
        for i, item in enumerate(batch.items):
            later -= reserves[i]
            if i:
                # Other requests go between the items: a batch is many requests, and
                # holding the loop for all of them would stall every other client.
                await asyncio.sleep(0)
            if isinstance(item, tuple):
                rid, err = item
                if i:  # a request as every other, unread or not: a token of its own
                    try:
                        await self.door.spend(scope)
                    except A2AError as exc:
                        self.door.refused_unread("jsonrpc", None, headers, exc)
                        err = exc
                got = [self._error(rid, err, self.fallback_codec)]
            else:
                # the first request's token was spent admitting the HTTP request
                answer = await self._one(item, headers, scope, in_batch=True,
                                         room=room - later, spend=i > 0)
                got = answer.pieces() if isinstance(answer, _Answer) else []
            if got:
                out.append(b"," if out else b"[")
                out.extend(got)
                room -= sum(len(piece) for piece in got) + 1
        if not out:
            return _Answer(204, None)
        out.append(b"]")
        return _Answer(200, None, parts=out)

    async def _one(self, req: jsonrpc.Request, headers: RequestHeaders, scope: Scope,
                   *, in_batch: bool, room: int | None = None,
                   gone: Callable[[], Awaitable[object]] | None = None, spend: bool = False
                   ) -> _Answer | _StreamAnswer | None:
        """One request's answer; ``room``: the bytes of ``max_answer_bytes`` that a
        batch's earlier answers leave (None: not in a batch); ``gone``: the caller's
        going (``Inbound.gone``; none for a batch's items, which share one request);
        ``spend``: a token of the caller's rate is spent for it first (a batch's
        requests after the first), refused as a lone request would be."""
        codec: Codec | None = None
        door = self.door
        entered = False  # (a refusal before enter is told to the hooks here)
        try:
            if spend:
                try:
                    await door.spend(scope)
                except A2AError:
                    codec = self._codec_unread(req, scope, headers)
                    raise
            # the header, nearly always: version_of looks at the query too
            raw_version = headers.combined(A2A_VERSION) or version_of(scope, headers)
            version = parse_version(raw_version) if raw_version else None
            codec = _ANSWERING.get((req.method, version))
            if codec is None:
                found = detect(req.method, req.params, strict=self.settings.strict_dialects,
                               header_version=version)
                if found.dialect is None:
                    # the fallback's until the store tells the task's own (a store
                    # outage is then answered, and counted, as that method's)
                    codec = answering(req.method, found.fallback, found.fallback)
                    codec = await door.task_codec(scope, headers, req.method, found)
                else:  # nothing to look up
                    codec = answering(req.method, found.dialect, found.fallback)
                    if req.method in V1_METHODS and len(_ANSWERING) < _MAX_ANSWERING:
                        _ANSWERING[req.method, version] = codec
            streaming = req.method in codec.streaming_methods
            if streaming:
                if in_batch:
                    raise InvalidRequest("Invalid Request: a streaming method cannot be batched")
                if not req.has_id:
                    raise InvalidRequest("Invalid Request: a streaming request needs an id")
            # admitted once for the HTTP request, before its body was parsed
            inbound = Inbound(binding="jsonrpc", scope=scope, headers=headers, codec=codec,
                              method=req.method, payload=req.params, raw_version=raw_version,
                              version=version, streaming=streaming, admitted=True,
                              last_event_id=given_once(headers, "last-event-id") if streaming else None,
                              gone=gone)
            entered = True
            result = await door.enter(inbound)
            if isinstance(result, Items):
                return _StreamAnswer(codec, req.id, result)
            call = inbound.call
            assert call is not None
            body = codec.encode_result(call, result)
            # the envelope's bytes are few: the result is what can be large. The
            # limit is compared here, and check_answer called only to refuse.
            if len(body) > (door.settings.max_answer_bytes if room is None else room):
                door.check_answer(len(body), room)
        except A2AError as exc:
            if not entered:  # a method no dialect has, a stream in a batch
                door.refused_unread("jsonrpc", codec, headers, exc,
                                    method=_SHARED_CALLS.get(req.method, "unread"))
            if not req.has_id:
                return None
            body = self._error(req.id, exc, codec or self.fallback_codec)
            refused = None if in_batch else door.refusal(exc)
            if refused is not None:  # 401 / 403 / 429 with their headers
                return _Answer(refused[0], body, refused[1])
            return _Answer(200, body)
        except Exception:
            log.exception("internal error handling %s", req.method)
            if not req.has_id:
                return None
            return _Answer(200, self._error(req.id, InternalError(), codec or self.fallback_codec))
        if not req.has_id:
            return None
        if len(body) > CHUNK:  # written around the result, not copied into one body
            return _Answer(200, None, parts=[jsonrpc.result_head(req.id), body, b"}"])
        return _Answer(200, jsonrpc.result_response(req.id, body))

    def _refused(self, body: bytes, headers: RequestHeaders, scope: Scope,
                 exc: A2AError, *, status: int | None = None) -> _Answer:
        """A request refused before dispatch (credentials, rate, its content type): its
        HTTP status, with a JSON-RPC error in the caller's dialect as far as the
        request tells it."""
        refused, extra = self.door.refusal(exc) or (200, [])
        status = refused if status is None else status
        codec, rid = self.fallback_codec, None
        ids: list[Any] | None = None  # a batch's: one error each, in an array
        try:
            parsed = jsonrpc.parse(body)
            if isinstance(parsed, jsonrpc.Batch):
                ids = [i.id if i.has_id else None for i in parsed.items
                       if isinstance(i, jsonrpc.Request)]
            req = parsed if isinstance(parsed, jsonrpc.Request) else next(
                (i for i in parsed.items if isinstance(i, jsonrpc.Request)), None)
            if req is not None:
                rid = req.id if req.has_id else None
                codec = self._codec_unread(req, scope, headers)
        except A2AError:
            pass
        if ids:
            # a batch is answered with an array (JSON-RPC 2.0 §6): its requests are
            # each refused, as they would be one by one
            parts = [self._error(i, exc, codec) for i in ids]
            return _Answer(status, b"[" + b",".join(parts) + b"]", extra)
        return _Answer(status, self._error(rid, exc, codec), extra)

    def _codec_unread(self, req: jsonrpc.Request, scope: Scope,
                      headers: RequestHeaders) -> Codec:
        """The codec a request refused before it is read (its caller, its rate) is
        answered in: its dialect as far as the request tells it, nothing looked up."""
        try:
            raw = version_of(scope, headers)
            found = detect(req.method, req.params, strict=False,
                           header_version=parse_version(raw) if raw else None)
        except A2AError:
            return self.fallback_codec
        return get_codec(found.dialect or found.fallback)

    @staticmethod
    def _error(rid: Any, err: A2AError, codec: Codec) -> bytes:
        return jsonrpc.error_response(rid, codec.encode_error(err))


#: the calls of the methods whose dialect the task decides (DIALECTS.md §h.3): a
#: request refused while that is looked up is still known to be one of them
_SHARED_CALLS = {"tasks/get": "GetTask", "tasks/cancel": "CancelTask",
                 "tasks/resubscribe": "SubscribeToTask"}

#: the bytes of an error answer in a batch, but for its id
_ERROR_BYTES = 320


def _reserve(item: jsonrpc.Request | tuple[Any, A2AError]) -> int:
    """Room for the error answer of a batch item: its id is echoed in it."""
    rid = item[0] if isinstance(item, tuple) else item.id
    return _ERROR_BYTES + (len(rid) * 2 if isinstance(rid, str) else 24)


def _id_from(exc: A2AError) -> Any:
    data = exc.data
    if isinstance(data, dict) and "id" in data:
        exc.data = None
        return data["id"]
    return None


async def _send(send: Send, answer: _Answer) -> None:
    if answer.parts is not None:
        await write_body(send, answer.status, [*_JSON_HEADERS, *(answer.headers or ())],
                         answer.parts)
        return
    if answer.body is None:
        await send({"type": "http.response.start", "status": answer.status, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    headers = [*_JSON_HEADERS, (b"content-length", str(len(answer.body)).encode())]
    if answer.headers:
        headers.extend(answer.headers)
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})
