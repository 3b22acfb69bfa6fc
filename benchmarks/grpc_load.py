"""gRPC server CPU per request and per streamed event: interlingua against a2a-sdk 1.3.0.

    .venv/bin/python benchmarks/grpc_load.py [--seconds 8] [--rounds 3] [--procs 2]
        [--concurrency 16] [--sdk-python .interop/py-a2a-1.3.0/bin/python] [--out DIR]

Both servers are the echo agents of ``servers/grpc_echo.py`` on the v1.0 service
(with ``floor``, a bare grpc.aio server of canned answers, for what gRPC itself costs),
each in its own process pinned to CPU 0; the load is ``--procs`` client processes
(``grpc.aio``, pinned to CPU 1), each keeping ``--concurrency`` calls in flight.

- unary: ``SendMessage`` with the text ``hello`` (a completed task with one artifact);
- streaming: ``SendStreamingMessage`` with ``stream 200`` (the task, 200 artifact
  chunks, the final status), one stream at a time per in-flight slot.

The figure is the server's CPU time (utime + stime from ``/proc/<pid>/stat``) over
the measurement divided by the requests answered (or events received): on a shared
machine that holds far better than throughput. Every answer is checked (a completed
task echoing the text; a stream ending ``completed`` with all its chunks); one wrong
answer fails the run. Rounds alternate the servers' order; medians are printed, and
written with every sample to ``grpc.md`` and ``grpc.json`` in ``--out`` (default
``benchmarks/results``). The SDK's venv needs ``a2a-sdk[grpc]`` (scripts/interop-setup
makes one).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from multiprocessing import Pool
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVERS = HERE / "servers"
CLK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def start(name: str, python: str) -> tuple[subprocess.Popen[str], int]:
    # this checkout's src first: the project venv's own install may be another checkout's
    path = os.pathsep.join([str(SERVERS), str(ROOT / "src")])
    env = {**os.environ, "PYTHONPATH": path, "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "false"}
    proc = subprocess.Popen(["taskset", "-c", "0", python, str(SERVERS / "grpc_echo.py"), name],
                            stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"{name} did not start: {line!r}")
    return proc, int(line.split()[1])


def _load(args: tuple[int, str, int, float]) -> tuple[int, int]:
    """One client process: (calls answered, events received)."""
    os.sched_setaffinity(0, {1})
    return asyncio.run(_load_async(*args))


async def _load_async(port: int, mode: str, concurrency: int, seconds: float) -> tuple[int, int]:
    import grpc

    sys.path.insert(0, str(ROOT / "src"))
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc

    metadata = (("a2a-version", "1.0"),)
    calls = events = 0
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = rpc.A2AServiceStub(channel)

        def request(text: str) -> pb.SendMessageRequest:
            return pb.SendMessageRequest(message=pb.Message(
                message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)]))

        async def unary(deadline: float) -> None:
            nonlocal calls
            while time.monotonic() < deadline:
                answer = await stub.SendMessage(request("hello"), metadata=metadata)
                task = answer.task
                if task.status.state != pb.TASK_STATE_COMPLETED or \
                        task.artifacts[0].parts[0].text != "hello":
                    raise SystemExit(f"wrong answer: {answer}")
                calls += 1

        async def streaming(deadline: float) -> None:
            nonlocal calls, events
            while time.monotonic() < deadline:
                got = [ev async for ev in stub.SendStreamingMessage(request("stream 200"),
                                                                     metadata=metadata)]
                chunks = sum(ev.WhichOneof("payload") == "artifact_update" for ev in got)
                last = got[-1]
                if chunks != 200 or last.status_update.status.state != pb.TASK_STATE_COMPLETED:
                    raise SystemExit(f"wrong stream: {chunks} chunks, last {last}")
                calls += 1
                events += len(got)

        # warm-up, not counted
        await stub.SendMessage(request("hello"), metadata=metadata)
        work = unary if mode == "unary" else streaming
        deadline = time.monotonic() + seconds
        await asyncio.gather(*(work(deadline) for _ in range(concurrency)))
    return calls, events


def measure(port: int, pid: int, mode: str, procs: int, concurrency: int,
            seconds: float) -> dict[str, float]:
    with Pool(procs) as pool:
        before = cpu_seconds(pid)
        started = time.monotonic()
        results = pool.map(_load, [(port, mode, concurrency, seconds)] * procs)
        elapsed = time.monotonic() - started
        used = cpu_seconds(pid) - before
    calls = sum(r[0] for r in results)
    events = sum(r[1] for r in results)
    per = events if mode == "streaming" else calls
    return {"per_s": per / elapsed, "cpu_us": used / per * 1e6 if per else float("nan")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--sdk-python", default=str(ROOT / ".interop" / "py-a2a-1.3.0" / "bin" /
                                                  "python"))
    ap.add_argument("--out", type=Path, default=HERE / "results",
                    help="directory for grpc.md and grpc.json (benchmarks/results)")
    opts = ap.parse_args()
    started = dt.datetime.now(dt.UTC)
    servers = {"floor": sys.executable, "interlingua": sys.executable,
               "a2a-sdk 1.3.0": opts.sdk_python}
    names = list(servers)
    samples: dict[tuple[str, str], list[dict[str, float]]] = {}
    for round_ in range(opts.rounds):
        order = names if round_ % 2 == 0 else names[::-1]
        for name in order:
            proc, port = start(name.split()[0], servers[name])
            try:
                for mode in ("unary", "streaming"):
                    got = measure(port, proc.pid, mode, opts.procs, opts.concurrency,
                                  opts.seconds)
                    samples.setdefault((name, mode), []).append(got)
                    print(f"round {round_ + 1} {name:14} {mode:9} {got['per_s']:9.0f}/s "
                          f"{got['cpu_us']:8.1f} us CPU each", file=sys.stderr)
            finally:
                proc.terminate()
                proc.wait(10)
    med: dict[tuple[str, str], dict[str, float]] = {}
    for name in names:
        for mode in ("unary", "streaming"):
            runs = samples[(name, mode)]
            med[(name, mode)] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    lines = [f"{opts.procs} client processes x {opts.concurrency} in flight, "
             f"{opts.seconds:g} s, median of {opts.rounds} rounds", "",
             "| server | unary req/s | CPU per request | streamed events/s | CPU per event |",
             "|---|---:|---:|---:|---:|"]
    for name in names:
        u, st = med[(name, "unary")], med[(name, "streaming")]
        lines.append(f"| {name} | {u['per_s']:.0f} | {u['cpu_us']:.0f} µs | {st['per_s']:.0f} | "
                     f"{st['cpu_us']:.1f} µs |")
    ours, theirs = "interlingua", "a2a-sdk 1.3.0"
    for mode, what in (("unary", "request"), ("streaming", "event")):
        ratio = med[(theirs, mode)]["cpu_us"] / med[(ours, mode)]["cpu_us"]
        lines += ["", f"CPU per {what}: a2a-sdk uses {ratio:.1f}x interlingua's"]
    lines += ["", "Every round (CPU per request / per event, µs):", "",
              "| server | " + " | ".join(f"round {i + 1}" for i in range(opts.rounds)) + " |",
              "|---|" + "---:|" * opts.rounds]
    for name in names:
        cells = [f"{u['cpu_us']:.0f} / {st['cpu_us']:.1f}"
                 for u, st in zip(samples[(name, "unary")], samples[(name, "streaming")],
                                  strict=True)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print("\n" + table)
    command = " ".join([".venv/bin/python benchmarks/grpc_load.py", *sys.argv[1:]])
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "grpc.md").write_text(
        "# gRPC: server CPU per request and per streamed event\n\n"
        f"Made by `{command}` on {started:%Y-%m-%d %H:%M} UTC ({os.cpu_count()} CPUs, shared "
        "with other work while it ran: req/s moves a lot between runs, CPU per request and "
        "per event less). The servers are pinned to CPU 0, the load to CPU 1; `floor` is a "
        "bare `grpc.aio` server answering with canned, pre-serialized messages: what gRPC "
        "itself costs. See the script's docstring.\n\n" + table + "\n")
    raw = {"command": command, "started": started.isoformat(), "cpus": os.cpu_count(),
           "procs": opts.procs, "concurrency": opts.concurrency, "seconds": opts.seconds,
           "samples": {f"{name} {mode}": runs for (name, mode), runs in samples.items()}}
    (opts.out / "grpc.json").write_text(json.dumps(raw, indent=1) + "\n")


if __name__ == "__main__":
    main()
