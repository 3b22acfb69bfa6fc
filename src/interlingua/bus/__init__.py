"""Buses: how readers of a task's log hear that it grew."""

from __future__ import annotations

from .base import Bus, Subscription, task_key
from .local import LocalBus

__all__ = ["Bus", "LocalBus", "Subscription", "open_bus", "task_key"]


def open_bus(url: str = "local://") -> Bus:
    """The bus for ``url``: ``local://`` (one process) or ``redis://host:port/db``
    (every replica sharing that Redis)."""
    if url in ("local://", "memory://", ""):
        return LocalBus()
    scheme = url.partition("://")[0]
    if scheme in ("redis", "rediss", "unix"):
        # imported here: redis is an optional dependency (the redis extra)
        try:
            from .redis import RedisBus
        except ImportError:
            raise ValueError(
                "a redis:// bus needs the redis package: pip install 'interlingua[redis]'"
            ) from None
        return RedisBus(url)
    if scheme in ("local", "memory"):  # (with something after it, which it takes not)
        raise ValueError(f"{scheme}:// takes nothing after it, not {url!r}: use {scheme}://")
    shown = f"{scheme}://" if "://" in url else "a URL without a scheme"
    raise ValueError(f"unsupported bus URL ({shown}): use local:// or redis://host:port/db")
