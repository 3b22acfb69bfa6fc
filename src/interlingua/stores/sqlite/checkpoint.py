"""The SQLite store's WAL checkpoints, on a thread and connection of their own.

SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past
its threshold. The store commits on the event loop's thread (see ``_run`` in
``store.py``), so every loop turn that crossed it would copy the WAL into the
database file and wait for two fsyncs, with the loop idle meanwhile.

Here the copying and the fsyncs run on a thread of their own, as PASSIVE
checkpoints on a second connection: a passive checkpoint never blocks the
writer, and the writer never waits for it (sqlite3 lets go of the GIL while
SQLite works).

A WAL only starts again from its beginning when a write begins after a
checkpoint that copied every frame. Under a steady stream of commits some land
while a background checkpoint runs, and the WAL would grow without end; so
once it is ``FINISH_FRAMES`` long and that happened, the writer runs one short
checkpoint itself, between two of its commits, copying just the frames those
commits added (``wrote``). That holds the event loop for a millisecond or
more; after every overlapped checkpoint (one in four under a steady load) it
was the longest wait a new stream's first event saw, so the WAL is let grow
that far first. Its own automatic checkpoint stays on at
``WRITER_THRESHOLD_FRAMES``, eight times SQLite's default, as a backstop.
"""

from __future__ import annotations

import sqlite3
import time
from concurrent.futures import Future, ThreadPoolExecutor

#: the writer's own ``wal_autocheckpoint``, a backstop (frames; 2 KiB each)
WRITER_THRESHOLD_FRAMES = 8000
# On a server with one core a checkpoint shares it with the event loop, and a
# short one holds up a waiting stream's first event less; much shorter ones
# cost more than they save (docs/architecture.md, "WAL checkpoints").

#: a background checkpoint once the writer added about this many pages to the WAL...
CHECKPOINT_PAGES = 250
#: ...or once this long has passed since the last with anything written
CHECKPOINT_INTERVAL_S = 1.0
#: the WAL length (frames, 8 MiB) from which the writer finishes a checkpoint
#: that commits overlapped (see ``wrote``): half the backstop
FINISH_FRAMES = 4000


class WalCheckpointer:
    """Decides when to checkpoint (``wrote``) and runs it on its own thread."""

    def __init__(
        self,
        path: str,
        busy_timeout_ms: int,
        *,
        pages: int = CHECKPOINT_PAGES,
        interval_s: float = CHECKPOINT_INTERVAL_S,
        finish_frames: int = FINISH_FRAMES,
    ) -> None:
        self._path = path
        self._finish_frames = finish_frames
        self._busy_timeout_ms = busy_timeout_ms
        self._pages_threshold = pages
        self._interval_s = interval_s
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="interlingua-sqlite-ckpt")
        self._conn: sqlite3.Connection | None = None  # opened on the thread, at first use
        self._running: Future[tuple[int, int, int]] | None = None
        self._pages = 0
        self._last = time.monotonic()
        self._closed = False
        self._overlapped = False  # commits landed while the running one ran
        self._finish_due = False  # and it is over: the writer is to finish it
        #: short checkpoints the writer was asked to run itself (see ``wrote``)
        self.finishing = 0
        #: checkpoints completed, and the WAL's (frames, frames copied) after the last
        self.completed = 0
        self.last_result: tuple[int, int] = (0, 0)

    def wrote(self, pages: int) -> bool:
        """After a commit that added about ``pages`` pages to the WAL: start a
        checkpoint if one is due.

        Called on the writer's side; returns at once. True asks the writer to
        run a checkpoint itself, now, between its commits: the last one here
        ran while commits landed, and copying just their frames (a fraction of
        a millisecond, where the whole WAL took several) lets the WAL start over.
        """
        if self._closed:
            return False
        self._pages += pages
        running = self._running
        if running is not None:
            if not running.done():
                self._overlapped = self._overlapped or pages > 0
                return False
            self._collect(running)
        if self._finish_due:
            self._finish_due = False
            self.finishing += 1
            self._pages = 0
            self._last = time.monotonic()
            return True
        if self._pages == 0:
            return False
        now = time.monotonic()
        if self._pages < self._pages_threshold and now - self._last < self._interval_s:
            return False
        self._pages = 0
        self._last = now
        self._running = self._pool.submit(self._checkpoint)
        return False

    def _collect(self, done: Future[tuple[int, int, int]]) -> None:
        self._running = None
        overlapped, self._overlapped = self._overlapped, False
        if done.exception() is None:
            _busy, frames, copied = done.result()
            self.completed += 1
            self.last_result = (frames, copied)
            self._finish_due = overlapped and frames >= self._finish_frames
        # A failed checkpoint (the disk, say) is left to the next one, or to the
        # writer's own: the writes themselves are committed and durable.

    def _checkpoint(self) -> tuple[int, int, int]:
        conn = self._conn
        if conn is None:
            conn = self._conn = sqlite3.connect(
                self._path, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms:d}")
        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(busy), int(frames), int(copied)

    def wait(self) -> None:
        """Block until the checkpoint in progress, if any, is over (for tests)."""
        running = self._running
        if running is not None:
            running.exception()
            self._collect(running)

    def close(self) -> None:
        """Wait for a checkpoint in progress, then close the connection. Blocking."""
        self._closed = True
        self._pool.submit(self._close_connection)
        self._pool.shutdown(wait=True)
        self._running = None

    def _close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
