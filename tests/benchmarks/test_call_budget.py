"""The call budget: Python calls into interlingua per unary send and per streamed event,
against ``call_budget.json``.

Counted as ``benchmarks/in_process.py --profile`` counts them (its ``profile_posts`` and
``interlingua_calls``): the echo app of ``benchmarks/servers/interlingua_echo.py`` on the
memory store, called in this process, v1.0 JSON-RPC ``SendMessage`` and
``SendStreamingMessage`` (1,000 chunks), cProfile's calls into interlingua's own functions
over many requests, divided by the requests or the events. A count, not a time: it does not
move with the machine or its load, so it can be judged to a few percent where a wall-clock
ratio cannot.

The path is made deterministic, so that two counts in a row are equal (the test checks
they are): the timers that may fire during a count (the submit grace, the lease heartbeat,
stream heartbeats, the retention sweep) are set far beyond the test's length; the wall
clock is frozen mid-second, as the writer formats a timestamp's second once a second;
each count starts with the pool of random id tails empty, as it is refilled every 200 ids;
and a warm-up first takes the first-request costs (lazy imports, caches).
"""

from __future__ import annotations

import json
import platform
import pstats
import time
from pathlib import Path

import in_process
import pytest
import uvloop
from interlingua_echo import build_app

from interlingua.bindings.jsonrpc import endpoint
from interlingua.core import parts

BUDGET_FILE = Path(__file__).with_name("call_budget.json")
#: how far beyond its budget a figure may go
TOLERANCE = 0.03
UNARY_SENDS = 200
STREAMS = 3
WARM_UP = 10
#: seconds: every timer of the engine, far beyond the test's length
FAR_OFF = 3600.0
#: the frozen wall clock (ns), mid-second
FROZEN_NS = 1_767_225_600_500_000_000


def _app() -> object:
    return build_app("memory://", "http://127.0.0.1:1/", submit_grace=FAR_OFF,
                     lease_interval=FAR_OFF, lease_timeout=2 * FAR_OFF,
                     heartbeat_interval=FAR_OFF, retention_interval=FAR_OFF)


async def _count(caller: in_process.Caller, kind: str, requests: int, first: int) -> int:
    """The calls into interlingua of ``requests`` requests of ``kind``, one at a time,
    numbered from ``first`` (a message id each: the clock in them is frozen)."""
    make, _ = in_process.KINDS[kind]
    bodies = [make(first + i) for i in range(requests)]
    # The pool refills every 200 ids (201 calls): from empty, a count has the same refills.
    parts._tails.clear()
    calls, _ = in_process.interlingua_calls(
        pstats.Stats(await in_process.profile_posts(caller, bodies)))
    return calls


async def _measure(times: int) -> list[tuple[int, int]]:
    """(unary calls, stream calls) of ``times`` counts in a row, after a warm-up."""
    # a process-wide table another test of this process may have filled: the sends
    # counted keep their codec in it, as a server's first requests do
    endpoint._ANSWERING.clear()
    caller = in_process.Caller(_app())
    await caller.start()
    n = 0
    counts = []
    try:
        for kind in ("unary", "stream"):
            make, _ = in_process.KINDS[kind]
            for _ in range(WARM_UP):
                n += 1
                answer = await caller.post(make(n))
                assert b'"error"' not in answer[:200], answer[:300]
        for _ in range(times):
            unary = await _count(caller, "unary", UNARY_SENDS, n + 1)
            n += UNARY_SENDS
            stream = await _count(caller, "stream", STREAMS, n + 1)
            n += STREAMS
            counts.append((unary, stream))
    finally:
        await caller.stop()
    return counts


def _per_unit(unary: int, stream: int) -> tuple[float, float]:
    """Calls per unary send, calls per streamed event."""
    _, events = in_process.KINDS["stream"]
    return unary / UNARY_SENDS, stream / (STREAMS * events)


def test_calls_per_unary_send_and_per_streamed_event_stay_within_the_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    budget = json.loads(BUDGET_FILE.read_text())
    monkeypatch.setattr(time, "time_ns", lambda: FROZEN_NS)
    first, second = uvloop.run(_measure(2))  # the loop in_process.py runs
    assert first == second, (
        f"two counts in a row differ, {first} then {second} (unary, stream calls): "
        "something on the path runs by time or chance (a timer, a cache, the collector)")
    unary, event = _per_unit(*first)
    figures = {"calls_per_unary_send": unary, "calls_per_streamed_event": event}
    over = [name for name, figure in figures.items()
            if figure > budget[name] * (1 + TOLERANCE)]
    report = "\n".join(
        f"  {name}: {figure:.2f} (budget {budget[name]:.2f}, {figure / budget[name] - 1:+.1%})"
        f"{'  OVER' if name in over else ''}"
        for name, figure in figures.items())
    print(report)
    assert not over, (
        f"Python calls into interlingua beyond the budget of {BUDGET_FILE.name} by more"
        f" than {TOLERANCE:.0%} (Python {platform.python_version()}; the budget's:"
        f" {budget['python']}):\n{report}\n"
        "Lowering the budget is a one-line commit; raising it must say why in its commit"
        " message.")


def test_the_budget_file_names_its_figures_and_how_they_are_measured() -> None:
    budget = json.loads(BUDGET_FILE.read_text())
    assert budget["calls_per_unary_send"] > 0
    assert budget["calls_per_streamed_event"] > 0
    assert Path(__file__).name in budget["measured_by"]
    assert budget["tolerance"] == TOLERANCE
    assert budget["python"].count(".") == 2  # cProfile's counting changes with the interpreter
