"""Observability: OpenTelemetry traces, Prometheus metrics, JSON logs.

Everything here is opt-in and decided once, when an app is built:

- ``core/trace_context.py`` (shared with the client): the W3C ``traceparent`` a
  client sends and a server reads (OpenTelemetry's API, when it is installed and a
  tracer provider is set up).
- ``tracing``: spans per A2A request, executor turn, store commit and push delivery.
- ``metrics``: counters and histograms, served at ``/metrics`` in Prometheus' text format.
- ``logs``: one JSON object per log line, with the task, context and trace ids.
- ``install``: puts the above on an app's own objects when asked, and nothing otherwise.
"""
