"""Rate limits shared by every replica, through the Redis of the bus.

With a Redis bus, each caller's token bucket lives in Redis instead of in each
process, so a caller gets the configured rate from the deployment as a whole,
not from each replica. The bucket is updated by one script, atomically, on
Redis's clock. When Redis cannot be reached the request is admitted (a limit
must not take the service down with it) and the outage is logged.

Concurrent-turn caps (``max_running``) stay per process.
"""

from __future__ import annotations

import logging
import math
import time

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .limits import RateLimit, RateLimited

__all__ = ["SharedRateLimiter"]

log = logging.getLogger("interlingua.limits")

# KEYS[1]: the bucket; ARGV: rate, burst. Returns the seconds until a token (0: taken).
_TAKE = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1]) or burst
local at = tonumber(held[2]) or now
tokens = math.min(burst, tokens + math.max(now - at, 0) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
return tostring(wait)
"""

#: seconds between two warnings that Redis is away
_WARN_EVERY = 10.0


class SharedRateLimiter:
    """Token buckets in Redis, one per caller key, for every replica at once."""

    def __init__(self, limit: RateLimit, redis_url: str, prefix: str) -> None:
        if limit.rate <= 0 or limit.burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1")
        self.limit = limit
        self._client = aioredis.Redis.from_url(redis_url, socket_timeout=1,
                                               socket_connect_timeout=1)
        self._script = self._client.register_script(_TAKE)
        self._prefix = f"{prefix}:rate:"
        self._warned = 0.0

    async def check(self, key: str) -> None:
        """``RateLimited`` (with ``retry_after``) when ``key`` has no token left."""
        try:
            wait = float(await self._script(keys=[self._prefix + key],
                                            args=[self.limit.rate, self.limit.burst]))
        except (RedisError, OSError, ValueError) as exc:
            now = time.monotonic()
            if now - self._warned > _WARN_EVERY:
                self._warned = now
                log.warning("rate limit: Redis is unavailable (%s); requests are admitted "
                            "unlimited meanwhile", exc)
            return
        if wait > 0:
            retry = max(1, math.ceil(wait))
            raise RateLimited(
                f"Rate limit exceeded: at most {self.limit.rate:g} requests per second "
                f"(bursts of {self.limit.burst}); retry in {retry} s", retry_after=retry)

    async def aclose(self) -> None:
        await self._client.aclose()
