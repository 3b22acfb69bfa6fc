"""The README's charts: horizontal bar charts drawn with matplotlib, written as SVG.

Each SVG carries the figures it draws, as JSON in a comment (``<!-- chart-data: ... -->``),
so ``readme_figures.py --check`` can tell a chart that no longer matches the committed
results without comparing drawings (which change with matplotlib's version).
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

#: the figures of a chart: its title, the unit of its axis, and its series
#: ({"title", "unit", "labels": [...], "series": {name: [value per label]}})
Chart = dict[str, Any]

_DATA = re.compile(r"<!-- chart-data: (.*?) -->", re.S)
_COLOURS = ["#9aa5b1", "#1f6feb", "#2da44e", "#bf8700", "#cf222e", "#8250df"]


def svg(chart: Chart) -> str:
    """The chart drawn as an SVG document, its figures embedded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # A fixed salt and no date: the same figures draw the same file.
    plt.rcParams["svg.hashsalt"] = "interlingua"
    plt.rcParams["svg.fonttype"] = "none"
    labels: list[str] = chart["labels"]
    series: dict[str, list[float]] = chart["series"]
    height = 0.8 / len(series)
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    fig, ax = plt.subplots(figsize=(10, 0.45 * len(labels) * max(1, len(series)) + 1.2))
    for k, (name, values) in enumerate(series.items()):
        ys = [i + (k - (len(series) - 1) / 2) * height for i in range(len(labels))]
        bars = ax.barh(
            ys, values, height=height * 0.95, label=name, color=_COLOURS[k % len(_COLOURS)]
        )
        ax.bar_label(
            bars, labels=[f"{v:,.{chart.get('digits', 0)}f}" for v in values], padding=3, fontsize=8
        )
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel(chart["unit"])
    ax.set_title(chart["title"], fontsize=11)
    if chart.get("log"):
        ax.set_xscale("log")
    else:
        ax.xaxis.set_major_locator(MaxNLocator(5))
    digits = chart.get("digits", 0)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.{digits}f}"))
    ax.margins(x=0.15)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if len(series) > 1:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = out.getvalue()
    # "--" may not appear in an XML comment; inside a JSON string "\\u002d" reads as "-"
    data = json.dumps(chart, sort_keys=True).replace("--", "-\\u002d")
    head, sep, rest = text.partition("<svg ")
    return f"{head}<!-- chart-data: {data} -->\n{sep}{rest}"


def data_of(svg_text: str) -> Chart | None:
    """The figures an SVG made by ``svg`` carries; None when it carries none."""
    found = _DATA.search(svg_text)
    if found is None:
        return None
    chart: Chart = json.loads(found.group(1))
    return chart
