"""Limits that keep one caller from taking the server down.

* message size: at most ``max_parts`` parts and ``max_inline_file_bytes``
  of inline file content per message (``InvalidParams`` naming the limit);
  the request body limit is the server's ``max_body_bytes`` (HTTP 413);
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

import asyncio
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING

import msgspec

from ...core.errors import InvalidParams, RateLimitExceeded, ResourceUnavailable
from ...core.model import FilePart, Message

if TYPE_CHECKING:
    from ..context import Context

__all__ = [
    "ExecutorGate",
    "ExecutorTimeout",
    "Limits",
    "RateLimit",
    "RateLimited",
    "RateLimiter",
    "Ticket",
]


class RateLimit(msgspec.Struct, frozen=True, kw_only=True):
    """``rate`` requests per second on average, bursts of up to ``burst``."""

    rate: float
    burst: int = 10


class Limits(msgspec.Struct, kw_only=True):
    #: parts one message may have (None: no limit)
    max_parts: int | None = 256
    #: bytes of inline file content (all file parts of one message together)
    max_inline_file_bytes: int | None = 8 * 1024 * 1024
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
        for name in ("max_parts", "max_inline_file_bytes", "max_running"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1 (or None for no limit)")
        for name in ("run_timeout", "idle_timeout"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive (or None for no limit)")

    def check_message(self, message: Message) -> None:
        """``InvalidParams`` when ``message`` is over a size limit."""
        parts = message.parts
        if self.max_parts is not None and len(parts) > self.max_parts:
            raise InvalidParams(
                f"Invalid params: message.parts has {len(parts)} parts; this agent accepts "
                f"at most {self.max_parts} per message")
        if self.max_inline_file_bytes is not None:
            total = 0
            for part in parts:
                if isinstance(part, FilePart) and part.raw is not None:
                    total += len(part.raw)
            if total > self.max_inline_file_bytes:
                raise InvalidParams(
                    f"Invalid params: the message's inline files hold {total} bytes; this agent "
                    f"accepts at most {self.max_inline_file_bytes} bytes of inline files per "
                    "message (send larger files by URI)")


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


# ----------------------------------------------------------- running executors


class ExecutorTimeout(Exception):
    """A turn ran too long or went quiet; the message is the task's failure reason."""


class Ticket:
    """A turn's place: counted from the send that asked for it until the turn ends."""

    __slots__ = ("_gate", "_held", "_released", "taken")

    def __init__(self, gate: ExecutorGate | None) -> None:
        self._gate = gate
        self._released = False
        self._held = False
        #: a turn owns it (else the send that reserved it releases it)
        self.taken = False

    def release(self) -> None:
        if self._released or self._gate is None:
            return
        self._released = True
        self._gate._reserved -= 1
        if self._held:
            self._held = False
            self._gate._slots.release()

    async def acquire(self) -> None:
        """Wait for a free executor slot (queue mode)."""
        if self._gate is None or self._held:
            return
        await self._gate._slots.acquire()
        self._held = True


#: the place of every turn when their number has no cap: nothing to count or release
_FREE = Ticket(None)
_FREE.taken = True
_NO_ADMISSION = nullcontext()

# The ticket a send reserved, for the turn it starts (the send's own asyncio task).
_ADMITTED: ContextVar[Ticket | None] = ContextVar("interlingua_admitted_turn", default=None)


class _Admission:
    # A class, not @contextmanager: it is entered on every send, and the
    # generator machinery cost more than what it guards.
    __slots__ = ("ticket", "token")

    def __init__(self, ticket: Ticket) -> None:
        self.ticket = ticket
        self.token: Token[Ticket | None] | None = None

    def __enter__(self) -> None:
        self.token = _ADMITTED.set(self.ticket)

    def __exit__(self, *exc: object) -> None:
        if self.token is not None:
            _ADMITTED.reset(self.token)
        if not self.ticket.taken:
            self.ticket.release()


