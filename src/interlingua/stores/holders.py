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


def holder_name(pid: int | None = None) -> str:
    """``host/boot-id:pid``: enough to tell, on this machine, whether the holder lives."""
    return f"{_machine()}:{os.getpid() if pid is None else pid}"


def is_dead_here(holder: str) -> bool:
    """Whether ``holder`` was a process of this machine (since its last boot)
    that has exited. Leases of other machines, or of an earlier boot of
    this one, are judged by their heartbeats alone... except that a lease of an
    earlier boot of this machine cannot be alive either."""
    machine, _, pid_text = holder.rpartition(":")
    host, _, boot = machine.partition("/")
    mine_host, _, mine_boot = _machine().partition("/")
    if host != mine_host or not boot or not mine_boot:
        return False
    if boot != mine_boot:
        return True  # this machine has rebooted since
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists, owned by someone else
        return False
    return False


def session_tag(holder: str) -> str:
    """The name a store's database sessions carry for ``holder`` (PostgreSQL's
    ``application_name``, at most 63 bytes: a holder name may be longer)."""
    return "interlingua " + hashlib.sha256(holder.encode()).hexdigest()[:24]
