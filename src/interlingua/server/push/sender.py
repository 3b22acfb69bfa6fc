"""One webhook POST: through the guarded connection pool, redirects by hand.

Redirects are followed here rather than by a client library so that each
target is checked by the guard first, the number is capped, and the
credentials (``Authorization``, the notification token, an API key cookie)
are dropped as soon as a redirect leaves the original origin. 307 and 308
keep the method and body by definition; 301 and 302 are re-sent as the same
POST too (a webhook that moved); 303 asks for a GET, which would deliver
nothing, so it counts as a refusal.

Outcomes: a 2xx is delivered; 408, 429, 5xx, timeouts and network errors are
worth another try (``Retry-After`` is passed on); any other answer and any
guard refusal is final.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence
from email.utils import parsedate_to_datetime
from typing import NamedTuple

import httpcore
import httpx

from .ssrf import AddressRefused, GuardedBackend, Refused, UrlGuard

__all__ = ["SendResult", "WebhookSender"]

_REDIRECTS = frozenset({301, 302, 307, 308})
_RETRY_STATUSES = frozenset({408, 429})
_MAX_BODY = 64 * 1024
#: headers this sender writes, or that frame the request: never taken from a caller
_OWNED = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive",
                    "upgrade", "te", "trailer", "expect"})


class SendResult(NamedTuple):
    #: the final HTTP status, None when there was no answer
    status: int | None
    #: None when delivered; otherwise what went wrong
    error: str | None
    #: True: trying again will not help (the delivery is dead)
    final: bool = False
    #: seconds the receiver asked us to wait (``Retry-After``)
    retry_after: float | None = None

    @property
    def delivered(self) -> bool:
        return self.error is None


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    port = url.port or (443 if url.scheme == "https" else 80)
    return url.scheme, url.host.lower(), port


def _retry_after(value: str | None, now: float) -> float | None:
    if not value:
        return None
    value = value.strip()
    # delay-seconds is ASCII digits (RFC 9110 §10.2.3): str.isdigit() alone also
    # takes "²", which float() refuses, and "١٢", which no sender means
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        return max(parsedate_to_datetime(value).timestamp() - now, 0.0)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


class WebhookSender:
    """Posts notifications; every connection goes through the SSRF guard."""

    def __init__(
        self,
        guard: UrlGuard,
        *,
        timeout: float = 10.0,
        max_redirects: int = 3,
        max_connections: int = 32,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.guard = guard
        self.timeout = timeout
        self.max_redirects = max_redirects
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context or ssl.create_default_context(),
            max_connections=max_connections,
            keepalive_expiry=30.0,
            network_backend=GuardedBackend(guard, network_backend),
        )

    async def aclose(self) -> None:
        await self._pool.aclose()

    async def post(
        self,
        url: str,
        headers: Sequence[tuple[str, str]],
        body: bytes,
        *,
        sensitive: frozenset[str] = frozenset(),
        now: float = 0.0,
    ) -> SendResult:
        try:
            target = self.guard.check_url(url)
        except Refused as exc:
            return SendResult(None, f"refused: {exc}", final=True)
        owned = next((k for k, _ in headers if k.lower() in _OWNED), None)
        if owned is not None:  # (build_request refuses them first, naming the config's)
            return SendResult(None, f"refused: the sender writes {owned} itself", final=True)
        origin = _origin(target)
        sent_headers = list(headers)
        for hop in range(self.max_redirects + 1):
            result, location = await self._once(target, sent_headers, body, now)
            if location is None:
                return result
            if hop == self.max_redirects:
                return SendResult(result.status, f"more than {self.max_redirects} redirects",
                                  final=True)
            try:
                nxt = target.join(location)
                self.guard.check_url(str(nxt))
            except (Refused, httpx.InvalidURL, ValueError) as exc:
                return SendResult(result.status, f"redirect refused: {exc}", final=True)
            if _origin(nxt) != origin:
                sent_headers = [(k, v) for k, v in sent_headers if k.lower() not in sensitive]
            target = nxt
        raise AssertionError("unreachable")

    async def _once(
        self, url: httpx.URL, headers: list[tuple[str, str]], body: bytes, now: float
    ) -> tuple[SendResult, str | None]:
        """One exchange: (its result, the redirect location to follow, if any)."""
        request_headers = [
            (b"Host", url.netloc),
            (b"Content-Length", str(len(body)).encode()),
            *((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers),
        ]
        timeouts = {"connect": self.timeout, "read": self.timeout, "write": self.timeout,
                    "pool": self.timeout}
        status: int | None = None
        answer = httpx.Headers()
        try:
            # The whole exchange, not each read, within the timeout: a webhook that
            # drips its answer a byte at a time would otherwise hold a delivery
            # slot (and every other webhook's deliveries behind it) for as long as
            # it likes.
            async with asyncio.timeout(self.timeout), self._pool.stream(
                "POST",
                httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port,
                             target=url.raw_path),
                headers=request_headers,
                content=body,
                extensions={"timeout": timeouts},
            ) as response:
                status = response.status
                answer = httpx.Headers(response.headers)
                received = 0
                async for chunk in response.aiter_stream():
                    received += len(chunk)
                    if received > _MAX_BODY:
                        break  # the answer's body is not read: only its status counts
        except TimeoutError:  # (asyncio's: before OSError, of which it is one)
            if status is None:
                return SendResult(None, f"timed out after {self.timeout:g} s"), None
            # the answer came in time and its body did not: the status counts, and
            # the connection, its body unread, is dropped
        except AddressRefused as exc:
            return SendResult(None, f"refused: {exc}", final=True), None
        except httpcore.TimeoutException:
            return SendResult(None, f"timed out after {self.timeout:g} s"), None
        except (httpcore.NetworkError, httpcore.ProtocolError, OSError) as exc:
            return SendResult(None, f"{type(exc).__name__}: {exc or 'connection failed'}"), None
        if 200 <= status < 300:
            return SendResult(status, None), None
        if status in _REDIRECTS:
            location = answer.get("location")
            if location:
                return SendResult(status, f"HTTP {status}"), location
            return SendResult(status, f"HTTP {status} without a Location", final=True), None
        if status == 303:
            return SendResult(status, "HTTP 303 asks for a GET; a webhook takes a POST",
                              final=True), None
        retry = status >= 500 or status in _RETRY_STATUSES
        return SendResult(status, f"HTTP {status}", final=not retry,
                          retry_after=_retry_after(answer.get("retry-after"), now)), None
