"""Two ``interlingua serve`` replicas on one PostgreSQL database and a Redis bus that
goes out of reach (a TCP proxy the test cuts): what one commits still reaches the
other, found in the store at each heartbeat while the bus is down."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ..services import new_name, with_option
from ..tcp_proxy import TcpProxy
from .replicas import Replica, cancel_answers_the_other

AGENT = "tests/bindings/generations_agent.py:AGENT"

pytestmark = pytest.mark.timeout(90)


def _rpc(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.post(url + "/", timeout=60, json={
        "jsonrpc": "2.0", "id": 1, "method": method, "params": params}).json()
    return answer["result"]


@pytest.fixture
def pair_and_bus(pg_database: str) -> Iterator[tuple[Replica, Replica, TcpProxy]]:
    from ..conftest import REDIS_HOST, REDIS_PORT, missing, reachable

    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    with TcpProxy(REDIS_PORT, REDIS_HOST) as proxy:
        store = with_option(pg_database, f"schema={new_name('busdown')}")
        bus = f"redis://127.0.0.1:{proxy.port}/0?prefix={new_name('busdown')}"
        a, b = (Replica(store, bus, agent=AGENT) for _ in range(2))
        a.start(wait=False)
        b.start(wait=False)
        try:
            a.wait_ready()
            b.wait_ready()
            yield a, b, proxy
        finally:
            a.stop()
            b.stop()


def test_a_cancel_on_the_other_replica_while_redis_is_down_answers_the_blocking_caller(
        pair_and_bus: tuple[Replica, Replica, TcpProxy]) -> None:
    """Before: with a Redis bus configured, the store was never looked in for the
    others' writes, even while the bus was down: the turn on A went on and A's
    blocking caller waited until Redis was back."""
    a, b, proxy = pair_and_bus
    time.sleep(1.2)  # each has seen the other's lease (heartbeats 0.5 s apart)
    proxy.cut()
    # (Redis still out of reach throughout)
    cancel_answers_the_other(a.url, b.url, _rpc, within=5)
    proxy.restore()
