"""A turn that writes while its store (PostgreSQL, through a TCP proxy the test cuts)
is out of reach: a short outage is ridden through, the write tried again on a new
connection, nothing lost or written twice; a longer one fails the task, and a
blocking caller is answered with the failed task once the store is back, never with
one still working. Real HTTP on loopback, JSON-RPC and HTTP+JSON."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from tests.live import bind_loopback, live_server, url_of
from tests.services import PG_PORT
from tests.tcp_proxy import TcpProxy

pytestmark = pytest.mark.timeout(90)

CHUNKS = 12
V1 = {"A2A-Version": "1.0"}


def _chunks_every(pause: float) -> Callable[[Context], Awaitable[None]]:
    """An executor writing CHUNKS chunks of one artifact, ``pause`` s apart."""
    async def chunks(ctx: Context) -> None:
        aid = None
        for i in range(CHUNKS):
            aid = await ctx.artifact(f"{i};", artifact_id=aid, append=aid is not None,
                                     last_chunk=i == CHUNKS - 1, name="chunks")
            await asyncio.sleep(pause)
        await ctx.complete("done")

    return chunks


AGENT = Agent("Chunks", "Writes a chunk every 0.3 s.", _chunks_every(0.3))


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    with TcpProxy(PG_PORT) as p:
        yield p


def _serve(pg_url: str, proxy: TcpProxy, lease_timeout: float) -> Any:
    from interlingua.host import create_app
    from interlingua.server import EngineConfig

    sock = bind_loopback()
    store = pg_url.replace(f":{PG_PORT}/", f":{proxy.port}/", 1) + "&command_timeout=1"
    app = create_app(AGENT, public_url=url_of(sock), store=store,
                     engine_config=EngineConfig(lease_interval=0.2,
                                                lease_timeout=lease_timeout))
    return live_server(app, sock=sock, allow_errors=True)


def _message() -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "go"}]}


def _json_rpc(url: str) -> dict[str, Any]:
    r = httpx.post(url + "/", headers=V1, timeout=60, json={
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": _message()}})
    assert r.status_code == 200, r.text
    task: dict[str, Any] = r.json()["result"]["task"]
    return task


def _rest(url: str) -> dict[str, Any]:
    r = httpx.post(url + "/message:send", headers=V1, timeout=60, json={"message": _message()})
    assert r.status_code == 200, r.text
    task: dict[str, Any] = r.json()["task"]
    return task


def _blocking(send: Callable[[str], dict[str, Any]], url: str,
              answers: dict[str, Any], name: str) -> threading.Thread:
    def run() -> None:
        answers[name] = send(url)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _text(task: dict[str, Any]) -> str:
    return "".join(p["text"] for a in task.get("artifacts", []) for p in a["parts"])


def test_a_short_outage_mid_turn_is_ridden_through(pg_url: str, proxy: TcpProxy) -> None:
    """Before: any write the store failed, even for 50 ms, failed the task ("The task
    store failed a write of the task")."""
    with _serve(pg_url, proxy, lease_timeout=5.0) as url:
        answers: dict[str, Any] = {}
        senders = [_blocking(send, url, answers, name)
                   for send, name in ((_json_rpc, "jsonrpc"), (_rest, "rest"))]
        time.sleep(1.5)
        proxy.cut()
        time.sleep(1.0)
        proxy.restore()
        for sender in senders:
            sender.join(30)
    expected = "".join(f"{i};" for i in range(CHUNKS))
    for name in ("jsonrpc", "rest"):
        task = answers[name]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", (name, task["status"])
        assert _text(task) == expected, (name, _text(task))  # every chunk, once


def test_a_blocking_send_whose_turn_the_store_failed_waits_for_its_end(
        pg_url: str, proxy: TcpProxy) -> None:
    """An outage longer than the turn's writes are tried again for (the lease timeout):
    the task fails, and is written failed once the store is back. Before: the blocking
    caller was answered at once with the task still working."""
    with _serve(pg_url, proxy, lease_timeout=1.0) as url:
        answers: dict[str, Any] = {}
        senders = [_blocking(send, url, answers, name)
                   for send, name in ((_json_rpc, "jsonrpc"), (_rest, "rest"))]
        time.sleep(1.5)
        proxy.cut()
        time.sleep(4.0)
        assert answers == {}, answers  # still waiting, the store out of reach
        proxy.restore()
        for sender in senders:
            sender.join(30)
    for name in ("jsonrpc", "rest"):
        task = answers[name]
        assert task["status"]["state"] == "TASK_STATE_FAILED", (name, task["status"])


class LostAnswers:
    """A store whose appends are in turn: committed, then said to have failed (the
    connection lost with the commit's answer); failed before they are made; made:
    what a write tried again must tell apart."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.writes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def append(self, *args: Any, **kw: Any) -> int:
        from interlingua.stores.base import StoreUnavailable

        self.writes += 1
        if self.writes % 3 == 2:
            raise StoreUnavailable("lost before the write")
        version: int = await self._inner.append(*args, **kw)
        if self.writes % 3 == 1:
            raise StoreUnavailable("lost with the commit's answer")
        return version


async def test_a_write_tried_again_is_not_written_twice(shared_store_url: str) -> None:
    from interlingua.bus import LocalBus
    from interlingua.core.calls import SendMessage
    from interlingua.core.model import Message, Role, Task, TaskState, TextPart
    from interlingua.core.parts import new_id
    from interlingua.server import Engine, RequestInfo
    from interlingua.stores import open_store

    store = LostAnswers(open_store(shared_store_url))
    engine = Engine(Agent("t", "t", _chunks_every(0.01)), store, LocalBus())  # type: ignore[arg-type]
    await engine.start()
    try:
        sent = Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text="go")])
        task = await engine.send(SendMessage(message=sent), RequestInfo(principal="p"))
    finally:
        await engine.stop()
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED, task.status
    assert store.writes >= 4  # two appends committed, their answers lost
    assert _text({"artifacts": [{"parts": [{"text": p.text} for p in a.parts]}
                                for a in task.artifacts]}) == "".join(
        f"{i};" for i in range(CHUNKS))  # every chunk, once


async def test_a_batch_is_found_committed_whatever_json_makes_of_its_values(
        shared_store_url: str) -> None:
    """A value JSON does not keep as it was (a tuple reads back a list, a datetime a
    string) is the same write, as stored: the check before a write is tried again
    finds it, and the batch is not written twice (it read as another batch)."""
    from datetime import UTC, datetime

    from interlingua.bus import LocalBus
    from interlingua.core.model import Artifact, ArtifactUpdate, DataPart
    from interlingua.server import RequestInfo
    from interlingua.server.run import Run, Writer
    from interlingua.stores import open_store
    from interlingua.stores.base import Scope
    from tests.stores.builders import created, ts

    async with open_store(shared_store_url) as store:
        scope = Scope(owner="p")
        version = await store.create_task(scope, [created("t-1")], dialect="1.0", now=ts(0))
        odd = {"pair": (1, 2), "at": datetime(2026, 1, 1, tzinfo=UTC), "tags": ["x"]}
        batch = [ArtifactUpdate("t-1", "ctx-1", Artifact(
            artifact_id="a", parts=[DataPart(data=odd)]))]
        await store.append(scope, "t-1", version, batch, now=ts(1))
        writer = Writer(store, LocalBus(), lease=lambda: None)
        rec = await store.get_task(scope, "t-1")
        assert rec is not None
        run = Run(writer, scope, rec.task, version=version, persisted=True, dialect="1.0",
                  request=RequestInfo(principal="p"))
        assert await writer._committed(run, version, batch)


class Refusing:
    """A store whose appends fail as an unreachable store's do, once ``down`` is set."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.down = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def append(self, *args: Any, **kw: Any) -> int:
        from interlingua.stores.base import StoreUnavailable

        if self.down:
            raise StoreUnavailable("out of reach")
        version: int = await self._inner.append(*args, **kw)
        return version


async def test_a_stop_is_not_held_for_an_outage(shared_store_url: str) -> None:
    """Writes a turn makes ride out an outage; the last ones a stopping server makes do
    not: with the store out of reach, the stop does not wait the outage grace (it
    waited it once per running turn)."""
    from interlingua.bus import LocalBus
    from interlingua.core.calls import SendConfig, SendMessage
    from interlingua.core.model import Message, Role, Task, TextPart
    from interlingua.core.parts import new_id
    from interlingua.server import Engine, RequestInfo
    from interlingua.stores import open_store

    go_on = asyncio.Event()

    async def waits(ctx: Context) -> None:
        await ctx.update("working")
        await go_on.wait()

    store = Refusing(open_store(shared_store_url))
    engine = Engine(Agent("t", "t", waits), store, LocalBus())  # type: ignore[arg-type]
    engine.writer.outage_grace = 60.0
    await engine.start()
    loop = asyncio.get_running_loop()
    try:
        who = RequestInfo(principal="p")
        for _ in range(3):
            sent = Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text="go")])
            task = await engine.send(
                SendMessage(message=sent, config=SendConfig(blocking=False)), who)
            assert isinstance(task, Task)
        await asyncio.sleep(0.2)
        store.down = True
    finally:
        began = loop.time()
        await engine.stop()
        go_on.set()
    assert loop.time() - began < 10, "the stop waited out the outage"
