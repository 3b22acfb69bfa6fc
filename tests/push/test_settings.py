"""Push settings are checked where they are given: a value that cannot work (a backoff
of 0 s, a jitter past the wait, no attempt at all) is refused by name."""

from __future__ import annotations

from typing import Any

import pytest

from interlingua.server.push import PushSettings


@pytest.mark.parametrize(("fields", "complaint"), [
    ({"max_attempts": 0}, "max_attempts must be at least 1"),
    ({"concurrency": 0}, "concurrency must be at least 1"),
    ({"max_configs_per_task": 0}, "max_configs_per_task must be at least 1"),
    ({"max_redirects": -1}, "max_redirects must not be negative"),
    ({"backoff_base": 0.0}, "backoff_base must be above 0"),
    ({"timeout": float("nan")}, "timeout must be above 0"),
    ({"poll_interval": -1.0}, "poll_interval must be above 0"),
    ({"lease": 0.0}, "lease must be above 0"),
    ({"key_grace": 0.0}, "key_grace must be above 0"),
    ({"backoff_base": 10.0, "backoff_max": 5.0}, "backoff_max .* must be at least backoff_base"),
    ({"jitter": 1.5}, "jitter is a fraction"),
    ({"jitter": -0.1}, "jitter is a fraction"),
])
def test_a_bad_value_is_refused_by_name(fields: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        PushSettings(**fields)


def test_the_edges_that_work_are_taken() -> None:
    s = PushSettings(max_attempts=1, concurrency=1, max_redirects=0, jitter=0.0,
                     backoff_base=5.0, backoff_max=5.0, lease=1.0)
    assert (s.max_attempts, s.jitter, s.backoff_max, s.lease) == (1, 0.0, 5.0, 1.0)
    assert PushSettings(jitter=1.0).jitter == 1.0
