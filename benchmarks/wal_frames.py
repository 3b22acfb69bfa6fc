"""Pages an echo send writes to the SQLite store's WAL, by the table or index they belong to.

A commit appends every page it changed to the WAL, one frame each (a 24-byte header and
the page, two writes), and a checkpoint copies them into the database later: the frames
of a write are most of what a durable send costs beyond the memory store. This calls the
echo server's ASGI app in this process (as ``in_process.py`` does) on a fresh database,
with its background checkpoints held off so that the WAL keeps every frame, then reads
the WAL's frame headers and names each page's b-tree with the ``dbstat`` table.

    .venv/bin/python benchmarks/wal_frames.py                  # unary sends and streams
    .venv/bin/python benchmarks/wal_frames.py --sends 500 --streams 0

Needs an SQLite built with ``dbstat`` (Debian's is). The counts are of this code and
SQLite's b-tree layout, not of the machine: they do not move from run to run.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sqlite3
import struct
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "servers"))

from in_process import Caller, _send_body  # noqa: E402
from interlingua_echo import build_app  # noqa: E402

from interlingua.stores.sqlite import checkpoint  # noqa: E402

#: requests sent first, so that the b-trees are past their first few pages
WARM_UP = 300


def wal_pages(path: Path) -> tuple[list[int], int]:
    """The page number of every frame in the WAL at ``path``, and how many commits."""
    data = path.read_bytes()
    page_size = struct.unpack(">I", data[8:12])[0]
    pages: list[int] = []
    commits = 0
    offset = 32  # the WAL header
    while offset + 24 + page_size <= len(data):
        page, size_after = struct.unpack(">II", data[offset:offset + 8])
        pages.append(page)
        commits += size_after != 0  # a commit's last frame gives the database size
        offset += 24 + page_size
    return pages, commits


async def measure(kind: str, requests: int) -> tuple[float, float, dict[str, float]]:
    """(frames per request, commits per request, frames per request by b-tree)."""
    with tempfile.TemporaryDirectory(prefix="interlingua-wal-") as tmp:
        db = Path(tmp) / "tasks.db"
        caller = Caller(build_app(f"sqlite:///{db}", "http://127.0.0.1:1/"))
        await caller.start()
        try:
            streaming = kind == "stream"
            for n in range(WARM_UP if not streaming else WARM_UP // 10):
                await caller.post(_send_body(n, streaming))
            # Copy everything into the database, so that the next commit starts
            # the WAL over from its beginning.
            conn = sqlite3.connect(db)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            for n in range(requests):
                await caller.post(_send_body(10_000 + n, streaming))
            pages, commits = wal_pages(Path(f"{db}-wal"))
            conn = sqlite3.connect(db)
            try:
                owner = dict(conn.execute("SELECT pageno, name FROM dbstat"))
            finally:
                conn.close()
        finally:
            await caller.stop()
    by_tree = collections.Counter(owner.get(page, "(free)") for page in pages)
    return (len(pages) / requests, commits / requests,
            {name: count / requests for name, count in by_tree.most_common()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sends", type=int, default=200, help="unary sends measured (200)")
    parser.add_argument("--streams", type=int, default=30,
                        help="streams of 1,000 chunks measured (30)")
    args = parser.parse_args()
    # No background checkpoint: the WAL then holds every frame written. The writer's
    # own backstop comes at WRITER_THRESHOLD_FRAMES, beyond what these runs write.
    checkpoint.WalCheckpointer.wrote = lambda self, pages: False  # type: ignore[method-assign]
    for kind, requests in (("unary", args.sends), ("stream", args.streams)):
        if requests <= 0:
            continue
        frames, commits, by_tree = asyncio.run(measure(kind, requests))
        if frames * requests >= checkpoint.WRITER_THRESHOLD_FRAMES:
            raise SystemExit(f"{kind}: too many requests for one WAL; ask for fewer")
        print(f"{kind}: {frames:.2f} WAL frames per request, {commits:.2f} commits "
              f"({requests} requests)")
        for name, count in by_tree.items():
            print(f"  {count:7.2f}  {name}")


if __name__ == "__main__":
    main()
