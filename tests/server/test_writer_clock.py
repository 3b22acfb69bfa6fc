"""The writer's timestamps: the current time, formatted as the codecs format any time."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from interlingua.core.dialects._common import format_timestamp
from interlingua.server.run import Writer


def test_now_is_the_formatted_current_time_across_milliseconds_and_seconds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    writer = Writer(None, None, lease=lambda: None)  # type: ignore[arg-type]
    start = 1_795_000_000_000  # ms since the epoch, a second boundary
    # within a millisecond, the next one, across seconds, minutes, a day, a year,
    # and back in time (a clock set back)
    steps = [0, 0, 1, 999, 1000, 1001, 59_999, 60_000, 86_399_999, 86_400_000,
             start % 1000 + 31_536_000_000, 5, 0]
    for ms in steps:
        ns = (start + ms) * 1_000_000 + 123_456
        monkeypatch.setattr(time, "time_ns", lambda ns=ns: ns)
        expected = format_timestamp(datetime.fromtimestamp((start + ms) / 1000, UTC))
        assert writer.now() == expected, ms


def test_a_given_clock_is_formatted_at_each_call() -> None:
    times = iter([datetime(2030, 1, 2, 3, 4, 5, 678_000, tzinfo=UTC),
                  datetime(2030, 1, 2, 3, 4, 5, 679_999, tzinfo=UTC)])
    writer = Writer(None, None, lease=lambda: None, clock=lambda: next(times))  # type: ignore[arg-type]
    assert writer.now() == "2030-01-02T03:04:05.678Z"
    assert writer.now() == "2030-01-02T03:04:05.679Z"
