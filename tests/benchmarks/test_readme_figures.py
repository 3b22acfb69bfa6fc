"""The README's streaming figures (benchmarks/readme_figures.py) name the coalescing
ceiling once a run has measured it, and stay as they were for results without it."""

from __future__ import annotations

from typing import Any

import readme_figures


def _stream(server: str, events_per_s: float) -> dict[str, Any]:
    return {"server": server, "round": 1, "concurrency": 1, "events": 1_002_000,
            "events_per_s": events_per_s, "ttfe_p50_ms": 0.5, "ttfe_p99_ms": 1.0,
            "cpu_s": 5.0}


def _unary(server: str) -> dict[str, Any]:
    return {"server": server, "round": 1, "concurrency": 16, "requests": 1000,
            "requests_per_s": 1000.0, "cpu_s": 0.1}


def _streaming_lines(stream: list[dict[str, Any]]) -> list[str]:
    results = {"unary": [_unary("raw"), _unary("a2a-sdk")], "stream": stream}
    lines = readme_figures.render(results).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| streaming"))
    return lines[start : lines.index("", start)]


def test_the_coalescing_ceiling_gets_a_row_and_a_column() -> None:
    lines = _streaming_lines([_stream("raw", 100_000), _stream("raw-coalescing", 200_000),
                              _stream("interlingua-memory", 150_000), _stream("a2a-sdk", 5_000)])
    assert "| vs raw SSE | vs coalescing SSE | vs a2a-sdk 1.3 |" in lines[0]
    assert all(line.count("|") == lines[0].count("|") for line in lines)
    memory = next(line for line in lines if "interlingua, memory" in line)
    assert "| 1.50 | 0.75 | 30.0x |" in memory
    assert any(line.startswith("| raw SSE ceiling (the same events, written together")
               for line in lines)


def test_results_without_it_keep_their_columns() -> None:
    lines = _streaming_lines([_stream("raw", 100_000), _stream("interlingua-memory", 150_000),
                              _stream("a2a-sdk", 5_000)])
    assert "coalescing" not in "\n".join(lines)
    assert lines[0].endswith("| vs raw SSE | vs a2a-sdk 1.3 |")
    assert all(line.count("|") == lines[0].count("|") for line in lines)
