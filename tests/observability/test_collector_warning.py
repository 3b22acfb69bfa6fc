"""``QuietExporter``: a collector that cannot be reached is told once, again at most
once a minute, and its return once."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SpanExportResult

from interlingua.observability import _collector
from interlingua.observability._collector import QUIET_SECONDS, QuietExporter


class Flaky:
    def __init__(self) -> None:
        self.result = SpanExportResult.FAILURE

    def export(self, spans: Any) -> SpanExportResult:
        return self.result

    def shutdown(self) -> None:
        pass


def test_told_once_a_minute_and_when_it_is_back(monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    monkeypatch.setattr(_collector.time, "monotonic", lambda: now[0])
    inner = Flaky()
    exporter = QuietExporter(inner, "http://collector:4318/v1/traces")
    told = []
    with caplog.at_level(logging.WARNING, logger="interlingua.observability"):
        for step in (0, 1, QUIET_SECONDS - 2, 2):  # 0 s, 1 s, 59 s, 61 s
            now[0] += step
            exporter.export([])
            told.append(sum("cannot send spans" in r.getMessage() for r in caplog.records))
        inner.result = SpanExportResult.SUCCESS
        exporter.export([])
        exporter.export([])
    assert told == [1, 1, 1, 2]
    assert sum("answers again" in r.getMessage() for r in caplog.records) == 1
