"""CPU counters around one measurement: the server, the load generator, everyone else."""

from __future__ import annotations

import procstat


class Meter:
    """Started at construction; ``read`` gives the CPU seconds spent since."""

    def __init__(self, pid: int, server_cpu: int | None, load_cpu: int | None) -> None:
        self.pid = pid
        self.cpus = (server_cpu, load_cpu)
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
