"""Instructions per request and per streamed event, counted by callgrind, for git revisions.

Wall-clock CPU per request moves by several percent from run to run on a shared 2-core
machine; the number of instructions the server executes does not. This counts them with
``valgrind --tool=callgrind`` on the echo server (``servers/interlingua_echo.py``, memory
store, the same uvicorn settings as ``run.py``) while a client in another process sends
v1.0 ``SendMessage`` requests (or ``SendStreamingMessage`` asking for 100 chunks), 16 at a
time. Each revision is measured at N and 2N units of work; the difference over N is the
cost of one unit without start-up and warm-up.

    .venv/bin/python benchmarks/instructions.py f6ff042 HEAD
    .venv/bin/python benchmarks/instructions.py HEAD --requests 500 --streams 50
    .venv/bin/python benchmarks/instructions.py HEAD --store sqlite --raw

``--store sqlite`` serves from a fresh SQLite file instead of the memory store;
``--raw`` also counts the raw ceiling (``servers/raw.py``) on the same requests, and
each revision's unary figure is then given as a multiple of it. ``--src DIR`` counts
a source tree as it is (its ``interlingua`` package first on ``PYTHONPATH``: a copy
with some modules compiled, say) beside the revisions. ``--objects`` also says which
shared object (the interpreter, SQLite, libc, msgspec, ...) ran the instructions of a
unit of work. ``--json FILE`` adds each revision's figures (and, with ``--objects``, its
per-object breakdown) to FILE, kept by revision, for ``readme_figures.py``'s chart.
``--list-tasks K``
(SQLite) also counts v1.0 ``ListTasks`` (pageSize 50, N = ``--requests``) on a store of
K tasks filled by ``fill_store.py`` with the revision's own code.

Each revision's ``src/`` is exported with ``git archive`` and put first on ``PYTHONPATH``;
every revision runs with this venv's dependencies. Under valgrind the server is about 50
times slower: 1,000 requests take about a minute. So the submit grace (50 ms: a new task
whose executor is still silent then is written as submitted on its own) is stretched as
much, to ``GRACE_S``: at 50 ms, under valgrind, it ran out for many quick sends, which
then counted a write that at full speed they never make, more or fewer from one run to
the next.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import httpx

import listing
from payloads import V1_0, stream_text

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVERS = HERE / "servers"
CONCURRENCY = 16
CHUNKS = 100
#: the submit grace under valgrind: the server's 50 ms, stretched as valgrind stretches time
GRACE_S = 2.5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def export(rev: str, into: Path) -> Path:
    """``rev``'s source tree, unpacked under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


#: a page of the listing case, as run.py's list-tasks case asks for it (no filter)
_LIST_BODY = listing.body(1, listing.ListFilter("none", {}, 0))


async def drive(url: str, units: int, streaming: bool, listing: bool = False) -> int:
    """Send ``units`` requests, ``CONCURRENCY`` at a time; the number of SSE events read."""
    method = V1_0.stream_method if streaming else V1_0.unary_method
    text = stream_text(CHUNKS) if streaming else "hello"
    nonce = time.time_ns()
    events = 0
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        for _ in range(3000):
            try:
                await client.get(url + ".well-known/agent-card.json")
                break
            except httpx.TransportError:
                await asyncio.sleep(0.1)
        numbers = iter(range(units))

        async def worker() -> None:
            nonlocal events
            for n in numbers:
                body = _LIST_BODY if listing else V1_0.body(n, method, text).replace(
                    b'-%d"' % n, b'-%d-%d"' % (nonce, n))
                reply = await client.post(url, content=body, headers=V1_0.headers)
                if reply.status_code != 200 or b'"result"' not in reply.content:
                    raise SystemExit(f"instructions: a bad answer: {reply.content[:300]!r}")
                events += reply.content.count(b"\ndata:") + reply.content.startswith(b"data:")

        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return events


class Counted(NamedTuple):
    instructions: int
    events: int  # SSE events read (streaming)
    out: Path  # callgrind's file


