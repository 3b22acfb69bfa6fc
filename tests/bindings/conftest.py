"""Fixtures the parity scenarios share: an HTTP client, and each binding's driver."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from .drivers import DRIVERS, Driver


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as cl:
        yield cl


@pytest.fixture(params=list(DRIVERS))
def kind(request: pytest.FixtureRequest) -> type[Driver]:
    """The driver of each binding and version (JSON-RPC, HTTP+JSON, gRPC; 1.0, 0.3)."""
    return DRIVERS[request.param]
