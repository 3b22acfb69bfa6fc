"""Push notifications from three replicas: every dispatcher claims from one
outbox, so each event reaches the webhook once, in order per task."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from interlingua.core.model import HistoryAppended
from interlingua.stores import Scope
from interlingua.stores.postgres import PostgresStore

from ..push.helpers import Hook, serve_hook
from ..services import REDIS_HOST, REDIS_PORT, missing, new_name, reachable, with_option
from .replicas import Replica, call
from .sse_client import v1_message

PUSH = ("--push-allow-http", "--push-allow-private")


@pytest.fixture
def replicas(pg_database: str) -> Iterator[list[Replica]]:
    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    store = with_option(pg_database, f"schema={new_name('push')}")
    bus = f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name('push')}"
    group = [Replica(store, bus, extra=PUSH) for _ in range(3)]
    try:
        for r in group:
            r.start()
        yield group
    finally:
        for r in group:
            r.stop()


async def logged(store_url: str, task_ids: list[str]) -> dict[str, list[int]]:
    store = PostgresStore(store_url)
    await store.open()
    try:
        return {t: [e.seq for e in await store.read_events(Scope(), t)
                    if not isinstance(e.event, HistoryAppended)] for t in task_ids}
    finally:
        await store.close()


def test_each_event_is_pushed_once_although_three_replicas_dispatch(
        replicas: list[Replica]) -> None:
    hook = Hook()
    with serve_hook(hook) as hook_url:
        task_ids = []
        for n in range(9):
            r = replicas[n % 3]
            answer = call(r.url, "SendMessage", {
                "message": v1_message("story 10 0.01"),
                "configuration": {"taskPushNotificationConfig": {"url": hook_url + "/hook",
                                                                 "id": "h"}}})
            task_ids.append(answer["result"]["task"]["id"])
        expected = asyncio.run(logged(replicas[0].store, task_ids))
        deadline = time.monotonic() + 30
        while True:
            delivered = [r.nid.split(":") for r in hook.delivered()]
            arrived = {t: [int(seq) for task, _, seq in delivered if task == t]
                       for t in task_ids}
            if arrived == expected or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert arrived == expected
        time.sleep(0.5)  # nothing more comes: no delivery went out twice
        assert len(hook.delivered()) == sum(len(s) for s in expected.values())
