"""Settings of push notification delivery: who may be called, how hard to try, how to sign."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

__all__ = ["Attempt", "PushSettings", "Resolver"]

#: ``(host, port) -> IP address strings``; the default asks the system resolver
Resolver = Callable[[str, int], Awaitable[list[str]]]


class Attempt(msgspec.Struct, kw_only=True):
    """What one attempt did (``PushSettings.on_attempt`` gets one per attempt)."""

    delivery_id: int
    task_id: str
    config_id: str
    seq: int
    #: 1 for the first try
    attempt: int
    #: the dispatcher's clock when the attempt started
    at: float
    #: "delivered", "retry", "dead" or "dropped" (config or event gone)
    outcome: str
    status: int | None = None
    error: str | None = None
    #: when it is due again (outcome "retry"), and the backoff that led there
    retry_at: float | None = None
    delay: float | None = None
    notification_id: str | None = None


class PushSettings(msgspec.Struct, kw_only=True):
    # ------------------------------------------------------ where webhooks may be
    #: accept ``http://`` webhook URLs (development only: tokens travel in clear)
    allow_http: bool = False
    #: accept loopback, private, link-local ... addresses (development and tests);
    #: cloud metadata addresses stay refused unless listed in ``allow_hosts``
    allow_private_networks: bool = False
    #: host names, IP addresses or networks (``10.1.0.0/16``) always accepted
    allow_hosts: list[str] = msgspec.field(default_factory=list)

    # ----------------------------------------------------------------- delivery
    #: attempts per delivery before it is dead (the first try counts)
    max_attempts: int = 8
    #: the wait before the 2nd attempt; doubles per failure up to ``backoff_max``
    backoff_base: float = 1.0
    backoff_max: float = 300.0
    #: up to this fraction of each wait is taken off at random (0 = none)
    jitter: float = 0.5
    #: seconds for one HTTP exchange (connect, send, answer)
    timeout: float = 10.0
    #: redirects followed per attempt (307/308, and 301/302 re-sent as POST)
    max_redirects: int = 3
    #: deliveries in flight at once (each (task, config) has at most one)
    concurrency: int = 16
    #: how often the outbox is checked without a wake-up (other processes' writes)
    poll_interval: float = 2.0
    #: seconds a claimed delivery is reserved; must cover a whole attempt
    lease: float = 120.0
    #: push configs one task may have
    max_configs_per_task: int = 10
    #: False: register configs and queue deliveries, but send nothing from here
    dispatch: bool = True

    # ------------------------------------------------------------------ signing
    #: "ES256" (P-256) or "RS256" (RSA 2048) for keys this server makes
    signing_alg: str = "ES256"
    #: where the signing keys are kept; default: beside a SQLite store's file
    #: (``tasks.db`` -> ``tasks.push-keys.json``), in memory for other stores
    key_path: str | None = None
    #: a fixed signing key (PKCS#8 or SEC1/PKCS#1 PEM) instead of generated ones
    signing_key_pem: str | None = None
    #: seconds a retired key stays in the JWKS after a rotation
    key_grace: float = 7 * 24 * 3600.0

    # ---------------------------------------------- hooks (tests, instrumentation)
    #: seconds, for due times and backoff (``time.time`` by default)
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    #: uniform in [0, 1), for jitter
    random: Callable[[], float] = random.random
    resolver: Resolver | None = None
    #: the httpcore network backend the guard wraps (default: httpcore's own)
    network_backend: Any = None
    #: called after every attempt with what happened
    on_attempt: Callable[[Attempt], None] | None = None

    def __post_init__(self) -> None:
        # Checked where they are given: a backoff of 0 s would retry in a tight loop, a
        # lease of 0 s would let every process claim every delivery at once.
        for name in ("max_attempts", "concurrency", "max_configs_per_task"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)!r}")
        if self.max_redirects < 0:
            raise ValueError(f"max_redirects must not be negative, got {self.max_redirects!r}")
        for name in ("backoff_base", "timeout", "poll_interval", "lease", "key_grace"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be above 0 seconds, got {getattr(self, name)!r}")
        if not self.backoff_max >= self.backoff_base:
            raise ValueError(f"backoff_max ({self.backoff_max!r} s) must be at least "
                             f"backoff_base ({self.backoff_base!r} s)")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter is a fraction of each wait, 0 to 1, got {self.jitter!r}")