def count(src: Path | None, units: int, streaming: bool, work: Path,
          store: str = "memory", listed: int = 0) -> Counted:
    """Instructions the server executed serving ``units`` sends, the events streamed,
    and callgrind's file (``src`` None: the raw ceiling); ``listed``: ``units``
    ListTasks instead, on a store of that many tasks."""
    port = free_port()
    out = work / f"callgrind-{port}.out"
    store_url = "memory://" if store == "memory" else f"sqlite:///{work}/tasks-{port}.db"
    if listed:
        subprocess.run(
            [sys.executable, str(HERE / "fill_store.py"), "--url", store_url,
             "--tasks", str(listed)],
            env={**os.environ, "PYTHONPATH": str(src or "")}, check=True, capture_output=True)
    env = {
        **os.environ,
        "PYTHONPATH": str(src or ""),
        "BENCH_STORE_URL": store_url,
        "BENCH_PUBLIC_URL": f"http://127.0.0.1:{port}/",
        "BENCH_SUBMIT_GRACE": str(GRACE_S),
    }
    app = ["raw:app"] if src is None else ["interlingua_echo:create", "--factory"]
    server = subprocess.Popen(
        [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            sys.executable, "-m", "uvicorn", *app,
            "--app-dir", str(SERVERS), "--host", "127.0.0.1", "--port", str(port),
            "--loop", "uvloop", "--http", "httptools", "--no-access-log",
            "--log-level", "warning",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        events = asyncio.run(drive(f"http://127.0.0.1:{port}/", units, streaming,
                                   listing=bool(listed)))
    finally:
        server.send_signal(signal.SIGINT)
        _, log = server.communicate(timeout=600)
    found = re.search(r"Collected : (\d+)", log)
    if found is None:
        raise SystemExit(f"instructions: callgrind reported no total:\n{log[-2000:]}")
    return Counted(int(found.group(1)), events, out)


#: a line of ``callgrind_annotate --inclusive=no``: count, share, file:function [object]
_ANNOTATED = re.compile(r"\s*([\d,]+) \([^)]*\)\s+.*\[(.+)\]\s*$")


def by_object(out: Path) -> collections.Counter[str]:
    """Instructions in callgrind's file ``out`` by the shared object they ran in."""
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", str(out)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return objects_in(text)


def objects_in(annotated: str) -> collections.Counter[str]:
    """``callgrind_annotate --inclusive=no`` output summed by shared object (file name)."""
    found: collections.Counter[str] = collections.Counter()
    for line in annotated.splitlines():
        m = _ANNOTATED.match(line)
        if m is not None:
            found[Path(m.group(2)).name] += int(m.group(1).replace(",", ""))
    return found


def objects_table(what: str, one: Counted, two: Counted, units: int) -> str:
    """Per unit of work (``units`` between the two counts), by shared object."""
    return per_object_table(what, by_object(one.out), by_object(two.out),
                            (two.instructions - one.instructions) / units, units)


def per_object_table(what: str, one: collections.Counter[str], two: collections.Counter[str],
                     total: float, units: int) -> str:
    """A Markdown table of what each shared object added from count ``one`` to ``two``,
    per unit; objects under half a percent of ``total`` go into the last row."""
    rows = sorted((((two[k] - one[k]) / units, k) for k in one.keys() | two.keys()),
                  reverse=True)
    lines = [f"| {what}: shared object | instructions | share |", "| --- | ---: | ---: |"]
    named = 0.0
    for n, name in rows:
        if abs(n) >= total / 200:
            lines.append(f"| {name} | {n:,.0f} | {n / total:.0%} |")
            named += n
    lines.append(f"| the rest (and what callgrind names no object for) | {total - named:,.0f} "
                 f"| {(total - named) / total:.0%} |")
    return "\n".join(lines)


def per_unit(one: collections.Counter[str], two: collections.Counter[str],
             units: int) -> dict[str, float]:
    """What each shared object added from count ``one`` to ``two``, per unit."""
    return {k: round((two[k] - one[k]) / units, 1) for k in sorted(one.keys() | two.keys())}


def write_json(path: Path, store: str, raw: float, rows: list[tuple[str, str, float, float,
               float]], objects: dict[str, dict[str, dict[str, float]]]) -> None:
    """Add these revisions' figures to ``path``, replacing earlier ones of a revision."""
    import json

    data = json.loads(path.read_text()) if path.exists() else {"revisions": []}
    data["store"] = store
    if raw:
        data["raw_unary"] = round(raw)
    kept = [r for r in data["revisions"] if r["revision"] not in {row[1] for row in rows}]
    for rev, label, per_request, per_event, _ in rows:
        subject = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%s", rev],
                                 capture_output=True, text=True).stdout.strip()
        kept.append({"revision": label, "subject": subject, "unary": round(per_request),
                     "event": round(per_event), "objects": objects.get(label, {})})
    data["revisions"] = kept
    path.write_text(json.dumps(data, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="*", help="git revisions (HEAD if none and no --src)")
    parser.add_argument("--src", action="append", default=[], type=Path, metavar="DIR",
                        help="also count this source tree as it is (repeatable)")
    parser.add_argument("--objects", action="store_true",
                        help="also break each figure down by shared object")
    parser.add_argument("--requests", type=int, default=1000, help="N for the unary case")
    parser.add_argument("--streams", type=int, default=100, help="N for the stream case")
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--raw", action="store_true", help="also count the raw ceiling")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="add the figures to FILE (by revision)")
    parser.add_argument("--list-tasks", type=int, default=0, metavar="K",
                        help="also count ListTasks on a store of K tasks (SQLite)")
    args = parser.parse_args()
    if args.requests < 1 or args.streams < 1:
        parser.error(f"--requests and --streams must be 1 or more, got {args.requests} "
                     f"and {args.streams}")
    if args.list_tasks < 0:
        parser.error(f"--list-tasks must be 0 or more, got {args.list_tasks}")
    if args.list_tasks and args.store != "sqlite":
        parser.error("--list-tasks needs --store sqlite")
    for tree in args.src:
        if not (tree / "interlingua" / "__init__.py").is_file():
            parser.error(f"--src {tree}: no interlingua package there")
    if not args.revs and not args.src:
        args.revs = ["HEAD"]
    if args.objects and shutil.which("callgrind_annotate") is None:
        raise SystemExit("instructions: callgrind_annotate is not installed (it comes with "
                         "valgrind)")
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions: valgrind is not installed (apt-get install valgrind)")
    rows = []
    tables: list[str] = []
    objects: dict[str, dict[str, dict[str, float]]] = {}
    raw = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        if args.raw:
            one = count(None, args.requests, False, Path(tmp))
            two = count(None, 2 * args.requests, False, Path(tmp))
            raw = (two.instructions - one.instructions) / args.requests
            print(f"raw: {raw:,.0f} / request", file=sys.stderr)
            if args.objects:
                tables.append(objects_table("raw, unary request", one, two, args.requests))
        # (what was asked for, its label, the source tree, a directory for its files)
        trees: list[tuple[str, str, Path, Path]] = []
        for rev in args.revs:
            label = subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", "--short", rev],
                check=True, capture_output=True, text=True,
            ).stdout.strip()  # fmt: skip
            work = Path(tmp) / f"{len(trees)}-{label}"
            work.mkdir()
            trees.append((rev, label, export(rev, work), work))
        for tree in args.src:
            work = Path(tmp) / f"{len(trees)}-src"
            work.mkdir()
            trees.append((str(tree), "as it is", tree.resolve(), work))
        for rev, label, src, work in trees:
            one = count(src, args.requests, False, work, args.store)
            two = count(src, 2 * args.requests, False, work, args.store)
            per_request = (two.instructions - one.instructions) / args.requests
            s_one = count(src, args.streams, True, work, args.store)
            s_two = count(src, 2 * args.streams, True, work, args.store)
            per_event = (s_two.instructions - s_one.instructions) / (s_two.events - s_one.events)
            if args.objects:
                tables.append(objects_table(f"{rev} ({label}), unary request", one, two,
                                            args.requests))
                tables.append(objects_table(f"{rev} ({label}), streamed event", s_one, s_two,
                                            s_two.events - s_one.events))
                objects[label] = {
                    "unary": per_unit(by_object(one.out), by_object(two.out), args.requests),
                    "event": per_unit(by_object(s_one.out), by_object(s_two.out),
                                      s_two.events - s_one.events)}
            per_page = 0.0
            if args.list_tasks:
                l_one = count(src, args.requests, False, work, args.store, args.list_tasks)
                l_two = count(src, 2 * args.requests, False, work, args.store, args.list_tasks)
                per_page = (l_two.instructions - l_one.instructions) / args.requests
            rows.append((rev, label, per_request, per_event, per_page))
            print(f"{rev} ({label}): {per_request:,.0f} / request, {per_event:,.0f} / event"
                  + (f", {per_page:,.0f} / ListTasks" if per_page else ""),
                  file=sys.stderr)  # fmt: skip
    if args.json is not None:
        write_json(args.json, args.store, raw, rows, objects)
    print(f"Store: {args.store}.")
    if raw:
        print(f"Raw ceiling: {raw:,.0f} instructions / unary request.")
    if args.list_tasks:
        print(f"ListTasks: pageSize 50, {args.list_tasks:,} stored tasks.")
    print("| revision | instructions / unary request | vs raw | instructions / streamed event"
          " | instructions / ListTasks |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for rev, label, per_request, per_event, per_page in rows:
        ratio = f"{per_request / raw:.2f}x" if raw else "-"
        page = f"{per_page:,.0f}" if per_page else "-"
        print(f"| {rev} ({label}) | {per_request:,.0f} | {ratio} | {per_event:,.0f} | {page} |")
    for table in tables:
        print()
        print(table)


if __name__ == "__main__":
    main()
