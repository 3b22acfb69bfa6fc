"""W3C trace context across hops: what a client sends, what a server reads.

OpenTelemetry's API is optional. Without it, or with it but no tracer
provider set up (the API's default is a proxy that makes no real spans),
``inject`` finds no valid current span and adds nothing. The check is cheap
(a context variable read), so clients make it on every call rather than
deciding once: a process may set up its SDK after its clients exist.

Every binding of interlingua's client calls ``inject`` on the headers of a
request: the HTTP bindings (``client/transport.py``), the mesh (MQTT user
properties, ``mesh/client.py``), and the gRPC binding, on its metadata.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping, MutableMapping
from typing import Any

try:  # an optional dependency: the "otel" extra
    from opentelemetry import context as otel_context
    from opentelemetry import trace
except ImportError:  # pragma: no cover - exercised by the benchmark's "absent" case
    otel_context = None  # type: ignore[assignment]
    trace = None  # type: ignore[assignment]

__all__ = ["AVAILABLE", "check_propagators", "extract", "inject", "otel_context",
           "sdk_configured", "trace"]

log = logging.getLogger(__name__)

#: opentelemetry-api can be imported
AVAILABLE = trace is not None


def sdk_configured() -> bool:
    """A tracer provider that makes real spans was set up (an SDK's), as opposed
    to the API's default proxy or its no-op provider."""
    if trace is None:
        return False
    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def inject(headers: MutableMapping[str, Any]) -> None:
    """Add the current span's context (``traceparent``, and whatever else the
    configured propagators write) to ``headers``; nothing without a valid span."""
    if trace is None:
        return
    if not trace.get_current_span().get_span_context().is_valid:
        return
    _propagation().inject(headers)


def check_propagators() -> None:
    """Load the propagators ``OTEL_PROPAGATORS`` names: ValueError, naming the
    variable, when one of them is not installed (``serve --otel`` refuses to start)."""
    try:
        from opentelemetry import propagate  # noqa: F401 - loads them on its import
    except ValueError as exc:
        raise ValueError(f"OTEL_PROPAGATORS={os.environ.get('OTEL_PROPAGATORS', '')}: "
                         f"{exc}") from None


@functools.cache
def _propagation() -> Any:
    """What injects and extracts: OpenTelemetry's ``propagate`` (the propagators
    ``OTEL_PROPAGATORS`` names, or those the program set), or, when a name in that
    variable is not installed, the API's default (W3C trace context and baggage),
    said once in a warning.

    Imported at first use, not with this module: importing ``opentelemetry.propagate``
    raises on such a name, and ``import interlingua`` (and every command that traces
    nothing) must not fail over a variable meant for tracing."""
    try:
        check_propagators()
    except ValueError as exc:
        from opentelemetry.baggage.propagation import W3CBaggagePropagator
        from opentelemetry.propagators.composite import CompositePropagator
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        log.warning("%s (the W3C traceparent is sent and read instead)", exc)
        return CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])
    from opentelemetry import propagate

    return propagate


class _Getter:
    """Reads a carrier that has ``get(name)``: the front door's headers, a dict."""

    def get(self, carrier: Mapping[str, str], key: str) -> list[str] | None:
        value = carrier.get(key)
        return None if value is None else [value]

    def keys(self, carrier: Mapping[str, str]) -> list[str]:
        return []  # only the propagators' own names are ever looked up


_GETTER = _Getter()


def extract(headers: Mapping[str, str]) -> Any:
    """The OpenTelemetry context the caller sent (``traceparent``), for a span's parent."""
    return _propagation().extract(headers, getter=_GETTER)
