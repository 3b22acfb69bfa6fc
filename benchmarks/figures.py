"""Formatting of the report's figures: medians, numbers, ratios, spreads, tables."""

from __future__ import annotations

import statistics
from collections.abc import Iterable


def median(values: Iterable[float]) -> float:
    items = list(values)
    return statistics.median(items) if items else float("nan")


def ratio(value: float, base: float | None) -> str:
    if base is None or base != base or value != value or base == 0:
        return "-"
    return f"{value / base:.2f}x"


def num(value: float, digits: int = 1) -> str:
    return "-" if value != value else f"{value:,.{digits}f}"


def percent(value: float) -> str:
    return "-" if value != value else f"{value:.0f}%"


def spread(values: list[float]) -> str:
    # Range over rounds relative to the median: how steady the figure was.
    med = median(values)
    if len(values) < 2 or not med:
        return "-"
    return f"±{(max(values) - min(values)) / med * 50:.0f}%"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    right = ["---:" if i else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(right) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines
