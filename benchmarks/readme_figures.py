"""The README's benchmark figures, made from the committed results of one run.

    .venv/bin/python benchmarks/readme_figures.py            # print the figures block
    .venv/bin/python benchmarks/readme_figures.py --write    # put it into README.md
    .venv/bin/python benchmarks/readme_figures.py --check    # exit 1 if README.md differs

The block sits between ``<!-- figures: begin -->`` and ``<!-- figures: end -->`` in
README.md; every number in it is computed here from ``benchmarks/results/latest.json``
(the raw samples ``run.py`` wrote), the medians over rounds as ``report.py`` takes them,
so the README and the results cannot drift apart (tests/test_claims.py runs ``--check``).

``--write`` also draws the README's charts (``docs/figures/*.svg``, matplotlib) from the
same results and from ``benchmarks/results/layers.json`` (``layers.py``); ``--check``
compares the figures each chart carries with the results.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "latest.json"
LAYERS = ROOT / "benchmarks" / "results" / "layers.json"
INSTRUCTIONS = ROOT / "benchmarks" / "results" / "instructions-memory.json"
#: shared objects (callgrind's names, by prefix) -> the layer they are
OBJECT_LAYERS = [
    ("libpython", "Python interpreter (our code, Starlette, asyncio)"),
    ("_core.", "msgspec (JSON, structs)"),
    ("loop.", "uvloop (event loop, sockets)"),
    ("parser.", "httptools (HTTP parsing)"),
    ("libc.", "libc"),
    ("libsqlite3", "SQLite"),
]
FIGURES = ROOT / "docs" / "figures"
README = ROOT / "README.md"
BEGIN, END = "<!-- figures: begin -->", "<!-- figures: end -->"

#: the servers the README shows, in its order, with their labels
UNARY_SERVERS = [
    ("raw", "raw Starlette ceiling"),
    ("interlingua-memory", "**interlingua, memory**"),
    ("interlingua-sqlite", "**interlingua, SQLite** (WAL, `synchronous=NORMAL`)"),
    ("a2a-sdk", "a2a-sdk 1.3.0 (in-memory store)"),
    ("a2a-sdk-0.3", "a2a-sdk 0.3.26 (in-memory, v0.3)"),
]
STREAM_SERVERS = [
    ("raw", "raw SSE ceiling (pre-encoded events, one send each)"),
    ("raw-coalescing", "raw SSE ceiling (the same events, written together when ready)"),
    ("interlingua-memory", "**interlingua, memory**"),
    ("interlingua-sqlite", "**interlingua, SQLite**"),
    ("a2a-sdk", "a2a-sdk 1.3.0"),
    ("a2a-sdk-0.3", "a2a-sdk 0.3.26 (v0.3)"),
]
SDK = "a2a-sdk"
COALESCING = "raw-coalescing"

Sample = dict[str, Any]


def _median(values: Iterable[float]) -> float:
    items = [v for v in values if v == v]
    return statistics.median(items) if items else float("nan")


def _of(samples: list[Sample], server: str, **match: Any) -> list[Sample]:
    return [
        s for s in samples if s["server"] == server and all(s.get(k) == v for k, v in match.items())
    ]


def _med(
    samples: list[Sample], server: str, value: Callable[[Sample], float], **match: Any
) -> float:
    return _median(value(s) for s in _of(samples, server, **match))


def _n(value: float, digits: int = 0) -> str:
    return "-" if value != value else f"{value:,.{digits}f}"


def _x(value: float, base: float, digits: int = 2, suffix: str = "") -> str:
    if value != value or base != base or not base:
        return "-"
    return f"{value / base:.{digits}f}{suffix}"


def _req_cpu(s: Sample) -> float:
    return s["cpu_s"] * 1000 / s["requests"] if s["requests"] else float("nan")


def _event_cpu(s: Sample) -> float:
    return s["cpu_s"] * 1e6 / s["events"] if s["events"] else float("nan")


def render(results: dict[str, Any], instructions: dict[str, Any] | None = None) -> str:
    unary, stream = results["unary"], results["stream"]
    concurrencies = sorted({s["concurrency"] for s in unary})
    main_c = 16 if 16 in concurrencies else concurrencies[0]
    rps = {
        (srv, c): _med(unary, srv, lambda s: s["requests_per_s"], concurrency=c)
        for srv, _ in UNARY_SERVERS
        for c in concurrencies
    }
    lines = [
        f"| unary `SendMessage` | {' | '.join(f'c={c} req/s' for c in concurrencies)} "
        f"| CPU ms/req (c={main_c}) | vs raw (req/s, c={'/'.join(map(str, concurrencies))}) "
        f"| vs a2a-sdk 1.3 (req/s, c={main_c}) |",
        "|---|" + "---:|" * (len(concurrencies) + 3),
    ]
    for srv, label in UNARY_SERVERS:
        if not _of(unary, srv):
            continue
        cpu = _med(unary, srv, _req_cpu, concurrency=main_c)
        vs_raw = " / ".join(_x(rps[srv, c], rps["raw", c]) for c in concurrencies)
        lines.append(
            f"| {label} | {' | '.join(_n(rps[srv, c]) for c in concurrencies)} "
            f"| {_n(cpu, 3)} | {vs_raw} | {_x(rps[srv, main_c], rps[SDK, main_c], 1, 'x')} |"
        )
    # results from before the coalescing ceiling existed have no column for it
    coalescing = bool(_of(stream, COALESCING, concurrency=1))
    lines += [
        "",
        "| streaming, 1,000 chunks | events/s (1 stream) | first event p50 / p99 "
        "| CPU µs/event | vs raw SSE"
        + (" | vs coalescing SSE" if coalescing else "")
        + " | vs a2a-sdk 1.3 |",
        "|---|---:|---:|---:|---:|---:|" + "---:|" * coalescing,
    ]
    eps = {
        srv: _med(stream, srv, lambda s: s["events_per_s"], concurrency=1)
        for srv, _ in STREAM_SERVERS
    }
    for srv, label in STREAM_SERVERS:
        if not _of(stream, srv, concurrency=1):
            continue
        p50 = _med(stream, srv, lambda s: s["ttfe_p50_ms"], concurrency=1)
        p99 = _med(stream, srv, lambda s: s["ttfe_p99_ms"], concurrency=1)
        cpu = _med(stream, srv, _event_cpu, concurrency=1)
        vs_coalescing = f"| {_x(eps[srv], eps[COALESCING])} " if coalescing else ""
        lines.append(
            f"| {label} | {_n(eps[srv])} | {_n(p50, 2)} / {_n(p99, 2)} ms "
            f"| {_n(cpu, 2)} | {_x(eps[srv], eps['raw'])} {vs_coalescing}"
            f"| {_x(eps[srv], eps[SDK], 1, 'x')} |"
        )
    lines += ["", *_other_figures(results)]
    if instructions:
        lines += ["", *_instruction_figures(instructions)]
    return "\n".join(lines) + "\n"


def _instruction_figures(data: dict[str, Any]) -> list[str]:
    """Instructions per unit of work (callgrind, ``instructions.py --json``): a count,
    not a time, so revisions compare across runs and machines' loads."""
    raw = data.get("raw_unary") or 0
    lines = ["| instructions (callgrind, memory store) | per unary `SendMessage` | vs raw "
             "| per streamed event |", "|---|---:|---:|---:|"]
    if raw:
        lines.append(f"| raw Starlette ceiling | {raw:,} | 1.00 | - |")
    for r in data["revisions"]:
        ratio = f"{r['unary'] / raw:.2f}" if raw else "-"
        lines.append(f"| interlingua {r['revision']} | {r['unary']:,} | {ratio} "
                     f"| {r['event']:,} |")
    return lines


