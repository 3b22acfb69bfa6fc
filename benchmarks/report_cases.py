"""Samples and tables of the memory-tasks, memory-streams, growth and list-tasks cases.

Like ``report.py``: each figure is the median over rounds of that figure per round, and
ratios are taken between those medians (to the a2a-sdk baseline where the SDK runs the
case). Each table takes the servers in report order (``order``) and the baseline's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from figures import median, num, ratio, spread, table

MIB = 1024 * 1024
RAW = "raw"


@dataclass(frozen=True, slots=True)
class TaskMemorySample:
    """RSS (and, for SQLite, database size) around ``tasks`` unary sends."""

    server: str
    round: int
    tasks: int  # sends answered correctly
    rss_before_bytes: int
    rss_after_bytes: int
    disk_before_bytes: int  # logical SQLite size (page_count * page_size); -1 without one
    disk_after_bytes: int
    duration_s: float
    errors: int

    @property
    def bytes_per_task(self) -> float:
        if not self.tasks:
            return float("nan")
        return (self.rss_after_bytes - self.rss_before_bytes) / self.tasks

    @property
    def disk_bytes_per_task(self) -> float:
        if not self.tasks or self.disk_before_bytes < 0:
            return float("nan")
        return (self.disk_after_bytes - self.disk_before_bytes) / self.tasks


@dataclass(frozen=True, slots=True)
class StreamMemorySample:
    """RSS and open descriptors around opening ``streams`` idle streams."""

    server: str
    round: int
    warm_streams: int  # open before the first reading
    streams: int  # opened (and checked) between the two readings
    rss_before_bytes: int
    rss_open_bytes: int
    rss_closed_bytes: int  # after closing them all (and canceling their tasks)
    fds_before: int
    fds_open: int
    open_s: float  # time to open the ``streams``
    errors: int  # streams that failed to open correctly
    cancel_errors: int  # -1: the server has no cancel, tasks were left to the shutdown
    canceled: int

    @property
    def bytes_per_stream(self) -> float:
        if not self.streams:
            return float("nan")
        return (self.rss_open_bytes - self.rss_before_bytes) / self.streams


@dataclass(frozen=True, slots=True)
class GrowthSample:
    """Server CPU over back-to-back streams of ``chunks`` artifact chunks each."""

    server: str
    round: int
    chunks: int
    streams: int
    events: int
    duration_s: float
    events_per_s: float
    cpu_s: float
    errors: int

    @property
    def cpu_us_per_event(self) -> float:
        return self.cpu_s * 1e6 / self.events if self.events else float("nan")


@dataclass(frozen=True, slots=True)
class ListSample:
    """wrk running ListTasks (one filter) against a store holding ``stored`` tasks."""

    server: str
    round: int
    stored: int
    filter: str
    matched: int  # the answer's totalSize
    requests: int
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    cpu_s: float
    errors: int

    @property
    def cpu_ms_per_request(self) -> float:
        return self.cpu_s * 1000 / self.requests if self.requests else float("nan")


def task_memory_tables(
    order: Sequence[str], base: str, samples: Sequence[TaskMemorySample]
) -> list[str]:
    base_group = [s for s in samples if s.server == base]
    base_value = median(s.bytes_per_task for s in base_group) if base_group else None
    header = [
        "server",
        "tasks",
        "RSS before MiB",
        "RSS after MiB",
        "RSS bytes/task",
        "spread",
        f"vs {base or 'a2a-sdk'}",
        "send s",
        "errors",
    ]
    rows = []
    disk_rows = []
    for name in order:
        group = [s for s in samples if s.server == name]
        if not group:
            continue
        per_task = median(s.bytes_per_task for s in group)
        rows.append(
            [
                name,
                num(median(s.tasks for s in group), 0),
                num(median(s.rss_before_bytes / MIB for s in group), 1),
                num(median(s.rss_after_bytes / MIB for s in group), 1),
                num(per_task, 0),
                spread([s.bytes_per_task for s in group]),
                ratio(per_task, base_value),
                num(median(s.duration_s for s in group), 1),
                str(sum(s.errors for s in group)),
            ]
        )
        if any(s.disk_before_bytes >= 0 for s in group):
            disk_rows.append(
                [
                    name,
                    num(median(s.tasks for s in group), 0),
                    num(median(s.disk_before_bytes / MIB for s in group), 1),
                    num(median(s.disk_after_bytes / MIB for s in group), 1),
                    num(median(s.disk_bytes_per_task for s in group), 0),
                    spread([s.disk_bytes_per_task for s in group]),
                ]
            )
    lines = table(header, rows)
    if disk_rows:
        lines += [
            "",
            "On disk (SQLite database, `page_count * page_size` read from a second "
            "connection, so pages still in the WAL count):",
            "",
            *table(
                ["server", "tasks", "DB before MiB", "DB after MiB", "disk bytes/task", "spread"],
                disk_rows,
            ),
        ]
    return lines


def stream_memory_table(
    order: Sequence[str], base: str, samples: Sequence[StreamMemorySample]
) -> list[str]:
    base_group = [s for s in samples if s.server == base]
    base_value = median(s.bytes_per_stream for s in base_group) if base_group else None
    raw_group = [s for s in samples if s.server == RAW]
    raw_value = median(s.bytes_per_stream for s in raw_group) if raw_group else None
    header = [
        "server",
        "streams",
        "RSS before MiB",
        "RSS open MiB",
        "RSS bytes/stream",
        "spread",
        "vs raw",
        f"vs {base or 'a2a-sdk'}",
        "open s",
        "fds before / open",
        "RSS closed MiB",
        "canceled",
        "errors",
    ]
    rows = []
    for name in order:
        group = [s for s in samples if s.server == name]
        if not group:
            continue
        per_stream = median(s.bytes_per_stream for s in group)
        cancel = "-" if any(s.cancel_errors < 0 for s in group) else (
            f"{num(median(s.canceled for s in group), 0)}"
        )
        errors = sum(s.errors for s in group) + sum(max(0, s.cancel_errors) for s in group)
        rows.append(
            [
                name,
                num(median(s.streams for s in group), 0),
                num(median(s.rss_before_bytes / MIB for s in group), 1),
                num(median(s.rss_open_bytes / MIB for s in group), 1),
                num(per_stream, 0),
                spread([s.bytes_per_stream for s in group]),
                ratio(per_stream, raw_value),
                ratio(per_stream, base_value),
                num(median(s.open_s for s in group), 2),
                f"{num(median(s.fds_before for s in group), 0)} / "
                f"{num(median(s.fds_open for s in group), 0)}",
                num(median(s.rss_closed_bytes / MIB for s in group), 1),
                cancel,
                str(errors),
            ]
        )
    return table(header, rows)


def growth_table(order: Sequence[str], samples: Sequence[GrowthSample]) -> list[str]:
    lengths = sorted({s.chunks for s in samples})
    header = ["server"]
    header += [f"CPU µs/event @ {n:,}" for n in lengths]
    if len(lengths) > 1:
        last = lengths[-1]
        header += [f"{last:,} / {n:,}" for n in lengths[:-1]]
    header += ["streams", "errors"]
    rows = []
    for name in order:
        group = [s for s in samples if s.server == name]
        if not group:
            continue
        cpu = {
            n: median(s.cpu_us_per_event for s in group if s.chunks == n) for n in lengths
        }
        row = [name] + [num(cpu[n], 2) for n in lengths]
        if len(lengths) > 1:
            row += [ratio(cpu[lengths[-1]], cpu[n]) for n in lengths[:-1]]
        row += [
            " / ".join(str(sum(s.streams for s in group if s.chunks == n)) for n in lengths),
            str(sum(s.errors for s in group)),
        ]
        rows.append(row)
    return table(header, rows)


def list_table(order: Sequence[str], samples: Sequence[ListSample]) -> list[str]:
    sizes = sorted({s.stored for s in samples})
    filters = list(dict.fromkeys(s.filter for s in samples))
    smallest = sizes[0] if sizes else 0
    header = [
        "server",
        "stored tasks",
        "filter",
        "matching",
        "req/s",
        "p50 ms",
        "p99 ms",
        "CPU ms/req",
        f"p50 vs {smallest:,} stored",
        "spread",
        "errors",
    ]
    rows = []
    for name in order:
        for size in sizes:
            for flt in filters:
                group = [
                    s for s in samples if s.server == name and s.stored == size and s.filter == flt
                ]
                if not group:
                    continue
                small = [
                    s for s in samples
                    if s.server == name and s.stored == smallest and s.filter == flt
                ]
                p50 = median(s.p50_ms for s in group)
                rows.append(
                    [
                        name,
                        f"{size:,}",
                        flt,
                        num(median(s.matched for s in group), 0),
                        num(median(s.requests_per_s for s in group), 0),
                        num(p50, 2),
                        num(median(s.p99_ms for s in group), 2),
                        num(median(s.cpu_ms_per_request for s in group), 3),
                        ratio(p50, median(s.p50_ms for s in small) if small else None),
                        spread([s.p50_ms for s in group]),
                        str(sum(s.errors for s in group)),
                    ]
                )
    return table(header, rows)
