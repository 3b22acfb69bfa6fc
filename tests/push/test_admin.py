"""The CLI-ready functions: dead letters, redrive and counts from a store URL."""

from __future__ import annotations

from pathlib import Path

from interlingua.core.model import PushConfig, TaskCreated, TaskState, TaskStatus
from interlingua.core.model import Task as T
from interlingua.server.push import admin
from interlingua.stores import Scope, SQLiteStore

A = Scope("acme", "alice")


async def test_dead_letters_redrive_and_counts_by_store_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/tasks.db"
    async with SQLiteStore(url) as store:
        for tid in ("t-1", "t-2"):
            created = TaskCreated(T(id=tid, context_id="c", status=TaskStatus(TaskState.SUBMITTED)))
            await store.create_task(A, [created], dialect="1.0", now="2025-01-01T00:00:00.000Z",
                                    push_configs=[PushConfig(url="https://h.example/", id="c")])
        for d in await store.claim_deliveries(1.0, 2.0, 10):
            if d.task_id == "t-1":
                await store.delivery_failed(d.id, error="HTTP 410", attempted_at=1.0,
                                            retry_at=None)
    assert await admin.outbox_counts(url) == {"pending": 1, "dead": 1}
    [dead] = await admin.dead_letters(url)
    assert (dead.task_id, dead.config_id, dead.last_error) == ("t-1", "c", "HTTP 410")
    assert await admin.dead_letters(url, tenant="acme", owner="bob") == []
    assert [d.id for d in await admin.dead_letters(url, tenant="acme", owner="alice",
                                                   task_id="t-1")] == [dead.id]
    assert await admin.redrive(url, dead.id) is True
    assert await admin.redrive(url, dead.id) is False
    assert await admin.outbox_counts(url) == {"pending": 2, "dead": 0}
    assert admin.key_path_for(url) == tmp_path / "tasks.push-keys.json"
    assert admin.key_path_for("memory://") is None
