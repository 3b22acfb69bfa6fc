"""A task store that keeps no push notifications: the ``TaskStore`` half of a store.

It wraps a memory store and lets through only the task store's calls, so a
test that reaches for the outbox fails with AttributeError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from interlingua.core.model import Event, PushConfig
from interlingua.stores import MemoryStore
from interlingua.stores.base import TaskStore

# the task store's own members and its ports' (tasks, leases, migrations)
TASK_STORE_CALLS = frozenset(
    name for port in TaskStore.__mro__ for name in vars(port)
    if not name.startswith("_") and name not in ("create_task",)
) | {"url"}


class TaskOnlyStore:
    def __init__(self) -> None:
        self._inner = MemoryStore("memory://")

    def __getattr__(self, name: str) -> Any:
        if name not in TASK_STORE_CALLS:
            raise AttributeError(f"a task-only store has no {name!r}")
        return getattr(self._inner, name)

    async def create_task(self, scope: Any, events: Sequence[Event], *, dialect: str, now: str,
                          message_id: str | None = None,
                          push_configs: Sequence[PushConfig] = (),
                          push_dialect: str | None = None, digest: bytes = b"",
                          lease: int | None = None, strict: bool = False,
                          looked_up: bool = False, other_found: Any = None) -> int:
        if push_configs:
            raise ValueError("this store keeps no push notifications")
        return await self._inner.create_task(scope, events, dialect=dialect, now=now,
                                             message_id=message_id, digest=digest, lease=lease,
                                             strict=strict, looked_up=looked_up,
                                             other_found=other_found)
