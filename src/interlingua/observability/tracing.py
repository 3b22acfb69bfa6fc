"""OpenTelemetry tracing: the tracer interlingua's spans come from, and the SDK
set-up of ``interlingua serve --otel``.

interlingua's code uses only OpenTelemetry's API. Spans are made when an SDK
tracer provider is set up — by the program (``trace.set_tracer_provider``) or
by ``configure_sdk`` — before the app is built; ``create_app(tracing=...)``
forces the choice either way.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from . import propagation

__all__ = ["configure_sdk", "tracer"]

log = logging.getLogger("interlingua.observability")


def tracer(provider: Any = None) -> Any:
    """interlingua's tracer, from ``provider`` or the global tracer provider
    (OpenTelemetry's API must be installed)."""
    if propagation.trace is None:
        raise RuntimeError("tracing needs OpenTelemetry: pip install 'interlingua[otel]'")
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours: str | None = version("interlingua")
    except PackageNotFoundError:
        ours = None
    if provider is not None:
        return provider.get_tracer("interlingua", ours)
    return propagation.trace.get_tracer("interlingua", ours)


def configure_sdk(service_name: str = "interlingua", exporter: str = "auto") -> str:
    """Set up OpenTelemetry's SDK as the global tracer provider and return the
    exporter chosen: ``otlp`` (OTLP over HTTP, to ``OTEL_EXPORTER_OTLP_ENDPOINT``
    or ``http://localhost:4318``) when its package is installed, else ``console``
    (spans as JSON on stdout). ``exporter`` forces one of them."""
    try:
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SimpleSpanProcessor,
        )
    except ImportError:
        raise RuntimeError(
            "--otel needs OpenTelemetry's SDK: pip install 'interlingua[otel]'") from None
    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}))
    chosen = exporter
    if exporter in ("auto", "otlp"):
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            if exporter == "otlp":
                raise RuntimeError("the OTLP exporter is not installed: "
                                   "pip install opentelemetry-exporter-otlp-proto-http") from None
            chosen = "console"
        else:
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            chosen = "otlp"
    if chosen == "console":
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    elif chosen != "otlp":
        raise ValueError(f"unknown exporter {exporter!r}: auto, otlp or console")
    assert propagation.trace is not None
    propagation.trace.set_tracer_provider(provider)
    log.info("OpenTelemetry: spans of %s go to the %s exporter", name, chosen)
    return chosen
