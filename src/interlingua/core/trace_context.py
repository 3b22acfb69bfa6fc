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

from collections.abc import Mapping, MutableMapping
from typing import Any

try:  # an optional dependency: the "otel" extra
    from opentelemetry import context as otel_context
    from opentelemetry import propagate, trace
except ImportError:  # pragma: no cover - exercised by the benchmark's "absent" case
    otel_context = None  # type: ignore[assignment]
    propagate = None  # type: ignore[assignment]
    trace = None  # type: ignore[assignment]

__all__ = ["AVAILABLE", "extract", "inject", "otel_context", "sdk_configured", "trace"]

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
    propagate.inject(headers)


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
    return propagate.extract(headers, getter=_GETTER)  # type: ignore[arg-type]