def _other_figures(results: dict[str, Any]) -> list[str]:
    out: list[str] = []
    streams = results.get("memory_streams") or []
    if streams:

        def per_stream(s: Sample) -> float:
            return (s["rss_open_bytes"] - s["rss_before_bytes"]) / s["streams"]

        parts = [
            f"{srv} {_n(_med(streams, srv, per_stream))} B"
            for srv, _ in STREAM_SERVERS
            if _of(streams, srv)
        ]
        out.append(f"- An idle open stream (server RSS per stream): {'; '.join(parts)}.")
    tasks = results.get("memory_tasks") or []
    if tasks:

        def per_task(s: Sample) -> float:
            return (s["rss_after_bytes"] - s["rss_before_bytes"]) / s["tasks"]

        # the raw ceiling keeps no tasks
        parts = [
            f"{srv} {_n(_med(tasks, srv, per_task))} B"
            for srv, _ in UNARY_SERVERS
            if srv != "raw" and _of(tasks, srv)
        ]
        out.append(f"- A stored small task (server RSS per task): {'; '.join(parts)}.")
    listing = results.get("list_tasks") or []
    if listing:
        parts = []
        for stored in sorted({s["stored"] for s in listing}):
            ms = _med(listing, "interlingua-sqlite", _req_cpu, stored=stored)
            parts.append(f"{_n(ms, 2)} ms at {stored:,} stored tasks")
        out.append(f"- `ListTasks` on SQLite, server CPU per request: {'; '.join(parts)}.")
    growth = results.get("growth") or []
    if growth:
        lengths = sorted({s["chunks"] for s in growth})
        first, last = lengths[0], lengths[-1]
        parts = []
        for srv, _ in STREAM_SERVERS:
            a = _med(growth, srv, _event_cpu, chunks=first)
            b = _med(growth, srv, _event_cpu, chunks=last)
            if a == a and b == b:
                parts.append(f"{srv} {_x(b, a)}")
        out.append(f"- CPU per event at {last:,} chunks relative to {first:,}: {'; '.join(parts)}.")
    return out


def _short(label: str) -> str:
    return label.replace("**", "").split(" (")[0]


