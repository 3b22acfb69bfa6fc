"""Limits that keep one caller from taking the server down.

* message size: at most ``max_parts`` parts and ``max_inline_file_bytes``
  of inline file content per message (``InvalidParams`` naming the limit);
  the request body limit is the server's ``max_body_bytes`` (HTTP 413);
* message depth: metadata and data nested at most ``max_nesting`` levels, what
  every binding (gRPC's protobuf too) can carry back (``InvalidParams``);
* fields kept and sent on that nothing else bounds (a push config's token and URL,
  a message's referenced tasks and extensions): fixed bounds, core/bounds.py;
* a token bucket per principal (``RateLimit``): ``RateLimitExceeded`` (HTTP
  429, ``Retry-After``; v0.1 -32010);
* a cap on executors running at once (``max_running``): further turns wait
  in a bounded queue (``when_busy="queue"``, up to ``max_queued``) or are
  refused at once (``"reject"``); a send that finds no room gets
  ``ResourceUnavailable`` (v0.1 -32011) and no task is made;
* a run-time limit per turn (``run_timeout``) and an inactivity limit
  (``idle_timeout``: no event written for that long): the task ends
  ``failed`` saying which.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import msgspec

from ...core.errors import InvalidParams, RateLimitExceeded
from ...core.model import FilePart, Message, TextPart
from ...core.nesting import CARRIED, deeper_than, message_too_deep

__all__ = ["Limits", "RateLimit", "RateLimited", "RateLimiter"]


class RateLimit(msgspec.Struct, frozen=True, kw_only=True):
    """``rate`` requests per second on average, bursts of up to ``burst``."""

    rate: float
    burst: int = 10

    def __post_init__(self) -> None:
        if not self.rate > 0 or self.burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1, "
                             f"got rate={self.rate!r}, burst={self.burst!r}")


class Limits(msgspec.Struct, kw_only=True):
    #: parts one message may have (None: no limit)
    max_parts: int | None = 256
    #: bytes of inline file content (all file parts of one message together)
    max_inline_file_bytes: int | None = 8 * 1024 * 1024
    #: levels a message's metadata, a part's metadata or data, and a send's metadata
    #: may nest, and so may what the agent emits: past 32 levels of objects, a task
    #: could not be read back over gRPC (core/nesting.py; None: no limit on
    #: requests, and the agent's output held to what the stores encode)
    max_nesting: int | None = CARRIED
    #: requests per principal (anonymous callers: per client address)
    rate_limit: RateLimit | None = None
    #: executors running at once (None: no cap)
    max_running: int | None = None
    #: "queue": wait for a free executor (up to ``max_queued`` waiting); "reject": refuse
    when_busy: str = "queue"
    max_queued: int = 100
    #: seconds one turn of an executor may run
    run_timeout: float | None = None
    #: seconds an executor may go without writing an event
    idle_timeout: float | None = None
    #: seconds, for the rate limiter (tests inject a fake clock)
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        if self.when_busy not in ("queue", "reject"):
            raise ValueError(f"when_busy must be 'queue' or 'reject', not {self.when_busy!r}")
        for name in ("max_parts", "max_inline_file_bytes", "max_running", "max_nesting"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1 (or None for no limit)")
        if self.max_queued < 0:
            raise ValueError(f"max_queued must not be negative, got {self.max_queued!r}")
        for name in ("run_timeout", "idle_timeout"):
            value = getattr(self, name)
            if value is not None and not value > 0:  # (NaN too)
                raise ValueError(f"{name} must be positive (or None for no limit)")

    def check_message(self, message: Message, metadata: dict[str, Any] | None = None) -> None:
        """``InvalidParams`` when ``message`` (sent with ``metadata``) is over a size
        or depth limit."""
        parts = message.parts
        if self.max_parts is not None and len(parts) > self.max_parts:
            raise InvalidParams(
                f"Invalid params: message.parts has {len(parts)} parts; this agent accepts "
                f"at most {self.max_parts} per message")
        # One pass over the parts: the inline files counted, and whether anything can
        # nest (nearly every send is text parts without metadata: nothing to measure).
        total = 0
        nests = metadata is not None or message.metadata is not None
        for part in parts:
            # ``type(part) is``: the model's classes are final, and an
            # isinstance that misses costs a metaclass call per part
            kind = type(part)
            if kind is TextPart:
                if part.metadata is not None:
                    nests = True
                continue
            nests = True  # a data part, or a file part's metadata
            if kind is FilePart and part.raw is not None:  # type: ignore[union-attr]
                total += len(part.raw)  # type: ignore[union-attr]
        limit = self.max_inline_file_bytes
        if limit is not None and total > limit:
            raise InvalidParams(
                f"Invalid params: the message's inline files hold {total} bytes; this agent "
                f"accepts at most {limit} bytes of inline files per "
                "message (send larger files by URI)")
        if nests and self.max_nesting is not None:
            where = _too_deep(message, metadata, self.max_nesting)
            if where is not None:
                raise InvalidParams(
                    f"Invalid params: {where} nests more than {self.max_nesting} levels deep, "
                    "more than this agent accepts (and more than gRPC can carry back)")


def _too_deep(message: Message, metadata: dict[str, Any] | None, limit: int) -> str | None:
    """What of a send nests past ``limit`` (None: nothing)."""
    if metadata is not None and deeper_than(metadata, limit):
        return "metadata"
    return message_too_deep(message, limit)


# ------------------------------------------------------------------ rate limit


class RateLimiter:
    """Token buckets, one per key, kept for the ``max_keys`` most recent keys."""

    def __init__(self, limit: RateLimit, *, clock: Callable[[], float] = time.monotonic,
                 max_keys: int = 100_000) -> None:
        if limit.rate <= 0 or limit.burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1")
        self.limit = limit
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key: str) -> float | None:
        """Spend one token of ``key``: None if there was one, else seconds until there is."""
        now = self._clock()
        rate, burst = self.limit.rate, float(self.limit.burst)
        tokens, at = self._buckets.pop(key, (burst, now))
        tokens = min(burst, tokens + (now - at) * rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
            return None
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / rate

    def check(self, key: str) -> None:
        """``RateLimitExceeded`` (its ``retry_after`` set) when ``key`` has no token left."""
        wait = self.take(key)
        if wait is not None:
            retry = max(1, math.ceil(wait))
            raise RateLimited(
                f"Rate limit exceeded: at most {self.limit.rate:g} requests per second "
                f"(bursts of {self.limit.burst}); retry in {retry} s", retry_after=retry)


class RateLimited(RateLimitExceeded):
    """``RateLimitExceeded`` that knows when to come back (the ``Retry-After`` header)."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
