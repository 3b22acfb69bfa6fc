"""CPU time and memory of a server process tree, read from /proc (Linux only).

CPU time per request is the steadier figure on a 2-core machine: throughput moves with
whatever else the machine does, while the CPU a server spends per request barely does.
Times come from ``/proc/<pid>/stat`` (``utime + stime`` of the process and of its live
descendants, plus ``cutime + cstime`` for descendants already reaped), so a server that
forks workers or helpers is charged for them too.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True, slots=True)
class Stat:
    pid: int
    ppid: int
    utime: int  # clock ticks, all threads
    stime: int
    cutime: int  # reaped children, clock ticks
    cstime: int
    rss_pages: int


def read_stat(pid: int) -> Stat | None:
    """The parsed ``/proc/<pid>/stat``, or None if the process is gone."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # comm (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = raw[raw.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state) of proc(5), so field n is fields[n - 3].
    return Stat(
        pid=pid,
        ppid=int(fields[1]),
        utime=int(fields[11]),
        stime=int(fields[12]),
        cutime=int(fields[13]),
        cstime=int(fields[14]),
        rss_pages=int(fields[21]),
    )


def _all_stats() -> list[Stat]:
    stats = []
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            stat = read_stat(int(entry.name))
            if stat is not None:
                stats.append(stat)
    return stats


def tree(pid: int) -> list[Stat]:
    """The process and all its live descendants (the root first)."""
    root = read_stat(pid)
    if root is None:
        return []
    children: dict[int, list[Stat]] = {}
    for stat in _all_stats():
        children.setdefault(stat.ppid, []).append(stat)
    found = [root]
    queue = [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child.pid)
    return found


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds used so far by the process tree rooted at ``pid``."""
    stats = tree(pid)
    if not stats:
        raise ProcessLookupError(f"process {pid} is gone")
    ticks = sum(s.utime + s.stime for s in stats) + stats[0].cutime + stats[0].cstime
    return ticks / CLOCK_TICKS


def cpu_busy_seconds(cpu: int) -> float:
    """Non-idle time of one CPU so far, all processes together (from /proc/stat).

    Its growth minus the server's own CPU time is what other processes took from the
    server's CPU during a measurement: the noise on a shared machine.
    """
    prefix = f"cpu{cpu} "
    for line in (_PROC / "stat").read_text().splitlines():
        if line.startswith(prefix):
            # user nice system idle iowait irq softirq steal ...
            v = [int(x) for x in line.split()[1:9]]
            return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / CLOCK_TICKS
    raise ValueError(f"no CPU {cpu} in /proc/stat")


def reaped_children_cpu_seconds() -> float:
    """CPU seconds of this process's waited-for children, e.g. a finished load generator."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rss_bytes(pid: int) -> int:
    """Resident set size of the process tree rooted at ``pid``."""
    return sum(s.rss_pages for s in tree(pid)) * PAGE_SIZE


def cpus_allowed(pid: int) -> str:
    """The ``Cpus_allowed_list`` of a process, e.g. ``"0"``, to confirm its pinning."""
    for line in (_PROC / str(pid) / "status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return "?"


def open_fds(pid: int) -> int:
    """File descriptors open in the process tree rooted at ``pid`` (sockets included)."""
    total = 0
    for stat in tree(pid):
        try:
            total += len(os.listdir(_PROC / str(stat.pid) / "fd"))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass
    return total
