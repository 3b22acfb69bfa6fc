"""The regression guard of ``run.py --check``: this run's cost ratios against the baseline.

Compared are the server's CPU per unary request and per streamed event, each divided by
the `raw` ceiling's at the same concurrency in the same run. Absolute CPU times move with
the machine and its load; the ratio to a ceiling measured beside them moves far less, and
a quick run's ratio is comparable with a full run's. A figure is compared only where both
runs have it (the same server, case and concurrency); it has regressed when its ratio now
exceeds the committed one by more than the threshold.

Only interlingua's own servers are judged: a ceiling or the official SDK is not code of
ours, and a move of its ratio (the machine favouring one server over another) says
nothing of a change to ``src/``; their rows are shown for reference.

A figure beyond the threshold is measured again (``run.py --check`` retries the servers
concerned, beside raw) and judged on its lowest ratio over the tries: a slow stretch of
a shared machine raises a ratio once, a change of ours raises it every time.

Both runs are the JSON ``run.py`` writes (``latest.json``), as plain decoded data; the
committed one is the baseline, ``results/baseline.json``, which only ``run.py
--write-baseline`` and a commit move.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from figures import table
from report import RAW

DEFAULT_THRESHOLD = 0.15
#: the servers the guard judges: interlingua's own (the others are compared with them)
JUDGED_PREFIX = "interlingua"

#: case in the results -> (its figure's label, the count the server's CPU is divided by)
FIGURES = {"unary": ("CPU/req", "requests"), "stream": ("CPU/event", "events")}

Key = tuple[str, str, int]  # case, server, concurrency
Results = Mapping[str, Any]
Sample = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Verdict:
    case: str
    server: str
    concurrency: int
    committed: float  # ratio to raw in the committed run
    now: float  # ratio to raw in this run
    beyond: bool  # the ratio now exceeds the committed one by more than the threshold
    noise: float = 0.0  # percent of the server CPU other processes took in this run
    judged: bool = True  # False: not our server, shown for reference
    #: the ratio in each run that measured it (the first, then each retry); ``now`` is
    #: the lowest
    tries: tuple[float, ...] = ()

    @property
    def regressed(self) -> bool:
        return self.beyond and self.judged

    @property
    def figure(self) -> str:
        return f"{FIGURES[self.case][0]} {self.server} c={self.concurrency}"

    @property
    def change(self) -> float:
        return self.now / self.committed - 1


def _measured(results: Results) -> set[str]:
    """The servers whose figures stand: neither skipped nor dropped for a failure."""
    servers = results.get("info", {}).get("servers", [])
    return {s["name"] for s in servers if not (s.get("skipped") or s.get("failed"))}


def _medians(results: Results, case: str, value: Callable[[Sample], float]) -> dict[Key, float]:
    """The median over rounds of ``value`` of each measured server's samples of ``case``."""
    measured = _measured(results)
    count = FIGURES[case][1]
    per: dict[Key, list[float]] = {}
    for s in results.get(case, []):
        if s["server"] in measured and s[count]:
            per.setdefault((case, s["server"], s["concurrency"]), []).append(value(s))
    return {key: statistics.median(values) for key, values in per.items()}


def _cpu_per(count: str) -> Callable[[Sample], float]:
    return lambda s: s["cpu_s"] / s[count]


def ratios(results: Results) -> dict[Key, float]:
    """Each server's median CPU per request / per event over raw's, per case and concurrency."""
    out: dict[Key, float] = {}
    for case, (_, count) in FIGURES.items():
        medians = _medians(results, case, _cpu_per(count))
        for (_, server, c), cpu in medians.items():
            raw = medians.get((case, RAW, c))
            if server != RAW and raw:
                out[(case, server, c)] = cpu / raw
    return out


def noise(results: Results) -> dict[Key, float]:
    """The share of the server CPU other processes took while each figure and raw's were
    measured (the larger of the two, in percent): high, and the verdict is unsure."""
    out: dict[Key, float] = {}
    for case in FIGURES:
        medians = _medians(
            results, case, lambda s: s.get("other_cpu_s", 0.0) * 100 / (s.get("duration_s") or 1)
        )
        for (_, server, c), share in medians.items():
            out[(case, server, c)] = max(share, medians.get((case, RAW, c), 0.0))
    return out


def compare(
    committed: Results,
    now: Results,
    threshold: float = DEFAULT_THRESHOLD,
    retries: Sequence[Results] = (),
) -> list[Verdict]:
    """A verdict for every figure both runs have, in the order of this run's servers.

    ``retries``: later runs of some of the servers (and raw); a figure one of them has
    is judged on its lowest ratio over ``now`` and those runs.
    """
    before, first, busy = ratios(committed), ratios(now), noise(now)
    tries: dict[Key, list[float]] = {key: [ratio] for key, ratio in first.items()}
    for again in retries:
        for key, ratio in ratios(again).items():
            if key in tries:
                tries[key].append(ratio)
    after = {key: min(values) for key, values in tries.items()}
    order = {s["name"]: i for i, s in enumerate(now.get("info", {}).get("servers", []))}
    keys = sorted(
        (key for key in after if key in before),
        key=lambda k: (list(FIGURES).index(k[0]), order.get(k[1], len(order)), k[2]),
    )
    return [
        Verdict(
            case=case,
            server=server,
            concurrency=c,
            committed=before[(case, server, c)],
            now=after[(case, server, c)],
            beyond=after[(case, server, c)] > before[(case, server, c)] * (1 + threshold),
            noise=busy.get((case, server, c), 0.0),
            judged=server.startswith(JUDGED_PREFIX),
            tries=tuple(tries[(case, server, c)]),
        )
        for case, server, c in keys
    ]


def not_compared(committed: Results, now: Results) -> list[str]:
    """Committed figures this run could have had (a server it chose, a concurrency it
    measured) but has not: the server was skipped or failed, or raw has no figure."""
    after = ratios(now)
    info = now.get("info", {})
    chosen = {s["name"] for s in info.get("servers", [])}
    concurrencies = {"unary": info.get("concurrencies", []), "stream": info.get(
        "stream_concurrencies", [])}
    return [
        f"{FIGURES[case][0]} {server} c={c}"
        for case, server, c in ratios(committed)
        if server in chosen and c in concurrencies[case] and (case, server, c) not in after
    ]


def suspects(verdicts: Sequence[Verdict]) -> list[str]:
    """The servers with a figure that regressed, in the order of ``verdicts``."""
    return list(dict.fromkeys(v.server for v in verdicts if v.regressed))


def verdict_table(verdicts: Sequence[Verdict]) -> list[str]:
    retried = any(len(v.tries) > 1 for v in verdicts)
    header = ["figure (ratio to raw)", "committed", "now", "change", "noise now", "verdict"]
    if retried:
        header.insert(3, "tries")
    rows = []
    for v in verdicts:
        row = [
            v.figure,
            f"{v.committed:.2f}x",
            f"{v.now:.2f}x",
            f"{v.change * 100:+.0f}%",
            f"{v.noise:.0f}%",
            ("REGRESSED" if v.beyond else "OK") if v.judged
            else ("worse (reference)" if v.beyond else "OK (reference)"),
        ]
        if retried:
            row.insert(3, " / ".join(f"{ratio:.2f}x" for ratio in v.tries))
        rows.append(row)
    return table(header, rows)
