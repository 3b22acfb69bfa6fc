"""A SQLite database's write lock, held by another process.

The holder is a process of its own, not a second connection of the test's: what the
store meets is then what it meets in production (another replica, an admin's
``sqlite3`` shell), with SQLite's locks between processes, not its bookkeeping of
the connections of one process.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["write_locked", "write_locked_for"]

# argv: the database, then how long to hold the lock (a negative number: until
# standard input closes). Says "locked" once it holds it and "released" once not.
_HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
seconds = float(sys.argv[2])
if seconds < 0:
    sys.stdin.read()
else:
    time.sleep(seconds)
db.execute("ROLLBACK")
print("released", flush=True)
"""


def _holder(path: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), str(seconds)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    said = proc.stdout.readline()
    if said != "locked\n":
        proc.kill()
        proc.communicate()
        raise AssertionError(f"the lock holder did not take the lock (it said {said!r})")
    return proc


@contextmanager
def write_locked(path: Path) -> Iterator[None]:
    """The write lock, held by another process for the block."""
    proc = _holder(path, -1)
    try:
        yield
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        released = proc.stdout.readline()
        proc.stdout.close()
        proc.wait(timeout=10)
    assert released == "released\n", released


@contextmanager
def write_locked_for(path: Path, seconds: float) -> Iterator[threading.Event]:
    """The write lock, let go by another process after ``seconds``: the event is set
    once it is. The block's end waits for that."""
    proc = _holder(path, seconds)
    released = threading.Event()

    def hear() -> None:
        assert proc.stdout is not None
        if proc.stdout.readline() == "released\n":
            released.set()

    listener = threading.Thread(target=hear)
    listener.start()
    try:
        yield released
    finally:
        listener.join(timeout=seconds + 10)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
        proc.wait(timeout=10)
