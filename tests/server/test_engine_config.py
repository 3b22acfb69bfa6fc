"""An engine's configuration is checked where it is given: a mistyped policy, a timeout
that cannot work, or a negative count is refused by name, not found out later as tasks
ended wrongly."""

from __future__ import annotations

from typing import Any

import pytest

from interlingua import Agent, create_app
from interlingua.server.engine import EngineConfig


@pytest.mark.parametrize(("fields", "complaint"), [
    ({"restart_policy": "rerunn"}, "use one of fail, rerun"),
    ({"message_ids": "loose"}, "use one of content, strict"),
    ({"lease_interval": 5.0, "lease_timeout": 5.0}, "must be longer than lease_interval"),
    ({"lease_interval": 0.0}, "lease_interval must be above 0"),
    ({"heartbeat_interval": -1.0}, "heartbeat_interval must be above 0"),
    ({"retention_interval": float("nan")}, "retention_interval must be above 0"),
    ({"retention": 0.0}, "retention must be above 0"),
    ({"submit_grace": -0.1}, "submit_grace must not be negative"),
    ({"stop_timeout": -1.0}, "stop_timeout must not be negative"),
    ({"long_poll_max_wait": -1.0}, "long_poll_max_wait must not be negative"),
    ({"default_history_length": -1}, "default_history_length must not be negative"),
    ({"max_lag": 0}, "max_lag must be at least 1"),
])
def test_a_bad_value_is_refused_by_name(fields: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        EngineConfig(**fields)


def test_the_edges_that_work_are_taken() -> None:
    config = EngineConfig(restart_policy="rerun", message_ids="strict", submit_grace=0.0,
                          default_history_length=0, stop_timeout=0.0, long_poll_max_wait=0.0,
                          retention=None, lease_interval=0.1, lease_timeout=0.2, max_lag=1)
    agent = Agent("A", "d", lambda ctx: ctx.complete("x"))
    app = create_app(agent, engine_config=config)
    assert app.state.engine.config is config
