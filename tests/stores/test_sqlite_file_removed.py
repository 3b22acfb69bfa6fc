"""A SQLite store whose file is removed (or replaced) while the server runs: SQLite
would go on writing to the file it has open, which nobody opens again, and every task
written after that would be gone at the next start. The store sees it at its next
lease heartbeat: from then on a send is told the store is unavailable (503), and
``/healthz`` leaves the rotation once the lease timeout has passed. Real HTTP on
loopback."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import httpx
import pytest

from interlingua import Agent, Context
from tests.live import bind_loopback, live_server, url_of

HEADERS = {"A2A-Version": "1.0"}


async def _echo(ctx: Context) -> None:
    await ctx.complete("ok")


def _send(client: httpx.Client, url: str) -> httpx.Response:
    return client.post(url + "/message:send", headers=HEADERS, json={"message": {
        "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}})


def test_a_removed_file_refuses_the_writes_it_would_lose(tmp_path: Path) -> None:
    from interlingua.host import create_app
    from interlingua.server import EngineConfig

    folder = tmp_path / "store"
    folder.mkdir()
    sock = bind_loopback()
    app = create_app(Agent("Echo", "Says ok.", _echo), public_url=url_of(sock),
                     store=f"sqlite:///{folder}/tasks.db",
                     engine_config=EngineConfig(lease_interval=0.2, lease_timeout=2.0))
    with live_server(app, sock=sock) as url, httpx.Client(timeout=10) as client:
        assert _send(client, url).status_code == 200
        for f in folder.iterdir():
            f.unlink()
        deadline = time.monotonic() + 5
        while (r := _send(client, url)).status_code == 200:
            assert time.monotonic() < deadline, "sends were still taken into a removed file"
            time.sleep(0.05)
        assert r.status_code == 503 and r.headers["retry-after"], r.text
        deadline = time.monotonic() + 8
        while (h := client.get(url + "/healthz")).status_code == 200:
            assert time.monotonic() < deadline, h.text
            time.sleep(0.1)
        assert h.json()["status"] == "store_unreachable", h.text


async def test_a_stat_that_fails_otherwise_refuses_nothing(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A look at the file that the system cannot answer (a permission, a stale network
    handle) tells nothing: writes go on, and a later look still sees a removal (one
    such failure refused every write until the server restarted)."""
    from interlingua.stores import SQLiteStore
    from interlingua.stores.base import StoreUnavailable
    from interlingua.stores.sqlite import store as sqlite_store

    path = tmp_path / "tasks.db"
    async with SQLiteStore(f"sqlite:///{path}") as store:
        real = sqlite_store.os.stat

        def denied(*args: object, **kwargs: object) -> os.stat_result:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(sqlite_store.os, "stat", denied)
        assert await store.renew_lease((await store.acquire_lease("h:1", 1.0)).epoch, 2.0)
        monkeypatch.setattr(sqlite_store.os, "stat", real)
        epoch = (await store.acquire_lease("h:2", 3.0)).epoch
        assert await store.renew_lease(epoch, 4.0)
        path.unlink()
        with pytest.raises(StoreUnavailable):
            await store.renew_lease(epoch, 5.0)
