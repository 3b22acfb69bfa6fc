"""Push notifications from three replicas: every dispatcher claims from one
outbox, so each event reaches the webhook once, in order per task."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from interlingua.core.model import HistoryAppended
from interlingua.stores import Scope
from interlingua.stores.postgres import PostgresStore

from ..push.helpers import Hook, serve_hook
from ..services import REDIS_HOST, REDIS_PORT, missing, new_name, reachable, with_option
from .replicas import Replica, call, tally
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
            arrived = {t: [int(seq) for task, _, seq, _ in delivered if task == t]
                       for t in task_ids}
            if arrived == expected or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert arrived == expected
        time.sleep(0.5)  # nothing more comes: no delivery went out twice
        tally("push, 9 tasks, three dispatching replicas",
              [(t, seq) for t in task_ids for seq in expected[t]],
              [(task, int(seq)) for task, _, seq, _ in (r.nid.split(":") for r in hook.delivered())])
        assert len(hook.delivered()) == sum(len(s) for s in expected.values())


def _kid(signature: str) -> str:
    import base64
    import json

    head = signature.split(".")[0]
    return str(json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["kid"])


def _signing_key(path: Path) -> Path:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return path


def test_a_replica_killed_mid_delivery_loses_no_delivery(
        pg_database: str, tmp_path: Path) -> None:
    if not reachable(REDIS_HOST, REDIS_PORT):
        missing("Redis on 127.0.0.1:6379")
    store = with_option(pg_database, f"schema={new_name('push')}")
    bus = f"redis://{REDIS_HOST}:{REDIS_PORT}/0?prefix={new_name('push')}"
    key = _signing_key(tmp_path / "push-key.pem")
    extra = (*PUSH, "--push-signing-key", str(key), "--push-claim-seconds", "3")
    group = [Replica(store, bus, extra=extra) for _ in range(3)]
    hook = Hook()
    try:
        for r in group:
            r.start()
        # one signing key: every replica serves the same JWKS
        jwks = [httpx.get(r.url + "/.well-known/jwks.json", timeout=5).json() for r in group]
        assert jwks[0]["keys"] and jwks[0] == jwks[1] == jwks[2]
        with serve_hook(hook) as hook_url:
            hook.gate.clear()  # deliveries are taken, then held in flight
            task_ids = []
            for n in range(6):
                answer = call(group[n % 3].url, "SendMessage", {
                    "message": v1_message("story 3 0.01"),
                    "configuration": {"taskPushNotificationConfig": {
                        "url": hook_url + "/hook", "id": "h"}}})
                task_ids.append(answer["result"]["task"]["id"])
            # a delivery of each task taken and held in flight (or a second at most)
            deadline = time.monotonic() + 1.0
            while hook.held < len(task_ids) and time.monotonic() < deadline:
                time.sleep(0.01)
            group[0].kill()  # with whatever it had claimed
            hook.gate.set()
            expected = asyncio.run(logged(store, task_ids))
            deadline = time.monotonic() + 30
            while True:
                delivered = [r.nid.split(":") for r in hook.delivered()]
                arrived = {t: sorted({int(seq) for task, _, seq, _ in delivered if task == t})
                           for t in task_ids}
                if arrived == expected or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert arrived == expected  # every event's delivery arrived
            kids = {_kid(r.headers["x-a2a-signature"]) for r in hook.delivered()}
            assert kids == {key["kid"] for key in jwks[0]["keys"]}  # the one shared key
    finally:
        for r in group:
            r.stop()
