"""ListTasks on a real server on a SQLite store, over every binding that lists tasks:
each listed task is the task GetTask folds from its log (asked for input, answered,
canceled, finished), whatever the filter, historyLength or paging, and every binding
lists the same page."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import msgspec
import pytest

from interlingua import Agent, Context
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from tests.live import live_grpc_agent

from .drivers import DRIVERS, Driver

S = m.TaskState
LISTERS = [name for name, d in DRIVERS.items() if d.lists_tasks]


async def converse(ctx: Context) -> None:
    if ctx.text == "ask":
        await ctx.require_input("which one?")
    elif ctx.text == "wait":
        await ctx.update("working on it")
        await asyncio.sleep(30)
    else:
        await ctx.artifact(ctx.text, name="echo.txt")
        await ctx.complete(f"done: {ctx.text}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = f"sqlite:///{tmp_path_factory.mktemp('list')}/tasks.db"
    with live_grpc_agent(Agent("Lister", "Asks, waits, echoes.", converse),
                         store=store) as (url, _):
        yield url


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as cl:
        yield cl


def send(d: Driver, text: str, *, task: m.Task | None = None, blocking: bool = True) -> m.Task:
    msg = m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)],
                    task_id=None if task is None else task.id,
                    context_id=None if task is None else task.context_id)
    result = d.call(c.SendMessage(message=msg, config=c.SendConfig(blocking=blocking)))
    assert isinstance(result, m.Task)
    return result


@pytest.fixture(scope="module")
def tasks(server: str, client: httpx.Client) -> dict[str, m.Task]:
    d = DRIVERS["jsonrpc-1.0"](client, server)
    answered = send(d, "ask")
    assert answered.status.state is S.INPUT_REQUIRED
    answered = send(d, "this one", task=answered)
    assert answered.status.state is S.COMPLETED
    canceled = send(d, "wait", blocking=False)
    canceled = d.call(c.CancelTask(id=canceled.id))  # type: ignore[assignment]
    assert canceled.status.state is S.CANCELED
    done = send(d, "plain")
    waiting = send(d, "ask")
    return {"answered": answered, "canceled": canceled, "done": done, "waiting": waiting}


def queries(tasks: dict[str, m.Task]) -> list[c.ListTasks]:
    return [
        c.ListTasks(),
        c.ListTasks(history_length=1),
        c.ListTasks(history_length=0),
        c.ListTasks(history_length=2, include_artifacts=True),
        c.ListTasks(status=S.INPUT_REQUIRED),
        c.ListTasks(context_id=tasks["answered"].context_id),
    ]


def get(d: Driver, task_id: str, query: c.ListTasks) -> m.Task:
    task = d.call(c.GetTask(id=task_id, history_length=query.history_length))
    assert isinstance(task, m.Task)
    if not query.include_artifacts:
        task.artifacts = []
    return task


@pytest.mark.parametrize("kind", LISTERS)
def test_listed_tasks_are_the_folded_tasks(kind: str, server: str, client: httpx.Client,
                                           tasks: dict[str, m.Task]) -> None:
    d = DRIVERS[kind](client, server)
    reference = DRIVERS["jsonrpc-1.0"](client, server)
    answered = get(d, tasks["answered"].id, c.ListTasks())
    assert [h.role for h in answered.history] == [m.Role.USER, m.Role.AGENT] * 2
    for query in queries(tasks):
        page = d.call(query)
        assert isinstance(page, c.ListTasksResult)
        assert page.tasks, query
        for listed in page.tasks:
            assert listed == get(d, listed.id, query), query
        assert msgspec.to_builtins(page) == msgspec.to_builtins(reference.call(query)), query


@pytest.mark.parametrize("kind", LISTERS)
def test_paging_one_at_a_time_lists_every_task_once(
        kind: str, server: str, client: httpx.Client, tasks: dict[str, m.Task]) -> None:
    d = DRIVERS[kind](client, server)
    whole = d.call(c.ListTasks(page_size=100))
    assert isinstance(whole, c.ListTasksResult)
    assert {t.id for t in tasks.values()} <= {t.id for t in whole.tasks}
    seen: list[m.Task] = []
    token = None
    while True:
        page = d.call(c.ListTasks(page_size=1, page_token=token))
        assert isinstance(page, c.ListTasksResult)
        seen += page.tasks
        if not page.next_page_token:
            break
        token = page.next_page_token
    assert seen == whole.tasks


def test_the_json_bindings_answer_with_the_kept_listing(
        tmp_path: Path, client: httpx.Client) -> None:
    # The SQLite store keeps each task's listing in v1.0 JSON; the JSON-RPC and
    # HTTP+JSON answers are made from it, the gRPC one from the task. Changed by
    # hand here, it shows which is which.
    path = tmp_path / "tasks.db"
    with live_grpc_agent(Agent("Lister", "Echoes.", converse), store=f"sqlite:///{path}") as (
            url, _):
        done = send(DRIVERS["jsonrpc-1.0"](client, url), "plain")
        assert done.status.state is S.COMPLETED
        raw = sqlite3.connect(path)
        try:
            changed = raw.execute(
                "UPDATE tasks SET listed = CAST(replace(CAST(listed AS TEXT),"
                " 'TASK_STATE_COMPLETED', 'TASK_STATE_REJECTED') AS BLOB)").rowcount
            raw.commit()
        finally:
            raw.close()
        assert changed == 1
        states = {}
        for kind in ("jsonrpc-1.0", "rest-1.0", "grpc-1.0"):
            page = DRIVERS[kind](client, url).call(c.ListTasks())
            assert isinstance(page, c.ListTasksResult)
            states[kind] = [t.status.state for t in page.tasks]
    assert states == {"jsonrpc-1.0": [S.REJECTED], "rest-1.0": [S.REJECTED],
                      "grpc-1.0": [S.COMPLETED]}
