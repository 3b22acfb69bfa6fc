"""The JSON-RPC binding of the client: one POST per call, SSE for streams."""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from ..core.calls import Call, DeletePushConfig, Result, SendMessage, SubscribeToTask
from ..core.dialects import Codec, get_codec
from ..core.errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    InvalidAgentResponse,
    RateLimitExceeded,
    VersionNotSupported,
)
from ..core.reading import without_bom
from .card import Endpoint, html_summary
from .encoding import encode_call
from .errors import BadResponse, ClientError
from .generations import answered, mismatch_in
from .stream import Connection, envelope_fault, note_retry_after
from .transport import HTTPReply, Transport

__all__ = ["HTTP_ERRORS", "JSONRPCBinding", "snippet", "version_refusal_or"]

_encoder = msgspec.json.Encoder()


class _Envelope(msgspec.Struct):
    # Every member optional: a body missing both result and error is refused below.
    jsonrpc: str | msgspec.UnsetType = msgspec.UNSET
    id: str | int | msgspec.UnsetType | None = msgspec.UNSET
    result: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    error: Any = msgspec.UNSET


_envelope = msgspec.json.Decoder(_Envelope)

# HTTP statuses that v1.0 answers with a generic body (DIALECTS.md §f.1, errors.py)
HTTP_ERRORS: dict[int, type[A2AError]] = {
    401: AuthenticationRequired,
    403: AuthorizationFailed,
    429: RateLimitExceeded,
}


class JSONRPCBinding:
    """Calls as JSON-RPC requests POSTed to the endpoint's URL."""

    def __init__(self, transport: Transport, headers: Mapping[str, str]) -> None:
        self._transport = transport
        self._headers = headers
        self._ids = itertools.count(1)

    def _request(self, codec: Codec, call: Call, version: str) -> tuple[int, bytes]:
        method, params = encode_call(codec, call, codec.name, version)
        rid = next(self._ids)
        body = (
            b'{"jsonrpc":"2.0","id":' + str(rid).encode() + b',"method":'
            + _encoder.encode(method) + b',"params":' + params + b"}"
        )
        return rid, body

    async def call(self, endpoint: Endpoint, call: Call) -> tuple[Result, bytes]:
        codec = get_codec(endpoint.a2a_version)  # 1.1: its own codec, v1.0's methods
        rid, body = self._request(codec, call, endpoint.a2a_version)
        headers = {
            **self._headers,
            "Content-Type": "application/json",
            "Accept": "application/json",
            "A2A-Version": endpoint.a2a_version,
        }
        reply = await self._transport.post(endpoint.url, body, headers)
        # a call whose result is empty (a delete) succeeded when answered without one
        raw = result_of(reply, rid, codec, void=isinstance(call, DeletePushConfig))
        try:
            result = codec.decode_result(answered(call), raw)
        except InvalidAgentResponse as exc:
            raise BadResponse(f"{reply.url}: {exc.message}", status=reply.status) from None
        return result, raw

    async def open_stream(
        self, endpoint: Endpoint, call: SendMessage | SubscribeToTask, last_event_id: int | None
    ) -> Connection:
        codec = get_codec(endpoint.a2a_version)
        rid, body = self._request(codec, call, endpoint.a2a_version)
        headers = {
            **self._headers,
            "Content-Type": "application/json",
            "Accept": "text/event-stream, application/json",
            "A2A-Version": endpoint.a2a_version,
        }
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        reply = await self._transport.post_stream(endpoint.url, body, headers)
        if reply.content_type == "text/event-stream" and 200 <= reply.status < 300:
            return Connection(codec, reply.url, reply=reply, rid=rid)
        # An error before the stream began, or an agent that does not stream
        # and answered with one result: a plain JSON-RPC answer either way.
        try:
            content = await reply.read()
        finally:
            await reply.aclose()
        answer = HTTPReply(reply.status, reply.headers, content, reply.url)
        try:
            raw = result_of(answer, rid, codec)
        except (A2AError, ClientError) as exc:
            note_retry_after(exc, answer)  # a 503 or 429: when to resume
            raise
        return Connection(codec, reply.url, single=raw)


