"""The same agent over HTTP and over an MQTT 5 mesh: unary round trips and a
1,000-chunk stream, with interlingua's own client on both sides (so the figures
compare the transports, not two clients).

    .venv/bin/python benchmarks/mesh.py [--broker mqtt://HOST:PORT] [--rounds 3]

Without ``--broker`` it starts a Mosquitto of its own on a free loopback port with
``set_tcp_nodelay true`` (Mosquitto's default, false, holds each small message back
for up to 40 ms of delayed acknowledgement on Linux, which would be measured instead
of the mesh). It starts ``interlingua serve benchmarks/servers/mesh_echo.py --mesh …``
(memory store) as its own process, measures from this one, and writes
``benchmarks/results/mesh.md`` and ``mesh.json``:

- unary, sequential: one send at a time (blocking, the task back); latency
  p50/p99 and sends per second;
- unary, 16 at a time for ``--duration`` seconds: sends per second;
- stream: a streaming send of 1,000 artifact chunks; events per second as the
  client receives them (the median of ``--rounds``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from interlingua import Client

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CHUNKS = 1000


def _serve(broker: str, namespace: str) -> tuple[subprocess.Popen[str], str]:
    script = Path(sys.executable).with_name("interlingua")
    proc = subprocess.Popen(
        [str(script), "serve", "benchmarks/servers/mesh_echo.py", "--store", "memory://",
         "--port", "0", "--json", "--log-level", "warning", "--drain-seconds", "0",
         "--mesh", broker, "--namespace", namespace, "--mesh-session-expiry", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    info = json.loads(proc.stdout.readline())
    return proc, info["jsonrpc"]


async def _sequential(client: Any, n: int) -> dict[str, float]:
    times = []
    start = time.perf_counter()
    for i in range(n):
        t = time.perf_counter()
        await client.send(f"hello {i}")
        times.append(time.perf_counter() - t)
    total = time.perf_counter() - start
    times.sort()
    return {"sends": n, "p50_ms": 1000 * statistics.median(times),
            "p99_ms": 1000 * times[int(0.99 * (n - 1))], "sends_per_s": n / total}


async def _concurrent(client: Any, workers: int, duration: float) -> dict[str, float]:
    done = 0
    end = time.perf_counter() + duration

    async def work() -> None:
        nonlocal done
        while time.perf_counter() < end:
            await client.send("hello")
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(work() for _ in range(workers)))
    return {"workers": workers, "sends": done, "sends_per_s": done / (time.perf_counter() - start)}


async def _stream(client: Any, rounds: int) -> dict[str, float]:
    rates = []
    for _ in range(rounds):
        start = time.perf_counter()
        events = 0
        async for _event in client.stream(f"stream {CHUNKS}"):
            events += 1
        rates.append(events / (time.perf_counter() - start))
    return {"chunks": CHUNKS, "events": events, "events_per_s": statistics.median(rates),
            "rounds": rounds}


async def _measure(url: str, args: argparse.Namespace) -> dict[str, Any]:
    async with Client(url) as client:
        await client.send("warm up")
        await _stream(client, 1)
        return {
            "unary_sequential": await _sequential(client, args.sends),
            "unary_concurrent": await _concurrent(client, 16, args.duration),
            "stream": await _stream(client, args.rounds),
        }


def _mosquitto(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    import shutil
    import socket

    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf = folder / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\n"
                    "set_tcp_nodelay true\npersistence false\n")
    proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("mosquitto did not start") from None
            time.sleep(0.05)
    return proc, f"mqtt://127.0.0.1:{port}"


async def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser()
    ap.add_argument("--broker", default=None,
                    help="an existing broker [default: a Mosquitto of its own]")
    ap.add_argument("--sends", type=int, default=300)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    namespace = "bench" + secrets.token_hex(4)
    folder = Path(tempfile.mkdtemp(prefix="mesh-bench-"))
    broker_proc = None
    if args.broker is None:
        broker_proc, args.broker = _mosquitto(folder)
        args.broker_note = "a Mosquitto of its own with set_tcp_nodelay true"
    else:
        args.broker_note = f"the broker at {args.broker}"
    proc, http_url = _serve(args.broker, namespace)
    try:
        await asyncio.sleep(1.0)  # subscribed
        results = {
            "http": await _measure(http_url, args),
            "mesh": await _measure(f"{args.broker}/{namespace}/BenchEcho", args),
        }
    finally:
        proc.terminate()
        proc.wait(20)
        if broker_proc is not None:
            broker_proc.terminate()
            broker_proc.wait(10)
    results["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform(),
                          "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    text = _markdown(results, args)
    print(text)
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "mesh.json").write_text(json.dumps(results, indent=2) + "\n")
        (RESULTS / "mesh.md").write_text(text)


def _markdown(r: dict[str, Any], args: argparse.Namespace) -> str:
    h, m = r["http"], r["mesh"]
    rows = [
        ("unary, one at a time: p50 latency (ms)", "unary_sequential", "p50_ms", 2),
        ("unary, one at a time: p99 latency (ms)", "unary_sequential", "p99_ms", 2),
        ("unary, one at a time: sends/s", "unary_sequential", "sends_per_s", 0),
        ("unary, 16 at a time: sends/s", "unary_concurrent", "sends_per_s", 0),
        (f"stream of {CHUNKS} chunks: events/s", "stream", "events_per_s", 0),
    ]
    lines = [
        "# The same agent over HTTP and over an MQTT 5 mesh",
        "",
        f"`.venv/bin/python benchmarks/mesh.py` ({r['machine']['when']}; "
        f"{r['machine']['cpus']} CPUs shared with other work, Python {r['machine']['python']}, "
        f"{args.broker_note} on loopback, memory store). One interlingua process serves the agent on "
        "both; interlingua's client measures both, in one other process. "
        f"{args.sends} sequential sends, {args.duration:g} s of 16 concurrent senders, "
        f"median of {args.rounds} streams.",
        "",
        "| measure | HTTP (JSON-RPC v1.0) | mesh (MQTT 5, SAM dialect) |",
        "|---|---:|---:|",
    ]
    for label, group, key, digits in rows:
        lines.append(f"| {label} | {h[group][key]:.{digits}f} | {m[group][key]:.{digits}f} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    asyncio.run(main())
