"""Tracing, metrics and log ids for one app, registered on its hook points.

``create_app`` decides once, when the app is built, whether any of them is on.
When one is, ``Observer.register`` appends to the app's ``Hooks``
(``interlingua/hooks.py``); the parts that do the work call them:

=========================  ===================================================
``requests``               span per A2A request (parent: the caller's
                           ``traceparent``), request counter, latency
                           histogram, each labelled with the binding's name
``turns``                  span per executor turn; the task and context ids for logs
``commits``                span per store commit
``committed``              events and state changes counted
``streams``                open streams kept (weakly) to read their lag
``renewals``               lease heartbeats counted
``deliveries``,            span per push delivery, the ``traceparent`` on the
``webhook_headers``,       webhook POST, attempts counted
``attempts``
=========================  ===================================================

When everything is off nothing is registered, and every hook point is an empty
list the request path passes over. A process that sets up tracing after its
app was built is not traced (decide first).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..bus.base import task_key
from ..core import trace_context as propagation
from ..core.calls import Call, SendMessage
from ..core.errors import A2AError
from ..core.model import Task
from ..hooks import End, Hooks, Requested
from . import logs
from .metrics import Metrics

__all__ = ["Observer", "build_observer", "gauges"]

#: tasks whose commits' span contexts are kept for the push deliveries they queue
_RECENT_COMMITS = 4096
#: and commits kept of each (a delivery retried after this many more is traced alone)
_COMMITS_PER_TASK = 8


def _task_id_of(call: Any) -> str | None:
    found = getattr(call, "id", None) or getattr(call, "task_id", None)
    if found is None and isinstance(call, SendMessage):
        found = call.message.task_id
    return found if isinstance(found, str) else None


def _binding(request: Requested) -> str:
    return request.binding or "unknown"


def _nothing(error: BaseException | None, result: Any) -> None:
    return None


class Observer:
    """What one app observes: ``tracer`` (an OpenTelemetry tracer or None),
    ``metrics`` (or None), ``logs`` (keep task and context ids for JSON logs)."""

    def __init__(self, *, tracer: Any = None, metrics: Metrics | None = None,
                 logs: bool = False) -> None:
        self.tracer = tracer
        self.metrics = metrics
        self.logs = logs
        #: task key (its scope and id) -> its recent commits: the events each wrote
        #: (after, up to) and its span context, the parent of the push deliveries
        #: of those events (a retry included: not the task's latest commit)
        self._commits: OrderedDict[str, list[tuple[int, int, Any]]] = OrderedDict()

    @property
    def active(self) -> bool:
        return self.tracer is not None or self.metrics is not None or self.logs

    def register(self, hooks: Hooks) -> None:
        """Append what is observed to ``hooks``, and nothing else."""
        tracer, metrics = self.tracer, self.metrics
        if tracer is None and not self.logs and metrics is not None:
            hooks.requests.append(self._counted)  # metrics alone: the common case
        else:
            hooks.requests.append(self._observed)
        if tracer is not None or self.logs:
            hooks.turns.append(self._turn)
        if tracer is not None:
            hooks.commits.append(self._commit)
            hooks.deliveries.append(self._delivery)
            hooks.webhook_headers.append(propagation.inject)
        if metrics is not None:
            hooks.commits.append(metrics.commit)
            hooks.streams.append(metrics.opened)
            hooks.renewals.append(metrics.lease_renewal)
        if tracer is not None or metrics is not None:
            hooks.attempts.append(self._attempt)

    # ------------------------------------------------------------ requests

    def _counted(self, method: str, call: Call, request: Requested) -> End:
        """Counted around the call, nothing else."""
        metrics = self.metrics
        assert metrics is not None
        start = time.perf_counter()

        def end(error: BaseException | None, result: Any) -> None:
            metrics.request(method, request.dialect, _binding(request),
                            "ok" if error is None else _outcome(error),
                            time.perf_counter() - start)

        return end

    def _observed(self, method: str, call: Call, request: Requested) -> End:
        binding = _binding(request)
        task_id = _task_id_of(call)
        tracer, metrics = self.tracer, self.metrics
        span = token = log_token = None
        if tracer is not None:
            trace = propagation.trace
            span = tracer.start_span(
                f"A2A {method}", context=propagation.extract(request.headers),
                kind=trace.SpanKind.SERVER,
                attributes={"rpc.system": "a2a", "rpc.method": method,
                            "a2a.dialect": request.dialect, "a2a.binding": binding})
            # current while the engine works: the turn it starts inherits it
            token = propagation.otel_context.attach(trace.set_span_in_context(span))
        if self.logs and task_id is not None:
            log_token = logs.TASK_ID.set(task_id)
        start = time.perf_counter()

        def end(error: BaseException | None, result: Any) -> None:
            outcome = "ok" if error is None else _outcome(error)
            if metrics is not None:
                metrics.request(method, request.dialect, binding, outcome,
                                time.perf_counter() - start)
            if log_token is not None:
                logs.TASK_ID.reset(log_token)
            if span is not None:
                # one call: each takes the span's lock
                found: dict[str, str] = {"a2a.outcome": outcome}
                known = task_id
                if isinstance(result, Task):
                    known = result.id
                    found["a2a.context_id"] = result.context_id
                if known is not None:
                    found["a2a.task_id"] = known
                span.set_attributes(found)
                if outcome not in _NOT_FAILED:
                    span.set_status(propagation.trace.Status(
                        propagation.trace.StatusCode.ERROR, outcome))
                span.end()
                if token is not None:
                    propagation.otel_context.detach(token)

        return end

    # ---------------------------------------------------------- the engine

    def _turn(self, run: Any) -> End:
        task = run.task
        if self.logs:  # the turn's own asyncio task: nothing to reset
            logs.TASK_ID.set(task.id)
            logs.CONTEXT_ID.set(task.context_id)
        tracer = self.tracer
        if tracer is None:
            return _nothing
        trace = propagation.trace
        span = tracer.start_span(
            "A2A executor turn",
            attributes={"a2a.task_id": task.id, "a2a.context_id": task.context_id,
                        "a2a.dialect": run.dialect or ""})
        token = propagation.otel_context.attach(trace.set_span_in_context(span))

        def end(error: BaseException | None, result: Any) -> None:
            state = run.task.status.state.value
            span.set_attribute("a2a.state", state)
            if error is not None:
                _failed(span, error)
            elif state == "failed":  # the turn caught what failed it: say so here
                span.set_status(trace.Status(trace.StatusCode.ERROR, "the task failed"))
            span.end()
            propagation.otel_context.detach(token)

        return end

    def _commit(self, run: Any, events: Sequence[Any]) -> End:
        tracer, commits = self.tracer, self._commits
        trace = propagation.trace
        after = run.version if run.persisted else 0
        span = tracer.start_span(
            "A2A store commit",
            attributes={"a2a.task_id": run.task.id,
                        "a2a.events": len(events) + (0 if run.persisted else 1)})
        token = propagation.otel_context.attach(trace.set_span_in_context(span))

        def end(error: BaseException | None, result: Any) -> None:
            if error is not None:
                _failed(span, error)
            span.end()
            propagation.otel_context.detach(token)
            if error is None:
                key = run.key
                kept = commits.get(key)
                if kept is None:
                    kept = commits[key] = []
                    if len(commits) > _RECENT_COMMITS:
                        commits.popitem(last=False)
                else:
                    commits.move_to_end(key)
                    if len(kept) >= _COMMITS_PER_TASK:
                        del kept[0]
                kept.append((after, run.version, span.get_span_context()))

        return end

    # ---------------------------------------------------------------- push

    def _delivery(self, delivery: Any) -> End:
        tracer = self.tracer
        trace = propagation.trace
        empty = propagation.otel_context.Context()
        seq = delivery.seq
        parent = next((context for after, upto, context
                       in self._commits.get(task_key(delivery.scope, delivery.task_id), ())
                       if after < seq <= upto), None)
        # the commit that queued it, when it was made here; else a trace of its own
        context = trace.set_span_in_context(trace.NonRecordingSpan(parent), empty) \
            if parent is not None else empty
        span = tracer.start_span(
            "A2A push delivery", context=context, kind=trace.SpanKind.CLIENT,
            attributes={"a2a.task_id": delivery.task_id,
                        "a2a.push.config_id": delivery.config_id,
                        "a2a.push.seq": delivery.seq})
        token = propagation.otel_context.attach(trace.set_span_in_context(span))

        def end(error: BaseException | None, result: Any) -> None:
            if error is not None:
                _failed(span, error)
            span.end()
            propagation.otel_context.detach(token)

        return end

    def _attempt(self, attempt: Any) -> None:
        if self.metrics is not None:
            self.metrics.push_attempt(attempt.outcome)
        if self.tracer is not None:
            span = propagation.trace.get_current_span()
            span.set_attribute("a2a.push.outcome", attempt.outcome)
            span.set_attribute("a2a.push.attempt", attempt.attempt)
            if attempt.status is not None:
                span.set_attribute("http.response.status_code", attempt.status)


def _failed(span: Any, error: BaseException) -> None:
    """What ``start_as_current_span`` says of a span its block raised out of."""
    span.record_exception(error)
    span.set_status(propagation.trace.Status(
        propagation.trace.StatusCode.ERROR, f"{type(error).__name__}: {error}"))


def build_observer(*, tracing: Any, metrics: bool) -> Observer | None:
    """The observer an app is built with, or None when nothing is observed.

    ``tracing``: None = on when OpenTelemetry's SDK is set up now; True = on
    (OpenTelemetry's API must be installed); False = off; a ``TracerProvider``:
    on, with spans from it instead of the global one. JSON logs keep their ids
    when ``logs.configure("json")`` was called before."""
    if tracing is None:
        tracing = propagation.sdk_configured()
    tracer = None
    if tracing is not False:
        from .tracing import tracer as make_tracer

        tracer = make_tracer(None if tracing is True else tracing)
    observer = Observer(tracer=tracer, metrics=Metrics() if metrics else None,
                        logs=logs.json_enabled())
    return observer if observer.active else None


def gauges(engine: Any, push: Any) -> Callable[[], Awaitable[list[Any]]]:
    """What ``/metrics`` reads off the app's engine and push service when it is scraped."""

    async def read() -> list[Any]:
        runs: dict[str, int] = {}
        for run in engine.runs.all():
            state = run.task.status.state.value
            runs[state] = runs.get(state, 0) + 1
        leases = engine.leases
        out: list[Any] = [
            ("interlingua_turns_running", "gauge", "Executor turns running in this process.",
             [("", engine.running_turns)]),
            ("interlingua_tasks_live", "gauge",
             "Tasks with a live run in this process, by state.",
             [(f'{{state="{s}"}}', n) for s, n in sorted(runs.items())]),
            ("interlingua_streams_open", "gauge", "Streams open (streaming sends, subscriptions).",
             [("", engine.open_streams)]),
            ("interlingua_lease_held", "gauge",
             "1 while this process holds its lease on the store (0 once the store has "
             "not taken it for the lease timeout).",
             [("", 1 if leases.held else 0)]),
            ("interlingua_lease_epoch", "gauge", "The epoch of this process's lease.",
             [("", leases.epoch or 0)]),
            ("interlingua_replicas_other_live", "gauge",
             "1 when other live processes held leases on the store at the last look.",
             [("", 1 if leases.shared else 0)]),
            ("interlingua_draining", "gauge", "1 while the server drains before it stops.",
             [("", 1 if engine.draining else 0)]),
        ]
        if push.enabled:
            try:
                counts = await push.outbox_counts()
            except Exception:  # the store is out of reach: the rest still counts
                counts = {}
            out.append(("interlingua_push_outbox", "gauge",
                        "Push deliveries in the outbox: pending (queue depth) and dead "
                        "(dead letters).",
                        [(f'{{status="{s}"}}', n) for s, n in sorted(counts.items())]))
        return out

    return read


def _outcome(exc: BaseException) -> str:
    """A request's outcome as metrics and spans name it: the A2A error, ``Cancelled``
    for a call cancelled under it (a gRPC caller's cancel or deadline, the server
    stopping: no fault of the server's), else InternalError."""
    if isinstance(exc, A2AError):
        return type(exc).__name__
    return "Cancelled" if isinstance(exc, asyncio.CancelledError) else "InternalError"


#: outcomes that are no error of the server's (a span's status is left unset)
_NOT_FAILED = frozenset({"ok", "Cancelled"})
