"""Who holds a lease: a process, named so that its own machine can tell whether it lives.

Here rather than with the lease keeper (``server/leases.py``) because a store
names its database sessions after the process too (``session_tag``): the
PostgreSQL store ends the sessions of a holder whose lease it revokes.
"""

from __future__ import annotations

import hashlib
import os
import socket
from functools import cache

__all__ = ["holder_name", "is_dead_here", "session_tag"]


@cache
def _machine() -> str:
    """This machine, as it is until its next boot."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def _process(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks since boot) of the process ``pid`` of this
    machine, from ``/proc`` (None: no such process, or no ``/proc`` to tell)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # the command's name, in parentheses, may hold spaces: the fields follow its end
    fields = stat[stat.rfind(b")") + 2:].split()
    if len(fields) < 20:
        return None
    return fields[0].decode("ascii", "replace"), fields[19].decode("ascii", "replace")


@cache
def _own_start() -> str:
    found = _process(os.getpid())
    return found[1] if found is not None else ""


def holder_name(pid: int | None = None) -> str:
    """``host/boot-id:pid:start``: enough to tell, on this machine, whether the holder
    lives: its process's start time tells it from a later process given its number
    (a container restarted is process 1 again)."""
    if pid is None:
        pid, start = os.getpid(), _own_start()
    else:
        found = _process(pid)
        start = found[1] if found is not None else ""
    return f"{_machine()}:{pid}:{start}" if start else f"{_machine()}:{pid}"


def is_dead_here(holder: str) -> bool:
    """Whether ``holder`` was a process of this machine (since its last boot)
    that has exited. Leases of other machines, or of an earlier boot of
    this one, are judged by their heartbeats alone... except that a lease of an
    earlier boot of this machine cannot be alive either."""
    machine, _, process = holder.partition(":")
    host, _, boot = machine.partition("/")
    mine_host, _, mine_boot = _machine().partition("/")
    if host != mine_host or not boot or not mine_boot:
        return False
    if boot != mine_boot:
        return True  # this machine has rebooted since
    pid_text, _, start = process.partition(":")  # (no start: a name of an older release)
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid == os.getpid():
        # this process, or one before it that had its number
        return bool(start) and start != _own_start()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, owned by someone else
        pass
    found = _process(pid)
    if found is None:
        return False  # no /proc: a process of that number lives, taken for the holder
    state, started = found
    # exited but not yet reaped by its parent, or another process given its number
    return state == "Z" or (bool(start) and started != start)


def session_tag(holder: str) -> str:
    """The name a store's database sessions carry for ``holder`` (PostgreSQL's
    ``application_name``, at most 63 bytes: a holder name may be longer)."""
    return "interlingua " + hashlib.sha256(holder.encode()).hexdigest()[:24]
