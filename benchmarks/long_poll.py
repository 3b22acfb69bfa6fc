"""Long-polling GetTask (A2A 1.1, draft) beside an idle SSE stream: memory and wake-up.

    .venv/bin/python benchmarks/long_poll.py [--held 1000] [--rounds 200] [--out DIR]

An interlingua server (``interlingua serve``, memory store, one process) serves
``servers/asking_agent.py``, whose tasks wait for input. Measured from outside:

* **memory per held request**: the server's resident memory (``/proc/PID/status``
  VmRSS) with N requests held, less what it was before they came, divided by N.
  Once with N ``GetTask`` long polls (JSON-RPC, ``A2A-Version: 1.1``,
  ``currentGeneration`` = the task's), once with N idle SSE streams
  (``SubscribeToTask``, v1.0), each on a server of its own, each request on its own
  connection and its own task.
* **wake-up latency**: a reader waits on a task (a long poll, or an SSE
  subscription that has read its first event); a follow-up message is sent to the
  task; the time from sending it to the reader's answer (long poll) or next event
  (SSE). The follow-up's own handling up to its commit is in both, alike.

Results: ``results/long_poll.json`` and ``results/long_poll.md`` (or ``--out DIR``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
AGENT = Path(__file__).resolve().parent / "servers" / "asking_agent.py"
V11 = {"A2A-Version": "1.1", "Content-Type": "application/json"}
V10 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "interlingua.cli.main", "serve", str(AGENT),
             "--port", str(self.port), "--store", "memory://", "--log-level", "warning",
             "--long-poll-max-wait", "600", "--max-connections-per-ip", "100000"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.05)

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _rpc(method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()


def _message(n: int, task_id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"messageId": f"m-{n}-{time.monotonic_ns()}", "role": "ROLE_USER",
                           "parts": [{"text": "more"}]}
    if task_id:
        out["taskId"] = task_id
    return out


async def _tasks(client: httpx.AsyncClient, url: str, n: int) -> list[tuple[str, int]]:
    """``n`` tasks waiting for input: (id, generation)."""
    out = []
    for i in range(n):
        r = await client.post(url + "/", headers=V11,
                              content=_rpc("SendMessage", {"message": _message(i)}))
        task = r.json()["result"]["task"]
        out.append((task["id"], int(task["generation"])))
    return out


def _request(url: str, body: bytes, headers: dict[str, str]) -> bytes:
    host = url.removeprefix("http://")
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (f"POST / HTTP/1.1\r\nHost: {host}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
            ).encode() + body


async def _open(url: str, data: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(data)
    await writer.drain()
    return reader, writer


def _follow_up(n: int, task_id: str) -> bytes:
    return _rpc("SendMessage", {"message": _message(n, task_id),
                                "configuration": {"returnImmediately": True}})


async def _answer(reader: asyncio.StreamReader) -> bytes:
    """The body of a plain (Content-Length) HTTP answer."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return await reader.readexactly(length)


async def _settle(server: Server) -> int:
    """The server's RSS once it has stopped moving (KiB)."""
    last = server.rss_kib()
    for _ in range(20):
        await asyncio.sleep(0.25)
        now = server.rss_kib()
        if abs(now - last) < 64:
            return now
        last = now
    return last


async def memory(kind: str, held: int) -> dict[str, float]:
    server = Server()
    try:
        async with httpx.AsyncClient(timeout=60) as client:
            tasks = await _tasks(client, server.url, held)
        before = await _settle(server)
        conns = []
        for i, (task_id, generation) in enumerate(tasks):
            if kind == "long-poll":
                body = _rpc("GetTask", {"id": task_id, "currentGeneration": str(generation)})
                conns.append(await _open(server.url, _request(server.url, body, V11)))
            else:
                body = _rpc("SubscribeToTask", {"id": task_id})
                reader, writer = await _open(server.url, _request(server.url, body, V10))
                await reader.readuntil(b"\r\n\r\n")  # the head
                await reader.readuntil(b"\n\n")  # the first event: the stream is open
                conns.append((reader, writer))
            if i % 100 == 99:
                await asyncio.sleep(0)
        await asyncio.sleep(1.0)  # the last requests reach their wait
        after = await _settle(server)
        # every request still held: none answered, refused or closed
        ended = sum(1 for reader, _ in conns if reader.at_eof()
                    or (kind == "long-poll" and reader._buffer))  # type: ignore[attr-defined]
        if ended:
            raise SystemExit(f"{ended} of {held} {kind} requests were not held")
        for _, writer in conns:
            writer.close()
        return {"held": held, "rss_before_kib": before, "rss_after_kib": after,
                "bytes_per_request": (after - before) * 1024 / held}
    finally:
        server.stop()


