"""Counters, gauges and histograms, written out in Prometheus' text format.

Written by hand rather than with ``prometheus_client``: on the request path a
request costs one dictionary lookup, one ``bisect`` and a few integer
increments on plain lists, with no lock (everything runs on the event loop's
thread) and no label-child objects; ``prometheus_client`` takes a lock per
increment and a label lookup per metric. The exposition (``render``) runs only
when ``/metrics`` is scraped. Tests read it back with ``prometheus_client``'s
own parser.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from ..core.model import StatusUpdate

__all__ = ["CONTENT_TYPE", "LATENCY_BUCKETS", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: request latency buckets, seconds (a unary send on loopback takes ~0.5-5 ms)
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                   1.0, 2.5, 5.0, 10.0, 30.0)


class _Histogram:
    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        # one count per bucket, plus the +Inf one; cumulated when written out
        self.counts = [0] * (len(LATENCY_BUCKETS) + 1)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.sum += seconds


def _labels(names: tuple[str, ...], values: Iterable[Any]) -> str:
    inner = ",".join(f'{n}="{_escape(str(v))}"' for n, v in zip(names, values, strict=True))
    return "{" + inner + "}" if inner else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


class Metrics:
    """What one app counts; ``render()`` gives the ``/metrics`` body.

    The app's hook points (``observability/install.py`` registers them) call
    ``request``, ``committed``, ``opened``, ``push_attempt`` and
    ``lease_renewal``; gauges that can be read off the app's objects (streams,
    turns, outbox, lease) are read at scrape time by ``gauges``, given when the
    app is built.
    """

    def __init__(self) -> None:
        #: (method, dialect, binding, outcome) -> requests
        self.requests: dict[tuple[str, str, str, str], int] = {}
        #: (method, binding) -> latency histogram
        self.latency: dict[tuple[str, str], _Histogram] = {}
        self.events_total = 0
        #: state -> tasks that entered it (status updates committed here)
        self.states: dict[str, int] = {}
        #: outcome (delivered, retry, dead, dropped) -> push attempts
        self.push_attempts: dict[str, int] = {}
        #: result (ok, revoked, failed) -> lease heartbeats
        self.lease_renewals: dict[str, int] = {}
        self.last_renewal: float | None = None
        #: streams opened, to read their lag (closed ones are dropped as they are found)
        self.streams: set[Any] = set()
        self._open_at_prune = 0
        #: (name, type, help, [(labels, value)]) read at scrape time
        self.gauges: Callable[[], Awaitable[list[tuple[str, str, str, list[tuple[str, float]]]]]] | None = None

    # ------------------------------------------------------------ counting

    def request(self, method: str, dialect: str, binding: str, outcome: str,
                seconds: float) -> None:
        key = (method, dialect, binding, outcome)
        requests = self.requests
        requests[key] = requests.get(key, 0) + 1
        hkey = (method, binding)
        hist = self.latency.get(hkey)
        if hist is None:
            hist = self.latency[hkey] = _Histogram()
        hist.observe(seconds)

    def commit(self, run: Any, events: Sequence[Any]) -> Callable[[BaseException | None, Any],
                                                                  None]:
        """Around a commit (a commit hook, which sees the task as it was before): the
        events it wrote, and the states its task entered by them. A status update
        in the state the task was in (an agent's progress message) enters none."""
        created = not run.persisted
        before = run.initial.status.state if created else run.task.status.state

        def end(error: BaseException | None, result: Any) -> None:
            if error is not None:
                return
            self.events_total += len(events) + created
            states = self.states
            state = before
            if created:  # the task entered its first state
                states[state.value] = states.get(state.value, 0) + 1
            for event in events:
                if type(event) is StatusUpdate and event.status.state is not state:
                    state = event.status.state
                    states[state.value] = states.get(state.value, 0) + 1

        return end

    def push_attempt(self, outcome: str) -> None:
        self.push_attempts[outcome] = self.push_attempts.get(outcome, 0) + 1

    def lease_renewal(self, result: str) -> None:
        self.lease_renewals[result] = self.lease_renewals.get(result, 0) + 1
        if result != "failed":
            self.last_renewal = time.monotonic()

    def opened(self, stream: Any) -> None:
        streams = self.streams
        streams.add(stream)
        if len(streams) > 64 and len(streams) > 2 * self._open_at_prune:
            self.lags()  # drops the closed ones: the set stays within twice the open

    def lags(self) -> list[int]:
        """The lag of every open stream; closed ones are forgotten."""
        out: list[int] = []
        closed = []
        for stream in self.streams:
            lag = stream.lag
            if lag is None:
                closed.append(stream)
            else:
                out.append(lag)
        self.streams.difference_update(closed)
        self._open_at_prune = len(self.streams)
        return out

    # ------------------------------------------------------------- writing

    async def render(self) -> bytes:
        out: list[str] = []

        def family(name: str, kind: str, text: str) -> None:
            out.append(f"# HELP {name} {text}")
            out.append(f"# TYPE {name} {kind}")

        family("interlingua_requests_total", "counter",
               "A2A requests answered, by method, dialect, binding and outcome.")
        names = ("method", "dialect", "binding", "outcome")
        for key, value in sorted(self.requests.items()):
            out.append(f"interlingua_requests_total{_labels(names, key)} {value}")

        family("interlingua_request_duration_seconds", "histogram",
               "Time from a request's admission to its answer (to the opening of its stream).")
        for (method, binding), hist in sorted(self.latency.items()):
            base = f'method="{_escape(method)}",binding="{binding}"'
            running = 0
            for bound, count in zip((*LATENCY_BUCKETS, None), hist.counts, strict=True):
                running += count
                le = "+Inf" if bound is None else repr(bound)
                out.append(f'interlingua_request_duration_seconds_bucket{{{base},le="{le}"}} '
                           f"{running}")
            out.append(f"interlingua_request_duration_seconds_sum{{{base}}} {hist.sum!r}")
            out.append(f"interlingua_request_duration_seconds_count{{{base}}} {running}")

        family("interlingua_events_total", "counter",
               "Task events committed to the store by this process.")
        out.append(f"interlingua_events_total {self.events_total}")

        family("interlingua_task_transitions_total", "counter",
               "Tasks that entered each state, as committed by this process.")
        for state, value in sorted(self.states.items()):
            out.append(f'interlingua_task_transitions_total{{state="{state}"}} {value}')

        family("interlingua_push_attempts_total", "counter",
               "Push delivery attempts by outcome (delivered, retry, dead, dropped).")
        for outcome, value in sorted(self.push_attempts.items()):
            out.append(f'interlingua_push_attempts_total{{outcome="{outcome}"}} {value}')

        family("interlingua_lease_renewals_total", "counter",
               "Lease heartbeats of this process, by result (ok, revoked, failed).")
        for result, value in sorted(self.lease_renewals.items()):
            out.append(f'interlingua_lease_renewals_total{{result="{result}"}} {value}')

        lags = self.lags()
        family("interlingua_stream_lag_events", "gauge",
               "Events in the log not yet handed to an open stream: the largest, and "
               "the sum over open streams.")
        out.append(f'interlingua_stream_lag_events{{stat="max"}} {max(lags, default=0)}')
        out.append(f'interlingua_stream_lag_events{{stat="sum"}} {sum(lags)}')

        family("interlingua_lease_heartbeat_age_seconds", "gauge",
               "Seconds since this process's lease was last renewed (-1: not yet).")
        age = -1.0 if self.last_renewal is None else time.monotonic() - self.last_renewal
        out.append(f"interlingua_lease_heartbeat_age_seconds {age!r}")

        if self.gauges is not None:
            for name, kind, text, samples in await self.gauges():
                family(name, kind, text)
                for labels, reading in samples:
                    out.append(f"{name}{labels} {_number(reading)}")
        out.append("")
        return "\n".join(out).encode()