def result_of(reply: HTTPReply, rid: int, codec: Codec, *, void: bool = False) -> bytes:
    """The raw ``result`` member of a JSON-RPC answer; an error member is raised.

    ``void``: the call's result is empty (a delete), and a successful answer to it
    without a ``result`` (a2a-sdk 0.3's) is read as ``null``; else it is refused."""
    env: _Envelope | None = None
    if reply.content.strip():
        try:
            env = _envelope.decode(reply.content)
        except (msgspec.DecodeError, msgspec.ValidationError):
            env = None
            unmarked = without_bom(reply.content)  # (RFC 8259 §8.1)
            if unmarked is not None:
                with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                    env = _envelope.decode(unmarked)
    if (void and env is not None and reply.ok and env.jsonrpc == "2.0"
            and env.result is msgspec.UNSET and env.error is msgspec.UNSET
            and env.id == rid):
        return b"null"
    if env is None or (env.result is msgspec.UNSET and env.error is msgspec.UNSET):
        if not reply.ok:
            cls = HTTP_ERRORS.get(reply.status)
            if cls is not None:
                raise cls(f"{cls.default_message} (HTTP {reply.status} from {reply.url})")
            raise BadResponse(
                f"{reply.url} answered HTTP {reply.status}{snippet(reply)}", status=reply.status
            )
        what = reply.content_type or "no content type"
        raise BadResponse(
            f"{reply.url} answered {what} that is not a JSON-RPC response{snippet(reply)}",
            status=reply.status,
        )
    fault = envelope_fault(env.jsonrpc, env.id, rid=rid, result=env.result is not msgspec.UNSET,
                           error=env.error is not msgspec.UNSET)
    if fault is not None:  # (checked first: an error to another request is not this call's)
        raise BadResponse(f"{reply.url} answered {fault}", status=reply.status)
    if env.error is not msgspec.UNSET:
        error = env.error
        if not isinstance(error, dict) or isinstance(error.get("code"), bool) or not isinstance(
            error.get("code"), int
        ):
            raise BadResponse(
                f"{reply.url} answered a JSON-RPC error without an integer code",
                status=reply.status,
            )
        # an error this dialect's table lacks (a 1.1 one) is read by its ErrorInfo
        err = version_refusal_or(codec.decode_error(error))
        http = HTTP_ERRORS.get(reply.status)
        if http is not None and not isinstance(err, http):
            # a dialect without codes for them (v0.3 says -32600 or -32603): the HTTP
            # status says which, as it does over HTTP+JSON
            err = http(err.message, data=err.data)
        raise mismatch_in(err)
    assert not isinstance(env.result, msgspec.UnsetType)
    return bytes(env.result)


#: an error's message that says the protocol version asked for is refused
_VERSION_REFUSED = re.compile(r"\bversion\b.*\bnot supported\b", re.IGNORECASE | re.DOTALL)


def version_refusal_or(err: A2AError) -> A2AError:
    """``err``, or the version refusal it is: an error whose ErrorInfo reason or message
    says so is read as ``VersionNotSupported`` whatever its code means in the dialect
    spoken (v1.0's -32009 is v0.1's ``InvalidTaskState``: a v1.0 agent refusing v0.1
    has no task state problem)."""
    if isinstance(err, VersionNotSupported):
        return err
    data = err.data if isinstance(err.data, list) else [err.data]
    if (any(isinstance(d, dict) and d.get("reason") == VersionNotSupported.reason for d in data)
            or _VERSION_REFUSED.search(err.message)):
        return VersionNotSupported(err.message, data=err.data)
    return err


def snippet(reply: HTTPReply) -> str:
    """``": <the start of the body>"`` for an answer that is no JSON-RPC response
    (a web page said by its title); empty for an empty body."""
    text = html_summary(reply) or reply.content[:120].decode("utf-8", "replace").strip()
    text = " ".join(text.split())
    return f": {text}" if text else ""
