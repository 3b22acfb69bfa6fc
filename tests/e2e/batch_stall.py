"""What a large JSON-RPC batch does to the other clients of a server.

A batch of ``ListTasks(pageSize=100, includeArtifacts)`` items is posted from one
thread while another client asks ``GetTask`` every 5 ms; the latencies of the
``GetTask`` calls answered while the batch was in flight are kept.

    python -m tests.e2e.batch_stall http://127.0.0.1:8000 [ITEMS]

against a server with at least 100 tasks (``fill``: 100 sends of 600 characters to an
echo agent), prints the batch's answer and the other client's latencies.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}
#: seconds between the other client's GetTask calls
INTERVAL = 0.005


def rpc(method: str, params: dict[str, Any], rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def fill(client: httpx.Client, url: str, tasks: int = 100, size: int = 600) -> str:
    """``tasks`` completed tasks with an artifact of ``size`` characters each; the
    id of the last."""
    task_id = ""
    for i in range(tasks):
        message = {"messageId": f"fill-{i}-{time.monotonic_ns()}", "role": "ROLE_USER",
                   "parts": [{"text": f"{i:04d}" + "x" * (size - 4)}]}
        answer = client.post(url, json=rpc("SendMessage", {"message": message}),
                             headers=V1).json()
        task_id = answer["result"]["task"]["id"]
    return task_id


def batch_body(items: int) -> bytes:
    return msgspec.json.encode([rpc("ListTasks", {"pageSize": 100, "includeArtifacts": True},
                                    i) for i in range(items)])


@dataclass
class Outcome:
    status: int = 0
    answer_bytes: int = 0
    #: the items answered with a result, and with an error (by code)
    results: int = 0
    errors: dict[int, int] = field(default_factory=dict)
    first_error: str = ""
    seconds: float = 0.0
    #: the other client's GetTask latencies (s) while the batch was in flight
    latencies: list[float] = field(default_factory=list)

    def p99(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]

    def describe(self) -> str:
        lat = self.latencies
        batch = (f"batch: HTTP {self.status}, {self.answer_bytes / 1e6:.1f} MB answer in "
                 f"{self.seconds:.2f} s, {self.results} results, errors {self.errors} "
                 f"{self.first_error!r}")
        if not lat:
            return batch + "; no GetTask call overlapped it"
        return (f"{batch}; other client's GetTask while it ran: {len(lat)} calls, p50 "
                f"{sorted(lat)[len(lat) // 2] * 1000:.1f} ms, p99 {self.p99() * 1000:.1f} ms, "
                f"max {max(lat) * 1000:.1f} ms")


def _post_raw(url: str, body: bytes) -> tuple[int, bytes]:
    """POST over a plain socket: (status, body). Its reads let go of the GIL, so that
    the other client in this process is not slowed by the reading of a large answer
    (an HTTP client parsing one in Python would be)."""
    parts = urlsplit(url)
    head = (f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Content-Type: application/json\r\nA2A-Version: 1.0\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    chunks: list[bytes] = []
    with socket.create_connection((parts.hostname, parts.port or 80), timeout=120) as sock:
        sock.sendall(head + body)
        while chunk := sock.recv(1 << 20):
            chunks.append(chunk)
    whole = b"".join(chunks)
    top, _, content = whole.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" not in top.lower(), top
    return int(top.split(b" ", 2)[1]), content


def measure(url: str, task_id: str, items: int = 500) -> Outcome:
    """Post a batch of ``items`` from a thread; meanwhile GetTask ``task_id`` in a loop."""
    out = Outcome()
    body = batch_body(items)
    sent = threading.Event()
    done = threading.Event()
    answered = threading.Event()

    def post_batch() -> None:
        start = time.perf_counter()
        sent.set()
        status, content = _post_raw(url, body)
        out.seconds = time.perf_counter() - start
        # decoding a large answer holds this process: calls after it do not count
        answered.set()
        out.status, out.answer_bytes = status, len(content)
        answer = msgspec.json.decode(content)
        for item in answer if isinstance(answer, list) else [answer]:
            if "error" in item:
                code = item["error"]["code"]
                out.errors[code] = out.errors.get(code, 0) + 1
                out.first_error = out.first_error or item["error"]["message"]
            else:
                out.results += 1
        done.set()

    get = msgspec.json.encode(rpc("GetTask", {"id": task_id}))

    async def probe() -> None:
        # One GetTask every INTERVAL whatever the answers before it do (a client
        # that waits for each answer before asking again would see a stall once).
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        async with httpx.AsyncClient(timeout=120, limits=limits) as c:
            (await c.post(url, content=get, headers=V1)).raise_for_status()  # warm

            async def one() -> tuple[float, bool]:
                start = time.perf_counter()
                r = await c.post(url, content=get, headers=V1)
                assert r.status_code == 200 and b'"result"' in r.content, r.text
                # counted when it ended before the batch's answer was all read
                return time.perf_counter() - start, not answered.is_set()

            thread = threading.Thread(target=post_batch, daemon=True)
            thread.start()
            sent.wait(10)
            calls = []
            while not answered.is_set():
                calls.append(asyncio.ensure_future(one()))
                await asyncio.sleep(INTERVAL)
            out.latencies = [took for took, counted in await asyncio.gather(*calls) if counted]
            await asyncio.to_thread(thread.join, 120)

    asyncio.run(probe())
    assert done.is_set(), "the batch was not answered"
    return out


def main() -> None:
    url = sys.argv[1].rstrip("/") + "/"
    items = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    with httpx.Client(timeout=60) as c:
        task_id = fill(c, url)
    print(measure(url, task_id, items).describe())


if __name__ == "__main__":
    main()
