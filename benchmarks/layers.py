"""Python calls per unary send and per streamed event, by layer, for git revisions.

A count, not a time: the echo app of ``servers/interlingua_echo.py`` on the memory store is
called in process (as ``in_process.py`` calls it), with the timers far off and the clock
frozen as ``tests/benchmarks/test_call_budget.py`` sets them, and cProfile counts every
call, ours and the libraries', grouped by where the called function is defined: a
subpackage of interlingua (``server``, ``core/dialects``, ``bindings/jsonrpc``, ...),
Starlette, asyncio, the rest of the standard library, or C (builtins and extension
methods, msgspec's among them). Each revision's ``src/`` is exported with ``git archive``
and counted in its own process, so two revisions are compared by one script.

    .venv/bin/python benchmarks/layers.py e527765 HEAD            # print the table
    .venv/bin/python benchmarks/layers.py e527765 HEAD --write    # and results/layers.json, .md

``readme_figures.py`` draws the before/after chart from ``results/layers.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
UNARY_SENDS = 200
STREAMS = 3
WARM_UP = 10
FAR_OFF = 3600.0
FROZEN_NS = 1_767_225_600_500_000_000


def layer_of(path: str, package: str) -> str:
    """The layer a function defined in ``path`` belongs to."""
    if path.startswith(package):
        rel = path[len(package) :].split(os.sep)[:-1]
        deep = rel[:2] if rel[:1] in (["core"], ["bindings"], ["server"]) else rel[:1]
        return "interlingua/" + ("/".join(deep) or "(top)")
    if path == "~" or not path:
        return "C (builtins, msgspec, ...)"
    if path.startswith(str(HERE)):
        return "harness (echo agent, ASGI caller)"
    for name in ("starlette", "asyncio", "uvloop", "anyio"):
        if f"{os.sep}{name}{os.sep}" in path:
            return name
    return "other Python"


def _child(out: str) -> None:
    """Count in this process (its ``interlingua`` is the revision's) and write JSON."""
    import cProfile
    import pstats
    import time

    sys.path[:0] = [str(HERE), str(HERE / "servers")]
    import in_process
    from interlingua_echo import build_app

    import interlingua

    try:
        from interlingua.core import parts

        tails: Any = parts._tails
    except (ImportError, AttributeError):
        tails = None
    package = os.path.dirname(interlingua.__file__) + os.sep
    time.time_ns = lambda: FROZEN_NS  # type: ignore[assignment]

    async def count() -> dict[str, dict[str, float]]:
        app = build_app(
            "memory://",
            "http://127.0.0.1:1/",
            submit_grace=FAR_OFF,
            lease_interval=FAR_OFF,
            lease_timeout=2 * FAR_OFF,
            heartbeat_interval=FAR_OFF,
            retention_interval=FAR_OFF,
        )
        caller = in_process.Caller(app)
        await caller.start()
        figures: dict[str, dict[str, float]] = {}
        n = 0
        try:
            for kind, requests in (("unary", UNARY_SENDS), ("stream", STREAMS)):
                make, units = in_process.KINDS[kind]
                for _ in range(WARM_UP):
                    n += 1
                    await caller.post(make(n))
                bodies = [make(n + 1 + i) for i in range(requests)]
                n += requests
                if tails is not None:
                    tails.clear()
                prof: cProfile.Profile = await in_process.profile_posts(caller, bodies)
                layers: Counter[str] = Counter()
                for (path, _, _), row in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
                    layers[layer_of(path, package)] += row[1]
                figures[kind] = {k: v / (requests * units) for k, v in layers.items()}
        finally:
            await caller.stop()
        return figures

    import uvloop

    Path(out).write_text(json.dumps(uvloop.run(count())))


def count_revision(rev: str, work: Path) -> dict[str, dict[str, float]]:
    into = work / rev.replace("/", "_")
    into.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    out = into / "layers.json"
    env = {**os.environ, "PYTHONPATH": str(into / "src")}
    subprocess.run(
        [sys.executable, __file__, "--child", str(out)], check=True, env=env, cwd=str(work)
    )
    figures: dict[str, dict[str, float]] = json.loads(out.read_text())
    return figures


def describe(rev: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h %s", rev],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def markdown(results: dict[str, Any]) -> str:
    revs = results["revisions"]
    lines = [
        "# Python calls per unit of work, by layer",
        "",
        f"Made by `{results['command']}` (Python {results['python']}; a count, not a"
        " time). Each cell: calls per v1.0 `SendMessage` (unary) or per event of a"
        " 1,000-chunk `SendStreamingMessage` (stream) into functions defined in that"
        " layer; cProfile counts each resumption of a coroutine as a call.",
        "",
    ]
    for kind, unit in (("unary", "unary send"), ("stream", "streamed event")):
        names = sorted(
            {k for r in revs for k in r[kind]},
            key=lambda k: (-max(r[kind].get(k, 0.0) for r in revs), k),
        )
        header = [f"layer (calls per {unit})"] + [r["revision"] for r in revs]
        lines += ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * len(revs)]
        for name in names:
            lines.append(
                f"| {name} | " + " | ".join(f"{r[kind].get(name, 0.0):,.2f}" for r in revs) + " |"
            )
        lines.append(
            "| **all** | " + " | ".join(f"**{sum(r[kind].values()):,.2f}**" for r in revs) + " |"
        )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="*")
    parser.add_argument(
        "--write", action="store_true", help="write benchmarks/results/layers.json and layers.md"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    if not args.revisions:
        parser.error("name at least one revision")
    revs = []
    with tempfile.TemporaryDirectory() as tmp:
        for rev in args.revisions:
            figures = count_revision(rev, Path(tmp))
            revs.append({"revision": describe(rev), **figures})
    results = {
        "command": "benchmarks/layers.py " + " ".join(args.revisions),
        "python": ".".join(map(str, sys.version_info[:3])),
        "revisions": revs,
    }
    text = markdown(results)
    print(text)
    if args.write:
        (RESULTS / "layers.json").write_text(json.dumps(results, indent=1) + "\n")
        (RESULTS / "layers.md").write_text(text)


if __name__ == "__main__":
    main()
