"""The growth case: does a server's CPU per streamed event stay flat as streams grow?

Each length (100, 1,000 and 10,000 artifact chunks by default) is asked for with the
message text ``stream N``. Per length: one stream is checked in full (N + 2 events, the
last one the completion), which also warms that length up; then the stream client sends
such streams back to back on one connection for the measurement's duration, and the
server's CPU time over it is divided by the events received. A figure that stays the same
from 100 to 10,000 chunks means no per-event cost grows with the length of the stream.
"""

from __future__ import annotations

import asyncio

import launch
from meter import Meter
from payloads import VerificationError, stream_text
from report_cases import GrowthSample
from stream import StreamError, StreamStats, build_request, one_stream, run_client
from targets import PROJECT_PYTHON

CHECK_TIMEOUT_S = 120.0


def verify_length(running: launch.Running, chunks: int, request_id: int) -> None:
    spec = running.target.stream
    if spec is None:
        raise VerificationError(f"{running.target.name} has no streaming endpoint")
    dialect = running.target.dialect
    body = dialect.body(request_id, dialect.stream_method, stream_text(chunks))
    headers = [f"{k}: {v}" for k, v in dialect.headers.items() if k.lower() != "content-type"]

    async def one() -> StreamStats:
        reader, writer = await asyncio.open_connection(launch.HOST, running.port)
        try:
            request = build_request(launch.HOST, running.port, spec.path, headers, body)
            return await one_stream(reader, writer, request)
        finally:
            writer.close()

    try:
        result = asyncio.run(asyncio.wait_for(one(), CHECK_TIMEOUT_S))
    except (StreamError, OSError, ValueError, TimeoutError, asyncio.IncompleteReadError) as exc:
        raise VerificationError(f"stream of {chunks} chunks failed: {exc}") from exc
    if result.events != chunks + 2:
        raise VerificationError(
            f"stream of {chunks} chunks had {result.events} events, expected {chunks + 2}"
        )
    if dialect.completed_marker not in result.last_event.decode():
        raise VerificationError(
            f"last event of a {chunks}-chunk stream is not the completion: "
            f"{result.last_event[:300]!r}"
        )


def measure_length(
    running: launch.Running,
    chunks: int,
    duration_s: float,
    server_cpu: int | None,
    load_cpu: int | None,
    round_no: int,
) -> GrowthSample:
    spec = running.target.stream
    if spec is None:
        raise VerificationError(f"{running.target.name} has no streaming endpoint")
    dialect = running.target.dialect
    meter = Meter(running.pid, server_cpu, load_cpu)
    result = run_client(
        launch.HOST,
        running.port,
        spec.path,
        dialect.body_template(dialect.stream_method, stream_text(chunks)),
        dialect.headers,
        1,
        duration_s,
        chunks + 2,
        load_cpu,
        str(PROJECT_PYTHON),
    )
    cpu, _, _, _ = meter.read()
    return GrowthSample(
        server=running.target.name,
        round=round_no,
        chunks=chunks,
        streams=result.streams,
        events=result.events,
        duration_s=result.duration_s,
        events_per_s=result.events_per_s,
        cpu_s=cpu,
        errors=result.errors,
    )
