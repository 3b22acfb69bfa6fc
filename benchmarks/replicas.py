"""Cross-replica streaming: two ``interlingua serve`` replicas on one PostgreSQL
database and one Redis; a turn runs on replica B while a stream is held on A.

    .venv/bin/python benchmarks/replicas.py [--events N] [--runs R] [--out FILE]

Measured, for a stream held on the replica running the turn (same) and on the
other one (cross):

* latency: from the moment the executor emitted an event (its text carries
  the time) to the moment the client read it from the stream, p50 and p99,
  with one event every 2 ms;
* throughput: events/s of a stream of N chunks emitted as fast as the executor
  can, from the first event read to the last.

Needs PostgreSQL (127.0.0.1:5432, trust auth) and Redis (127.0.0.1:6379): a
database of its own is made and dropped. The report goes to stdout and to
``benchmarks/results/replicas.md`` (``--out`` writes elsewhere).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg
import httpx
import msgspec

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
RESULTS = ROOT / "benchmarks" / "results" / "replicas.md"

AGENT = '''
import asyncio, time
from interlingua import Agent, Context

async def run(ctx: Context) -> None:
    n, pause = ctx.text.split()
    aid = None
    for i in range(int(n)):
        aid = await ctx.artifact(f"{time.time():.6f}", artifact_id=aid, append=aid is not None)
        if float(pause):
            await asyncio.sleep(float(pause))
        elif i % 64 == 63:
            await asyncio.sleep(0)
    await ctx.complete("done")

agent = Agent("Bench", "Streams timestamps.", run)
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def make_database() -> tuple[str, str]:
    name = f"interlingua_bench_{uuid.uuid4().hex[:8]}"
    conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return name, f"postgresql://postgres@127.0.0.1:5432/{name}"


async def drop_database(name: str) -> None:
    conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def start(agent: Path, store: str, bus: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [str(PYTHON), "-m", "interlingua.cli.main", "serve", str(agent), "--port", str(port),
         "--store", store, "--bus", bus, "--log-level", "warning", "--drain-seconds", "0"],
        cwd=ROOT, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=0.5).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    raise RuntimeError("a replica did not start")


def rpc(method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def one_stream(runner: str, reader: str, n: int, pause: float,
                     ) -> tuple[list[float], float]:
    """Start a turn on ``runner``, follow it on ``reader``: (latencies, events/s)."""
    headers = {"A2A-Version": "1.0"}
    async with httpx.AsyncClient(timeout=120) as client:
        sent = await client.post(runner + "/", headers=headers, json=rpc("SendMessage", {
            "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": f"{n} {pause}"}]},
            "configuration": {"returnImmediately": True}}))
        task_id = sent.json()["result"]["task"]["id"]
        latencies: list[float] = []
        first = last = 0.0
        buffer = b""
        async with client.stream("POST", reader + "/", headers=headers,
                                 json=rpc("SubscribeToTask", {"id": task_id})) as resp:
            async for chunk in resp.aiter_raw():
                buffer += chunk
                *frames, buffer = buffer.split(b"\n\n")
                now = time.time()
                for frame in frames:
                    for line in frame.split(b"\n"):
                        if not line.startswith(b"data:"):
                            continue
                        result = msgspec.json.decode(line[5:])["result"]
                        update = result.get("artifactUpdate")
                        if update is None:
                            continue
                        latencies.append(now - float(update["artifact"]["parts"][0]["text"]))
                        first = first or now
                        last = now
    rate = (len(latencies) - 1) / (last - first) if last > first else 0.0
    return latencies, rate


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(args: argparse.Namespace) -> str:
    name, store = await make_database()
    bus = f"redis://127.0.0.1:6379/0?prefix=bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "bench_agent.py"
        agent.write_text(AGENT)
        procs = []
        try:
            a_proc, a = start(agent, store, bus)
            procs.append(a_proc)
            b_proc, b = start(agent, store, bus)
            procs.append(b_proc)
            rows = []
            for label, reader in (("same replica", b), ("cross replica", a)):
                lat: list[float] = []
                rates: list[float] = []
                for _ in range(args.runs):
                    got, _ = await one_stream(b, reader, 300, 0.002)
                    lat += got[10:]  # the first events race the subscription
                    _, rate = await one_stream(b, reader, args.events, 0)
                    rates.append(rate)
                rows.append((label, pct(lat, 0.5) * 1000, pct(lat, 0.99) * 1000,
                             statistics.median(rates)))
        finally:
            for p in procs:
                p.terminate()
                p.wait(30)
            await drop_database(name)
    lines = [
        "# Cross-replica streaming",
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} CPUs: `.venv/bin/python benchmarks/replicas.py "
        f"--events {args.events} --runs {args.runs}`. Two `interlingua serve` replicas on "
        "one PostgreSQL database and one Redis (both local); the turn runs on B.",
        "",
        "| stream held on | latency p50 (ms) | latency p99 (ms) | events/s |",
        "| --- | ---: | ---: | ---: |",
        *(f"| {label} | {p50:.2f} | {p99:.2f} | {rate:,.0f} |" for label, p50, p99, rate in rows),
        "",
        "Latency: from the executor's emit to the client reading the event (one event every "
        "2 ms, 300 per run). Events/s: a stream of "
        f"{args.events} chunks emitted back to back, median of the runs.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    report = asyncio.run(measure(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report)
    sys.stdout.write(report)


if __name__ == "__main__":
    main()
