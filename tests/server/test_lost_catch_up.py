"""A turn's write that loses to another writer's, and whose catch-up then fails too
(the store out of reach for the read it makes): the batch is lost, the executor is
told at its next emit (a follow-up message's write that took its events fails that
message's caller too), and what the turn writes after is checked against the task
as stored, not as if the lost batch had been written. Real HTTP on loopback, every
store.

The other writer and the outage are played by a wrapper of the store: just before
the batch it picks out, it writes an artifact of its own (so the batch loses), and
it fails the read the catch-up then makes."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from interlingua import Agent, Client, Context, Task, TaskState, get_text
from interlingua.core.errors import ResourceUnavailable
from interlingua.core.model import Artifact, ArtifactUpdate, Event, StatusUpdate, TextPart
from interlingua.stores import open_store
from interlingua.stores.base import StoreUnavailable
from tests.live import live_agent, working

pytestmark = pytest.mark.timeout(60)

#: set by the test (the server runs on a thread of its own)
_go = threading.Event()
#: set by the test, for the executor's last step
_finish = threading.Event()
#: set by the store once a held write waits
_holding = threading.Event()
#: set by the executor once its second artifact is queued
_queued = threading.Event()
#: what the executor's emits raised, by its class's name
_told: list[str] = []


def _named(name: str) -> Callable[[Sequence[Event]], bool]:
    return lambda events: any(type(e) is ArtifactUpdate and e.artifact.name == name
                              for e in events)


def _completes(events: Sequence[Event]) -> bool:
    return any(type(e) is StatusUpdate and e.status.state is TaskState.COMPLETED
               for e in events)


class _LosesThenFails:
    """``inner``, whose write of the batch ``loses`` picks out loses to another
    process's artifact written just before it, the read that follows failing (once).
    A batch ``held`` picks out is written once a message for a task is next looked up
    (its sender then waits for the batch's write)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.loses: Callable[[Sequence[Event]], bool] = lambda events: False
        self.held: Callable[[Sequence[Event]], bool] = lambda events: False
        self._read_fails = False
        self._release = asyncio.Event()
        #: set once the read failed
        self.tripped = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def append(self, scope: Any, task_id: str, expected_version: int | None,
                     events: Any, **kw: Any) -> int:
        if self.held(events):
            _holding.set()
            await self._release.wait()
        if self.loses(events):
            self.loses = lambda events: False
            rec = await self._inner.get_task(scope, task_id)
            theirs = ArtifactUpdate(task_id, rec.task.context_id, Artifact(
                artifact_id="theirs", name="theirs", parts=[TextPart(text="theirs")]),
                generation=rec.task.generation + 1)
            await self._inner.append(scope, task_id, rec.version, [theirs], now=kw["now"])
            self._read_fails = True
        version: int = await self._inner.append(scope, task_id, expected_version, events, **kw)
        return version

    async def get_task(self, *args: Any, **kw: Any) -> Any:
        if self._read_fails:
            self._read_fails = False
            self.tripped.set()
            raise StoreUnavailable("out of reach")
        return await self._inner.get_task(*args, **kw)

    async def find_message(self, *args: Any, **kw: Any) -> Any:
        found = await self._inner.find_message(*args, **kw)
        # (the sender goes on to wait for the held write, with nothing awaited first)
        self._release.set()
        return found


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> _LosesThenFails:
    if request.param == "memory":
        url = "memory://"
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/tasks.db"
    else:
        url = request.getfixturevalue("pg_clean_url")
    return _LosesThenFails(open_store(url))


@contextlib.contextmanager
def _served(executor: Callable[[Context], Awaitable[None]],
            store: _LosesThenFails) -> Iterator[str]:
    for event in (_go, _finish, _holding, _queued):
        event.clear()
    _told.clear()
    agent = Agent("Worker", "Works when told.", executor,
                  accepts_messages_while_working=True)
    with live_agent(agent, store=store) as url:
        try:
            yield url
        finally:  # a turn left waiting goes on, and the server stops
            for event in (_go, _finish, _holding):
                event.set()


async def _ended(c: Client, task: Task) -> Task:
    got: Task = await c.get_task(task.id)
    for _ in range(300):
        if got.status.state is not TaskState.WORKING:
            break
        await asyncio.sleep(0.01)
        got = await c.get_task(task.id)
    return got


async def _completes_when_told(ctx: Context) -> None:
    await ctx.update("working")
    await asyncio.to_thread(_go.wait, 20)
    await ctx.complete("done")


async def test_a_completion_lost_with_its_catch_up_ends_the_task_failed(
        store: _LosesThenFails) -> None:
    # The executor is told (its emit raises the store's failure), and the turn ends
    # its task failed: checked against the task as stored (working), not refused as
    # a change from the completion that was lost.
    store.loses = _completes
    with _served(_completes_when_told, store) as url:
        async with Client(url) as c:
            task = await working(c, "go")
            _go.set()
            assert await asyncio.to_thread(store.tripped.wait, 10)
            got = await _ended(c, task)
    assert got.status.state is TaskState.FAILED, got.status
    assert got.status.message is not None and "task store" in get_text(got.status.message)
    assert [a.name for a in got.artifacts] == ["theirs"]  # the other writer's stands


async def _speaks_then_completes(ctx: Context) -> None:
    await ctx.update("working")
    await asyncio.to_thread(_go.wait, 20)
    await ctx.artifact("one", name="first")  # queued: its write is held
    await asyncio.to_thread(_holding.wait, 10)
    await ctx.artifact("two", name="second")  # queued meanwhile
    _queued.set()
    await asyncio.to_thread(_finish.wait, 20)
    try:
        await ctx.complete("done")
    except BaseException as exc:
        _told.append(type(exc).__name__)
        raise


async def test_events_lost_with_a_messages_catch_up_fail_the_executors_next_emit(
        store: _LosesThenFails) -> None:
    # A message sent while the executor's first artifact is written waits for that
    # write, then writes the second artifact (queued meanwhile) before itself: that
    # write loses and its catch-up fails. The message's sender is told; so is the
    # executor, at its next emit, and the task does not complete without the
    # artifact as if it had been written.
    store.held, store.loses = _named("first"), _named("second")
    with _served(_speaks_then_completes, store) as url:
        async with Client(url) as c:
            task = await working(c, "go")
            _go.set()
            assert await asyncio.to_thread(_queued.wait, 10)
            with pytest.raises(ResourceUnavailable):
                await c.send("more", task_id=task.id, blocking=False)
            assert store.tripped.is_set()
            _finish.set()
            got = await _ended(c, task)
    assert _told == ["StoreUnavailable"]
    assert got.status.state is TaskState.FAILED, got.status
    assert got.status.message is not None and "task store" in get_text(got.status.message)
    assert [a.name for a in got.artifacts] == ["first", "theirs"]
    assert [get_text(m) for m in got.history if m.role.value == "user"] == ["go"]
