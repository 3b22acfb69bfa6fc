"""Measurements of a run, their medians over rounds, and the Markdown report.

Each figure in the tables is the median over rounds of that figure per round; ratios are
taken between those medians. ``CPU ms/req`` is server CPU time (user + system, whole
process tree) divided by the requests it answered in the round. The samples and tables of
the cases with a server process of their own are in ``report_cases.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from figures import median, num, percent, ratio, spread, table
from report_cases import (
    GrowthSample,
    ListSample,
    StreamMemorySample,
    TaskMemorySample,
    growth_table,
    list_table,
    stream_memory_table,
    task_memory_tables,
)

RAW = "raw"  # the ceiling: unary, and streams written one send per event
RAW_COALESCING = "raw-coalescing"  # the streaming ceiling that writes what is ready together


@dataclass(frozen=True, slots=True)
class UnarySample:
    server: str
    round: int
    concurrency: int
    requests: int
    duration_s: float
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    cpu_s: float
    load_cpu_s: float  # CPU of the load generator, to see whether it was the bottleneck
    other_cpu_s: float  # CPU other processes took on the server's CPU meanwhile
    other_load_cpu_s: float  # and on the load generator's CPU
    errors: int

    @property
    def cpu_ms_per_request(self) -> float:
        return self.cpu_s * 1000 / self.requests if self.requests else float("nan")

    @property
    def load_cpu_percent(self) -> float:
        return self.load_cpu_s * 100 / self.duration_s if self.duration_s else float("nan")

    @property
    def noise(self) -> tuple[float, float]:
        if not self.duration_s:
            return float("nan"), float("nan")
        return (
            self.other_cpu_s * 100 / self.duration_s,
            self.other_load_cpu_s * 100 / self.duration_s,
        )


@dataclass(frozen=True, slots=True)
class StreamSample:
    server: str
    round: int
    concurrency: int
    streams: int
    events: int
    duration_s: float
    events_per_s: float
    ttfe_p50_ms: float
    ttfe_p99_ms: float
    stream_p50_ms: float
    cpu_s: float
    load_cpu_s: float
    other_cpu_s: float
    other_load_cpu_s: float
    errors: int

    @property
    def cpu_us_per_event(self) -> float:
        return self.cpu_s * 1e6 / self.events if self.events else float("nan")

    @property
    def load_cpu_percent(self) -> float:
        return self.load_cpu_s * 100 / self.duration_s if self.duration_s else float("nan")

    @property
    def noise(self) -> tuple[float, float]:
        if not self.duration_s:
            return float("nan"), float("nan")
        return (
            self.other_cpu_s * 100 / self.duration_s,
            self.other_load_cpu_s * 100 / self.duration_s,
        )


@dataclass(frozen=True, slots=True)
class MemorySample:
    server: str
    round: int
    rss_idle_bytes: int
    rss_after_bytes: int


@dataclass(slots=True)
class ServerInfo:
    name: str
    description: str
    skipped: str = ""  # why it did not run; empty when it ran
    failed: str = ""  # why it was dropped mid-run (did not start, or answered wrongly)
    python_version: str = ""
    versions: dict[str, str | None] = field(default_factory=dict)
    store: str = ""
    health_store: str = ""  # the ``store`` member of its /healthz JSON, as JSON
    cpus_allowed: str = ""
    env: dict[str, str] = field(default_factory=dict)
    # case -> why that case was dropped for this server (its other figures stand)
    case_failed: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FillInfo:
    """A SQLite store filled for the list-tasks case."""

    tasks: int
    contexts: int
    failed: int
    seconds: float
    file_bytes: int


@dataclass(slots=True)
class RunInfo:
    started: str
    mode: str
    rounds: int
    duration_s: float
    concurrencies: list[int]
    stream_concurrencies: list[int]
    cases: list[str]
    nproc: int
    cpu_model: str
    kernel: str
    harness_python: str
    wrk: str
    server_cpu: int | None
    load_cpu: int | None
    servers: list[ServerInfo] = field(default_factory=list)
    baseline: str = ""  # the a2a-sdk server that ratios are taken against
    # the cases with a server process of their own
    case_rounds: int = 0
    tasks: int = 0
    tasks_warmup: int = 0
    idle_streams: int = 0
    idle_warmup: int = 0
    growth_lengths: list[int] = field(default_factory=list)
    growth_duration_s: float = 0.0
    list_duration_s: float = 0.0
    fills: list[FillInfo] = field(default_factory=list)
    # case -> servers whose launcher lacks what the case needs
    not_wired: dict[str, list[str]] = field(default_factory=dict)


@dataclass(slots=True)
class Samples:
    """Every sample of a run, per case."""

    unary: list[UnarySample] = field(default_factory=list)
    stream: list[StreamSample] = field(default_factory=list)
    memory: list[MemorySample] = field(default_factory=list)
    memory_tasks: list[TaskMemorySample] = field(default_factory=list)
    memory_streams: list[StreamMemorySample] = field(default_factory=list)
    growth: list[GrowthSample] = field(default_factory=list)
    listing: list[ListSample] = field(default_factory=list)

    def drop_failed(self, info: RunInfo) -> None:
        """Leave out the samples of a case that failed for a server in a later round."""
        failed = {(s.name, case) for s in info.servers for case in s.case_failed}
        self.memory_tasks = [s for s in self.memory_tasks if (s.server, "memory-tasks") not in failed]
        self.memory_streams = [
            s for s in self.memory_streams if (s.server, "memory-streams") not in failed
        ]
        self.growth = [s for s in self.growth if (s.server, "growth") not in failed]
        self.listing = [s for s in self.listing if (s.server, "list-tasks") not in failed]

    def as_dict(self) -> dict[str, object]:
        return {
            "unary": self.unary,
            "stream": self.stream,
            "memory": self.memory,
            "memory_tasks": self.memory_tasks,
            "memory_streams": self.memory_streams,
            "growth": self.growth,
            "list_tasks": self.listing,
        }


S = TypeVar("S", UnarySample, StreamSample)


def _groups(samples: Sequence[S]) -> dict[tuple[str, int], list[S]]:
    groups: dict[tuple[str, int], list[S]] = {}
    for s in samples:
        groups.setdefault((s.server, s.concurrency), []).append(s)
    return groups


def _noise(group: Sequence[UnarySample] | Sequence[StreamSample]) -> str:
    server = median(s.noise[0] for s in group)
    load = median(s.noise[1] for s in group)
    return f"{percent(server)} / {percent(load)}"


def served(info: RunInfo) -> list[str]:
    return [s.name for s in info.servers if not (s.skipped or s.failed)]


def unary_table(info: RunInfo, samples: Sequence[UnarySample]) -> list[str]:
    groups = _groups(samples)
    med: dict[tuple[str, int], tuple[float, float]] = {
        key: (
            median(s.requests_per_s for s in group),
            median(s.cpu_ms_per_request for s in group),
        )
        for key, group in groups.items()
    }
    base = info.baseline
    header = [
        "server",
        "conc",
        "req/s",
        "spread",
        "p50 ms",
        "p99 ms",
        "CPU ms/req",
        "req/s vs raw",
        f"req/s vs {base or 'a2a-sdk'}",
        "CPU/req vs raw",
        f"CPU/req vs {base or 'a2a-sdk'}",
        "load CPU",
        "noise srv / load",
        "errors",
    ]
    rows = []
    for c in info.concurrencies:
        for name in served(info):
            group = groups.get((name, c))
            if not group:
                continue
            rps, cpu = med[(name, c)]
            raw = med.get((RAW, c))
            sdk = med.get((base, c)) if base else None
            rows.append(
                [
                    name,
                    str(c),
                    num(rps, 0),
                    spread([s.requests_per_s for s in group]),
                    num(median(s.p50_ms for s in group), 2),
                    num(median(s.p99_ms for s in group), 2),
                    num(cpu, 3),
                    ratio(rps, raw[0] if raw else None),
                    ratio(rps, sdk[0] if sdk else None),
                    ratio(cpu, raw[1] if raw else None),
                    ratio(cpu, sdk[1] if sdk else None),
                    percent(median(s.load_cpu_percent for s in group)),
                    _noise(group),
                    str(sum(s.errors for s in group)),
                ]
            )
    return table(header, rows)


def _stream_medians(
    groups: dict[tuple[str, int], list[StreamSample]], name: str, c: int
) -> tuple[float | None, float | None]:
    """Median events/s and CPU µs/event of one server at one concurrency, if it ran."""
    group = groups.get((name, c)) if name else None
    if not group:
        return None, None
    return median(s.events_per_s for s in group), median(s.cpu_us_per_event for s in group)


def stream_table(info: RunInfo, samples: Sequence[StreamSample]) -> list[str]:
    groups = _groups(samples)
    base = info.baseline
    header = [
        "server",
        "conc",
        "events/s",
        "spread",
        "TTFE p50 ms",
        "TTFE p99 ms",
        "stream p50 ms",
        "CPU µs/event",
        "events/s vs raw",
        f"events/s vs {RAW_COALESCING}",
        f"events/s vs {base or 'a2a-sdk'}",
        "CPU/event vs raw",
        f"CPU/event vs {RAW_COALESCING}",
        f"CPU/event vs {base or 'a2a-sdk'}",
        "streams",
        "load CPU",
        "noise srv / load",
        "errors",
    ]
    rows = []
    for c in info.stream_concurrencies:
        raw_eps, raw_cpu = _stream_medians(groups, RAW, c)
        coal_eps, coal_cpu = _stream_medians(groups, RAW_COALESCING, c)
        sdk_eps, sdk_cpu = _stream_medians(groups, base, c)
        for name in served(info):
            group = groups.get((name, c))
            if not group:
                continue
            eps = median(s.events_per_s for s in group)
            cpu = median(s.cpu_us_per_event for s in group)
            rows.append(
                [
                    name,
                    str(c),
                    num(eps, 0),
                    spread([s.events_per_s for s in group]),
                    num(median(s.ttfe_p50_ms for s in group), 2),
                    num(median(s.ttfe_p99_ms for s in group), 2),
                    num(median(s.stream_p50_ms for s in group), 1),
                    num(cpu, 2),
                    ratio(eps, raw_eps),
                    ratio(eps, coal_eps),
                    ratio(eps, sdk_eps),
                    ratio(cpu, raw_cpu),
                    ratio(cpu, coal_cpu),
                    ratio(cpu, sdk_cpu),
                    str(sum(s.streams for s in group)),
                    percent(median(s.load_cpu_percent for s in group)),
                    _noise(group),
                    str(sum(s.errors for s in group)),
                ]
            )
    return [*table(header, rows), "", *_ceilings_note()]


def _ceilings_note() -> list[str]:
    return [
        f"Two ceilings: `{RAW}` writes each pre-encoded event with a send of its own; "
        f"`{RAW_COALESCING}` puts the same events one by one into a queue and writes "
        "whatever is waiting in one send, as a server that writes what is ready together "
        "can at best."
    ]


def memory_table(info: RunInfo, samples: Sequence[MemorySample]) -> list[str]:
    header = ["server", "RSS idle MiB", "RSS after load MiB"]
    rows = []
    mib = 1024 * 1024
    for name in served(info):
        group = [s for s in samples if s.server == name]
        if group:
            rows.append(
                [
                    name,
                    num(median(s.rss_idle_bytes / mib for s in group), 1),
                    num(median(s.rss_after_bytes / mib for s in group), 1),
                ]
            )
    return table(header, rows)


def _versions(server: ServerInfo) -> str:
    parts = [f"{k} {v}" for k, v in server.versions.items() if v]
    return ", ".join([f"Python {server.python_version}", *parts])


def header_lines(info: RunInfo) -> list[str]:
    pin = (
        f"servers on CPU {info.server_cpu}, load generator on CPU {info.load_cpu}"
        if info.server_cpu is not None
        else "no CPU pinning"
    )
    lines = [
        f"# interlingua benchmarks ({info.mode})",
        "",
        f"- started: {info.started}",
        f"- machine: {info.nproc} CPUs, {info.cpu_model}, Linux {info.kernel}",
        f"- harness: Python {info.harness_python}; load: {info.wrk}, 1 thread; {pin}",
        f"- rounds: {info.rounds} (server order alternates), {info.duration_s:g} s per "
        f"measurement; unary concurrency {', '.join(map(str, info.concurrencies)) or '-'}; "
        f"stream concurrency {', '.join(map(str, info.stream_concurrencies)) or '-'}",
        *_case_settings(info),
        f"- cases: {', '.join(info.cases)}; every figure is the median over rounds; "
        "spread is half the range over rounds relative to the median; CPU is server CPU "
        "(user + system, whole process tree); load CPU is the load generator's CPU use; "
        "noise is CPU time other processes took on the server's / load generator's CPU during "
        "the measurement (high noise: trust CPU/req more than req/s)",
        "",
        "## Servers",
        "",
    ]
    for s in info.servers:
        if s.skipped:
            lines.append(f"- **{s.name}**: skipped: {s.skipped}")
            continue
        if s.failed:
            first = s.failed.splitlines()[0]
            lines.append(f"- **{s.name}**: **FAILED**, not measured: {first}")
            continue
        pinned = f" CPUs allowed: {s.cpus_allowed}." if s.cpus_allowed else ""
        if s.env:
            pinned += " Env: " + ", ".join(f"`{k}={v}`" for k, v in s.env.items()) + "."
        lines.append(
            f"- **{s.name}**: {s.description}. {_versions(s)}. Store: {s.store or '-'}.{pinned}"
        )
        if s.health_store:
            lines.append(f"  - /healthz store: `{s.health_store}`")
        for case, why in s.case_failed.items():
            first = why.splitlines()[0]
            lines.append(f"  - **FAILED** in {case}, left out of its table: {first}")
    return lines


def _case_settings(info: RunInfo) -> list[str]:
    """What the cases with a server process of their own were asked to do."""
    own = [c for c in info.cases if c in ("memory-tasks", "memory-streams", "growth", "list-tasks")]
    if not own:
        return []
    parts = []
    if "memory-tasks" in own:
        parts.append(f"memory-tasks {info.tasks:,} sends after {info.tasks_warmup:,} warm-up")
    if "memory-streams" in own:
        parts.append(
            f"memory-streams {info.idle_streams:,} idle streams after {info.idle_warmup} warm-up"
        )
    if "growth" in own:
        lengths = " / ".join(f"{n:,}" for n in info.growth_lengths)
        parts.append(f"growth {lengths} chunks, {info.growth_duration_s:g} s each")
    if "list-tasks" in own:
        sizes = " / ".join(f"{f.tasks:,}" for f in info.fills) or "-"
        parts.append(f"list-tasks {sizes} stored tasks, {info.list_duration_s:g} s per filter")
    return [
        f"- own-process cases: {info.case_rounds} round(s), a fresh server per case; "
        + "; ".join(parts)
    ]


def _not_wired(info: RunInfo, case: str) -> list[str]:
    names = info.not_wired.get(case, [])
    if not names:
        return []
    return ["", f"Not run for {', '.join(names)}: the case is not wired for them (targets.py)."]


def _fills(info: RunInfo) -> list[str]:
    lines = ["", "Stores (filled through `interlingua.stores` before the server starts):", ""]
    for f in info.fills:
        lines.append(
            f"- {f.tasks:,} tasks in {f.contexts:,} contexts ({f.failed:,} failed, the rest "
            f"completed): {f.file_bytes / 1024 / 1024:,.1f} MiB, filled in {f.seconds:.1f} s"
        )
    return lines


def render(info: RunInfo, samples: Samples) -> str:
    lines = header_lines(info)
    order = served(info)
    base = info.baseline
    sections: list[tuple[str, Callable[[], list[str]], bool]] = [
        ("Unary SendMessage", lambda: unary_table(info, samples.unary), bool(samples.unary)),
        (
            "Streaming (1,000 artifact chunks per stream)",
            lambda: stream_table(info, samples.stream),
            bool(samples.stream),
        ),
        ("Memory", lambda: memory_table(info, samples.memory), bool(samples.memory)),
        (
            f"Memory per stored task ({info.tasks:,} unary sends)",
            lambda: task_memory_tables(order, base, samples.memory_tasks)
            + _not_wired(info, "memory-tasks"),
            bool(samples.memory_tasks),
        ),
        (
            f"Memory per idle open stream ({info.idle_streams:,} streams)",
            lambda: stream_memory_table(order, base, samples.memory_streams)
            + _not_wired(info, "memory-streams"),
            bool(samples.memory_streams),
        ),
        (
            "Growth: server CPU per event by stream length",
            lambda: growth_table(order, samples.growth) + _not_wired(info, "growth"),
            bool(samples.growth),
        ),
        (
            "ListTasks (pageSize 50, one connection)",
            lambda: list_table(order, samples.listing) + _fills(info)
            + _not_wired(info, "list-tasks"),
            bool(samples.listing),
        ),
    ]
    for title, build, present in sections:
        if present:
            lines += ["", f"## {title}", "", *build()]
    return "\n".join(lines) + "\n"
