"""Measurements of a run, their medians over rounds, and the Markdown report.

Each figure in the tables is the median over rounds of that figure per round; ratios are
taken between those medians. ``CPU ms/req`` is server CPU time (user + system, whole
process tree) divided by the requests it answered in the round.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

RAW = "raw"


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


S = TypeVar("S", UnarySample, StreamSample)


def _median(values: Iterable[float]) -> float:
    items = list(values)
    return statistics.median(items) if items else float("nan")


def _groups(samples: Sequence[S]) -> dict[tuple[str, int], list[S]]:
    groups: dict[tuple[str, int], list[S]] = {}
    for s in samples:
        groups.setdefault((s.server, s.concurrency), []).append(s)
    return groups


def _ratio(value: float, base: float | None) -> str:
    if base is None or base != base or value != value or base == 0:
        return "-"
    return f"{value / base:.2f}x"


def _num(value: float, digits: int = 1) -> str:
    return "-" if value != value else f"{value:,.{digits}f}"


def _percent(value: float) -> str:
    return "-" if value != value else f"{value:.0f}%"


def _noise(group: Sequence[UnarySample] | Sequence[StreamSample]) -> str:
    server = _median(s.noise[0] for s in group)
    load = _median(s.noise[1] for s in group)
    return f"{_percent(server)} / {_percent(load)}"


def _spread(values: list[float]) -> str:
    # Range over rounds relative to the median: how steady the figure was.
    med = _median(values)
    if len(values) < 2 or not med:
        return "-"
    return f"±{(max(values) - min(values)) / med * 50:.0f}%"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    right = ["---:" if i else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(right) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def _order(info: RunInfo) -> list[str]:
    return [s.name for s in info.servers if not (s.skipped or s.failed)]


def unary_table(info: RunInfo, samples: Sequence[UnarySample]) -> list[str]:
    groups = _groups(samples)
    med: dict[tuple[str, int], tuple[float, float]] = {
        key: (
            _median(s.requests_per_s for s in group),
            _median(s.cpu_ms_per_request for s in group),
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
        for name in _order(info):
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
                    _num(rps, 0),
                    _spread([s.requests_per_s for s in group]),
                    _num(_median(s.p50_ms for s in group), 2),
                    _num(_median(s.p99_ms for s in group), 2),
                    _num(cpu, 3),
                    _ratio(rps, raw[0] if raw else None),
                    _ratio(rps, sdk[0] if sdk else None),
                    _ratio(cpu, raw[1] if raw else None),
                    _ratio(cpu, sdk[1] if sdk else None),
                    _percent(_median(s.load_cpu_percent for s in group)),
                    _noise(group),
                    str(sum(s.errors for s in group)),
                ]
            )
    return _table(header, rows)


def stream_table(info: RunInfo, samples: Sequence[StreamSample]) -> list[str]:
    groups = _groups(samples)
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
        "CPU/event vs raw",
        "streams",
        "load CPU",
        "noise srv / load",
        "errors",
    ]
    rows = []
    for c in info.stream_concurrencies:
        raw_group = groups.get((RAW, c))
        raw_eps = _median(s.events_per_s for s in raw_group) if raw_group else None
        raw_cpu = _median(s.cpu_us_per_event for s in raw_group) if raw_group else None
        for name in _order(info):
            group = groups.get((name, c))
            if not group:
                continue
            eps = _median(s.events_per_s for s in group)
            cpu = _median(s.cpu_us_per_event for s in group)
            rows.append(
                [
                    name,
                    str(c),
                    _num(eps, 0),
                    _spread([s.events_per_s for s in group]),
                    _num(_median(s.ttfe_p50_ms for s in group), 2),
                    _num(_median(s.ttfe_p99_ms for s in group), 2),
                    _num(_median(s.stream_p50_ms for s in group), 1),
                    _num(cpu, 2),
                    _ratio(eps, raw_eps),
                    _ratio(cpu, raw_cpu),
                    str(sum(s.streams for s in group)),
                    _percent(_median(s.load_cpu_percent for s in group)),
                    _noise(group),
                    str(sum(s.errors for s in group)),
                ]
            )
    return _table(header, rows)


def memory_table(info: RunInfo, samples: Sequence[MemorySample]) -> list[str]:
    header = ["server", "RSS idle MiB", "RSS after load MiB"]
    rows = []
    mib = 1024 * 1024
    for name in _order(info):
        group = [s for s in samples if s.server == name]
        if group:
            rows.append(
                [
                    name,
                    _num(_median(s.rss_idle_bytes / mib for s in group), 1),
                    _num(_median(s.rss_after_bytes / mib for s in group), 1),
                ]
            )
    return _table(header, rows)


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
        f"measurement; unary concurrency {', '.join(map(str, info.concurrencies))}; "
        f"stream concurrency {', '.join(map(str, info.stream_concurrencies))}",
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
    return lines


def render(
    info: RunInfo,
    unary: Sequence[UnarySample],
    stream: Sequence[StreamSample],
    memory: Sequence[MemorySample],
) -> str:
    lines = header_lines(info)
    sections: list[tuple[str, Callable[[], list[str]], bool]] = [
        ("Unary SendMessage", lambda: unary_table(info, unary), bool(unary)),
        (
            "Streaming (1,000 artifact chunks per stream)",
            lambda: stream_table(info, stream),
            bool(stream),
        ),
        ("Memory", lambda: memory_table(info, memory), bool(memory)),
    ]
    for title, build, present in sections:
        if present:
            lines += ["", f"## {title}", "", *build()]
    return "\n".join(lines) + "\n"
