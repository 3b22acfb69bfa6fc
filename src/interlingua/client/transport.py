"""How the client moves bytes: a small base and its httpx implementation.

The client logic only needs "GET this URL", "POST these bytes" and "POST
these bytes and read the answer as it arrives" (for streams); keeping
that behind ``Transport`` lets tests of the logic plug in
``httpx.MockTransport`` (through ``HTTPXTransport(httpx_client)``) or any
other fake, and is the one place where network exceptions become ours.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import AsyncGenerator, Mapping

import httpx

from ..core.trace_context import inject as inject_trace
from .errors import (
    AgentTimeout,
    AgentUnreachable,
    BadResponse,
    ClientError,
    NotConnected,
    too_large,
)
from .tls import CertLike, tls_context

__all__ = ["DEFAULT_MAX_ANSWER_BYTES", "DEFAULT_TIMEOUT", "HTTPReply", "HTTPXTransport",
           "StreamReply", "Transport", "checked_answer_bound", "checked_headers"]

#: seconds to wait for an answer; a blocking send lasts as long as its task turn
DEFAULT_TIMEOUT = 60.0
#: bytes one answer (or one stream event) may hold: an agent that sends more is
#: refused before it fills the caller's memory (a server answers 16 MiB at most by
#: default, ``create_app(max_answer_bytes=)``)
DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024


#: an HTTP field name (RFC 9110 §5.6.2: a token)
_FIELD_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


def checked_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``headers`` as a dict, when every name is an HTTP token and every value
    printable ASCII (no line break: no header of the caller's can forge another); a
    ValueError naming the header otherwise. Checked where they are given: httpx and
    gRPC would refuse them at the first request, with errors of their own."""
    out: dict[str, str] = {}
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not _FIELD_NAME.match(name):
            raise ValueError(f"header name {name!r} is not an HTTP field name (letters, "
                             "digits and !#$%&'*+-.^_`|~, nothing else)")
        if not isinstance(value, str) or not (value.isascii() and value.isprintable()):
            raise ValueError(f"the value of header {name} must be printable ASCII text, "
                             f"not {value!r}")
        if value != value.strip(" "):  # (HTTP keeps no space at a value's ends: h11 refuses)
            raise ValueError(f"the value of header {name} begins or ends with a space: "
                             f"{value!r}")
        out[name] = value
    return out


def checked_answer_bound(max_answer_bytes: int | None) -> int | None:
    """``max_answer_bytes`` as given, when it is a positive number of bytes or None."""
    if max_answer_bytes is not None and (
            isinstance(max_answer_bytes, bool) or not isinstance(max_answer_bytes, int)
            or max_answer_bytes < 1):
        raise ValueError("max_answer_bytes must be a positive number of bytes (or None "
                         f"for no limit), not {max_answer_bytes!r}")
    return max_answer_bytes


class HTTPReply:
    """An HTTP answer, read in full."""

    __slots__ = ("content", "headers", "status", "url")

    def __init__(self, status: int, headers: Mapping[str, str], content: bytes, url: str) -> None:
        self.status = status
        self.headers = headers
        self.content = content
        self.url = url

    @property
    def content_type(self) -> str:
        value = self.headers.get("content-type", "")
        return value.split(";", 1)[0].strip().lower()

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class StreamReply:
    """An HTTP answer whose body is read as it arrives (an SSE stream).

    Status and headers are known; ``chunks()`` yields the body and raises
    ``AgentUnreachable`` (or ``AgentTimeout``) when the connection breaks or
    goes silent. ``aclose()`` must be called once done, read in full or not.
    """

    status: int
    headers: Mapping[str, str]
    url: str
    #: bytes the rest of the body (not a stream), or one stream event, may hold
    #: (None: no limit)
    max_bytes: int | None = None

    @property
    def content_type(self) -> str:
        value = self.headers.get("content-type", "")
        return value.split(";", 1)[0].strip().lower()

    def chunks(self) -> AsyncGenerator[bytes, None]:
        raise NotImplementedError

    async def read(self) -> bytes:
        """The rest of the body at once (for an answer that is not a stream)."""
        out: list[bytes] = []
        size, limit = 0, self.max_bytes
        async for chunk in self.chunks():
            size += len(chunk)
            if limit is not None and size > limit:
                raise too_large(self.url, limit)
            out.append(chunk)
        return b"".join(out)

    async def aclose(self) -> None:
        raise NotImplementedError


