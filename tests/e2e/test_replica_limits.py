"""Rate limits counted by every replica together, through the Redis of the bus."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from interlingua.server.auth import RateLimit, RateLimited
from interlingua.server.auth.shared_limits import SharedRateLimiter

from ..services import (
    REDIS_HOST,
    REDIS_PORT,
    PrivateRedis,
    missing,
    new_name,
    reachable,
    with_option,
)
from .replicas import Replica
from .sse_client import V1, rpc


@pytest.fixture
def limited(pg_database: str) -> Iterator[list[Replica]]:
    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    store = with_option(pg_database, f"schema={new_name('limits')}")
    bus = f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name('limits')}"
    group = [Replica(store, bus, extra=("--limits", "tests/e2e/replica_agent.py:LIMITS"))
             for _ in range(2)]
    try:
        for r in group:
            r.start()
        yield group
    finally:
        for r in group:
            r.stop()


def test_a_callers_rate_is_counted_across_replicas(limited: list[Replica]) -> None:
    statuses = []
    with httpx.Client(timeout=10) as c:
        for n in range(8):
            r = c.post(limited[n % 2].url + "/", headers=V1,
                       json=rpc("ListTasks", {"pageSize": 1}))
            statuses.append(r.status_code)
            if r.status_code == 429:
                assert int(r.headers["retry-after"]) >= 1
    # a burst of 4 (0.5/s after it) for the deployment, not 4 per replica
    assert statuses.count(200) in (4, 5), statuses
    assert statuses.count(429) == 8 - statuses.count(200)


async def test_requests_are_admitted_while_redis_is_away() -> None:
    redis = PrivateRedis().start()
    limiter = SharedRateLimiter(RateLimit(rate=0.01, burst=1), redis.url, "t")
    try:
        await limiter.check("k")
        with pytest.raises(RateLimited):
            await limiter.check("k")
        redis.stop()
        await limiter.check("k")  # no Redis: not limited, not failed
    finally:
        await limiter.aclose()
        redis.stop()