def charts(results: dict[str, Any], layers: dict[str, Any] | None) -> dict[str, Any]:
    """The figures of each README chart, by file name."""
    unary, stream = results["unary"], results["stream"]
    servers = [(srv, label) for srv, label in UNARY_SERVERS if _of(unary, srv, concurrency=16)]
    out: dict[str, Any] = {
        "cpu-per-request.svg": {
            "title": "Server CPU per unary SendMessage at 16 concurrent (lower is better)",
            "unit": "CPU ms per request",
            "digits": 3,
            "labels": [_short(label) for _, label in servers],
            "series": {
                "CPU ms/request": [
                    round(_med(unary, srv, _req_cpu, concurrency=16), 4) for srv, _ in servers
                ]
            },
        }
    }
    streamers = [(srv, label) for srv, label in STREAM_SERVERS if _of(stream, srv, concurrency=1)]
    out["events-per-second.svg"] = {
        "title": "Events per second, one stream of 1,000 chunks (higher is better)",
        "unit": "events per second (log scale)",
        "log": True,
        "labels": [
            _short(label) + (" (coalescing)" if srv == COALESCING else "")
            for srv, label in streamers
        ],
        "series": {
            "events/s": [
                round(_med(stream, srv, lambda s: s["events_per_s"], concurrency=1))
                for srv, _ in streamers
            ]
        },
    }
    if layers:
        revs = layers["revisions"]
        names = sorted(
            {k for r in revs for k in r["unary"]},
            key=lambda k: (-max(r["unary"].get(k, 0.0) for r in revs), k),
        )
        out["calls-per-layer.svg"] = {
            "title": "Python calls per unary send, by layer (benchmarks/layers.py)",
            "unit": "calls per request (cProfile; C functions counted too)",
            "digits": 0,
            "labels": names,
            "series": {
                r["revision"].split(" ")[0]: [round(r["unary"].get(k, 0.0), 2) for k in names]
                for r in revs
            },
        }
    if INSTRUCTIONS.exists():
        out["instructions-per-layer.svg"] = instructions_chart(
            json.loads(INSTRUCTIONS.read_text()))
    return out


def _object_layer(name: str) -> str:
    for prefix, layer in OBJECT_LAYERS:
        if name.startswith(prefix):
            return layer
    return "the rest (kernel entry, other extensions)"


def instructions_chart(data: dict[str, Any]) -> dict[str, Any]:
    """Instructions per unary send by layer (shared object), per revision counted."""
    revs = [r for r in data["revisions"] if r.get("objects")]
    per: dict[str, dict[str, float]] = {}
    for r in revs:
        sums: dict[str, float] = {}
        named = 0.0
        for name, n in r["objects"]["unary"].items():
            layer = _object_layer(name)
            if not layer.startswith("the rest"):
                sums[layer] = sums.get(layer, 0.0) + n
                named += n
        sums["the rest (kernel entry, other extensions)"] = r["unary"] - named
        per[r["revision"]] = sums
    names = [layer for _, layer in OBJECT_LAYERS if any(p.get(layer) for p in per.values())]
    names.append("the rest (kernel entry, other extensions)")
    return {"title": "Instructions per unary send, memory store, by layer (callgrind)",
            "unit": "instructions per request (benchmarks/instructions.py --objects)",
            "labels": names,
            "series": {rev: [round(per[rev].get(k, 0.0)) for k in names] for rev in per}}


def _load_layers() -> dict[str, Any] | None:
    return json.loads(LAYERS.read_text()) if LAYERS.exists() else None


def _check_charts(wanted: dict[str, Any]) -> list[str]:
    from charts import data_of

    wrong = []
    for name, chart in wanted.items():
        path = FIGURES / name
        drawn = data_of(path.read_text()) if path.exists() else None
        if drawn != json.loads(json.dumps(chart)):
            wrong.append(name)
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="put the block into README.md")
    group.add_argument("--check", action="store_true", help="exit 1 if README.md differs")
    args = parser.parse_args()
    block = render(json.loads(RESULTS.read_text()),
                   json.loads(INSTRUCTIONS.read_text()) if INSTRUCTIONS.exists() else None)
    if not (args.write or args.check):
        sys.stdout.write(block)
        return 0
    text = README.read_text()
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        print(f"README.md has no {BEGIN} … {END} block", file=sys.stderr)
        return 1
    new = f"{head}{BEGIN}\n{block}{END}{tail}"
    wanted = charts(json.loads(RESULTS.read_text()), _load_layers())
    if args.check:
        if new != text:
            print(
                "README.md's figures differ from benchmarks/results/latest.json: "
                "run benchmarks/readme_figures.py --write",
                file=sys.stderr,
            )
            return 1
        wrong = _check_charts(wanted)
        if wrong:
            print(
                f"docs/figures: {', '.join(wrong)} differ from the committed results: "
                "run benchmarks/readme_figures.py --write",
                file=sys.stderr,
            )
            return 1
        return 0
    README.write_text(new)
    from charts import svg

    FIGURES.mkdir(parents=True, exist_ok=True)
    for name, chart in wanted.items():
        (FIGURES / name).write_text(svg(chart))
    return 0


if __name__ == "__main__":
    sys.exit(main())
