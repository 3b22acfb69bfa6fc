"""Buses: how readers of a task's log hear that it grew."""

from __future__ import annotations

from .base import Bus, Subscription, task_key
from .local import LocalBus

__all__ = ["Bus", "LocalBus", "Subscription", "open_bus", "task_key"]


def open_bus(url: str = "local://") -> Bus:
    if url in ("local://", "memory://", ""):
        return LocalBus()
    raise ValueError(f"unsupported bus URL {url!r}: use local://")
