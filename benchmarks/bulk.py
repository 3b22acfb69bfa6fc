"""A small HTTP/1.1 client for exact request counts: N unary sends, N cancels.

wrk runs for a time, not a count; the memory cases need exactly N stored tasks, so
they send with this client instead, from the harness process (pinned to the load
generator's CPU). Each of ``concurrency`` workers keeps one keep-alive connection and
takes the next request number until all ``count`` are sent; every answer is read in full
and checked (HTTP 200 and a marker substring, or a callback).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from stream import ChunkedDecoder, read_headers

T = TypeVar("T")
RESPONSE_TIMEOUT_S = 30.0  # a server that stops answering fails the request, not the run


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on uvloop when it is installed (a cheaper client), else asyncio."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


class HTTPError(Exception):
    """An answer that is not a well-formed HTTP/1.1 response."""


@dataclass(frozen=True, slots=True)
class BulkResult:
    requests: int  # answered, good or bad
    errors: int  # bad answers and broken connections
    duration_s: float
    first_error: str = ""


def build_post(host: str, port: int, path: str, headers: dict[str, str], body: bytes) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() != "content-length"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The status and the whole body of one response (sized or chunked)."""
    status, headers = await read_headers(reader)
    if headers.get("transfer-encoding", "").lower() == "chunked":
        decoder = ChunkedDecoder()
        pieces = []
        while not decoder.done:
            data = await reader.read(1 << 16)
            if not data:
                raise HTTPError("connection closed inside a chunked body")
            pieces.append(decoder.feed(data))
        return status, b"".join(pieces)
    if "content-length" in headers:
        return status, await reader.readexactly(int(headers["content-length"]))
    raise HTTPError("response is neither chunked nor sized")


Check = Callable[[int, int, bytes], str]  # (request number, status, body) -> "" or the fault


def marker_check(marker: str) -> Check:
    """Good answers are HTTP 200 and contain ``marker``."""
    needle = marker.encode()

    def check(n: int, status: int, body: bytes) -> str:
        if status != 200:
            return f"HTTP {status}: {body[:200]!r}"
        if needle not in body:
            return f"no {marker} in {body[:200]!r}"
        return ""

    return check


async def post_many(
    host: str,
    port: int,
    path: str,
    headers: dict[str, str],
    bodies: Callable[[int], bytes],
    numbers: Sequence[int],
    concurrency: int,
    check: Check,
) -> BulkResult:
    """POST ``bodies(n)`` for every n in ``numbers`` over ``concurrency`` connections."""
    todo = iter(numbers)
    answered = 0
    errors = 0
    first_error = ""

    async def worker() -> None:
        nonlocal answered, errors, first_error
        reader, writer = await asyncio.open_connection(host, port)
        try:
            for n in todo:
                try:
                    writer.write(build_post(host, port, path, headers, bodies(n)))
                    status, body = await asyncio.wait_for(read_response(reader), RESPONSE_TIMEOUT_S)
                except (HTTPError, OSError, ValueError, TimeoutError,
                        asyncio.IncompleteReadError) as exc:
                    # The connection is in an unknown state after a broken answer.
                    errors += 1
                    first_error = first_error or f"request {n}: {exc!r}"
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
                    continue
                answered += 1
                fault = check(n, status, body)
                if fault:
                    errors += 1
                    first_error = first_error or f"request {n}: {fault}"
        finally:
            writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(numbers))))))
    return BulkResult(
        requests=answered,
        errors=errors,
        duration_s=time.perf_counter() - start,
        first_error=first_error,
    )


def send_template(
    host: str,
    port: int,
    path: str,
    headers: dict[str, str],
    template: str,
    numbers: Sequence[int],
    concurrency: int,
    marker: str,
) -> BulkResult:
    """Send ``template % n`` (every ``%d`` slot gets n) for each n, checking ``marker``."""
    slots = template.count("%d")

    def body(n: int) -> bytes:
        return (template % ((n,) * slots)).encode()

    return run_async(
        post_many(host, port, path, headers, body, numbers, concurrency, marker_check(marker))
    )
