"""Puts tracing, metrics and log ids on one app's own objects; nothing when off.

``create_app`` decides once, when the app is built, whether any of them is on.
When one is, ``Observer.install`` replaces a handful of methods *on the app's
instances* (not on their classes) with observed versions:

==========================  ===================================================
``FrontDoor.request``       notes which binding the request came in on
``FrontDoor.call/stream``   span per A2A request (parent: the caller's
                            ``traceparent``), request counter, latency histogram
``TurnRunner._turn``        span per executor turn; the task and context ids for logs
``Writer._write``           span per store commit
``Engine.on_commit``        events and state changes counted (a listener)
``Streams.open``            open streams kept (weakly) to read their lag
``LeaseKeeper.renew``       lease heartbeats counted
``PushService.start``       then, on its dispatcher: span per delivery, the
                            ``traceparent`` on the webhook POST, attempts counted
==========================  ===================================================

When everything is off nothing is replaced: the request path is the same code
as without this package. When on, every hook is the original call with work
around it; a process that sets up tracing later is not traced (decide first).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from ..core import trace_context as propagation
from ..core.calls import SendMessage
from ..core.errors import A2AError
from ..core.model import StatusUpdate, Task, TaskCreated
from . import logs
from .metrics import Metrics

if TYPE_CHECKING:
    from ..server.context import RequestInfo
    from ..server.dispatch import FrontDoor
    from ..server.engine import Engine
    from ..server.push.service import PushService
    from ..stores.base import StoredEvent

__all__ = ["Observer", "binding_of"]

T = TypeVar("T")

#: the binding of the request being admitted (set by the door's ``request``)
_BINDING: ContextVar[str] = ContextVar("interlingua_binding", default="unknown")

#: commits whose span context is kept for the push deliveries they queue
_RECENT_COMMITS = 4096


def binding_of(scope: Mapping[str, Any], rpc_path: str) -> str:
    """jsonrpc, rest, grpc or mqtt: from the ASGI-like scope the binding made."""
    kind = scope.get("type")
    if kind == "http":
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):] or "/"
        return "jsonrpc" if path == rpc_path else "rest"
    return str(kind or "unknown")


def _task_id_of(call: Any) -> str | None:
    found = getattr(call, "id", None) or getattr(call, "task_id", None)
    if found is None and isinstance(call, SendMessage):
        found = call.message.task_id
    return found if isinstance(found, str) else None


def _replace(obj: Any, name: str, hook: Callable[..., Any]) -> None:
    # A hook on a method that no longer exists would silently observe nothing.
    if not callable(getattr(obj, name, None)):
        raise AttributeError(f"{type(obj).__name__}.{name} is gone: observability cannot "
                             "hook it (update observability/install.py)")
    setattr(obj, name, hook)


class Observer:
    """What one app observes: ``tracer`` (an OpenTelemetry tracer or None),
    ``metrics`` (or None), ``logs`` (keep task and context ids for JSON logs)."""

    def __init__(self, *, tracer: Any = None, metrics: Metrics | None = None,
                 logs: bool = False, rpc_path: str = "/") -> None:
        self.tracer = tracer
        self.metrics = metrics
        self.logs = logs
        self.rpc_path = rpc_path
        #: task id -> span context of its latest commit (parent of its push deliveries)
        self._commits: OrderedDict[str, Any] = OrderedDict()

    @property
    def active(self) -> bool:
        return self.tracer is not None or self.metrics is not None or self.logs

    def install(self, door: FrontDoor, engine: Engine, push: PushService) -> None:
        self._hook_door(door)
        if self.tracer is not None or self.logs:
            self._hook_turns(engine)
        if self.tracer is not None:
            self._hook_commits(engine)
        if self.metrics is not None:
            self._hook_counts(engine)
        if self.tracer is not None or self.metrics is not None:
            self._hook_push(push)

    # ------------------------------------------------------------ requests

    def _hook_door(self, door: FrontDoor) -> None:
        request, call, stream = door.request, door.call, door.stream
        rpc_path = self.rpc_path
        observe = self._observe

        def observed_request(scope: Mapping[str, Any], headers: Mapping[str, str],
                             **kwargs: Any) -> RequestInfo:
            _BINDING.set(binding_of(scope, rpc_path))
            return request(scope, headers, **kwargs)

        async def observed_call(c: Any, info: RequestInfo) -> Any:
            return await observe(type(c).__name__, c, info, lambda: call(c, info))

        counted = None
        metrics = self.metrics
        if self.tracer is None and not self.logs and metrics is not None:
            count = metrics.request

            async def counted_call(c: Any, info: RequestInfo) -> Any:
                # metrics alone: counted around the call, nothing else (the common case)
                start = time.perf_counter()
                outcome = "ok"
                try:
                    return await call(c, info)
                except BaseException as exc:
                    outcome = _outcome(exc)
                    raise
                finally:
                    count(type(c).__name__, info.dialect, _BINDING.get(), outcome,
                          time.perf_counter() - start)

            counted = counted_call

        async def observed_stream(c: Any, info: RequestInfo,
                                  last_event_id: str | None = None) -> Any:
            method = "SendStreamingMessage" if isinstance(c, SendMessage) else type(c).__name__
            return await observe(method, c, info, lambda: stream(c, info, last_event_id))

        _replace(door, "request", observed_request)
        _replace(door, "call", observed_call if counted is None else counted)
        _replace(door, "stream", observed_stream)

    async def _observe(self, method: str, call: Any, info: RequestInfo,
                       run: Callable[[], Awaitable[T]]) -> T:
        binding = _BINDING.get()
        task_id = _task_id_of(call)
        tracer, metrics = self.tracer, self.metrics
        span = token = log_token = None
        if tracer is not None:
            trace = propagation.trace
            span = tracer.start_span(
                f"A2A {method}", context=propagation.extract(info.headers),
                kind=trace.SpanKind.SERVER,
                attributes={"rpc.system": "a2a", "rpc.method": method,
                            "a2a.dialect": info.dialect, "a2a.binding": binding})
            # current while the engine works: the turn it starts inherits it
            token = propagation.otel_context.attach(trace.set_span_in_context(span))
        if self.logs and task_id is not None:
            log_token = logs.TASK_ID.set(task_id)
        start = time.perf_counter()
        outcome = "ok"
        result: Any = None
        try:
            result = await run()
            return result  # type: ignore[no-any-return]
        except BaseException as exc:
            outcome = _outcome(exc)
            raise
        finally:
            if metrics is not None:
                metrics.request(method, info.dialect, binding, outcome,
                                time.perf_counter() - start)
            if log_token is not None:
                logs.TASK_ID.reset(log_token)
            if span is not None:
                # one call: each takes the span's lock
                found: dict[str, str] = {"a2a.outcome": outcome}
                if isinstance(result, Task):
                    task_id = result.id
                    found["a2a.context_id"] = result.context_id
                if task_id is not None:
                    found["a2a.task_id"] = task_id
                span.set_attributes(found)
                if outcome != "ok":
                    span.set_status(propagation.trace.Status(
                        propagation.trace.StatusCode.ERROR, outcome))
                span.end()
                if token is not None:
                    propagation.otel_context.detach(token)

    # ---------------------------------------------------------- the engine

    def _hook_turns(self, engine: Engine) -> None:
        turns = engine.turns
        turn = turns._turn
        tracer, keep_ids = self.tracer, self.logs

        async def observed_turn(run: Any, ctx: Any, place: Any = None) -> None:
            task = run.task
            if keep_ids:  # the turn's own asyncio task: nothing to reset
                logs.TASK_ID.set(task.id)
                logs.CONTEXT_ID.set(task.context_id)
            if tracer is None:
                await turn(run, ctx, place)
                return
            with tracer.start_as_current_span(
                    "A2A executor turn",
                    attributes={"a2a.task_id": task.id, "a2a.context_id": task.context_id,
                                "a2a.dialect": run.dialect or ""}) as span:
                await turn(run, ctx, place)
                state = run.task.status.state.value
                span.set_attribute("a2a.state", state)
                if state == "failed":  # the turn caught what failed it: say so here
                    span.set_status(propagation.trace.Status(
                        propagation.trace.StatusCode.ERROR, "the task failed"))

        _replace(turns, "_turn", observed_turn)

    def _hook_commits(self, engine: Engine) -> None:
        writer = engine.writer
        write = writer._write
        tracer, commits = self.tracer, self._commits

        async def observed_write(run: Any, events: Sequence[Any]) -> None:
            with tracer.start_as_current_span(
                    "A2A store commit",
                    attributes={"a2a.task_id": run.task.id,
                                "a2a.events": len(events) + (0 if run.persisted else 1)}) as span:
                await write(run, events)
            commits[run.task.id] = span.get_span_context()
            commits.move_to_end(run.task.id)
            if len(commits) > _RECENT_COMMITS:
                commits.popitem(last=False)

        _replace(writer, "_write", observed_write)

    def _hook_counts(self, engine: Engine) -> None:
        metrics = self.metrics
        assert metrics is not None
        states = metrics.states

        def committed(run: Any, stored: Sequence[StoredEvent]) -> None:
            metrics.events_total += len(stored)
            for item in stored:
                event = item.event
                kind = type(event)
                if kind is StatusUpdate:
                    state = event.status.state.value  # type: ignore[union-attr]
                elif kind is TaskCreated:
                    state = event.task.status.state.value  # type: ignore[union-attr]
                else:
                    continue
                states[state] = states.get(state, 0) + 1

        engine.on_commit(committed)

        streams = engine.streams
        open_stream = streams.open
        opened = metrics.opened

        async def observed_open(*args: Any, **kwargs: Any) -> Any:
            stream = await open_stream(*args, **kwargs)
            opened(stream)
            return stream

        _replace(streams, "open", observed_open)

        leases = engine.leases
        renew = leases.renew

        async def observed_renew() -> bool:
            try:
                renewed = await renew()
            except BaseException:
                metrics.lease_renewal("failed")
                raise
            metrics.lease_renewal("ok" if renewed else "revoked")
            return renewed

        _replace(leases, "renew", observed_renew)

    # ---------------------------------------------------------------- push

    def _hook_push(self, push: PushService) -> None:
        start = push.start

        async def observed_start() -> None:
            await start()
            dispatcher = push.dispatcher
            if dispatcher is not None and not getattr(dispatcher, "_observed", False):
                self._hook_dispatcher(dispatcher)

        _replace(push, "start", observed_start)

    def _hook_dispatcher(self, dispatcher: Any) -> None:
        dispatcher._observed = True
        metrics, tracer, commits = self.metrics, self.tracer, self._commits
        report = dispatcher._report

        def observed_report(attempt: Any) -> None:
            if metrics is not None:
                metrics.push_attempt(attempt.outcome)
            if tracer is not None:
                span = propagation.trace.get_current_span()
                span.set_attribute("a2a.push.outcome", attempt.outcome)
                span.set_attribute("a2a.push.attempt", attempt.attempt)
                if attempt.status is not None:
                    span.set_attribute("http.response.status_code", attempt.status)
            report(attempt)

        _replace(dispatcher, "_report", observed_report)
        if tracer is None:
            return
        trace = propagation.trace
        empty = propagation.otel_context.Context()
        deliver = dispatcher._deliver
        sender = dispatcher.sender
        post = sender.post

        async def observed_deliver(delivery: Any) -> None:
            parent = commits.get(delivery.task_id)
            # the commit that queued it, when it was made here; else a trace of its own
            context = trace.set_span_in_context(trace.NonRecordingSpan(parent), empty) \
                if parent is not None else empty
            with tracer.start_as_current_span(
                    "A2A push delivery", context=context, kind=trace.SpanKind.CLIENT,
                    attributes={"a2a.task_id": delivery.task_id,
                                "a2a.push.config_id": delivery.config_id,
                                "a2a.push.seq": delivery.seq}):
                await deliver(delivery)

        async def observed_post(url: str, headers: Sequence[tuple[str, str]], body: bytes,
                                **kwargs: Any) -> Any:
            carrier: dict[str, str] = {}
            propagation.inject(carrier)
            return await post(url, [*headers, *carrier.items()], body, **kwargs)

        _replace(dispatcher, "_deliver", observed_deliver)
        _replace(sender, "post", observed_post)


def build_observer(*, tracing: Any, metrics: bool, rpc_path: str) -> Observer | None:
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
                        logs=logs.json_enabled(), rpc_path=rpc_path)
    return observer if observer.active else None


def gauges(engine: Engine, push: PushService) -> Callable[[], Awaitable[list[Any]]]:
    """What ``/metrics`` reads off the app's objects when it is scraped."""

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
             "1 while this process holds its lease on the store.",
             [("", 0 if leases.lease is None else 1)]),
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
    """A request's outcome as metrics and spans name it: the A2A error, else InternalError."""
    return type(exc).__name__ if isinstance(exc, A2AError) else "InternalError"