class ExecutorGate:
    """How many turns may run at once, and how many may wait."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._reserved = 0
        self._slots = asyncio.Semaphore(limits.max_running or 1)

    @property
    def reserved(self) -> int:
        """Turns running or waiting to run."""
        return self._reserved

    def reserve(self, *, force: bool = False) -> Ticket:
        """A place for one more turn; ``ResourceUnavailable`` when there is none."""
        cap = self.limits.max_running
        if cap is None:
            return _FREE
        room = cap if self.limits.when_busy == "reject" else cap + self.limits.max_queued
        if self._reserved >= room and not force:
            waiting = "" if self.limits.when_busy == "reject" else \
                f" and {self.limits.max_queued} waiting"
            raise ResourceUnavailable(
                f"The agent is busy ({cap} tasks running{waiting}); try again later")
        self._reserved += 1
        return Ticket(self)

    def admission(self) -> AbstractContextManager[None]:
        """Around a send: a place is reserved (or ``ResourceUnavailable`` raised)
        for the turn the send starts; released if it starts none."""
        if self.limits.max_running is None:
            # No cap: every turn has the one free place, and the send has nothing
            # to hand its turn (a context variable set per send stayed in the
            # context of every running turn, ~170 bytes with its ticket).
            return _NO_ADMISSION
        return _Admission(self.reserve())

    def take(self) -> Ticket:
        """The place for a turn being started: the admitted send's, or a new one."""
        ticket = _ADMITTED.get()
        if ticket is None or ticket.taken:
            ticket = self.reserve(force=True)
        ticket.taken = True
        return ticket

    def unbounded(self, ticket: Ticket | None) -> bool:
        """A turn in ``ticket`` needs no slot and no clock: it can be awaited directly."""
        limits = self.limits
        return (ticket is None or ticket._gate is None) and \
            limits.run_timeout is None and limits.idle_timeout is None

    async def run(self, ticket: Ticket | None, executor: Callable[[Context], Awaitable[None]],
                  ctx: Context, activity: Callable[[], int]) -> None:
        """Run one turn in ``ticket``'s slot, within the time limits."""
        limits = self.limits
        try:
            if ticket is not None:
                await ticket.acquire()
            if limits.run_timeout is None and limits.idle_timeout is None:
                # Awaited here, not in _timed: one coroutine (and its frame) less
                # held by every waiting turn.
                await executor(ctx)
            else:
                await _timed(limits, executor, ctx, activity)
        finally:
            if ticket is not None:
                ticket.release()


async def _timed(limits: Limits, executor: Callable[[Context], Awaitable[None]], ctx: Context,
                 activity: Callable[[], int]) -> None:
    """The executor within ``limits``' run time and inactivity limits (at least one set)."""
    run_timeout, idle_timeout = limits.run_timeout, limits.idle_timeout
    loop = asyncio.get_running_loop()
    start = loop.time()
    hard = start + run_timeout if run_timeout is not None else math.inf
    if run_timeout is not None and ctx.deadline is None:
        ctx.deadline = hard
    last_seen, last_at = activity(), start

    def deadline() -> float:
        return min(hard, last_at + idle_timeout) if idle_timeout is not None else hard

    handle: asyncio.TimerHandle | None = None
    try:
        async with asyncio.timeout(deadline()) as cm:
            if idle_timeout is not None:
                interval = min(idle_timeout / 4, 1.0)

                def check() -> None:
                    nonlocal last_seen, last_at, handle
                    seen = activity()
                    if seen != last_seen:
                        last_seen, last_at = seen, loop.time()
                        cm.reschedule(deadline())
                    handle = loop.call_later(interval, check)

                handle = loop.call_later(interval, check)
            await executor(ctx)
    except TimeoutError:
        if not cm.expired():
            raise  # the executor's own timeout, not ours
        if loop.time() >= hard - 1e-3:
            raise ExecutorTimeout(
                f"The agent did not finish within {run_timeout:g} s (run timeout)") from None
        raise ExecutorTimeout(
            f"The agent reported nothing for {idle_timeout:g} s (inactivity timeout)") from None
    finally:
        if handle is not None:
            handle.cancel()
