"""Ports for the servers a test starts in another process, which bind them later.

A port the kernel handed out for a bind to port 0 and took back can be handed out again,
to another worker's server or to any outgoing connection, before the child process
binds it: the child then fails to start, or a test speaks to a stranger's server. The
ports here come from below the kernel's ephemeral range, which it never hands out, in a
block of their own for each xdist worker, each tried before it is given.
"""

from __future__ import annotations

import itertools
import os
import socket
from pathlib import Path

__all__ = ["free_port"]

#: where the blocks start; up to 16 workers get a block each below the ephemeral range
_FIRST = 10_000
_WORKERS = 16


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default, and about what other systems use


def _worker() -> int:
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    digits = name[2:]
    return int(digits) % _WORKERS if digits.isascii() and digits.isdigit() else 0


_BLOCK = max((_ephemeral_low() - _FIRST) // _WORKERS, 0)
_NEXT = itertools.count()


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port no other worker is given and the kernel does not hand out."""
    if _BLOCK >= 100:
        start = _FIRST + _worker() * _BLOCK
        for _ in range(_BLOCK):
            port = start + next(_NEXT) % _BLOCK
            if _bindable(port):
                return port
    # an ephemeral range reaching down here: the kernel's choice, as before
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
