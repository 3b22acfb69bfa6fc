"""Idle SSE streams: many open streaming sends that wait, for the memory-streams case.

Each stream is a streaming send with the message text ``idle``: the agent answers with
its task and one ``working`` status update, then sends nothing until the task is
canceled. A stream counts as open once both have arrived and been checked; it then stays
open, unread, until ``close`` (the server may send heartbeat comments meanwhile, which
wait in the socket buffers).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from payloads import Dialect, VerificationError, verify_idle_events
from stream import ChunkedDecoder, StreamError, build_request, read_headers

OPEN_TIMEOUT_S = 30.0


@dataclass(slots=True)
class IdleStream:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    task_id: str
    events: list[bytes]


@dataclass(slots=True)
class Opened:
    streams: list[IdleStream] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""


async def _until_working(
    reader: asyncio.StreamReader, dialect: Dialect
) -> tuple[str, list[bytes]]:
    status, headers = await read_headers(reader)
    if status != 200:
        raise StreamError(f"HTTP {status}")
    if not headers.get("content-type", "").startswith("text/event-stream"):
        raise StreamError(f"content-type is {headers.get('content-type')!r}")
    chunked = headers.get("transfer-encoding", "").lower() == "chunked"
    decoder = ChunkedDecoder()
    pending = b""
    events: list[bytes] = []
    while True:
        data = await reader.read(1 << 16)
        if not data:
            raise StreamError(f"the stream ended after {len(events)} event(s)")
        pending += decoder.feed(data) if chunked else data
        *complete, pending = pending.replace(b"\r\n", b"\n").split(b"\n\n")
        # Comment-only blocks (heartbeats) are no events.
        events += [e for e in complete if any(
            line and not line.startswith(b":") for line in e.split(b"\n"))]
        if len(events) >= 2:
            return verify_idle_events(dialect, events), events
        if decoder.done:
            raise StreamError(f"the stream ended after {len(events)} event(s)")


async def open_one(
    host: str, port: int, path: str, dialect: Dialect, body: bytes
) -> IdleStream:
    """Open one idle stream and wait for its task and its ``working`` update."""
    headers = [f"{k}: {v}" for k, v in dialect.headers.items() if k.lower() != "content-type"]
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(build_request(host, port, path, headers, body))
        task_id, events = await asyncio.wait_for(_until_working(reader, dialect), OPEN_TIMEOUT_S)
    except BaseException:
        writer.close()
        raise
    return IdleStream(reader=reader, writer=writer, task_id=task_id, events=events)


async def open_many(
    host: str,
    port: int,
    path: str,
    dialect: Dialect,
    template: str,
    numbers: Sequence[int],
    parallel: int,
) -> Opened:
    """Open an idle stream for every request number, ``parallel`` openings at a time."""
    opened = Opened()
    todo = iter(numbers)
    slots = template.count("%d")

    async def opener() -> None:
        for n in todo:
            body = (template % ((n,) * slots)).encode()
            try:
                opened.streams.append(await open_one(host, port, path, dialect, body))
            except (StreamError, VerificationError, OSError, ValueError, TimeoutError,
                    asyncio.IncompleteReadError) as exc:
                opened.errors += 1
                opened.first_error = opened.first_error or f"stream {n}: {exc!r}"

    await asyncio.gather(*(opener() for _ in range(max(1, min(parallel, len(numbers))))))
    return opened


async def close(streams: Sequence[IdleStream]) -> None:
    for s in streams:
        s.writer.close()
    for s in streams:
        try:
            await s.writer.wait_closed()
        except OSError:
            pass
