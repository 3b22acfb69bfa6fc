"""A turn whose writes the store fails (a SQLite file held by another process past
its busy_timeout, and past the time a failed write is tried again for): its task is
not left working for good. It is ended failed, at
once if the store takes that write, else at a heartbeat once the store is back,
unless another process wrote the task meanwhile. Real HTTP on loopback, a real file."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from tests.live import bind_loopback, live_server, url_of
from tests.stores.locks import write_locked, write_locked_for

#: the agent's next step waits for this (set by the test)
_go_on = threading.Event()
#: the server's event loop, as the agent last saw it
_loop: list[asyncio.AbstractEventLoop] = []


async def _two_steps(ctx: Context) -> None:
    _loop[:] = [asyncio.get_running_loop()]
    await ctx.update("step one")  # written: the task is working
    await asyncio.to_thread(_go_on.wait, 20)
    await ctx.complete("done")


AGENT = Agent("Steps", "Works in two steps.", _two_steps)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    from interlingua.host import create_app
    from interlingua.server import EngineConfig

    path = tmp_path / "tasks.db"
    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store=f"sqlite:///{path}?busy_timeout=100",
                     engine_config=EngineConfig(lease_interval=0.2, lease_timeout=5.0))
    # a failed write is tried again for this long (the lease timeout's 5 s otherwise)
    app.state.engine.writer.outage_grace = 0.3
    _go_on.clear()
    with live_server(app, sock=sock) as url:
        yield url, path
    _go_on.set()


def _rpc(client: httpx.Client, url: str, method: str, params: dict[str, Any]) -> Any:
    answer = client.post(url + "/", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                          "params": params},
                         headers={"A2A-Version": "1.0"}).json()
    assert "result" in answer, answer
    return answer["result"]


def _task(client: httpx.Client, url: str, task_id: str) -> dict[str, Any]:
    return _rpc(client, url, "GetTask", {"id": task_id})  # type: ignore[no-any-return]


def _state_after(client: httpx.Client, url: str, task_id: str, seconds: float,
                 until: str) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    task = _task(client, url, task_id)
    while task["status"]["state"] != until and time.monotonic() < deadline:
        time.sleep(0.05)
        task = _task(client, url, task_id)
    return task


def test_a_task_whose_turn_the_store_failed_ends_failed_once_the_store_is_back(
        served: tuple[str, Path]) -> None:
    url, path = served
    with httpx.Client(timeout=30) as client:
        task = _rpc(client, url, "SendMessage", {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "go"}]},
            "configuration": {"returnImmediately": True}})["task"]
        working = _state_after(client, url, task["id"], 10, "TASK_STATE_WORKING")
        assert working["status"]["state"] == "TASK_STATE_WORKING"
        with write_locked(path):  # another process writing
            _go_on.set()  # the agent completes: its write, and the failed one, time out
            time.sleep(2.0)  # a few heartbeats, all failing too
        # still working as last written; ended at a heartbeat once the store is back
        ended = _state_after(client, url, task["id"], 10, "TASK_STATE_FAILED")
    assert ended["status"]["state"] == "TASK_STATE_FAILED"
    said = ended["status"]["message"]["parts"][0]["text"]
    assert "task store" in said


def test_the_server_answers_while_a_send_waits_for_another_process_to_let_go(
        tmp_path: Path) -> None:
    from interlingua.host import create_app

    echo = Agent("Echo", "Says it back.", lambda ctx: ctx.complete(ctx.text))
    path = tmp_path / "tasks.db"
    sock = bind_loopback()
    app = create_app(echo, public_url=url_of(sock), store=f"sqlite:///{path}?busy_timeout=5000")
    answers: list[Any] = []
    with live_server(app, sock=sock) as url, httpx.Client(timeout=30) as client:

        def send() -> None:
            with httpx.Client(timeout=30) as own:
                answers.append(_rpc(own, url, "SendMessage", {"message": {
                    "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}))

        # another process holds the write lock for a second (within busy_timeout)
        with write_locked_for(path, 1.0) as released:
            sending = threading.Thread(target=send)
            sending.start()
            try:
                time.sleep(0.2)  # the send is waiting for the lock by now
                card = client.get(url + "/.well-known/agent-card.json")
                assert card.status_code == 200
                assert not released.is_set()  # answered while the send still waited
            finally:
                sending.join()
    assert answers[0]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_stranded_task_that_moved_on_meanwhile_is_left_as_it_is(tmp_path: Path) -> None:
    from interlingua.core.model import TaskState
    from interlingua.host import create_app
    from interlingua.server import EngineConfig
    from interlingua.stores import SQLiteStore
    from tests.stores.builders import status, ts
    path = tmp_path / "tasks.db"
    sock = bind_loopback()
    # no heartbeat during the test: the recovery's look is made by the test
    app = create_app(AGENT, public_url=url_of(sock), store=f"sqlite:///{path}?busy_timeout=100",
                     engine_config=EngineConfig(lease_interval=60, lease_timeout=120))
    engine = app.state.engine
    engine.writer.outage_grace = 0.3  # (not the lease timeout's 120 s)
    _go_on.clear()
    with live_server(app, sock=sock) as url, httpx.Client(timeout=30) as client:
        task = _rpc(client, url, "SendMessage", {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "go"}]},
            "configuration": {"returnImmediately": True}})["task"]
        assert _state_after(client, url, task["id"], 10, "TASK_STATE_WORKING")[
            "status"]["state"] == "TASK_STATE_WORKING"
        with write_locked(path):
            _go_on.set()  # its writes fail: the run is kept, to end its task later
            deadline = time.monotonic() + 10
            while task["id"] not in str(list(engine.runs.stranded)) \
                    and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(engine.runs.stranded) == 1

        async def move_on() -> None:  # another process writes the task meanwhile
            async with SQLiteStore(f"sqlite:///{path}") as other:
                (item,) = await other.unfinished_tasks()
                # (under its own lease, as a process's turn writes)
                lease = (await other.acquire_lease("other:1", time.time())).epoch
                await other.append(item.scope, item.task_id, item.version,
                                   [status(item.task_id, TaskState.WORKING, ts(9),
                                           item.context_id)], now=ts(9), lease=lease)

        asyncio.run(move_on())
        asyncio.run_coroutine_threadsafe(engine.recovery.end_stranded(), _loop[0]).result(10)
        assert engine.runs.stranded == {}  # let go of: the task is another's now...
        # ...and not ended failed
        assert _task(client, url, task["id"])["status"]["state"] == "TASK_STATE_WORKING"
