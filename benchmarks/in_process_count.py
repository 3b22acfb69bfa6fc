"""Instructions per unary send (or streamed event) of the echo app called in process,
counted by callgrind, for source trees side by side: a quick way to weigh one change.

No HTTP server and no client process: the app of ``servers/interlingua_echo.py`` is
called as ``in_process.py`` calls it (one request after another, on uvloop), under
``valgrind --tool=callgrind``, at N and 2N requests; the difference over N is a request's
cost without start-up and warm-up. The figure leaves out what uvicorn and a client cost,
so it is lower than ``instructions.py``'s, which remains the figure of record; a change's
difference here is the same work, counted in a minute instead of several.

    .venv/bin/python benchmarks/in_process_count.py src /tmp/changed/src
    .venv/bin/python benchmarks/in_process_count.py src --kind stream --requests 4
    .venv/bin/python benchmarks/in_process_count.py HEAD~3 HEAD --functions 30
    .venv/bin/python benchmarks/in_process_count.py src --kind stream --chunks 100 --requests 20

Each tree is a directory holding the ``interlingua`` package, or a git revision (its
``src/`` exported). ``--functions K`` also prints the K C functions (interpreter, msgspec,
uvloop, libc) whose instructions per unit changed most from the first tree to each other.
Bytecode is not written (``PYTHONDONTWRITEBYTECODE``): a tree's first count would
otherwise include compiling it, and its second not.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: run under valgrind: the app called in process, ``kind`` N times (argv: kind, N, store,
#: the chunks a stream asks for)
_DRIVER = """
import sys
sys.path[:0] = [{bench!r}, {servers!r}]
import uvloop
import in_process
from interlingua_echo import build_app

async def main(kind, n, store, chunks):
    in_process.STREAM_CHUNKS = chunks  # the chunks a stream asks for ("stream N")
    caller = in_process.Caller(build_app(store, "http://127.0.0.1:1/", submit_grace=1000.0))
    await caller.start()
    make, _ = in_process.KINDS[kind]
    for i in range(30 if kind == "unary" else 2):
        await caller.post(make(i))
    for i in range(n):
        await caller.post(make(100 + i))
    await caller.stop()

uvloop.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])))
"""


def tree(name: str, into: Path) -> Path:
    """``name`` as a directory holding ``interlingua``: itself, or a revision exported."""
    if (Path(name) / "interlingua").is_dir():
        return Path(name).resolve()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", name, "src"], check=True,
                             capture_output=True).stdout
    target = into / re.sub(r"[^\w.-]", "_", name)
    target.mkdir()
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target / "src"


def count(src: Path, kind: str, n: int, store: str, out: Path, chunks: int = 1000) -> Path:
    """Run the driver for ``n`` requests under callgrind; its output file."""
    driver = out.parent / "driver.py"
    driver.write_text(_DRIVER.format(bench=str(HERE), servers=str(HERE / "servers")))
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0",
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                    sys.executable, str(driver), kind, str(n), store, str(chunks)],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def by_function(path: Path) -> tuple[int, dict[str, int]]:
    """The program's total and each function's own instructions (callgrind_annotate)."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no",
                           str(path)], check=True, capture_output=True, text=True).stdout
    total, functions = 0, {}
    for line in text.splitlines():
        found = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if not found:
            continue
        value, name = int(found.group(1).replace(",", "")), found.group(2).strip()
        if "PROGRAM TOTALS" in name:
            total = value
            continue
        # the function's name without the path of its source file or its object
        name = re.sub(r"^\S*/", "", name.split(" [")[0])
        functions[name] = functions.get(name, 0) + value
    return total, functions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", help="directories holding interlingua, or revisions")
    parser.add_argument("--kind", choices=("unary", "stream"), default="unary")
    parser.add_argument("--requests", type=int, default=200,
                        help="N: requests of the first count (200; a stream is 1,002 events)")
    parser.add_argument("--store", default="memory://",
                        help="store URL (memory://; TMP in it is a fresh directory)")
    parser.add_argument("--functions", type=int, default=0)
    parser.add_argument("--chunks", type=int, default=1000,
                        help="artifact chunks a stream asks for (1,000): a stream is that "
                        "many events and two more; at 100, as instructions.py asks, a "
                        "stream's own cost weighs as it does there")
    args = parser.parse_args(argv)
    if args.requests < 1:
        parser.error("--requests must be at least 1")
    if args.chunks < 1:
        parser.error("--chunks must be at least 1")
    units = args.requests * (args.chunks + 2 if args.kind == "stream" else 1)
    rows: list[tuple[str, float, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(args.trees):
            src = tree(name, Path(tmp))
            counted = []
            for n in (args.requests, 2 * args.requests):
                work = Path(tmp) / f"{i}-{n}"
                work.mkdir()
                store = args.store.replace("TMP", str(work))
                counted.append(by_function(count(src, args.kind, n, store, work / "cg.out",
                                                 args.chunks)))
            (t1, f1), (t2, f2) = counted
            per = {k: (f2.get(k, 0) - f1.get(k, 0)) / units for k in set(f1) | set(f2)}
            rows.append((name, (t2 - t1) / units, per))
            print(f"{name}: {(t2 - t1) / units:,.0f} instructions / {args.kind}"
                  f" {'event' if args.kind == 'stream' else 'send'}", file=sys.stderr)
    unit = "streamed event" if args.kind == "stream" else "unary send"
    print(f"| tree | instructions / {unit}, in process | vs {rows[0][0]} |")
    print("| --- | ---: | ---: |")
    for name, per_unit, _ in rows:
        print(f"| {name} | {per_unit:,.0f} | {per_unit - rows[0][1]:+,.0f} |")
    for name, _, per in rows[1:] if args.functions else ():
        base = rows[0][2]
        changed = sorted(((per.get(k, 0) - base.get(k, 0), k) for k in set(per) | set(base)),
                         key=lambda d: -abs(d[0]))
        print(f"\n{name} against {rows[0][0]}, by function (instructions / unit):")
        for delta, function in changed[:args.functions]:
            print(f"{delta:+10,.0f}  {function}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
