"""The interlingua echo server with observability in one of its modes (``BENCH_OBSERVE``):

- ``absent``: OpenTelemetry cannot be imported (as without the ``otel`` extra): the
  ``opentelemetry`` package is hidden from this process before interlingua is imported;
- ``off``: opentelemetry-api (and the SDK) installed, no tracer provider set up: the
  default of a program that does not ask for tracing;
- ``on``: the SDK's ``TracerProvider`` with a ``BatchSpanProcessor`` around an exporter
  that drops the spans, so the figure is what making interlingua's spans costs, not
  what a collector's network round trips cost;
- ``metrics``: ``create_app(metrics=True)``, tracing off.

Launched by ``benchmarks/observability.py`` as ``uvicorn interlingua_observed_echo:create
--factory``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

MODE = os.environ.get("BENCH_OBSERVE", "off")
if MODE == "absent":
    sys.modules["opentelemetry"] = None  # type: ignore[assignment]  # import fails

from interlingua_echo import echo  # noqa: E402

from interlingua import Agent, create_app  # noqa: E402


def _tracing_on() -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    class Dropped(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)


def create() -> Any:
    if MODE == "on":
        _tracing_on()
    elif MODE not in ("absent", "off", "metrics"):
        raise SystemExit(f"BENCH_OBSERVE={MODE!r}: absent, off, on or metrics")
    agent = Agent(name="echo", description="Echo agent", executor=echo)
    app = create_app(agent, store=os.environ["BENCH_STORE_URL"],
                     public_url=os.environ["BENCH_PUBLIC_URL"], metrics=MODE == "metrics")
    # what the process really runs with, for the report
    app.state.observe_mode = MODE
    return app
