"""The JSON-RPC endpoint, as a plain ASGI callable.

It is the hot path, so it skips Starlette's Request/Response objects: the
body is read once with a size limit, parsed once (params stay raw until the
dialect's codec decodes them into typed structs), and the answer is written
as one pre-encoded body.

The dialect is chosen by the method name; the ``A2A-Version`` header is
checked against it (leniently by default: DIALECTS.md §h.3).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from ..core import jsonrpc
from ..core.calls import SendMessage, SubscribeToTask
from ..core.dialects import Codec, get_codec
from ..core.dialects.detect import detect
from ..core.errors import (
    A2AError,
    InternalError,
    InvalidParams,
    InvalidRequest,
    ResourceUnavailable,
    StreamingNotSupported,
    VersionNotSupported,
)
from ..stores.base import Scope as StoreScope
from ..stores.base import StoreUnavailable
from .auth.runtime import refusal
from .request_headers import RequestHeaders
from .sse_writer import write_sse
from .streams import Stream

if TYPE_CHECKING:
    from .app import A2AServer

__all__ = ["JSONRPCEndpoint", "parse_version"]

log = logging.getLogger("interlingua.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SUPPORTED_VERSIONS = ("1.0", "0.3", "0.2", "0.1")
# which header versions each dialect takes as its own
_DIALECT_VERSIONS = {
    "1.0": {"1.0"},
    "0.3": {"0.3", "0.2"},
    "0.1": {"0.1"},
    "sam": {"0.1", "0.2", "0.3"},
    "tutorial": {"0.2", "0.3"},
}

_JSON_HEADERS = [(b"content-type", b"application/json")]


# Clients send the same few header values on every request.
@functools.lru_cache(maxsize=64)
def parse_version(value: str) -> str | None:
    """``"1"``, ``"1.0"``, ``"1.0.2"`` -> ``"1.0"``; None when it is not a version."""
    parts = value.strip().split(".")
    if not parts or not all(p.isdigit() for p in parts) or len(parts) > 3:
        return None
    major = int(parts[0])
    minor = int(parts[1]) if len(parts) > 1 else 0
    return f"{major}.{minor}"


class _Answer:
    """A response body with its HTTP status; ``None`` body = no content (notification)."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, body: bytes | None,
                 headers: list[tuple[bytes, bytes]] | None = None) -> None:
        self.status = status
        self.body = body
        self.headers = headers


class _StreamAnswer:
    """An SSE stream: its entries, the codec that encodes them and the request id."""

    __slots__ = ("codec", "rid", "stream")

    def __init__(self, codec: Codec, rid: Any, stream: Stream) -> None:
        self.codec = codec
        self.rid = rid
        self.stream = stream


class _TooLarge(Exception):
    pass