class Transport:
    """What the client needs from HTTP; subclasses fill in every method."""

    async def get(self, url: str, headers: Mapping[str, str]) -> HTTPReply:
        raise NotImplementedError

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply:
        raise NotImplementedError

    async def post_stream(
        self, url: str, body: bytes, headers: Mapping[str, str]
    ) -> StreamReply:
        """POST and return once the status and headers have arrived."""
        raise NotImplementedError

    async def request(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> HTTPReply:
        """Any HTTP method (the HTTP+JSON binding uses GET, POST and DELETE)."""
        if method == "GET":
            return await self.get(url, headers)
        if method == "POST":
            return await self.post(url, body or b"", headers)
        raise NotImplementedError(f"{type(self).__name__} cannot send {method}")

    async def request_stream(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> StreamReply:
        """As ``post_stream``, with any HTTP method."""
        if method == "POST":
            return await self.post_stream(url, body or b"", headers)
        raise NotImplementedError(f"{type(self).__name__} cannot stream {method}")

    async def aclose(self) -> None:
        raise NotImplementedError


#: what a call on a client that was closed is told (httpx raised a bare RuntimeError)
CLOSED = ("this client is closed (aclose(), or the end of its async with block): "
          "make another to call again")


class HTTPXTransport(Transport):
    """``Transport`` over an ``httpx.AsyncClient`` (ours, or one the caller owns)."""

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        verify: bool | str | ssl.SSLContext = True,
        cert: CertLike | None = None,
        max_answer_bytes: int | None = DEFAULT_MAX_ANSWER_BYTES,
    ) -> None:
        checked_answer_bound(max_answer_bytes)
        self._owned = client is None
        self._timeout = timeout
        #: bytes one answer, or one stream event, may hold (read by the gRPC binding too)
        self.max_answer_bytes = max_answer_bytes
        # read by the gRPC binding, which makes its own connections
        self.timeout = timeout
        self.verify = verify
        self.cert = cert
        if client is None:
            connect = 10.0 if timeout is None else min(10.0, timeout)
            client = httpx.AsyncClient(
                timeout=httpx.Timeout(timeout, connect=connect), verify=tls_context(verify, cert)
            )
        self.client = client

    async def get(self, url: str, headers: Mapping[str, str]) -> HTTPReply:
        return await self._send("GET", url, None, headers)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply:
        return await self._send("POST", url, body, headers)

    async def request(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> HTTPReply:
        return await self._send(method, url, body, headers)

    async def post_stream(
        self, url: str, body: bytes, headers: Mapping[str, str]
    ) -> StreamReply:
        return await self.request_stream("POST", url, body, headers)

    async def request_stream(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> StreamReply:
        if self.client.is_closed:
            raise ClientError(CLOSED)
        sent = dict(headers)
        inject_trace(sent)  # W3C traceparent of the current span, if any
        try:
            request = self.client.build_request(method, url, content=body, headers=sent)
            response = await self.client.send(request, stream=True)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise self._error(url, exc) from None
        return _HTTPXStreamReply(response, self)

    async def aclose(self) -> None:
        if self._owned:
            await self.client.aclose()

    def _error(self, url: str, exc: Exception) -> ClientError:
        """An httpx failure as the client error it stands for."""
        if self.client.is_closed and isinstance(exc, (httpx.TransportError, httpx.StreamError)):
            # its connection was closed under it by aclose() (from another task)
            return ClientError(CLOSED)
        if isinstance(exc, httpx.TimeoutException):
            limit = f" within {self._timeout:g} s" if self._timeout is not None else ""
            return AgentTimeout(f"{url} did not answer{limit}")
        if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
            return ClientError(f"invalid URL {url!r}: {exc}")
        if isinstance(exc, httpx.DecodingError):
            return _undecodable(url, exc)
        if isinstance(exc, (httpx.TransportError, httpx.StreamError)):
            reason = _reason(exc) if isinstance(exc, httpx.TransportError) else str(exc)
            # (a connection not made carried nothing: the call was not sent)
            failed = NotConnected if isinstance(exc, httpx.ConnectError) else AgentUnreachable
            return failed(f"cannot reach {url}: {reason}")
        return ClientError(f"{url}: {exc}")

    async def _send(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> HTTPReply:
        if self.client.is_closed:
            raise ClientError(CLOSED)
        sent = dict(headers)
        inject_trace(sent)  # W3C traceparent of the current span, if any
        try:
            # The whole answer within the timeout, as a gRPC call's deadline is: the
            # HTTP client's own timeout bounds each read, and an agent sending its
            # answer a byte at a time would keep the call open for as long as it
            # liked. (A client the caller brought keeps its own settings.)
            async with asyncio.timeout(self._timeout if self._owned else None):
                request = self.client.build_request(method, url, content=body, headers=sent)
                r = await self.client.send(request, stream=True)
                try:
                    content = await self._body(r)
                finally:
                    await r.aclose()
        except (httpx.TimeoutException, TimeoutError):  # (asyncio's, before OSError's kin)
            limit = f" within {self._timeout:g} s" if self._timeout is not None else ""
            raise AgentTimeout(f"{url} did not answer{limit}") from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ClientError(f"invalid URL {url!r}: {exc}") from None
        except httpx.DecodingError as exc:  # (not a TransportError: the agent did answer)
            raise _undecodable(url, exc) from None
        except (httpx.TransportError, httpx.StreamError) as exc:
            raise self._error(url, exc) from None
        return HTTPReply(r.status_code, r.headers, content, str(r.url))

    async def _body(self, response: httpx.Response) -> bytes:
        """The whole body, refused once it is past ``max_answer_bytes`` (counted as
        decoded: a compressed body cannot get past it either)."""
        limit = self.max_answer_bytes
        if limit is None:
            return await response.aread()
        url = str(response.url)
        length = response.headers.get("content-length", "")
        if (length.isascii() and length.isdigit() and int(length) > limit
                and "content-encoding" not in response.headers):
            raise too_large(url, limit)  # said before any of it is read
        out: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():  # (aread's own loop, counted)
            size += len(chunk)
            if size > limit:
                raise too_large(url, limit)
            out.append(chunk)
        return b"".join(out)


class _HTTPXStreamReply(StreamReply):
    def __init__(self, response: httpx.Response, transport: HTTPXTransport) -> None:
        self._response = response
        self._transport = transport
        self.status = response.status_code
        self.headers = response.headers
        self.url = str(response.url)
        self.max_bytes = transport.max_answer_bytes

    async def chunks(self) -> AsyncGenerator[bytes, None]:
        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx.TimeoutException:
            limit = self._transport._timeout
            quiet = f" for {limit:g} s" if limit is not None else ""
            raise AgentTimeout(f"{self.url} sent nothing{quiet}") from None
        except httpx.DecodingError as exc:
            raise _undecodable(self.url, exc) from None
        except (httpx.TransportError, httpx.StreamError) as exc:
            if self._transport.client.is_closed:  # closed under the reader: not resumed
                raise ClientError(CLOSED) from None
            # A reset, a half-sent chunk, a server gone away: the stream broke.
            text = _reason(exc) if isinstance(exc, httpx.TransportError) else str(exc)
            raise AgentUnreachable(f"the stream from {self.url} broke: {text}") from None

    async def aclose(self) -> None:
        await self._response.aclose()


def _undecodable(url: str, exc: httpx.DecodingError) -> BadResponse:
    """An answer whose body its ``Content-Encoding`` does not decode (labelled gzip,
    sent plain): the agent answered, with something that cannot be read."""
    return BadResponse(f"{url} answered a body that is not in the encoding its "
                       f"Content-Encoding names ({exc})")


def _reason(exc: httpx.TransportError) -> str:
    # httpx's messages are often empty or carry a nested errno tuple; keep one line.
    text = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
    if isinstance(exc, httpx.ConnectError):
        return f"connection failed ({text})" if text else "connection failed"
    if isinstance(exc, httpx.RemoteProtocolError) and "illegal" in text:
        # an HTTP/2-only server, such as a gRPC port, answers with frames HTTP/1.1 cannot read
        try:
            hint = f"; a gRPC port? its address is grpc://{exc.request.url.netloc.decode()}"
        except RuntimeError:  # no request to name
            hint = ""
        return f"the answer is not HTTP/1.1 ({text}){hint}"
    return text or type(exc).__name__
