"""What observability costs on the request path: unary SendMessage with OpenTelemetry
absent, installed but off, on (spans made and dropped), and with ``/metrics`` counting.

    .venv/bin/python benchmarks/observability.py            # 3 rounds of 4 s, about 2 minutes
    .venv/bin/python benchmarks/observability.py --rounds 5 --seconds 6

Each mode is the interlingua echo server (``servers/interlingua_observed_echo.py``,
memory store) in a process of its own pinned to CPU 0, loaded by wrk (v1.0 JSON-RPC
``SendMessage``, 16 keep-alive connections) pinned to CPU 1, as ``run.py`` does. Modes
run in a rotated order each round; the figures are medians over rounds. Server CPU per
request is the server's utime + stime over the measurement divided by the requests
answered: on a shared machine it moves much less than req/s does. The report goes to
stdout and to ``benchmarks/results/observability.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import launch
import load
from meter import Meter
from payloads import V1_0
from targets import BENCH_DIR, PROJECT_PYTHON, Target

MODES = {
    "absent": "OpenTelemetry not importable",
    "off": "OpenTelemetry installed, no SDK set up",
    "on": "tracing on (SDK, batch processor, spans dropped)",
    "metrics": "/metrics on (tracing off)",
}


def target(mode: str) -> Target:
    return Target(name=f"otel-{mode}", description=MODES[mode], python=PROJECT_PYTHON,
                  module="interlingua_observed_echo", attr="create", factory=True,
                  dialect=V1_0, store_url="memory://", env={"BENCH_OBSERVE": mode})


def bare_span_us(count: int = 20_000) -> float:
    """CPU per span of OpenTelemetry's SDK alone (a span with three attributes, made
    current, ended, handed to a batch processor whose exporter drops it), in this
    process: what any instrumentation pays per span before doing anything of its own."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class Dropped(SpanExporter):
        def export(self, spans: object) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    tracer = provider.get_tracer("bench")
    start = time.process_time()
    for n in range(count):
        with tracer.start_as_current_span("span", attributes={"a": "b", "c": "d", "n": n}):
            pass
    spent = time.process_time() - start
    provider.shutdown()
    return spent / count * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "observability.md")
    args = parser.parse_args(argv)
    modes = list(MODES)
    samples: dict[str, list[tuple[float, float, float, float]]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        script = load.write_script(Path(tmp), "send.lua", load.lua_script(
            V1_0.body_template(), V1_0.headers, V1_0.completed_marker))
        for round_no in range(args.rounds):
            order = modes[round_no % len(modes):] + modes[:round_no % len(modes)]
            for mode in order:
                running = launch.start(target(mode), 0, Path(tmp) / f"{mode}-{round_no}")
                try:
                    url = running.base_url + "/"
                    load.run_wrk(url, script, args.connections, 1, 1)  # warm-up
                    meter = Meter(running.pid, 0, 1)
                    result = load.run_wrk(url, script, args.connections, args.seconds, 1)
                    cpu, _, noise, _ = meter.read()
                finally:
                    launch.stop(running)
                if result.errors:
                    print(f"{mode}: {result.errors} bad answers", file=sys.stderr)
                    return 1
                samples[mode].append((result.requests_per_s, cpu / result.requests * 1e6,
                                      result.p99_ms, noise / max(result.duration_s, 1e-9)))
                print(f"round {round_no + 1} {mode}: {result.requests_per_s:,.0f} req/s, "
                      f"{cpu / result.requests * 1e6:.0f} us CPU/req", file=sys.stderr)
    command = "python benchmarks/observability.py " + " ".join(argv or sys.argv[1:])
    lines = [
        "# Observability on the request path",
        "",
        f"`{command.strip()}` on {time.strftime('%Y-%m-%d', time.gmtime())}: unary v1.0 "
        f"`SendMessage` over JSON-RPC, memory store, {args.connections} connections, "
        f"{args.rounds} rounds of {args.seconds:g} s; medians over rounds (server on CPU 0, "
        "wrk on CPU 1; the machine is shared, so req/s moves with its other load while CPU "
        "per request moves much less).",
        "",
        "| mode | req/s | server CPU per request | p99 | others' CPU on the server's core |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for mode in modes:
        rps, cpu_us, p99, noise = (statistics.median(s[i] for s in samples[mode])
                                   for i in range(4))
        lines.append(f"| {MODES[mode]} | {rps:,.0f} | {cpu_us:.0f} µs | {p99:.1f} ms | "
                     f"{noise:.0%} |")
    lines.append("")
    lines.append(f"OpenTelemetry's SDK alone, in the harness's process: {bare_span_us():.0f} µs "
                 "of CPU per span (three attributes, made current, ended, batch processor, "
                 "exporter that drops it). A traced unary send makes three spans: its "
                 "request's, its executor turn's and its store commit's.")
    lines.append("")
    lines.append("Per round (req/s, µs CPU per request):")
    lines.append("")
    for mode in modes:
        rounds = ", ".join(f"{r:,.0f} / {c:.0f}" for r, c, _, _ in samples[mode])
        lines.append(f"- {mode}: {rounds}")
    report = "\n".join(lines) + "\n"
    args.out.write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
