"""SSE load client: streams per second, events per second and time to first event.

Run by ``run.py`` as its own process pinned to the load generator's CPU::

    python benchmarks/stream.py --host 127.0.0.1 --port 8000 --path /stream \\
        --body-template '{"id":%d,...}' --header 'A2A-Version: 1.0' \\
        --concurrency 1 --duration 5 --expect-events 1002

It prints one JSON object (``StreamResult``) on stdout. Each of ``--concurrency`` workers
keeps one keep-alive connection and sends streaming requests back to back until the
duration is over; a stream counts once its response has ended. The HTTP/1.1 chunked body
is decoded by hand over raw asyncio streams, so the client spends as little CPU per event
as possible and the server stays the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import msgspec


class StreamError(Exception):
    """The server's answer was not a well-formed SSE stream of the expected length."""


class StreamResult(msgspec.Struct):
    streams: int
    events: int
    duration_s: float
    events_per_s: float  # all workers together
    ttfe_p50_ms: float  # time from sending the request to the first complete event
    ttfe_p99_ms: float
    stream_p50_ms: float  # time from sending the request to the end of the stream
    errors: int
    last_event: str  # the last event of the last stream, for verification


class StreamStats(msgspec.Struct):
    events: int
    ttfe_s: float
    total_s: float
    last_event: bytes


def build_request(host: str, port: int, path: str, headers: list[str], body: bytes) -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}:{port}",
        "Accept: text/event-stream",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        *headers,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def read_headers(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return status, headers


class ChunkedDecoder:
    """Incremental decoder of an HTTP/1.1 chunked body (no trailers expected)."""

    def __init__(self) -> None:
        self._buf = b""
        self.done = False

    def feed(self, data: bytes) -> bytes:
        """Take bytes off the wire; return the body bytes completed by them."""
        buf = self._buf + data
        out: list[bytes] = []
        pos = 0
        while not self.done:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                break
            size = int(buf[pos:eol].split(b";")[0], 16)
            end = eol + 2 + size
            if len(buf) < end + 2:
                break
            if size == 0:
                self.done = True
            else:
                out.append(buf[eol + 2 : end])
            pos = end + 2
        self._buf = buf[pos:]
        return b"".join(out)


async def _body_pieces(
    reader: asyncio.StreamReader, headers: dict[str, str]
) -> AsyncIterator[bytes]:
    """Yield the decoded body as it arrives (chunked or content-length).

    Reads whatever the socket holds rather than one chunk at a time, so the client's cost
    per event stays well below the server's.
    """
    if headers.get("transfer-encoding", "").lower() == "chunked":
        decoder = ChunkedDecoder()
        while not decoder.done:
            data = await reader.read(1 << 16)
            if not data:
                raise StreamError("connection closed inside a chunked body")
            piece = decoder.feed(data)
            if piece:
                yield piece
    elif "content-length" in headers:
        yield await reader.readexactly(int(headers["content-length"]))
    else:
        raise StreamError("stream response is neither chunked nor sized")


async def one_stream(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> StreamStats:
    start = time.perf_counter()
    writer.write(request)
    status, headers = await read_headers(reader)
    if status != 200:
        raise StreamError(f"HTTP {status}")
    if not headers.get("content-type", "").startswith("text/event-stream"):
        raise StreamError(f"content-type is {headers.get('content-type')!r}")
    events = 0
    ttfe = 0.0
    pending = b""
    last = b""
    crlf: bool | None = None  # SSE lines may end in CRLF (the official SDK's do)
    async for piece in _body_pieces(reader, headers):
        if crlf is None:
            crlf = b"\r\n" in piece
        pending += piece.replace(b"\r\n", b"\n") if crlf else piece
        # Events end with a blank line; only complete events count.
        *complete, pending = pending.split(b"\n\n")
        if complete:
            if events == 0:
                ttfe = time.perf_counter() - start
            events += len(complete)
            last = complete[-1]
    if pending.strip():
        raise StreamError("stream ended inside an event")
    return StreamStats(
        events=events, ttfe_s=ttfe, total_s=time.perf_counter() - start, last_event=last
    )


async def _worker(
    host: str,
    port: int,
    path: str,
    headers: list[str],
    template: str,
    worker: int,
    deadline: float,
    expect_events: int,
    out: list[StreamStats],
) -> int:
    reader, writer = await asyncio.open_connection(host, port)
    n = 0
    errors = 0
    slots = template.count("%d")
    try:
        while time.perf_counter() < deadline:
            n += 1
            number = worker * 1_000_000 + n
            body = (template % ((number,) * slots)).encode()
            try:
                result = await one_stream(
                    reader, writer, build_request(host, port, path, headers, body)
                )
            except (StreamError, OSError, ValueError, asyncio.IncompleteReadError):
                # The connection is in an unknown state after a broken answer: start afresh.
                errors += 1
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
                continue
            if expect_events and result.events != expect_events:
                errors += 1
            out.append(result)
    finally:
        writer.close()
    return errors


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


async def run(
    host: str,
    port: int,
    path: str,
    headers: list[str],
    template: str,
    concurrency: int,
    duration_s: float,
    expect_events: int,
) -> StreamResult:
    streams: list[StreamStats] = []
    start = time.perf_counter()
    deadline = start + duration_s
    errors = await asyncio.gather(
        *(
            _worker(host, port, path, headers, template, w, deadline, expect_events, streams)
            for w in range(concurrency)
        )
    )
    elapsed = time.perf_counter() - start
    events = sum(s.events for s in streams)
    ttfe = [s.ttfe_s * 1000 for s in streams]
    return StreamResult(
        streams=len(streams),
        events=events,
        duration_s=elapsed,
        events_per_s=events / elapsed if elapsed > 0 else 0.0,
        ttfe_p50_ms=_percentile(ttfe, 50),
        ttfe_p99_ms=_percentile(ttfe, 99),
        stream_p50_ms=_percentile([s.total_s * 1000 for s in streams], 50),
        errors=sum(errors),
        last_event=streams[-1].last_event.decode() if streams else "",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/")
    parser.add_argument("--body-template", required=True, help="JSON body with %%d slots")
    parser.add_argument("--header", action="append", default=[], help="'Name: value'")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--expect-events", type=int, default=0)
    args = parser.parse_args(argv)
    runner = asyncio.run
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        pass
    result = runner(
        run(
            args.host,
            args.port,
            args.path,
            args.header,
            args.body_template,
            args.concurrency,
            args.duration,
            args.expect_events,
        )
    )
    sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def run_client(
    host: str,
    port: int,
    path: str,
    template: str,
    headers: dict[str, str],
    concurrency: int,
    duration_s: float,
    expect_events: int,
    cpu: int | None,
    python: str,
) -> StreamResult:
    """Run this client as its own process (pinned to ``cpu``) and return its result."""
    cmd = [
        python,
        __file__,
        "--host",
        host,
        "--port",
        str(port),
        "--path",
        path,
        "--body-template",
        template,
        "--concurrency",
        str(concurrency),
        "--duration",
        str(duration_s),
        "--expect-events",
        str(expect_events),
    ]
    for k, v in headers.items():
        if k.lower() != "content-type":
            cmd += ["--header", f"{k}: {v}"]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu), *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=duration_s + 300)
    if done.returncode != 0:
        raise StreamError(f"stream client failed ({done.returncode}):\n{done.stderr}")
    return msgspec.json.decode(done.stdout.strip().splitlines()[-1], type=StreamResult)
