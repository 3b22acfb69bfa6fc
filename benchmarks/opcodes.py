"""Bytecodes and Python calls per unary send (or streamed event, or stream) of the echo
app called in process, by function: where the interpreter's work on the path goes.

The app is called as ``in_process.py`` calls it, on asyncio's own loop (so that its
scheduling shows as Python frames too), with a ``sys.settrace`` tracer that counts
each function's calls and the bytecodes it runs (``f_trace_opcodes``). A count, not
a time: the same tree gives the same figures run after run. The tracer slows the
program down, so the figures say where the work is, not what it costs; callgrind's
instructions (``in_process_count.py``) say that.

    .venv/bin/python benchmarks/opcodes.py unary
    .venv/bin/python benchmarks/opcodes.py stream --requests 3
    .venv/bin/python benchmarks/opcodes.py stream --chunks 1 --per-request --requests 50
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import sys
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "servers")]

import in_process  # noqa: E402
from interlingua_echo import build_app  # noqa: E402


class Tracer:
    """Calls and bytecodes by function (``file:name``)."""

    def __init__(self) -> None:
        self.opcodes: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        key = f"{os.path.basename(code.co_filename)}:{code.co_name}"
        if event == "call":
            self.calls[key] += 1
            frame.f_trace_opcodes = True
        elif event == "opcode":
            self.opcodes[key] += 1
        return self


async def run(kind: str, requests: int, store: str) -> Tracer:
    caller = in_process.Caller(build_app(store, "http://127.0.0.1:1/", submit_grace=1000.0))
    await caller.start()
    make, _ = in_process.KINDS[kind]
    for i in range(5):  # warm-up: first-use paths (templates, caches) left out
        await caller.post(make(i))
    tracer = Tracer()
    sys.settrace(tracer)
    try:
        for i in range(requests):
            await caller.post(make(100 + i))
    finally:
        sys.settrace(None)
    await caller.stop()
    return tracer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("unary", "stream"))
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=1000,
                        help="artifact chunks a stream asks for (1,000)")
    parser.add_argument("--per-request", action="store_true",
                        help="figures per stream, not per event")
    parser.add_argument("--store", default="memory://")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args(argv)
    if args.requests < 1 or args.chunks < 1:
        parser.error("--requests and --chunks must be at least 1")
    in_process.STREAM_CHUNKS = args.chunks
    tracer = asyncio.run(run(args.kind, args.requests, args.store))
    per_request = args.kind == "unary" or args.per_request
    units = args.requests * (1 if per_request else args.chunks + 2)
    unit = "send" if args.kind == "unary" else ("stream" if per_request else "event")
    print(f"{sum(tracer.opcodes.values()) / units:,.1f} bytecodes and "
          f"{sum(tracer.calls.values()) / units:,.2f} Python calls per {unit}")
    print(f"\n| function | bytecodes / {unit} | calls / {unit} |")
    print("| --- | ---: | ---: |")
    for key, n in tracer.opcodes.most_common(args.top):
        print(f"| `{key}` | {n / units:,.1f} | {tracer.calls[key] / units:,.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
