from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live import live_grpc_agent

from .agents import agent


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    """The test assistant (tests/client/agents.py) on a loopback port, memory store,
    serving every binding (its card names its gRPC address)."""
    with live_grpc_agent(agent) as (url, _):
        yield url