async def latency(rounds: int) -> dict[str, dict[str, float]]:
    server = Server()
    out: dict[str, list[float]] = {"long-poll": [], "sse": []}
    try:
        async with httpx.AsyncClient(timeout=60) as client:
            for i in range(rounds):
                ((task_id, generation),) = await _tasks(client, server.url, 1)
                # a long poll held (read as the SSE stream below is: off its socket),
                # then the follow-up
                reader, writer = await _open(server.url, _request(server.url, _rpc(
                    "GetTask", {"id": task_id, "currentGeneration": str(generation)}), V11))
                await asyncio.sleep(0.02)
                began = time.perf_counter()
                follow = asyncio.ensure_future(client.post(server.url + "/", headers=V11,
                                                           content=_follow_up(i, task_id)))
                answer = await _answer(reader)
                out["long-poll"].append(time.perf_counter() - began)
                assert int(json.loads(answer)["result"]["generation"]) > generation
                await follow
                writer.close()
                # an SSE subscription that has its first event, then the follow-up
                ((task_id, _),) = await _tasks(client, server.url, 1)
                reader, writer = await _open(server.url, _request(
                    server.url, _rpc("SubscribeToTask", {"id": task_id}), V10))
                await reader.readuntil(b"\r\n\r\n")  # the head
                await reader.readuntil(b"\n\n")  # the first event
                began = time.perf_counter()
                follow = asyncio.ensure_future(client.post(server.url + "/", headers=V11,
                                                           content=_follow_up(i, task_id)))
                await reader.readuntil(b"\n\n")
                out["sse"].append(time.perf_counter() - began)
                await follow
                writer.close()
    finally:
        server.stop()
    return {k: {"p50_ms": 1000 * statistics.median(v),
                "p99_ms": 1000 * statistics.quantiles(v, n=100)[98],
                "samples": len(v)} for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--held", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    opts = ap.parse_args()
    result = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "command": f"benchmarks/long_poll.py --held {opts.held} --rounds {opts.rounds}",
        "memory": {kind: asyncio.run(memory(kind, opts.held)) for kind in ("long-poll", "sse")},
        "latency": asyncio.run(latency(opts.rounds)),
    }
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "long_poll.json").write_text(json.dumps(result, indent=2) + "\n")
    mem, lat = result["memory"], result["latency"]
    md = [
        "# Long-polling GetTask beside an idle SSE stream",
        "",
        f"`{result['command']}` on {platform.platform()}, {os.cpu_count()} CPUs "
        f"(Python {platform.python_version()}); one server process, memory store.",
        "",
        "| | memory per held request | wake-up p50 | wake-up p99 |",
        "|---|---:|---:|---:|",
        f"| long poll (GetTask, 1.1) | {mem['long-poll']['bytes_per_request'] / 1024:.1f} KiB"
        f" | {lat['long-poll']['p50_ms']:.2f} ms | {lat['long-poll']['p99_ms']:.2f} ms |",
        f"| idle SSE stream (SubscribeToTask) | {mem['sse']['bytes_per_request'] / 1024:.1f}"
        f" KiB | {lat['sse']['p50_ms']:.2f} ms | {lat['sse']['p99_ms']:.2f} ms |",
        "",
        f"Memory: the server's RSS with {opts.held} requests held, less before, divided by "
        f"{opts.held}. Wake-up: from sending a follow-up to the task to the waiting "
        "reader's answer (long poll) or next event (SSE); both include the follow-up's "
        f"handling up to its commit. {opts.rounds} rounds each.",
        "",
    ]
    (opts.out / "long_poll.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