class JSONRPCEndpoint:
    def __init__(self, server: A2AServer) -> None:
        self.server = server
        self.fallback_codec = get_codec("0.3")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = await self.respond(scope, receive, send)
        if answer is not None:
            await write_sse(send, receive, answer.stream, answer.codec, answer.rid)

    async def respond(self, scope: Scope, receive: Receive, send: Send) -> _StreamAnswer | None:
        """Answer the request, or return the stream that answers it, for the
        caller to write once this frame is gone (an open stream holds less)."""
        await self.server.engine.ensure_started()
        headers = RequestHeaders(scope.get("headers", ()))
        limit = self.server.settings.max_body_bytes
        try:
            length = headers.get("content-length")
            if length is not None and length.isdigit() and int(length) > limit:
                raise _TooLarge
            body = await _read_body(receive, limit)
        except _TooLarge:
            err = InvalidRequest(f"Request body is larger than the limit of {limit} bytes")
            await _send(send, _Answer(413, self._error(None, err, self.fallback_codec)))
            return None
        security = self.server.security
        if security.active:
            # Authenticated (and rate-limited) before anything is dispatched.
            try:
                await security.admit(scope, headers)
            except A2AError as exc:
                await _send(send, self._refused(body, headers, scope, exc))
                return None
        answer = await self.handle(body, headers, scope)
        if isinstance(answer, _StreamAnswer):
            return answer
        await _send(send, answer)
        return None

    async def handle(self, body: bytes, headers: Mapping[str, str],
                     scope: Scope) -> _Answer | _StreamAnswer:
        try:
            parsed = jsonrpc.parse(body)
        except A2AError as exc:
            rid = _id_from(exc)
            return _Answer(200, self._error(rid, exc, self.fallback_codec))
        if isinstance(parsed, jsonrpc.Batch):
            return await self._batch(parsed, headers, scope)
        return await self._one(parsed, headers, scope, in_batch=False) or _Answer(204, None)

    async def _batch(self, batch: jsonrpc.Batch, headers: Mapping[str, str], scope: Scope) -> _Answer:
        out: list[bytes] = []
        for item in batch.items:
            if isinstance(item, tuple):
                rid, err = item
                out.append(self._error(rid, err, self.fallback_codec))
                continue
            answer = await self._one(item, headers, scope, in_batch=True)
            if isinstance(answer, _Answer) and answer.body is not None:
                out.append(answer.body)
        if not out:
            return _Answer(204, None)
        return _Answer(200, b"[" + b",".join(out) + b"]")

    async def _one(self, req: jsonrpc.Request, headers: Mapping[str, str], scope: Scope,
                   *, in_batch: bool) -> _Answer | _StreamAnswer | None:
        codec: Codec | None = None
        try:
            raw_version = headers.get("a2a-version") or _query_version(scope)
            version = parse_version(raw_version) if raw_version else None
            codec = await self._codec_for(req, version, scope, headers)
            self._check_version(codec, raw_version, version)
            call = codec.decode_call(req.method, req.params)
            security = self.server.security
            principal = security.principal_of(scope)
            info = security.request_info(
                principal,
                tenant=security.tenant(principal, getattr(call, "tenant", None), headers),
                headers=headers,
                extensions=_extensions(headers),
                dialect=codec.name,
                streaming=req.method in codec.streaming_methods,
            )
            if req.method in codec.streaming_methods:
                if in_batch:
                    raise InvalidRequest("Invalid Request: a streaming method cannot be batched")
                if not self.server.agent.streaming:
                    raise StreamingNotSupported(
                        "This agent does not stream (its card says streaming: false)")
                if not req.has_id:
                    raise InvalidRequest("Invalid Request: a streaming request needs an id")
                assert isinstance(call, (SendMessage, SubscribeToTask))
                stream = await self.server.engine.open_stream(
                    call, info, last_event_id=_last_event_id(headers))
                return _StreamAnswer(codec, req.id, stream)
            result = await self.server.engine.handle(call, info)
            body = codec.encode_result(call, result)
        except A2AError as exc:
            if not req.has_id:
                return None
            body = self._error(req.id, exc, codec or self.fallback_codec)
            refused = None if in_batch else refusal(exc)
            if refused is not None:  # 401 / 403 / 429 with their headers
                return _Answer(refused[0], body, refused[1])
            return _Answer(200, body)
        except StoreUnavailable as exc:
            log.warning("%s: %s", req.method, exc)
            if not req.has_id:
                return None
            unavailable = ResourceUnavailable(
                "The task store is unavailable; try again shortly")
            return _Answer(503, self._error(req.id, unavailable, codec or self.fallback_codec),
                           [(b"retry-after", b"1")])
        except Exception:
            log.exception("internal error handling %s", req.method)
            if not req.has_id:
                return None
            return _Answer(200, self._error(req.id, InternalError(), codec or self.fallback_codec))
        if not req.has_id:
            return None
        return _Answer(200, jsonrpc.result_response(req.id, body))

    async def _codec_for(self, req: jsonrpc.Request, version: str | None, scope: Scope,
                         headers: Mapping[str, str]) -> Codec:
        """The dialect of a request (DIALECTS.md §h.3), as a codec."""
        found = detect(req.method, req.params, strict=self.server.settings.strict_dialects,
                       header_version=version)
        name = found.dialect
        if name is None:
            # tasks/get, tasks/cancel, tasks/resubscribe read the same in v0.1-v0.3:
            # answer in the dialect the task was created in.
            name = found.fallback
            if found.task_id:
                # looked up as the caller: another principal's task tells nothing
                security = self.server.security
                principal = security.principal_of(scope)
                owner = StoreScope(tenant=security.tenant(principal, None, headers),
                                   owner=principal.id)
                rec = await self.server.engine.store.get_task(
                    owner, found.task_id, history_length=0, include_artifacts=False)
                if rec is not None:
                    name = rec.dialect
        codec = get_codec(name)
        if req.method not in codec.methods:
            # e.g. a tutorial-made task polled with tasks/get: the v0.3 family answers
            codec = get_codec(found.fallback)
        return codec

    def _check_version(self, codec: Codec, raw: str | None, version: str | None) -> None:
        strict = self.server.settings.strict_versions
        if not raw:
            if strict and codec.name == "1.0":
                raise VersionNotSupported(
                    "No A2A-Version header: it is read as 0.3, which does not have "
                    "this method; send A2A-Version: 1.0"
                )
            return
        if version is None or version not in SUPPORTED_VERSIONS:
            raise VersionNotSupported(
                f"A2A-Version {raw!r} is not supported; supported versions: "
                + ", ".join(SUPPORTED_VERSIONS),
                data={"supportedVersions": list(SUPPORTED_VERSIONS)},
            )
        if strict and version not in _DIALECT_VERSIONS.get(codec.name, {version}):
            raise VersionNotSupported(
                f"A2A-Version {raw!r} does not match the method's protocol version {codec.name}"
            )

    def _refused(self, body: bytes, headers: Mapping[str, str], scope: Scope,
                 exc: A2AError) -> _Answer:
        """A request refused before dispatch (credentials, rate): its HTTP status, with
        a JSON-RPC error in the caller's dialect as far as the request tells it."""
        status, extra = refusal(exc) or (200, [])
        codec, rid = self.fallback_codec, None
        try:
            parsed = jsonrpc.parse(body)
            req = parsed if isinstance(parsed, jsonrpc.Request) else next(
                (i for i in parsed.items if isinstance(i, jsonrpc.Request)), None)
            if req is not None:
                rid = req.id if req.has_id else None
                raw = headers.get("a2a-version") or _query_version(scope)
                found = detect(req.method, req.params, strict=False,
                               header_version=parse_version(raw) if raw else None)
                codec = get_codec(found.dialect or found.fallback)
        except A2AError:
            pass
        return _Answer(status, self._error(rid, exc, codec), extra)

    @staticmethod
    def _error(rid: Any, err: A2AError, codec: Codec) -> bytes:
        return jsonrpc.error_response(rid, codec.encode_error(err))


