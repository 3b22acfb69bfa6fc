"""How the client moves bytes: a small base and its httpx implementation.

The client logic only needs "GET this URL" and "POST these bytes"; keeping
that behind ``Transport`` lets tests of the logic plug in
``httpx.MockTransport`` (through ``HTTPXTransport(httpx_client)``) or any
other fake, and is the one place where network exceptions become ours.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from .errors import AgentTimeout, AgentUnreachable, ClientError

__all__ = ["DEFAULT_TIMEOUT", "HTTPReply", "HTTPXTransport", "Transport"]

#: seconds to wait for an answer; a blocking send lasts as long as its task turn
DEFAULT_TIMEOUT = 60.0


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


class Transport:
    """What the client needs from HTTP; subclasses fill in every method."""

    async def get(self, url: str, headers: Mapping[str, str]) -> HTTPReply:
        raise NotImplementedError

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError


class HTTPXTransport(Transport):
    """``Transport`` over an ``httpx.AsyncClient`` (ours, or one the caller owns)."""

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        verify: bool | str = True,
    ) -> None:
        self._owned = client is None
        self._timeout = timeout
        if client is None:
            connect = 10.0 if timeout is None else min(10.0, timeout)
            client = httpx.AsyncClient(
                timeout=httpx.Timeout(timeout, connect=connect), verify=verify
            )
        self.client = client

    async def get(self, url: str, headers: Mapping[str, str]) -> HTTPReply:
        return await self._send("GET", url, None, headers)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> HTTPReply:
        return await self._send("POST", url, body, headers)

    async def aclose(self) -> None:
        if self._owned:
            await self.client.aclose()

    async def _send(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> HTTPReply:
        try:
            r = await self.client.request(method, url, content=body, headers=dict(headers))
        except httpx.TimeoutException:
            limit = f" within {self._timeout:g} s" if self._timeout is not None else ""
            raise AgentTimeout(f"{url} did not answer{limit}") from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ClientError(f"invalid URL {url!r}: {exc}") from None
        except httpx.TransportError as exc:
            raise AgentUnreachable(f"cannot reach {url}: {_reason(exc)}") from None
        return HTTPReply(r.status_code, r.headers, r.content, str(r.url))


def _reason(exc: httpx.TransportError) -> str:
    # httpx's messages are often empty or carry a nested errno tuple; keep one line.
    text = str(exc).strip().splitlines()[-1] if str(exc).strip() else ""
    if isinstance(exc, httpx.ConnectError):
        return f"connection failed ({text})" if text else "connection failed"
    return text or type(exc).__name__
