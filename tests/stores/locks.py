"""A SQLite database's write lock, held by another connection as another process holds it."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["write_locked", "write_locked_for"]


@contextmanager
def write_locked(path: Path) -> Iterator[None]:
    """The write lock, held for the block."""
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


@contextmanager
def write_locked_for(path: Path, seconds: float) -> Iterator[threading.Event]:
    """The write lock, let go by a thread of its own after ``seconds``: the event is
    set once it is. The block's end waits for that."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    released = threading.Event()

    def let_go() -> None:
        time.sleep(seconds)
        other.execute("ROLLBACK")
        released.set()

    holder = threading.Thread(target=let_go)
    holder.start()
    try:
        yield released
    finally:
        holder.join()
        other.close()