def _id_from(exc: A2AError) -> Any:
    data = exc.data
    if isinstance(data, dict) and "id" in data:
        exc.data = None
        return data["id"]
    return None


def _last_event_id(headers: Mapping[str, str]) -> int | None:
    raw = headers.get("last-event-id")
    if raw is None or raw.strip() == "":
        return None
    raw = raw.strip()
    if not raw.isdigit():
        raise InvalidParams(
            f"Invalid params: Last-Event-ID {raw!r} is not an event id of this server "
            "(they are non-negative integers)"
        )
    return int(raw)


def _query_version(scope: Scope) -> str | None:
    qs: bytes = scope.get("query_string", b"")
    if not qs or (b"A2A-Version" not in qs and b"a2a-version" not in qs):
        return None
    from urllib.parse import parse_qsl

    for k, v in parse_qsl(qs.decode("latin-1")):
        if k.lower() == "a2a-version":
            return v
    return None


def _extensions(headers: Mapping[str, str]) -> list[str]:
    raw = headers.get("a2a-extensions") or headers.get("x-a2a-extensions")
    if not raw:
        return []
    return [e.strip() for e in raw.split(",") if e.strip()]


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _send(send: Send, answer: _Answer) -> None:
    if answer.body is None:
        await send({"type": "http.response.start", "status": answer.status, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    headers = [*_JSON_HEADERS, (b"content-length", str(len(answer.body)).encode())]
    if answer.headers:
        headers.extend(answer.headers)
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})
