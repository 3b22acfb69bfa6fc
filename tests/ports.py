"""Ports for the servers a test starts in another process, which bind them later.

A port the kernel handed out for a bind to port 0 and took back can be handed out again,
to another worker's server or to any outgoing connection, before the child process
binds it: the child then fails to start, or a test speaks to a stranger's server. The
ports here come from below the kernel's ephemeral range, which it never hands out, in a
block of their own for each xdist worker, each tried before it is given.

Ports that fetch clients refuse to connect to (Node's fetch and browsers say only
"fetch failed") are never given: a peer's client in the interop suite, or the
inspector's browser, could not reach a server there.
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


#: the "bad ports" of the WHATWG Fetch standard: refused by every fetch client
BAD_PORTS = frozenset({
    0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95,
    101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161,
    179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563,
    587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060,
    5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
})

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
            if port not in BAD_PORTS and _bindable(port):
                return port
    # an ephemeral range reaching down here: the kernel's choice, as before
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
