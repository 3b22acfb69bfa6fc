"""CPU per request of the echo server's ASGI app called directly, and where it goes.

No HTTP, no load generator, no second process: the app of ``servers/interlingua_echo.py``
is called in this process, one request after another, in rounds that alternate
between the kinds asked for; each figure is the best round (process CPU time over
its requests), which moves far less from run to run than a served figure on a
shared machine. ``--profile`` runs cProfile over one more round of each kind.

    .venv/bin/python benchmarks/in_process.py --store memory:// unary
    .venv/bin/python benchmarks/in_process.py --store sqlite:////tmp/x/tasks.db unary list
    .venv/bin/python benchmarks/in_process.py --store sqlite:////tmp/x/tasks.db list --profile

Kinds: ``unary`` (v1.0 ``SendMessage``, a new message id each), ``stream``
(``SendStreamingMessage`` asking for 1,000 chunks; per event), ``list`` (``ListTasks``,
pageSize 50; fill the store first: ``benchmarks/fill_store.py --url URL --tasks 1000``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import os
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "servers"))

from interlingua_echo import build_app  # noqa: E402

import interlingua  # noqa: E402

#: where interlingua's own functions are defined (cProfile names each by its file)
_PACKAGE = os.path.dirname(interlingua.__file__) + os.sep

STREAM_CHUNKS = 1000
_HEADERS = [(b"content-type", b"application/json"), (b"a2a-version", b"1.0"),
            (b"host", b"127.0.0.1")]


def _send_body(n: int, streaming: bool) -> bytes:
    message = {"messageId": f"in-process-{time.time_ns()}-{n}", "role": "ROLE_USER",
               "parts": [{"text": f"stream {STREAM_CHUNKS}" if streaming else "hello"}]}
    method = "SendStreamingMessage" if streaming else "SendMessage"
    return msgspec.json.encode({"jsonrpc": "2.0", "id": n, "method": method,
                                "params": {"message": message}})


_LIST_BODY = msgspec.json.encode(
    {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"pageSize": 50}})

#: kind -> (the body of request n, units of work per request)
KINDS: dict[str, tuple[Callable[[int], bytes], int]] = {
    "unary": (lambda n: _send_body(n, False), 1),
    "stream": (lambda n: _send_body(n, True), STREAM_CHUNKS + 2),
    "list": (lambda n: _LIST_BODY, 1),
}


class Caller:
    """Calls an ASGI app as a server would, one POST at a time."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def post(self, body: bytes) -> bytes:
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": "/", "raw_path": b"/",
            "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 80), "state": {},
            "headers": [*_HEADERS, (b"content-length", str(len(body)).encode())],
        }
        sent = False
        out: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client stays connected
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                out.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return b"".join(out)

    async def start(self) -> None:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        await queue.put({"type": "lifespan.startup"})
        started = asyncio.Event()

        async def send(message: dict[str, Any]) -> None:
            if message["type"].startswith("lifespan.startup"):
                started.set()

        self._lifespan = asyncio.create_task(self.app(
            {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, queue.get, send))
        self._queue = queue
        await started.wait()

    async def stop(self) -> None:
        await self._queue.put({"type": "lifespan.shutdown"})
        await asyncio.wait_for(self._lifespan, 10)


class CollectorClock:
    """Time spent in the cycle collector's passes (``gc.callbacks``), while on."""

    def __init__(self) -> None:
        self.on = False
        self.passes = 0
        self.seconds = 0.0
        #: CPU of the measured rounds, and the thresholds they ran with
        self.cpu = 0.0
        self.thresholds = gc.get_threshold()
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
        elif self.on:
            self.passes += 1
            self.seconds += time.process_time() - self._started


async def profile_posts(caller: Caller, bodies: list[bytes]) -> cProfile.Profile:
    """A cProfile of posting ``bodies`` one after another."""
    prof = cProfile.Profile()
    prof.enable()
    for body in bodies:
        await caller.post(body)
    prof.disable()
    return prof


def interlingua_calls(stats: pstats.Stats) -> tuple[int, int]:
    """The calls a profile counted into interlingua's own functions, and how many
    functions they went to. cProfile counts each resumption of a coroutine as a call.

    Ours are the functions defined under the imported package's directory, wherever
    the checkout lies (a checkout in a directory named ``interlingua`` is not all ours).
    """
    ours = [row for (path, _, _), row in stats.stats.items()  # type: ignore[attr-defined]
            if path.startswith(_PACKAGE)]
    return sum(row[1] for row in ours), len(ours)


async def _post_all(caller: Caller, bodies: list[bytes], concurrency: int) -> None:
    async def one_at_a_time(share: list[bytes]) -> None:
        for body in share:
            await caller.post(body)

    await asyncio.gather(*(one_at_a_time(bodies[k::concurrency]) for k in range(concurrency)))


async def measure(store: str, kinds: list[str], rounds: int, per_round: int,
                  profile: bool, concurrency: int = 1, young_gc_threshold: int | None = None,
                  clock: CollectorClock | None = None) -> dict[str, float]:
    caller = Caller(build_app(store, "http://127.0.0.1:1/"))
    await caller.start()
    if young_gc_threshold is not None:  # after the app's own start-up set its own
        gc.set_threshold(young_gc_threshold, *gc.get_threshold()[1:])
    n = 0
    best = {kind: float("inf") for kind in kinds}
    try:
        for kind in kinds:  # warm up, and check the answer is one
            make, _ = KINDS[kind]
            for _ in range(max(5, per_round // 10)):
                n += 1
                answer = await caller.post(make(n))
                if b'"error"' in answer[:200]:
                    raise SystemExit(f"{kind}: the server answered {answer[:300]!r}")
        for _ in range(rounds):
            for kind in kinds:
                make, units = KINDS[kind]
                bodies = [make(n + i) for i in range(per_round)]
                n += per_round
                if clock is not None:
                    clock.on = True
                t0 = time.process_time()
                await _post_all(caller, bodies, concurrency)
                spent = time.process_time() - t0
                if clock is not None:
                    clock.on = False
                    clock.cpu += spent
                    clock.thresholds = gc.get_threshold()
                best[kind] = min(best[kind], spent / (per_round * units))
        if profile:
            for kind in kinds:
                make, _ = KINDS[kind]
                bodies = [make(n + i) for i in range(per_round)]
                n += per_round
                text = io.StringIO()
                stats = pstats.Stats(await profile_posts(caller, bodies), stream=text)
                stats.sort_stats("cumulative").print_stats(35)
                stats.sort_stats("tottime").print_stats(25)
                calls, functions = interlingua_calls(stats)
                print(f"## cProfile: {kind}, {per_round} requests\n{text.getvalue()}"
                      f"{calls / per_round:,.0f} calls a request into {functions} functions"
                      " of interlingua\n")
    finally:
        await caller.stop()
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="+", choices=sorted(KINDS))
    parser.add_argument("--store", default="memory://", help="store URL (memory://)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--per-round", type=int, default=200,
                        help="requests per round (streams: 10 is plenty)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="requests in flight at once (1)")
    parser.add_argument("--young-gc-threshold", type=int, default=None,
                        help="the cycle collector's first threshold once the app has started"
                             " (default: what the app sets; the interpreter's own is 700)")
    args = parser.parse_args(argv)
    if args.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    import uvloop

    clock = CollectorClock()
    gc.callbacks.append(clock)
    best = uvloop.run(measure(args.store, args.kinds, args.rounds, args.per_round,
                              args.profile, args.concurrency, args.young_gc_threshold, clock))
    for kind, seconds in best.items():
        unit = "event" if kind == "stream" else "request"
        print(f"{kind}: {seconds * 1e6:.1f} µs CPU per {unit} (best of {args.rounds} rounds,"
              f" {args.store}, {args.concurrency} in flight)")
    share = clock.seconds / clock.cpu if clock.cpu else 0.0
    print(f"cycle collector in the measured rounds: {clock.passes} passes,"
          f" {clock.seconds * 1e3:.0f} ms, {share:.1%} of their CPU"
          f" (thresholds {clock.thresholds})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
