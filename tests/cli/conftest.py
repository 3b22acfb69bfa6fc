from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.client.agents import agent
from tests.live import live_agent, live_grpc_agent


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    """The test assistant (tests/client/agents.py) on a loopback port, memory store."""
    with live_agent(agent) as url:
        yield url


@pytest.fixture(scope="module")
def where() -> Iterator[tuple[str, str]]:
    """The test assistant on loopback: its HTTP URL and its gRPC target."""
    with live_grpc_agent(agent) as found:
        yield found


@pytest.fixture(scope="module")
def taken() -> Iterator[int]:
    """A loopback port something listens on (a port taken)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield sock.getsockname()[1]
