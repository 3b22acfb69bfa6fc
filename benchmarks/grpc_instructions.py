"""gRPC: instructions per unary ``SendMessage``, counted by callgrind, interlingua against
a2a-sdk 1.3.0 (and the ``floor``: gRPC alone).

``grpc_load.py`` measures CPU seconds, which move by 10-20% between runs on a shared
machine; the instructions a server executes do not. Each server of ``servers/grpc_echo.py``
runs under ``valgrind --tool=callgrind`` while a client in another process sends v1.0
``SendMessage`` requests (the text ``hello``, 16 at a time) over ``grpc.aio``; every
server is counted at N and 2N requests, and the difference over N is the cost of one
request without start-up and warm-up. Every thread of the server process is counted
(gRPC's own threads too).

    .venv/bin/python benchmarks/grpc_instructions.py [--requests 300]
        [--sdk-python .interop/py-a2a-1.3.0/bin/python] [--out DIR]

Under valgrind interlingua's submit grace (50 ms) is stretched to ``instructions.GRACE_S``,
as ``instructions.py`` does. Results go to ``grpc_instructions.md`` and ``.json`` in
``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from instructions import GRACE_S

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVERS = HERE / "servers"
CONCURRENCY = 16


async def drive(port: int, units: int) -> None:
    import grpc

    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc

    metadata = (("a2a-version", "1.0"),)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        await asyncio.wait_for(channel.channel_ready(), 600)
        stub = rpc.A2AServiceStub(channel)
        numbers = iter(range(units))

        async def worker() -> None:
            for _ in numbers:
                answer = await stub.SendMessage(pb.SendMessageRequest(message=pb.Message(
                    message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                    parts=[pb.Part(text="hello")])), metadata=metadata, timeout=600)
                if answer.task.status.state != pb.TASK_STATE_COMPLETED:
                    raise SystemExit(f"grpc_instructions: a wrong answer: {answer}")

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


def count(name: str, python: str, units: int, work: Path) -> int:
    """Instructions the server ``name`` executed serving ``units`` sends (and starting)."""
    out = work / f"callgrind-{name}-{units}.out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SERVERS), str(ROOT / "src")]),
           "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "false", "BENCH_SUBMIT_GRACE": str(GRACE_S)}
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python,
         str(SERVERS / "grpc_echo.py"), name],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("PORT "):
            raise SystemExit(f"grpc_instructions: {name} did not start: {line!r}")
        asyncio.run(drive(int(line.split()[1]), units))
    finally:
        server.send_signal(signal.SIGTERM)
        _, log = server.communicate(timeout=600)
    found = re.search(r"Collected : (\d+)", log)
    if found is None:
        raise SystemExit(f"grpc_instructions: callgrind reported no total:\n{log[-2000:]}")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=300, help="N (each server also runs 2N)")
    ap.add_argument("--sdk-python", default=str(ROOT / ".interop" / "py-a2a-1.3.0" / "bin" /
                                                  "python"))
    ap.add_argument("--out", type=Path, default=HERE / "results")
    opts = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    started = dt.datetime.now(dt.UTC)
    servers = {"floor": sys.executable, "interlingua": sys.executable,
               "a2a-sdk 1.3.0": opts.sdk_python}
    n = opts.requests
    per: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="grpc-instructions-") as tmp:
        for name, python in servers.items():
            one = count(name.split()[0], python, n, Path(tmp))
            two = count(name.split()[0], python, 2 * n, Path(tmp))
            per[name] = (two - one) // n
            print(f"{name:14} {per[name]:>12,} instructions per request", file=sys.stderr)
    ratio = per["a2a-sdk 1.3.0"] / per["interlingua"]
    lines = ["| server | instructions per unary request | × floor |", "|---|---:|---:|"]  # noqa: RUF001
    lines += [f"| {name} | {count_:,} | {count_ / per['floor']:.2f} |"
              for name, count_ in per.items()]
    lines += ["", f"Instructions per unary request: a2a-sdk executes {ratio:.2f}x interlingua's"]
    table = "\n".join(lines)
    print("\n" + table)
    command = " ".join([".venv/bin/python benchmarks/grpc_instructions.py", *sys.argv[1:]])
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "grpc_instructions.md").write_text(
        "# gRPC: instructions per unary request\n\n"
        f"Made by `{command}` on {started:%Y-%m-%d %H:%M} UTC: each server under callgrind, "
        f"counted at {n:,} and {2 * n:,} `SendMessage` requests ({CONCURRENCY} in flight), "
        "the difference over "
        f"{n:,}; every thread of the server process counted. See the script's docstring.\n\n"
        + table + "\n")
    raw = {"command": command, "started": started.isoformat(), "requests": n,
           "concurrency": CONCURRENCY, "per_request": per, "sdk_over_interlingua": ratio}
    (opts.out / "grpc_instructions.json").write_text(json.dumps(raw, indent=1) + "\n")


if __name__ == "__main__":
    main()
