"""An OTLP exporter that says once that its collector cannot be reached.

Without a collector, OpenTelemetry's OTLP exporter logs a warning for each
retry and an error for each batch, every few seconds, for as long as the
process runs. ``QuietExporter`` holds those lines back and logs one of its own
naming the endpoint, then at most once every ``QUIET_SECONDS`` while the
collector stays away, and once when it is back.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["QUIET_SECONDS", "QuietExporter"]

#: the shortest time between two "cannot reach the collector" lines
QUIET_SECONDS = 60.0

log = logging.getLogger("interlingua.observability")

#: the OTLP/HTTP exporter's logger, whose export failures are held back
_SDK_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
_FAILURES = ("Transient error", "Failed to export")
_REASON = re.compile(r"\[Errno -?\d+\] ([^'\")]+)")
_STATUS = re.compile(r"code: (\d+), reason: (.*)")


class _HoldBack(logging.Filter):
    """Drops the SDK's export-failure lines, keeping the last reason given."""

    def __init__(self) -> None:
        super().__init__()
        self.reason: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if not message.startswith(_FAILURES):
            return True
        found = _REASON.search(message)
        if found:
            self.reason = found.group(1).strip()
        elif status := _STATUS.search(message):
            self.reason = f"HTTP {status.group(1)} {status.group(2).strip()}"
        return False


class QuietExporter(SpanExporter):
    """``inner`` (an OTLP exporter sending to ``endpoint``), with its failures
    told once, then at most once every ``QUIET_SECONDS``."""

    def __init__(self, inner: Any, endpoint: str) -> None:
        self._inner = inner
        self._endpoint = endpoint
        self._lock = threading.Lock()
        self._last_said: float | None = None  # when the last failure was logged
        self._failing = False
        self._hold_back = _HoldBack()
        logging.getLogger(_SDK_LOGGER).addFilter(self._hold_back)

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        self._hold_back.reason = None  # one batch's reason, not an older one's
        result: SpanExportResult = self._inner.export(spans)
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                if self._failing:
                    log.warning("OpenTelemetry: the collector at %s answers again",
                                self._endpoint)
                self._failing = False
                return result
            self._failing = True
            now = time.monotonic()
            if self._last_said is not None and now - self._last_said < QUIET_SECONDS:
                return result
            self._last_said = now
        reason = self._hold_back.reason or "no answer"
        log.warning("OpenTelemetry: cannot send spans to the collector at %s (%s); they are "
                    "dropped. Said again at most once a minute while it lasts; "
                    "--otel-exporter console prints spans on stdout instead",
                    self._endpoint, reason)
        return result

    def shutdown(self) -> None:
        # the filter stays: a batch cut short by the shutdown still logs after it
        self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self._inner.force_flush(timeout_millis))
