"""Benchmark interlingua against a raw ceiling and the official a2a-sdk, side by side.

    python benchmarks/run.py [--quick] [--only <case>|<server>[,...]] [--out DIR]
    python benchmarks/run.py --check [--threshold PERCENT] [--retries N]
    python benchmarks/run.py --write-baseline [RESULTS.json]

Each round starts every selected server in turn (fresh process, pinned to the server CPU),
checks that it answers the benchmark request correctly, measures it, and stops it; the
server order alternates between rounds, and so does the order of list-tasks' filters.
The memory-tasks, memory-streams, growth and list-tasks cases each get a server process of their own, in the first ``--case-rounds``
rounds. Results: a Markdown report on stdout and in ``benchmarks/results/latest.md`` (raw
samples in ``latest.json``; ``--out`` writes elsewhere); progress on stderr.
``--check`` is the regression guard: a quick run of the unary and stream cases, written to
a temporary directory, whose CPU ratios to raw are compared with the committed baseline
``benchmarks/results/baseline.json`` (``regression.py``); a server with a figure beyond the
threshold is measured again, beside raw, up to ``--retries`` times. The baseline moves only
by a commit of ``--write-baseline`` (a run's results, or a results file given, written
there), never by a run of its own accord. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as dt
import os
import platform
import resource
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

import growth
import launch
import listing
import load
import memory_cases
import procstat
import regression
import stream
from meter import Meter
from payloads import VerificationError, stream_text, verify_unary
from report import (
    RAW,
    FillInfo,
    MemorySample,
    RunInfo,
    Samples,
    ServerInfo,
    StreamSample,
    UnarySample,
    render,
)
from report_cases import ListSample
from targets import BENCH_DIR, PROJECT_PYTHON, TARGETS, Target, by_name, probe

#: cases measured on the server process of the round, one after the other
ROUND_CASES = ("unary", "stream", "memory")
#: cases that each get a server process of their own
OWN_PROCESS_CASES = ("memory-tasks", "memory-streams", "growth", "list-tasks")
CASES = ROUND_CASES + OWN_PROCESS_CASES
RESULTS_DIR = BENCH_DIR / "results"
#: what --check compares with: moved only by --write-baseline and a commit, so that a
#: slow drift over many changes shows against it (the latest run moves with each full run)
BASELINE = RESULTS_DIR / "baseline.json"
#: the parts of a run's results the baseline keeps: the figures --check compares
BASELINE_PARTS = ("info", *regression.FIGURES)
#: what --check measures unless --only names cases: the figures it compares
CHECK_CASES = ("unary", "stream")
# Exit statuses. A plain run fails with FAILED; --check keeps 1 for a regression and
# reports a failed server apart, so a broken run never reads as a slower one.
OK, FAILED, MISSING, REGRESSED, CHECK_FAILED = 0, 1, 2, 1, 3
WARMUP_S = 1.0
#: --check: tries after the first for a server whose figure looks regressed
DEFAULT_RETRIES = 2
FD_HEADROOM = 512  # descriptors beyond two per idle stream (harness and server side)


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
    out_dir: Path
    # the cases with a server process of their own
    case_rounds: int
    tasks: int  # memory-tasks: unary sends measured
    tasks_warmup: int
    idle_streams: int  # memory-streams: idle streams measured
    idle_warmup: int
    growth_lengths: list[int]  # growth: artifact chunks per stream
    growth_duration_s: float
    list_sizes: list[int]  # list-tasks: stored tasks
    list_duration_s: float
    check: bool = False  # compare with the committed baseline (regression guard)
    #: write this run's results as the --check baseline (from a results file: no run)
    write_baseline: bool = False
    baseline_from: Path | None = None
    threshold: float = regression.DEFAULT_THRESHOLD
    #: --check: how often a server with a figure beyond the threshold is measured again
    retries: int = DEFAULT_RETRIES


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
    parser.add_argument(
        "--out",
        type=Path,
        help="directory for latest.md and latest.json (benchmarks/results; "
        "--check: a temporary directory)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="regression guard: a quick run of unary and stream; exit 1 if a CPU ratio to "
        "raw is worse than in benchmarks/results/baseline.json by more than --threshold",
    )
    parser.add_argument(
        "--write-baseline",
        nargs="?",
        const=True,
        default=None,
        metavar="RESULTS.json",
        help="write the baseline --check compares with (benchmarks/results/baseline.json): "
        "this run's unary and stream results, or those of RESULTS.json (a file run.py wrote, "
        "e.g. benchmarks/results/latest.json) without measuring; commit it deliberately",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=regression.DEFAULT_THRESHOLD * 100,
        help="--check: the change of a ratio, in percent, that counts as a regression (15)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=DEFAULT_RETRIES,
        help="--check: how often a server whose figure looks regressed is measured again, "
        f"beside raw; judged on its lowest ratio ({DEFAULT_RETRIES}; 0: never)",
    )
    parser.add_argument(
        "--case-rounds",
        type=int,
        help="rounds of memory-tasks, memory-streams, growth, list-tasks (2, quick 1)",
    )
    parser.add_argument("--tasks", type=int, help="memory-tasks: sends measured (20000, quick 2000)")
    parser.add_argument(
        "--idle-streams", type=int, help="memory-streams: idle streams measured (1000, quick 200)"
    )
    parser.add_argument(
        "--growth-lengths", type=_ints, help="growth: chunks per stream (100,1000,10000)"
    )
    parser.add_argument(
        "--growth-duration", type=float, help="growth: seconds per length (3, quick 1)"
    )
    parser.add_argument(
        "--list-sizes", type=_ints, help="list-tasks: stored tasks (1000,100000)"
    )
    parser.add_argument(
        "--list-duration", type=float, help="list-tasks: seconds per filter (3, quick 1)"
    )
    args = parser.parse_args(argv)

    tokens = [t.strip() for item in args.only for t in item.split(",") if t.strip()]
    unknown = [t for t in tokens if t not in CASES and t not in names]
    if unknown:
        parser.error(f"unknown --only value(s): {', '.join(unknown)}")
    check = args.check
    if check and args.write_baseline is not None:
        parser.error("--check compares with the baseline; --write-baseline writes it: not both")
    cases = [c for c in CASES if c in tokens] or list(CHECK_CASES if check else CASES)
    servers = [t for t in TARGETS if t.name in tokens] or list(TARGETS)
    if check and all(t.name != RAW for t in servers):
        servers.insert(0, by_name(RAW))  # every ratio compared is to raw
    out_dir = args.out
    if check and out_dir is not None and out_dir.resolve() == RESULTS_DIR.resolve():
        parser.error("--check never writes over the committed results: pick another --out")
    if out_dir is None and check:
        out_dir = Path(tempfile.mkdtemp(prefix="interlingua-bench-check-"))
    quick = args.quick or check
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
        out_dir=out_dir or RESULTS_DIR,
        case_rounds=args.case_rounds or (1 if quick else 2),
        tasks=args.tasks or (2000 if quick else 20_000),
        tasks_warmup=200 if quick else 1000,
        idle_streams=args.idle_streams or (200 if quick else 1000),
        idle_warmup=20 if quick else 50,
        growth_lengths=args.growth_lengths or [100, 1000, 10_000],
        growth_duration_s=args.growth_duration or (1.0 if quick else 3.0),
        list_sizes=args.list_sizes or [1000, 100_000],
        list_duration_s=args.list_duration or (1.0 if quick else 3.0),
        check=check,
        write_baseline=args.write_baseline is not None,
        baseline_from=None if args.write_baseline in (None, True) else Path(args.write_baseline),
        threshold=args.threshold / 100,
        retries=max(args.retries, 0),
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


def raise_fd_limit(settings: Settings) -> None:
    """Lift the soft descriptor limit for the idle streams; the servers inherit it.

    Each idle stream holds a socket in the harness and one in the server.
    """
    if "memory-streams" not in settings.cases:
        return
    need = 2 * (settings.idle_streams + settings.idle_warmup) + FD_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            raise load.LoadError(
                f"memory-streams needs {need} file descriptors, the hard limit is {hard}: "
                "raise it (ulimit -Hn) or pass a smaller --idle-streams"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


# ---- one server, one round ------------------------------------------------------------


def verify_stream(running: launch.Running) -> None:
    spec = running.target.stream
    if spec is None:
        return
    dialect = running.target.dialect
    # A message id of its own: the unary check already sent message 1, and a
    # repeated message id is answered with that earlier task (idempotent send).
    body = dialect.body(2, dialect.stream_method, text=stream_text(spec.events - 2))
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


def verify(running: launch.Running, settings: Settings, with_stream: bool = True) -> None:
    target = running.target
    status, body = launch.post(running, target.rpc_path, target.dialect.body(1), target.dialect)
    try:
        verify_unary(target.dialect, 1, status, body)
        if with_stream and "stream" in settings.cases and target.stream is not None:
            verify_stream(running)
    except VerificationError as exc:
        raise VerificationError(
            f"{target.name} answered the benchmark request wrongly: {exc}\n"
            f"server log:\n{running.log_tail()}"
        ) from exc


def _meter(running: launch.Running, settings: Settings) -> Meter:
    return Meter(running.pid, settings.server_cpu, settings.load_cpu)


def measure_unary(
    running: launch.Running,
    script: Path,
    concurrency: int,
    duration_s: float,
    settings: Settings,
    round_no: int,
) -> UnarySample:
    url = running.base_url + running.target.rpc_path
    meter = _meter(running, settings)
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
    meter = _meter(running, settings)
    try:
        result = stream.run_client(
            launch.HOST,
            running.port,
            spec.path,
            # Every agent reads ``stream N`` as N chunks (the official SDK's executor
            # cannot tell a streaming send from a unary one).
            dialect.body_template(dialect.stream_method, text=stream_text(spec.events - 2)),
            dialect.headers,
            concurrency,
            settings.duration_s,
            spec.events,
            settings.load_cpu,
            str(PROJECT_PYTHON),
        )
    except stream.StreamError as exc:
        raise load.LoadError(str(exc)) from exc
    cpu, load_cpu, other_cpu, other_load_cpu = meter.read()
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


def _describe(running: launch.Running, target: Target, info: ServerInfo) -> None:
    info.cpus_allowed = procstat.cpus_allowed(running.pid)
    info.store = running.store_url or target.store_note
    if running.health:
        store = {k: v for k, v in running.health.items() if k.startswith("store")}
        if store:
            info.health_store = msgspec.json.encode(store).decode()


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
        _describe(running, target, info)
        if "unary" in settings.cases and target.unary:
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


# ---- cases with a server process of their own ------------------------------------------


def _has_round_case(target: Target, round_cases: list[str]) -> bool:
    wired = {"unary": target.unary, "stream": target.stream is not None, "memory": True}
    return any(wired[c] for c in round_cases)


def applies(case: str, target: Target) -> bool:
    """Whether ``target`` can run ``case`` (its launcher has the mode the case needs)."""
    if case == "memory-streams":
        return target.idle_path is not None
    if case == "growth":
        return target.stream is not None
    if case == "list-tasks":
        return target.listing
    if case == "memory-tasks":
        return target.unary
    return case in CASES


def _memory_tasks_round(
    running: launch.Running, settings: Settings, round_no: int, samples: Samples
) -> None:
    verify(running, settings, with_stream=False)
    s = memory_cases.measure_tasks(running, settings.tasks, settings.tasks_warmup, round_no)
    samples.memory_tasks.append(s)
    disk = f"  disk {s.disk_bytes_per_task:,.0f} B/task" if s.disk_before_bytes >= 0 else ""
    _progress(
        f"    memory-tasks {s.tasks} tasks  RSS {s.bytes_per_task:,.0f} B/task{disk}  "
        f"{s.duration_s:.1f} s  errors {s.errors}"
    )


def _memory_streams_round(
    running: launch.Running, settings: Settings, round_no: int, samples: Samples
) -> None:
    verify(running, settings, with_stream=False)
    memory_cases.verify_idle(running)
    s = memory_cases.measure_streams(
        running, settings.idle_streams, settings.idle_warmup, round_no
    )
    samples.memory_streams.append(s)
    _progress(
        f"    memory-streams {s.streams} streams  RSS {s.bytes_per_stream:,.0f} B/stream  "
        f"fds {s.fds_before} -> {s.fds_open}  open {s.open_s:.2f} s  errors {s.errors}"
        + (f"  cancel errors {s.cancel_errors}" if s.cancel_errors > 0 else "")
    )


def _growth_round(
    running: launch.Running, settings: Settings, round_no: int, samples: Samples
) -> None:
    verify(running, settings, with_stream=False)
    for i, chunks in enumerate(settings.growth_lengths):
        growth.verify_length(running, chunks, 100 + i)
        g = growth.measure_length(
            running,
            chunks,
            settings.growth_duration_s,
            settings.server_cpu,
            settings.load_cpu,
            round_no,
        )
        samples.growth.append(g)
        _progress(
            f"    growth {chunks:>6} chunks  {g.streams} streams  "
            f"CPU {g.cpu_us_per_event:.2f} µs/event  errors {g.errors}"
        )


T = TypeVar("T")


def _in_round_order(items: list[T], round_no: int) -> list[T]:
    """``items`` in odd rounds, reversed in even ones (servers, list-tasks' filters):
    on a noisy machine none of them is then always the one measured last."""
    return items if round_no % 2 else items[::-1]


def _list_round(
    target: Target,
    info: ServerInfo,
    filled: listing.Filled,
    settings: Settings,
    round_no: int,
    workdir: Path,
    samples: Samples,
) -> None:
    # No unary check here: an echo send would add a task to the filled store.
    on_file = dataclasses.replace(target, store_url=filled.store_url)
    running = launch.start(on_file, settings.server_cpu, workdir)
    try:
        if not info.cpus_allowed:
            _describe(running, target, info)
        url = running.base_url + target.rpc_path
        for i, flt in enumerate(_in_round_order(listing.filters(filled), round_no)):
            matched = listing.verify(running, flt, 200 + i)
            script = listing.script(workdir, flt)
            meter = _meter(running, settings)
            result = load.run_wrk(url, script, 1, settings.list_duration_s, settings.load_cpu)
            cpu = meter.read()[0]
            sample = ListSample(
                server=target.name,
                round=round_no,
                stored=filled.result.tasks,
                filter=flt.name,
                matched=matched,
                requests=result.requests,
                requests_per_s=result.requests_per_s,
                p50_ms=result.p50_ms,
                p99_ms=result.p99_ms,
                cpu_s=cpu,
                errors=result.errors,
            )
            samples.listing.append(sample)
            _progress(
                f"    list-tasks {filled.result.tasks:>7} stored  {flt.name:<9} "
                f"p50 {sample.p50_ms:.2f} ms  p99 {sample.p99_ms:.2f} ms  "
                f"errors {sample.errors}"
            )
    except VerificationError as exc:
        raise VerificationError(f"{exc}\nserver log:\n{running.log_tail()}") from exc
    finally:
        launch.stop(running)


_OWN_ROUND: dict[str, Callable[[launch.Running, Settings, int, Samples], None]] = {
    "memory-tasks": _memory_tasks_round,
    "memory-streams": _memory_streams_round,
    "growth": _growth_round,
}


def run_case_round(
    case: str,
    target: Target,
    info: ServerInfo,
    settings: Settings,
    round_no: int,
    workdir: Path,
    samples: Samples,
    fills: list[listing.Filled],
) -> None:
    """One case on a server process started for it alone."""
    if case == "list-tasks":
        for filled in fills:
            _list_round(
                target,
                info,
                filled,
                settings,
                round_no,
                workdir / f"{filled.result.tasks}",
                samples,
            )
        return
    running = launch.start(target, settings.server_cpu, workdir)
    try:
        if not info.cpus_allowed:
            _describe(running, target, info)
        _OWN_ROUND[case](running, settings, round_no, samples)
    except VerificationError as exc:
        raise VerificationError(f"{exc}\nserver log:\n{running.log_tail()}") from exc
    finally:
        launch.stop(running)


# ---- the run ----------------------------------------------------------------------------


def _run_info(settings: Settings, load_version: str) -> RunInfo:
    """What the report says of this run; ``load_version`` names the load generator."""
    return RunInfo(
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
        wrk=load_version,
        server_cpu=settings.server_cpu,
        load_cpu=settings.load_cpu,
        case_rounds=min(settings.case_rounds, settings.rounds),
        tasks=settings.tasks,
        tasks_warmup=settings.tasks_warmup,
        idle_streams=settings.idle_streams,
        idle_warmup=settings.idle_warmup,
        growth_lengths=settings.growth_lengths,
        growth_duration_s=settings.growth_duration_s,
        list_duration_s=settings.list_duration_s,
    )


def _fill_stores(settings: Settings, info: RunInfo, tmp: Path) -> list[listing.Filled]:
    fills = []
    for size in settings.list_sizes:
        _progress(f"list-tasks: filling a SQLite store with {size:,} tasks")
        filled = listing.fill(tmp / "list-stores", size, settings.load_cpu)
        # Write the file out now, so the kernel's writeback does not land in a measurement.
        os.sync()
        fills.append(filled)
        info.fills.append(
            FillInfo(
                tasks=filled.result.tasks,
                contexts=filled.result.contexts,
                failed=filled.result.failed,
                seconds=filled.result.seconds,
                file_bytes=filled.path.stat().st_size,
            )
        )
    return fills


def run(settings: Settings) -> tuple[RunInfo, Samples]:
    info = _run_info(settings, load.wrk_version())
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
    round_cases = [c for c in settings.cases if c in ROUND_CASES]
    own_cases = [c for c in settings.cases if c in OWN_PROCESS_CASES]
    if "stream" in settings.cases:
        unwired = [t.name for t, _ in ready if t.stream is None]
        if unwired:
            _progress(f"stream case not wired yet for: {', '.join(unwired)}")
    for case in own_cases:
        info.not_wired[case] = [t.name for t, _ in ready if not applies(case, t)]
    # A server with none of the selected cases wired is left out of the report.
    for target, server in ready:
        if not _has_round_case(target, round_cases) and not any(
            applies(c, target) for c in own_cases
        ):
            server.skipped = "none of the selected cases is wired for it (targets.py)"
    ready = [(t, s) for t, s in ready if not s.skipped]
    info.baseline = next((t.name for t, _ in ready if t.baseline), "")

    samples = Samples()
    with tempfile.TemporaryDirectory(prefix="interlingua-bench-") as tmp:
        scripts = Path(tmp)
        fills: list[listing.Filled] = []
        if "list-tasks" in own_cases and any(t.listing for t, _ in ready):
            fills = _fill_stores(settings, info, Path(tmp))
        for round_no in range(1, settings.rounds + 1):
            for target, server in _in_round_order(ready, round_no):
                if server.failed:
                    continue
                with_round = _has_round_case(target, round_cases)
                cases = [
                    c
                    for c in own_cases
                    if round_no <= settings.case_rounds
                    and applies(c, target)
                    and c not in server.case_failed
                ]
                if not (with_round or cases):
                    continue
                _progress(f"round {round_no}/{settings.rounds}: {target.name}")
                dialect = target.dialect
                workdir = Path(tmp) / f"{target.name}-r{round_no}"
                if with_round:
                    script = load.write_script(
                        scripts,
                        f"unary-{dialect.name}",
                        load.lua_script(
                            dialect.body_template(), dialect.headers, dialect.completed_marker
                        ),
                    )
                    try:
                        run_server_round(
                            target, server, settings, round_no, workdir, script, samples
                        )
                    except (launch.LaunchError, VerificationError) as exc:
                        # Loud, but the other servers' figures are still worth having.
                        server.failed = str(exc)
                        _progress(f"FAILED {target.name}: {exc}")
                        continue
                for case in cases:
                    try:
                        run_case_round(
                            case,
                            target,
                            server,
                            settings,
                            round_no,
                            workdir / case,
                            samples,
                            fills,
                        )
                    except (
                        launch.LaunchError,
                        VerificationError,
                        load.LoadError,
                        stream.StreamError,
                        OSError,
                    ) as exc:
                        # Only this case is dropped for the server; the run still fails.
                        server.case_failed[case] = str(exc)
                        _progress(f"FAILED {target.name} in {case}: {exc}")
    samples.drop_failed(info)
    return info, samples


def _read_results(path: Path, purpose: str) -> dict[str, Any] | None:
    """A results file as plain decoded data; None (and why, on stderr) if unusable."""
    try:
        results: dict[str, Any] = msgspec.json.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError) as exc:
        print(f"error: {purpose} {path}: {exc}", file=sys.stderr)
        return None
    return results


def _shown(path: Path) -> Path:
    """``path`` relative to the project when it is in it."""
    return path.relative_to(BENCH_DIR.parent) if path.is_relative_to(BENCH_DIR.parent) else path


def _committed() -> dict[str, Any] | None:
    """The baseline --check compares with; None (and why, on stderr) if unusable."""
    return _read_results(BASELINE, "--check needs the committed baseline")


def write_baseline(results: dict[str, Any]) -> bool:
    """Write ``results``' figures as the baseline; False (and why) if they have none."""
    if not regression.ratios(results):
        print("error: no CPU ratio to raw in these results (unary or stream, raw and an "
              "interlingua server): the baseline is left as it is", file=sys.stderr)
        return False
    baseline = {part: results[part] for part in BASELINE_PARTS if part in results}
    _write_json(BASELINE, baseline)
    _progress(f"wrote the --check baseline {_shown(BASELINE)} (commit it, saying why it moves)")
    return True


def _results(info: RunInfo, samples: Samples) -> dict[str, Any]:
    """A run's results as ``latest.json`` holds them (plain decoded data)."""
    decoded: dict[str, Any] = msgspec.json.decode(
        msgspec.json.encode({"info": info, **samples.as_dict()}))
    return decoded


def _write_json(path: Path, results: dict[str, Any]) -> None:
    path.write_bytes(msgspec.json.format(msgspec.json.encode(results)))


def _write(out_dir: Path, stem: str, text: str, results: dict[str, Any]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.md").write_text(text)
    _write_json(out_dir / f"{stem}.json", results)


def check(
    settings: Settings,
    committed: dict[str, Any],
    now: dict[str, Any],
    measure: Callable[[Settings], tuple[RunInfo, Samples]] | None = None,
) -> bool:
    """Print the verdicts of this run against the committed one; True if none regressed.

    A server with a figure beyond the threshold is measured again beside raw (up to
    ``settings.retries`` times, while one still is); each figure is judged on its lowest
    ratio over the tries. ``measure`` runs the harness (``run``; tests pass their own).
    """
    measure = measure or run
    verdicts = regression.compare(committed, now, settings.threshold)
    retries: list[dict[str, Any]] = []
    while len(retries) < settings.retries:
        again = regression.suspects(verdicts)
        if not again:
            break
        _progress(f"measuring again (try {len(retries) + 2}): {', '.join(again)}, beside raw")
        servers = [by_name(RAW), *(by_name(name) for name in again)]
        try:
            info, samples = measure(dataclasses.replace(settings, servers=servers))
        except load.LoadError as exc:  # judged on the tries so far
            _progress(f"could not measure again: {exc}")
            break
        results = _results(info, samples)
        _write(settings.out_dir, f"retry-{len(retries) + 1}", render(info, samples), results)
        retries.append(results)
        verdicts = regression.compare(committed, now, settings.threshold, retries)
    lines = [
        "",
        f"## Regression check against {_shown(BASELINE)}"
        f" (run of {committed.get('info', {}).get('started', '?')})",
        "",
        f"CPU per request (unary) and per event (stream), each relative to raw's in the same "
        f"run; a ratio more than {settings.threshold * 100:g}% above the committed one "
        f"has regressed. `noise now` is the CPU time other processes took on the server's "
        "CPU while the first run measured the figure or raw's: when it is high the verdict "
        "is unsure, run the check again on a quieter machine.",
    ]
    if retries:
        lines += [
            "",
            f"A server with a figure beyond the threshold was measured again beside raw "
            f"({len(retries)} more {'try' if len(retries) == 1 else 'tries'}): `tries` "
            "gives its ratio in each run that measured it, and `now` is the lowest, on "
            "which it is judged (a slow stretch of the machine raises a ratio once, a "
            "change of the code every time).",
        ]
    lines += [
        "",
        f"This run's report: {settings.out_dir}.",
        "",
        *regression.verdict_table(verdicts),
    ]
    missing = regression.not_compared(committed, now)
    if missing:
        lines += ["", f"Committed but not measured now: {', '.join(missing)}."]
    if not verdicts:
        lines += ["", "No figure to compare: the two runs share none."]
    sys.stdout.write("\n".join(lines) + "\n")
    return not any(v.regressed for v in verdicts)


def main(argv: list[str] | None = None) -> int:
    settings = parse_args(argv)
    if settings.baseline_from is not None:
        given = _read_results(settings.baseline_from, "--write-baseline cannot read")
        return OK if given is not None and write_baseline(given) else MISSING
    committed = _committed() if settings.check else None
    if settings.check and committed is None:
        return MISSING
    failed_status = CHECK_FAILED if settings.check else FAILED
    try:
        check_tools(settings)
        raise_fd_limit(settings)
    except load.LoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return MISSING
    if settings.load_cpu is not None:
        # The orchestrator itself stays off the server CPU too.
        os.sched_setaffinity(0, {settings.load_cpu})
    try:
        info, samples = run(settings)
    except load.LoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return failed_status
    text = render(info, samples)
    results = _results(info, samples)
    _write(settings.out_dir, "latest", text, results)
    sys.stdout.write(text)
    within = committed is None or check(settings, committed, results)
    failed = [s.name for s in info.servers if s.failed]
    failed += [f"{s.name} ({case})" for s in info.servers for case in s.case_failed]
    if failed:
        print(f"error: failed: {', '.join(failed)} (see above)", file=sys.stderr)
        return failed_status
    if not within:
        print("error: a CPU ratio to raw regressed (see the table above)", file=sys.stderr)
        return REGRESSED
    if settings.write_baseline and not write_baseline(results):
        return FAILED
    return OK


if __name__ == "__main__":
    raise SystemExit(main())
