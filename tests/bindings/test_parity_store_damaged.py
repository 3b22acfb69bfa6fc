"""Rows of the store whose bytes no longer read back (overwritten where the database's
own checks do not look: a task's status, its log, a push config, a message's reply):
every read, and every write, that meets one is refused on every binding with its own
"unavailable" answer (503, ``UNAVAILABLE``) saying that the store is unavailable, alike
on SQLite and on PostgreSQL, not an internal error with a traceback for each request.
The rows are overwritten with SQL, in the store's own database."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from tests.live import bind_loopback, live_server, url_of
from tests.services import run_async

from .chunks_agent import write_chunks
from .drivers import DRIVERS, Driver, Refused
from .test_parity import PUSH, send
from .test_parity_drain import UNAVAILABLE


async def _work(ctx: Context) -> None:
    # "reply": a bare message; else as the parity tests' agent ("ask": input required)
    if ctx.text == "reply":
        await ctx.reply("a reply")
        return
    await write_chunks(ctx)


AGENT = Agent("Worker", "Replies, or asks.", _work, push_notifications=True)

#: the start of a JSON document, as each store's SQL writes those bytes
GARBLED = {"sqlite": "CAST('{\"kind\": ' AS BLOB)",
           "postgres": "convert_to('{\"kind\": ', 'UTF8')"}
#: the table holding a message's reply, in each store
REPLIES = {"sqlite": "message_replies", "postgres": "messages"}
GARBLE = ("UPDATE tasks SET status = {garbled}",
          "UPDATE events SET payload = {garbled}",
          "UPDATE push_configs SET config = {garbled}",
          "UPDATE {replies} SET reply = {garbled}")
#: what overwrites the rows named (SQL of GARBLE's kind)
Garbler = Callable[[Sequence[str]], None]
#: a task's own row only (its log reads back): what a write to the task decodes
GARBLE_TASK = ("UPDATE tasks SET status = {garbled}, history = {garbled}",)


def _garbling(store: str, statements: Sequence[str]) -> list[str]:
    return [s.format(garbled=GARBLED[store], replies=REPLIES[store]) for s in statements]


def _sqlite_garbler(path: Path) -> Garbler:
    def garble(statements: Sequence[str]) -> None:
        with sqlite3.connect(path) as plain:
            for statement in _garbling("sqlite", statements):
                plain.execute(statement)
        plain.close()
    return garble


def _postgres_garbler(url: str) -> Garbler:
    from interlingua.stores.postgres.schema import parse_postgres_url

    settings = parse_postgres_url(url)

    async def run(statements: Sequence[str]) -> None:
        import asyncpg

        conn = await asyncpg.connect(settings.dsn,
                                     server_settings={"search_path": settings.schema})
        try:
            for statement in _garbling("postgres", statements):
                await conn.execute(statement)
        finally:
            await conn.close()

    return lambda statements: run_async(lambda: run(statements))


@pytest.fixture(params=["sqlite", "postgres"])
def garbled_store(request: pytest.FixtureRequest,
                  tmp_path: Path) -> Iterator[tuple[str, Garbler]]:
    """A server (all bindings) on each kind of store: its URL, and what overwrites
    the store's rows."""
    from interlingua.bindings.grpc import add_grpc
    from interlingua.host import create_app

    if request.param == "sqlite":
        path = tmp_path / "tasks.db"
        store, garble = f"sqlite:///{path}", _sqlite_garbler(path)
    else:
        store = request.getfixturevalue("pg_url")
        garble = _postgres_garbler(store)
    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store=store, push=PUSH)
    add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        yield url, garble


def _waiting_task(d: Driver) -> m.Task:
    task = d.call(send("ask"))
    assert isinstance(task, m.Task) and task.status.state is m.TaskState.INPUT_REQUIRED
    return task


def _said_in_a_line(caplog: pytest.LogCaptureFixture) -> None:
    """The log says why the store was refused, in a line, with no traceback."""
    assert "is damaged: a stored row does not read back" in caplog.text, caplog.text
    assert not [r for r in caplog.records if r.exc_info], caplog.text


def _reads(d: Driver, task_id: str, reply: c.SendMessage) -> list[c.Call]:
    calls: list[c.Call] = [
        c.GetTask(id=task_id), c.GetTask(id=task_id, history_length=0),
        c.GetPushConfig(task_id=task_id, config_id="cfg-1"),
        c.ListPushConfigs(task_id=task_id), reply]
    if d.lists_tasks:  # (not the v1.0 JSON a SQLite row keeps: copied, never decoded)
        calls += [c.ListTasks(page_size=10, history_length=1),
                  c.ListTasks(page_size=10, include_artifacts=True)]
    return calls


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_a_row_that_does_not_read_back_is_refused_as_unavailable(
        kind: str, garbled_store: tuple[str, Garbler],
        caplog: pytest.LogCaptureFixture) -> None:
    url, garble = garbled_store
    with httpx.Client(timeout=30) as client:
        d = DRIVERS[kind](client, url)
        task = _waiting_task(d)
        d.call(c.SetPushConfig(task_id=task.id, config=m.PushConfig(
            url="http://127.0.0.1:9/hook", id="cfg-1")))
        reply = c.SendMessage(message=m.Message(message_id=new_id(), role=m.Role.USER,
                                                parts=[m.TextPart(text="reply")]))
        assert isinstance(d.call(reply), m.Message)
        garble(GARBLE)
        for call in _reads(d, task.id, reply):  # the reply's retry reads the reply
            with pytest.raises(Refused) as refused:
                d.call(call)
            assert (refused.value.status, refused.value.reason) == UNAVAILABLE[kind], call
            assert "store" in refused.value.message, refused.value.message
        with pytest.raises(Refused) as refused:  # the log's replay
            d.stream(c.SubscribeToTask(id=task.id))
        assert (refused.value.status, refused.value.reason) == UNAVAILABLE[kind]
    _said_in_a_line(caplog)


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_a_write_that_meets_a_row_that_does_not_read_back_is_refused_as_unavailable(
        kind: str, garbled_store: tuple[str, Garbler],
        caplog: pytest.LogCaptureFixture) -> None:
    url, garble = garbled_store
    with httpx.Client(timeout=30) as client:
        d = DRIVERS[kind](client, url)
        task = _waiting_task(d)
        garble(GARBLE_TASK)
        follow_up = m.Message(message_id=new_id(), role=m.Role.USER, task_id=task.id,
                              context_id=task.context_id, parts=[m.TextPart(text="2")])
        with pytest.raises(Refused) as refused:  # its append reads the kept history
            d.call(c.SendMessage(message=follow_up))
        assert (refused.value.status, refused.value.reason) == UNAVAILABLE[kind]
        assert "store" in refused.value.message, refused.value.message
        # A cancel's append reads only the row's state (the lifecycle checks) and the
        # log: it goes through, or, where the binding reads the row's status first
        # (v0.3 JSON-RPC, for the task's dialect), is refused as that read is.
        try:
            canceled = d.call(c.CancelTask(id=task.id))
        except Refused as exc:
            assert (exc.status, exc.reason) == UNAVAILABLE[kind]
        else:
            assert isinstance(canceled, m.Task)
            assert canceled.status.state is m.TaskState.CANCELED
    _said_in_a_line(caplog)
