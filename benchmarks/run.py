"""Benchmark interlingua against a raw ceiling and the official a2a-sdk, side by side.

    python benchmarks/run.py [--quick] [--only unary|stream|memory|<server>[,...]]

Each round starts every selected server in turn (fresh process, pinned to the server CPU),
checks that it answers the benchmark request correctly, measures it, and stops it; the
server order alternates between rounds. Results: a Markdown report on stdout and in
``benchmarks/results/latest.md`` (raw samples in ``latest.json``); progress on stderr.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import msgspec

import launch
import load
import procstat
import stream
from payloads import VerificationError, verify_unary
from report import MemorySample, RunInfo, ServerInfo, StreamSample, UnarySample, render
from targets import BENCH_DIR, PROJECT_PYTHON, TARGETS, Target, probe

CASES = ("unary", "stream", "memory")
RESULTS_DIR = BENCH_DIR / "results"
WARMUP_S = 1.0


@dataclass(frozen=True, slots=True)
class Settings:
    mode: str
    rounds: int
    duration_s: float
    concurrencies: list[int]
    stream_concurrencies: list[int]
    cases: list[str]
    servers: list[Target]
    server_cpu: int | None
    load_cpu: int | None


@dataclass(slots=True)
class Samples:
    unary: list[UnarySample]
    stream: list[StreamSample]
    memory: list[MemorySample]


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: list[str] | None) -> Settings:
    names = [t.name for t in TARGETS]
    parser = argparse.ArgumentParser(
        description="Benchmark interlingua against a raw ceiling and the official a2a-sdk.",
        epilog=f"cases: {', '.join(CASES)}; servers: {', '.join(names)}",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 round, 3 s per measurement, concurrency 16 only",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="comma-separated cases and/or servers to run (repeatable)",
    )
    parser.add_argument("--rounds", type=int, help="rounds (default 5, quick 1)")
    parser.add_argument("--duration", type=float, help="seconds per measurement (5, quick 3)")
    parser.add_argument("--concurrency", type=_ints, help="unary concurrencies (1,16,64)")
    parser.add_argument("--stream-concurrency", type=_ints, help="stream concurrencies (1,4)")
    parser.add_argument("--server-cpu", type=int, default=0, help="CPU for servers (0)")
    parser.add_argument("--load-cpu", type=int, default=1, help="CPU for load generators (1)")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    args = parser.parse_args(argv)

    tokens = [t.strip() for item in args.only for t in item.split(",") if t.strip()]
    unknown = [t for t in tokens if t not in CASES and t not in names]
    if unknown:
        parser.error(f"unknown --only value(s): {', '.join(unknown)}")
    cases = [c for c in CASES if c in tokens] or list(CASES)
    servers = [t for t in TARGETS if t.name in tokens] or list(TARGETS)
    quick = args.quick
    pin = not args.no_pin
    return Settings(
        mode="quick" if quick else "full",
        rounds=args.rounds or (1 if quick else 5),
        duration_s=args.duration or (3.0 if quick else 5.0),
        concurrencies=args.concurrency or ([16] if quick else [1, 16, 64]),
        stream_concurrencies=args.stream_concurrency or ([1] if quick else [1, 4]),
        cases=cases,
        servers=servers,
        server_cpu=args.server_cpu if pin else None,
        load_cpu=args.load_cpu if pin else None,
    )


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def check_tools(settings: Settings) -> None:
    load.wrk_path()
    if settings.server_cpu is not None and shutil.which("taskset") is None:
        raise load.LoadError("taskset is missing: install util-linux, or pass --no-pin")
    cpus = os.cpu_count() or 1
    if settings.server_cpu is not None and max(settings.server_cpu, settings.load_cpu or 0) >= cpus:
        raise load.LoadError(f"only {cpus} CPU(s): pass --no-pin or other --server-cpu/--load-cpu")


# ---- one server, one round ------------------------------------------------------------


def verify_stream(running: launch.Running) -> None:
    spec = running.target.stream
    if spec is None:
        return
    dialect = running.target.dialect
    # A message id of its own: the unary check already sent message 1, and a
    # repeated message id is answered with that earlier task (idempotent send).
    body = dialect.body(2, dialect.stream_method)
    headers = [f"{k}: {v}" for k, v in dialect.headers.items() if k.lower() != "content-type"]

    async def one() -> stream.StreamStats:
        reader, writer = await asyncio.open_connection(launch.HOST, running.port)
        try:
            request = stream.build_request(launch.HOST, running.port, spec.path, headers, body)
            return await stream.one_stream(reader, writer, request)
        finally:
            writer.close()

    try:
        result = asyncio.run(one())
    except (stream.StreamError, OSError, asyncio.IncompleteReadError) as exc:
        raise VerificationError(f"stream request failed: {exc}") from exc
    if result.events != spec.events:
        raise VerificationError(f"stream had {result.events} events, expected {spec.events}")
    if dialect.completed_marker not in result.last_event.decode():
        raise VerificationError(f"last stream event is not the completion: {result.last_event!r}")


def verify(running: launch.Running, settings: Settings) -> None:
    target = running.target
    status, body = launch.post(running, target.rpc_path, target.dialect.body(1), target.dialect)
    try:
        verify_unary(target.dialect, 1, status, body)
        if "stream" in settings.cases and target.stream is not None:
            verify_stream(running)
    except VerificationError as exc:
        raise VerificationError(
            f"{target.name} answered the benchmark request wrongly: {exc}\n"
            f"server log:\n{running.log_tail()}"
        ) from exc


class _Meter:
    """CPU counters around one measurement: server, load generator, and everything else."""

    def __init__(self, pid: int, settings: Settings) -> None:
        self.pid = pid
        self.cpus = (settings.server_cpu, settings.load_cpu)
        self.server = procstat.cpu_seconds(pid)
        self.load = procstat.reaped_children_cpu_seconds()
        self.busy = [procstat.cpu_busy_seconds(c) if c is not None else 0.0 for c in self.cpus]

    def read(self) -> tuple[float, float, float, float]:
        """Seconds of CPU: server, load generator, others on the server CPU, others on the
        load CPU (NaN for the last two without pinning)."""
        server = procstat.cpu_seconds(self.pid) - self.server
        load_cpu = procstat.reaped_children_cpu_seconds() - self.load
        others = [float("nan"), float("nan")]
        for i, (cpu, own) in enumerate(zip(self.cpus, (server, load_cpu), strict=True)):
            if cpu is not None:
                others[i] = max(0.0, procstat.cpu_busy_seconds(cpu) - self.busy[i] - own)
        return server, load_cpu, others[0], others[1]


def measure_unary(
    running: launch.Running,
    script: Path,
    concurrency: int,
    duration_s: float,
    settings: Settings,
    round_no: int,
) -> UnarySample:
    url = running.base_url + running.target.rpc_path
    meter = _Meter(running.pid, settings)
    result = load.run_wrk(url, script, concurrency, duration_s, settings.load_cpu)
    cpu, load_cpu, other_cpu, other_load_cpu = meter.read()
    return UnarySample(
        server=running.target.name,
        round=round_no,
        concurrency=concurrency,
        requests=result.requests,
        duration_s=result.duration_s,
        requests_per_s=result.requests_per_s,
        p50_ms=result.p50_ms,
        p99_ms=result.p99_ms,
        cpu_s=cpu,
        load_cpu_s=load_cpu,
        other_cpu_s=other_cpu,
        other_load_cpu_s=other_load_cpu,
        errors=result.errors,
    )


def measure_stream(
    running: launch.Running, concurrency: int, settings: Settings, round_no: int
) -> StreamSample:
    spec = running.target.stream
    if spec is None:
        raise load.LoadError(f"{running.target.name} has no streaming endpoint")
    dialect = running.target.dialect
    cmd = [
        str(PROJECT_PYTHON),
        str(BENCH_DIR / "stream.py"),
        "--host",
        launch.HOST,
        "--port",
        str(running.port),
        "--path",
        spec.path,
        "--body-template",
        dialect.body_template(dialect.stream_method),
        "--concurrency",
        str(concurrency),
        "--duration",
        str(settings.duration_s),
        "--expect-events",
        str(spec.events),
    ]
    for k, v in dialect.headers.items():
        if k.lower() != "content-type":
            cmd += ["--header", f"{k}: {v}"]
    if settings.load_cpu is not None:
        cmd = ["taskset", "-c", str(settings.load_cpu), *cmd]
    meter = _Meter(running.pid, settings)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=settings.duration_s + 120)
    cpu, load_cpu, other_cpu, other_load_cpu = meter.read()
    if done.returncode != 0:
        raise load.LoadError(f"stream client failed ({done.returncode}):\n{done.stderr}")
    result = msgspec.json.decode(done.stdout.strip().splitlines()[-1], type=stream.StreamResult)
    return StreamSample(
        server=running.target.name,
        round=round_no,
        concurrency=concurrency,
        streams=result.streams,
        events=result.events,
        duration_s=result.duration_s,
        events_per_s=result.events_per_s,
        ttfe_p50_ms=result.ttfe_p50_ms,
        ttfe_p99_ms=result.ttfe_p99_ms,
        stream_p50_ms=result.stream_p50_ms,
        cpu_s=cpu,
        load_cpu_s=load_cpu,
        other_cpu_s=other_cpu,
        other_load_cpu_s=other_load_cpu,
        errors=result.errors,
    )


def run_server_round(
    target: Target,
    info: ServerInfo,
    settings: Settings,
    round_no: int,
    workdir: Path,
    script: Path,
    samples: Samples,
) -> None:
    running = launch.start(target, settings.server_cpu, workdir)
    try:
        verify(running, settings)
        rss_idle = procstat.rss_bytes(running.pid)
        info.cpus_allowed = procstat.cpus_allowed(running.pid)
        info.store = running.store_url or target.store_note
        if running.health:
            store = {k: v for k, v in running.health.items() if k.startswith("store")}
            if store:
                info.health_store = msgspec.json.encode(store).decode()
        if "unary" in settings.cases:
            load.run_wrk(
                running.base_url + target.rpc_path, script, 16, WARMUP_S, settings.load_cpu
            )
            for c in settings.concurrencies:
                sample = measure_unary(running, script, c, settings.duration_s, settings, round_no)
                samples.unary.append(sample)
                _progress(
                    f"    unary c={c:<3} {sample.requests_per_s:9.0f} req/s  "
                    f"p50 {sample.p50_ms:7.2f} ms  p99 {sample.p99_ms:7.2f} ms  "
                    f"CPU {sample.cpu_ms_per_request:.3f} ms/req  "
                    f"errors {sample.errors}"
                )
        if "stream" in settings.cases and target.stream is not None:
            for c in settings.stream_concurrencies:
                ss = measure_stream(running, c, settings, round_no)
                samples.stream.append(ss)
                _progress(
                    f"    stream c={c:<3} {ss.events_per_s:9.0f} events/s  "
                    f"TTFE p50 {ss.ttfe_p50_ms:.2f} ms  "
                    f"CPU {ss.cpu_us_per_event:.2f} µs/event  errors {ss.errors}"
                )
        samples.memory.append(
            MemorySample(
                server=target.name,
                round=round_no,
                rss_idle_bytes=rss_idle,
                rss_after_bytes=procstat.rss_bytes(running.pid),
            )
        )
    finally:
        launch.stop(running)


# ---- the run ----------------------------------------------------------------------------


def run(settings: Settings) -> tuple[RunInfo, Samples]:
    info = RunInfo(
        started=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        mode=settings.mode,
        rounds=settings.rounds,
        duration_s=settings.duration_s,
        concurrencies=settings.concurrencies if "unary" in settings.cases else [],
        stream_concurrencies=settings.stream_concurrencies if "stream" in settings.cases else [],
        cases=settings.cases,
        nproc=os.cpu_count() or 1,
        cpu_model=_cpu_model(),
        kernel=platform.release(),
        harness_python=platform.python_version(),
        wrk=load.wrk_version(),
        server_cpu=settings.server_cpu,
        load_cpu=settings.load_cpu,
    )
    ready: list[tuple[Target, ServerInfo]] = []
    for target in settings.servers:
        found = probe(target)
        server = ServerInfo(
            name=target.name,
            description=target.description,
            skipped="" if found.ok else found.reason,
            python_version=found.python_version,
            versions=found.versions,
            env=dict(target.env),
        )
        info.servers.append(server)
        if found.ok:
            ready.append((target, server))
        else:
            _progress(f"skip {target.name}: {found.reason}")
    if "stream" in settings.cases:
        unwired = [t.name for t, _ in ready if t.stream is None]
        if unwired:
            _progress(f"stream case not wired yet for: {', '.join(unwired)}")
        if settings.cases == ["stream"]:
            for target, server in ready:
                if target.stream is None:
                    server.skipped = "no streaming endpoint wired yet (targets.py)"
            ready = [(t, s) for t, s in ready if t.stream is not None]
    info.baseline = next((t.name for t, _ in ready if t.baseline), "")

    samples = Samples(unary=[], stream=[], memory=[])
    with tempfile.TemporaryDirectory(prefix="interlingua-bench-") as tmp:
        scripts = Path(tmp)
        for round_no in range(1, settings.rounds + 1):
            order = ready if round_no % 2 else list(reversed(ready))
            for target, server in order:
                if server.failed:
                    continue
                _progress(f"round {round_no}/{settings.rounds}: {target.name}")
                dialect = target.dialect
                script = load.write_script(
                    scripts,
                    f"unary-{dialect.name}",
                    load.lua_script(
                        dialect.body_template(), dialect.headers, dialect.completed_marker
                    ),
                )
                workdir = Path(tmp) / f"{target.name}-r{round_no}"
                try:
                    run_server_round(target, server, settings, round_no, workdir, script, samples)
                except (launch.LaunchError, VerificationError) as exc:
                    # Loud, but the other servers' figures are still worth having.
                    server.failed = str(exc)
                    _progress(f"FAILED {target.name}: {exc}")
    return info, samples


def main(argv: list[str] | None = None) -> int:
    settings = parse_args(argv)
    try:
        check_tools(settings)
    except load.LoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if settings.load_cpu is not None:
        # The orchestrator itself stays off the server CPU too.
        os.sched_setaffinity(0, {settings.load_cpu})
    try:
        info, samples = run(settings)
    except load.LoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    text = render(info, samples.unary, samples.stream, samples.memory)
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "latest.md").write_text(text)
    raw = {"info": info, "unary": samples.unary, "stream": samples.stream, "memory": samples.memory}
    (RESULTS_DIR / "latest.json").write_bytes(msgspec.json.format(msgspec.json.encode(raw)))
    sys.stdout.write(text)
    failed = [s.name for s in info.servers if s.failed]
    if failed:
        print(f"error: failed: {', '.join(failed)} (see above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
