"""Deliveries queued while the receiver is down survive a crash of the server (SQLite)."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any

import httpx

from interlingua.core.model import HistoryAppended
from interlingua.server.push.admin import outbox_counts
from interlingua.stores import Scope, SQLiteStore
from tests.e2e.procs import Process, free_port
from tests.live import live_server

from .helpers import Hook, until


class PushServer(Process):
    def __init__(self, store: str) -> None:
        super().__init__()
        self.store = store

    def start(self) -> PushServer:
        self.launch([sys.executable, "-m", "tests.push.push_server", "--store", self.store,
                     "--port", str(self.port)])
        self.wait_ready()
        return self


def rpc(url: str, method: str, params: dict[str, Any], v1: bool = False) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"A2A-Version": "1.0"} if v1 else {}
    doc = httpx.post(url + "/", json=body, headers=headers, timeout=10).json()
    assert "result" in doc, doc
    return doc["result"]


async def owed(store_url: str, task_id: str, whole_task: bool) -> list[int]:
    """The seqs a config of the task is owed: every stream event (v1.0) or the last one."""
    store = SQLiteStore(store_url)
    await store.open()
    try:
        events = await store.read_events(Scope(), task_id)
    finally:
        await store.close()
    seqs = [e.seq for e in events if not isinstance(e.event, HistoryAppended)]
    return seqs[-1:] if whole_task else seqs


async def test_queued_deliveries_are_sent_after_a_crash_and_restart(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    hook_port = free_port()  # nothing listens there yet: every delivery fails
    hook_url = f"http://127.0.0.1:{hook_port}"
    server = PushServer(store).start()
    try:
        v1 = rpc(server.url, "SendMessage", {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "fast"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook_url + "/v1",
                                                             "id": "v1"}}}, v1=True)["task"]
        v03 = rpc(server.url, "message/send", {
            "message": {"kind": "message", "messageId": "m-2", "role": "user",
                        "parts": [{"kind": "text", "text": "fast"}]},
            "configuration": {"pushNotificationConfig": {"url": hook_url + "/v03", "id": "v03"}}})
        slow = rpc(server.url, "SendMessage", {
            "message": {"messageId": "m-3", "role": "ROLE_USER", "parts": [{"text": "slow"}]},
            "configuration": {"returnImmediately": True, "taskPushNotificationConfig": {
                "url": hook_url + "/slow", "id": "slow"}}}, v1=True)["task"]
        assert v1["status"]["state"] == "TASK_STATE_COMPLETED"
        assert v03["status"]["state"] == "completed"
        await asyncio.sleep(0.5)  # a few failed attempts against the closed port
        assert (await outbox_counts(store))["pending"] >= 3
        server.kill()  # a crash: no shutdown code runs

        server = PushServer(store).start()  # the receiver is still down
        await asyncio.sleep(0.5)
        assert (await outbox_counts(store))["pending"] >= 3

        hook = Hook()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", hook_port))
        with live_server(hook, sock=sock):
            expected = {
                "/v1": await owed(store, v1["id"], whole_task=False),
                "/v03": await owed(store, v03["id"], whole_task=True),
                "/slow": await owed(store, slow["id"], whole_task=False),
            }

            def arrived() -> dict[str, list[int]]:
                return {path: [r.seq for r in hook.delivered() if r.path == path]
                        for path in expected}

            await until(lambda: arrived() == expected, timeout=30)
        # the slow task was failed by the restart, and that was pushed too
        last = [r for r in hook.delivered() if r.path == "/slow"][-1].json()
        assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
        # the sender marks a delivery done once the receiver's answer is in, just after
        # the receiver has it: waited for, not raced
        for _ in range(500):
            counts = await outbox_counts(store)
            if counts == {"pending": 0, "dead": 0}:
                break
            await asyncio.sleep(0.01)
        assert counts == {"pending": 0, "dead": 0}
    finally:
        server.stop()


async def test_a_delivery_in_flight_at_a_crash_goes_on_at_a_restart_before_the_dead_is_reaped(
        tmp_path: Path) -> None:
    """A server killed while a webhook call is in flight, and started again at once,
    before its parent has reaped the dead process (a zombie still has its number):
    the dead holds no lease, and its claim is released at the start, not left to
    lapse (the claim lease, two minutes here: the queue stood still that long)."""
    import os
    import signal

    store = f"sqlite:///{tmp_path}/tasks.db"
    hook = Hook()
    hook.gate.clear()  # every call held: the first one stays in flight
    server = PushServer(store).start()
    dead = server.proc
    try:
        with live_server(hook) as hook_url:
            task = rpc(server.url, "SendMessage", {
                "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "fast"}]},
                "configuration": {"taskPushNotificationConfig": {"url": hook_url + "/v1",
                                                                 "id": "v1"}}}, v1=True)["task"]
            await until(lambda: hook.held >= 1, timeout=10)
            assert dead is not None
            os.kill(dead.pid, signal.SIGKILL)  # and not waited for: a zombie

            def state() -> str:
                with open(f"/proc/{dead.pid}/stat", "rb") as f:
                    return f.read().rsplit(b")", 1)[1].split()[0].decode()

            await until(lambda: state() == "Z", timeout=10)
            hook.gate.set()
            server = PushServer(store).start()
            expected = await owed(store, task["id"], whole_task=False)
            await until(lambda: sorted({r.seq for r in hook.delivered()}) == expected,
                        timeout=20)
    finally:
        hook.gate.set()
        server.stop()
        if dead is not None:
            dead.wait(10)
