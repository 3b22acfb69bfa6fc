"""OpenTelemetry tracing: the tracer interlingua's spans come from, and the SDK
set-up of ``interlingua serve --otel``.

interlingua's code uses only OpenTelemetry's API. Spans are made when an SDK
tracer provider is set up — by the program (``trace.set_tracer_provider``) or
by ``configure_sdk`` — before the app is built; ``create_app(tracing=...)``
forces the choice either way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..core import trace_context as propagation

__all__ = ["Traces", "configure_sdk", "shown_endpoint", "tracer"]


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


@dataclass(frozen=True)
class Traces:
    """Where ``configure_sdk`` sends spans: the exporter and its endpoint (as said
    in logs and banners: with no credentials it carries)."""

    exporter: str
    endpoint: str

    @property
    def shown(self) -> str:
        if self.exporter == "otlp":
            return f"OTLP to {self.endpoint} (--otel-exporter console: to stdout)"
        return f"{self.exporter} ({self.endpoint})"


def configure_sdk(service_name: str = "interlingua", exporter: str = "auto") -> Traces:
    """Set up OpenTelemetry's SDK as the global tracer provider and say where
    spans go: ``otlp`` (OTLP over HTTP, to ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
    else ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``, else
    ``http://localhost:4318/v1/traces``) when its package is installed, else
    ``console`` (spans as JSON on stdout). ``exporter`` forces one of them.
    A collector that cannot be reached is logged once, then at most once a
    minute (``QUIET_SECONDS``), instead of the SDK's lines for every batch.
    A bad value of an SDK variable (``OTEL_PROPAGATORS``, ``OTEL_BSP_*``, a span
    limit) is a ValueError that names it."""
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
    if exporter not in ("auto", "otlp", "console"):
        raise ValueError(f"unknown exporter {exporter!r}: auto, otlp or console")
    propagation.check_propagators()
    name = os.environ.get("OTEL_SERVICE_NAME") or service_name
    # (a bad OTEL_*_LIMIT: a ValueError that names the variable and its value)
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: name}),
                              sampler=_sampler())
    chosen = Traces("console", "stdout")
    if exporter in ("auto", "otlp"):
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            if exporter == "otlp":
                raise RuntimeError("the OTLP exporter is not installed: "
                                   "pip install opentelemetry-exporter-otlp-proto-http") from None
        else:
            from ._collector import QuietExporter

            batches = _batch_settings()
            otlp = OTLPSpanExporter()
            chosen = Traces("otlp", shown_endpoint(
                str(getattr(otlp, "_endpoint", "") or _otlp_endpoint())))
            provider.add_span_processor(BatchSpanProcessor(
                QuietExporter(otlp, chosen.endpoint),
                max_queue_size=batches["max_queue_size"],
                schedule_delay_millis=batches["schedule_delay_millis"],
                max_export_batch_size=batches["max_export_batch_size"],
                export_timeout_millis=batches["export_timeout_millis"]))
    if chosen.exporter == "console":
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    assert propagation.trace is not None
    propagation.trace.set_tracer_provider(provider)
    return chosen


def _sampler() -> Any:
    """The sampler ``OTEL_TRACES_SAMPLER`` (and ``_ARG``) name, as the SDK reads them,
    but refused with a ValueError that names the variable where the SDK would log a
    warning and sample everything (a name it does not know, a ratio that is no
    number in [0, 1])."""
    from opentelemetry.sdk.trace import sampling

    ratios = {"traceidratio": sampling.TraceIdRatioBased,
              "parentbased_traceidratio": sampling.ParentBasedTraceIdRatio}
    fixed = {"always_on": sampling.ALWAYS_ON, "always_off": sampling.ALWAYS_OFF,
             "parentbased_always_on": sampling.DEFAULT_ON,
             "parentbased_always_off": sampling.DEFAULT_OFF}
    given = os.environ.get("OTEL_TRACES_SAMPLER", "")
    name = given.strip().lower() or "parentbased_always_on"
    if name in fixed:
        return fixed[name]
    if name not in ratios:
        raise ValueError(f"OTEL_TRACES_SAMPLER={given} is not a sampler: one of "
                         f"{', '.join([*fixed, *ratios])}")
    arg = os.environ.get("OTEL_TRACES_SAMPLER_ARG", "").strip()
    try:
        rate = float(arg) if arg else 1.0  # unset: every trace, as the SDK's default
    except ValueError:
        rate = -1.0
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"OTEL_TRACES_SAMPLER_ARG={arg} is not a ratio from 0 to 1 "
                         f"for OTEL_TRACES_SAMPLER={given}")
    return ratios[name](rate)


#: the SDK's batch settings: BatchSpanProcessor's argument each variable sets, and
#: its default (OpenTelemetry's specification)
_BATCH_VARIABLES = {
    "OTEL_BSP_SCHEDULE_DELAY": ("schedule_delay_millis", 5000),
    "OTEL_BSP_EXPORT_TIMEOUT": ("export_timeout_millis", 30000),
    "OTEL_BSP_MAX_QUEUE_SIZE": ("max_queue_size", 2048),
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": ("max_export_batch_size", 512),
}


def _batch_settings() -> dict[str, int]:
    """BatchSpanProcessor's arguments from the ``OTEL_BSP_*`` variables (unset or
    empty: the default): each a whole number above 0, a batch no larger than the
    queue. ValueError naming the variable otherwise, where the SDK would raise
    with no name or log a traceback and take its default."""
    given: dict[str, str] = {}
    settings: dict[str, int] = {}
    for variable, (argument, default) in _BATCH_VARIABLES.items():
        value = os.environ.get(variable, "").strip()
        try:
            number = int(value) if value else default
        except ValueError:
            number = 0
        if number <= 0:
            raise ValueError(f"{variable}={value}: a whole number above 0 is needed")
        settings[argument] = number
        if value:
            given[variable] = value
    if settings["max_export_batch_size"] > settings["max_queue_size"]:
        batch, queue = ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_BSP_MAX_QUEUE_SIZE")
        raise ValueError(f"{_setting(batch, given)} is more than {_setting(queue, given)}: "
                         "a batch must fit in the queue")
    return settings


def _setting(variable: str, given: Mapping[str, str]) -> str:
    """``NAME=value`` as set, or ``NAME (N by default)``."""
    if variable in given:
        return f"{variable}={given[variable]}"
    return f"{variable} ({_BATCH_VARIABLES[variable][1]} by default)"


def shown_endpoint(url: str) -> str:
    """``url`` fit for a log line: its user information (a password, or a token
    given as the user) and its query (a token passed as a parameter) masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(an endpoint that is no URL)"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "***" if parts.query else "",
                       parts.fragment))


def _otlp_endpoint() -> str:
    """Where OTLP/HTTP sends spans, by the SDK's environment variables."""
    full = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if full:
        return full
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318"
    return base.rstrip("/") + "/v1/traces"
