"""Events an executor queues while a batch of its earlier ones is being written (the
store's write yields: a SQLite thread, a PostgreSQL round trip) are written once that
write ends, not left queued until something else writes the task. Real HTTP on
loopback, every store."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from interlingua import Agent, Client, Context, TaskState, get_text
from interlingua.core.model import ArtifactUpdate, Task
from tests.live import bind_loopback, live_server, url_of, working

pytestmark = pytest.mark.timeout(60)

#: set as the batch holding a task's artifact "first" begins its write (by task id)
_writing: dict[str, asyncio.Event] = {}


async def _speaks_while_writing(ctx: Context) -> None:
    writing = _writing[ctx.task_id] = asyncio.Event()
    await ctx.update("listening")
    async for message in ctx.incoming():
        if get_text(message) == "done":
            break
        await ctx.artifact("one", name="first")  # queued: a flusher writes it
        async with asyncio.timeout(10):
            await writing.wait()  # that write is under way
        await ctx.artifact("two", name="second")  # queued while it is
    await ctx.complete("bye")


AGENT = Agent("Speaker", "Speaks while its last words are written.", _speaks_while_writing,
              accepts_messages_while_working=True, streaming=True)


def _commit_begins(run: Any, events: Sequence[Any]) -> Any:
    writing = _writing.get(run.task.id)
    if writing is not None and any(type(e) is ArtifactUpdate and e.artifact.name == "first"
                                   for e in events):
        writing.set()
    return lambda error, result: None


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    from interlingua.host import create_app

    if request.param == "memory":
        store = "memory://"
    elif request.param == "sqlite":
        store = f"sqlite:///{tmp_path}/tasks.db"
    else:
        store = request.getfixturevalue("pg_clean_url")
    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store=store)
    app.state.hooks.commits.append(_commit_begins)
    with live_server(app, sock=sock) as served:
        yield served


def _names(task: Task) -> list[str | None]:
    return [a.name for a in task.artifacts]


async def test_an_event_queued_during_a_write_is_written_after_it(url: str) -> None:
    async with Client(url) as c:
        task = await working(c, "go")
        seen: list[str | None] = []
        second = asyncio.Event()

        async def follow() -> None:
            async for e in c.subscribe(task.id):
                if isinstance(e.item, ArtifactUpdate):
                    seen.append(e.item.artifact.name)
                    if e.item.artifact.name == "second":
                        second.set()

        follower = asyncio.create_task(follow())
        try:
            await asyncio.sleep(0.2)  # (the subscription is open)
            await c.send("speak", task_id=task.id, blocking=False)
            got = await c.get_task(task.id)
            for _ in range(100):  # 2 s at most; nothing else writes the task meanwhile
                if "second" in _names(got):
                    break
                await asyncio.sleep(0.02)
                got = await c.get_task(task.id)
            assert _names(got) == ["first", "second"], got.artifacts
            await asyncio.wait_for(second.wait(), 2)
            assert seen == ["first", "second"]
        finally:
            follower.cancel()
        done = await c.send("done", task_id=task.id)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
