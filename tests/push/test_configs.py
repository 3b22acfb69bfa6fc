"""Push config calls in the engine: capability, scope, ids, dialect, limits."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from interlingua import Agent, Context
from interlingua.core.calls import (
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    SendMessage,
    SetPushConfig,
)
from interlingua.core.errors import InvalidParams, PushNotSupported, TaskNotFound
from interlingua.core.model import PushConfig, Task
from interlingua.core.parts import user_message
from interlingua.server import Engine, RequestInfo
from interlingua.stores import Scope

from .helpers import dev_settings, echo, send, start_engine

ALICE = RequestInfo(principal="alice", dialect="1.0")
BOB = RequestInfo(principal="bob", dialect="1.0")
URL = "http://127.0.0.1:9/hook"


@pytest.fixture(params=["memory", "sqlite"])
async def engine(request: pytest.FixtureRequest, tmp_path: object) -> AsyncIterator[Engine]:
    store = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/t.db"
    e = await start_engine(echo, dev_settings(max_configs_per_task=3, dispatch=False), store)
    try:
        yield e
    finally:
        await e.stop()


async def task_of(engine: Engine, req: RequestInfo = ALICE) -> str:
    task = await engine.handle(SendMessage(message=user_message("hi")), req)
    assert isinstance(task, Task)
    return task.id


def set_call(task_id: str, config_id: str | None = None, url: str = URL) -> SetPushConfig:
    return SetPushConfig(task_id=task_id, config=PushConfig(url=url, id=config_id))


async def test_configs_get_ids_and_keep_their_dialect(engine: Engine) -> None:
    tid = await task_of(engine)
    made = await engine.handle(set_call(tid), ALICE)
    named = await engine.handle(set_call(tid, "mine"), RequestInfo(principal="alice",
                                                                    dialect="0.3"))
    assert isinstance(made, PushConfig) and made.id and made.task_id == tid
    assert isinstance(named, PushConfig) and named.id == "mine"
    listed = await engine.handle(ListPushConfigs(task_id=tid), ALICE)
    assert [c.id for c in listed] == [made.id, "mine"]  # type: ignore[union-attr]
    records = await engine.store.list_push_configs(Scope(owner="alice"), tid)
    assert [r.dialect for r in records] == ["1.0", "0.3"]
    got = await engine.handle(GetPushConfig(task_id=tid, config_id="mine"), ALICE)
    assert got == named
    # without an id: the task's first config
    assert await engine.handle(GetPushConfig(task_id=tid), ALICE) == made
    assert await engine.handle(DeletePushConfig(task_id=tid, config_id="mine"), ALICE) is None
    assert await engine.handle(DeletePushConfig(task_id=tid, config_id="mine"), ALICE) is None
    with pytest.raises(TaskNotFound, match="no push notification config with id 'mine'"):
        await engine.handle(GetPushConfig(task_id=tid, config_id="mine"), ALICE)


async def test_a_v01_config_is_the_tasks_one_config(engine: Engine) -> None:
    v01 = RequestInfo(principal="alice", dialect="0.1")
    await engine.handle(send("x", URL, client_task_id="task-1"), v01)
    first = await engine.handle(GetPushConfig(task_id="task-1"), v01)
    assert isinstance(first, PushConfig) and first.id == "task-1"
    # setting it again replaces it (v0.1 knows one config per task)
    await engine.handle(set_call("task-1", url="http://127.0.0.1:9/other"), v01)
    listed = await engine.handle(ListPushConfigs(task_id="task-1"), v01)
    assert [(c.id, c.url) for c in listed] == [  # type: ignore[union-attr]
        ("task-1", "http://127.0.0.1:9/other")]


async def test_another_scopes_task_is_not_found(engine: Engine) -> None:
    tid = await task_of(engine, ALICE)
    await engine.handle(set_call(tid, "c"), ALICE)
    for call in [set_call(tid), GetPushConfig(task_id=tid), ListPushConfigs(task_id=tid),
                 DeletePushConfig(task_id=tid, config_id="c"),
                 GetPushConfig(task_id=tid, config_id="c")]:
        with pytest.raises(TaskNotFound):
            await engine.handle(call, BOB)
    with pytest.raises(TaskNotFound):
        await engine.handle(set_call("no-such-task"), ALICE)
    assert len(await engine.handle(ListPushConfigs(task_id=tid), ALICE)) == 1  # type: ignore[arg-type]


async def test_a_config_in_a_send_is_registered_with_the_task(engine: Engine) -> None:
    task = await engine.handle(send("x", URL, token="t0k", config_id="from-send"), ALICE)
    assert isinstance(task, Task)
    [config] = await engine.handle(ListPushConfigs(task_id=task.id), ALICE)  # type: ignore[misc]
    assert (config.id, config.token) == ("from-send", "t0k")


async def test_the_number_of_configs_is_limited(engine: Engine) -> None:
    tid = await task_of(engine)
    for i in range(3):
        await engine.handle(set_call(tid, f"c{i}"), ALICE)
    with pytest.raises(InvalidParams, match="limit"):
        await engine.handle(set_call(tid, "c3"), ALICE)
    await engine.handle(set_call(tid, "c1", url="http://127.0.0.1:9/new"), ALICE)  # replacing


async def _asks(ctx: Context) -> None:
    await ctx.require_input("more?")


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_a_send_to_a_task_is_held_to_the_number_of_configs_too(
        store: str, tmp_path: object) -> None:
    """A reply that carries a push config adds it as a set would, within the limit:
    each reply added one more, with no bound (every event then went to all of them)."""
    asks = Agent("Asks", "Asks for more.", _asks, push_notifications=True)
    url = "memory://" if store == "memory" else f"sqlite:///{tmp_path}/t.db"
    engine = await start_engine(asks, dev_settings(max_configs_per_task=3, dispatch=False), url)
    try:
        first = await engine.handle(SendMessage(message=user_message("hi")), ALICE)
        assert isinstance(first, Task)
        for i in range(3):
            await engine.handle(set_call(first.id, f"c{i}"), ALICE)

        def reply(config_id: str) -> SendMessage:
            call = send("more", URL, config_id=config_id)
            call.message.task_id = first.id
            return call

        with pytest.raises(InvalidParams, match="already has 3 push notification configs"):
            await engine.handle(reply("c3"), ALICE)
        await engine.handle(reply("c1"), ALICE)  # one it has: replaced, as a set does
        listed = await engine.handle(ListPushConfigs(task_id=first.id), ALICE)
        assert [c.id for c in listed] == ["c0", "c1", "c2"]  # type: ignore[union-attr]
    finally:
        await engine.stop()


async def test_a_v01_set_on_a_task_no_id_could_name_is_task_not_found(engine: Engine) -> None:
    """v0.1's config takes its task's id: a set on a task that cannot exist is told
    so, as a get is, not that a config id the caller never gave is too long."""
    v01 = RequestInfo(principal="alice", dialect="0.1")
    for task_id in ("x" * 300, "line\nbreak"):
        with pytest.raises(TaskNotFound):
            await engine.handle(set_call(task_id), v01)
        with pytest.raises(TaskNotFound):
            await engine.handle(GetPushConfig(task_id=task_id), v01)


async def test_get_without_id_and_no_config_says_so(engine: Engine) -> None:
    tid = await task_of(engine)
    with pytest.raises(TaskNotFound, match="has no push notification config"):
        await engine.handle(GetPushConfig(task_id=tid), ALICE)


@pytest.mark.parametrize("bad", ["", "x" * 300, "line\nbreak"])
async def test_bad_config_ids_and_urls_are_invalid_params(engine: Engine, bad: str) -> None:
    tid = await task_of(engine)
    with pytest.raises(InvalidParams):
        await engine.handle(set_call(tid, url=bad) if bad == "" else set_call(tid, bad), ALICE)


async def test_an_agent_without_push_refuses_every_push_request() -> None:
    async def quiet(text: str) -> str:
        return text

    engine = await start_engine(Agent("Quiet", "No push.", quiet), dev_settings())
    try:
        tid = await task_of(engine)
        for call in [set_call(tid), GetPushConfig(task_id=tid), ListPushConfigs(task_id=tid),
                     DeletePushConfig(task_id=tid, config_id="c"), send("x", URL)]:
            with pytest.raises(PushNotSupported, match="pushNotifications: false"):
                await engine.handle(call, ALICE)
        assert engine.push.dispatcher is None  # and nothing is dispatched
    finally:
        await engine.stop()


@pytest.mark.parametrize("store", ["memory", "sqlite", "postgres"])
async def test_configs_set_at_once_are_held_to_the_limit(
        store: str, tmp_path: object, request: pytest.FixtureRequest) -> None:
    """Thirty sets of new configs on one task at once: three are kept, the rest refused.
    (Counted before each write and not in it, PostgreSQL kept 24 of 30.)"""
    import asyncio

    url = {"memory": "memory://", "sqlite": f"sqlite:///{tmp_path}/t.db"}.get(store) or \
        request.getfixturevalue("pg_clean_url")
    engine = await start_engine(echo, dev_settings(max_configs_per_task=3, dispatch=False), url)
    try:
        tid = await task_of(engine)
        results = await asyncio.gather(*(engine.handle(set_call(tid, f"c{i}"), ALICE)
                                         for i in range(30)), return_exceptions=True)
        refused = [r for r in results if isinstance(r, InvalidParams)]
        assert len(refused) == 27, results
        assert all("already has 3 push notification configs" in r.message for r in refused)
        listed = await engine.handle(ListPushConfigs(task_id=tid), ALICE)
        assert len(listed) == 3  # type: ignore[arg-type]
        kept = listed[0].id  # type: ignore[index]
        # one it has is replaced, not refused, however full the task is
        await engine.handle(set_call(tid, kept, url="http://127.0.0.1:9/other"), ALICE)
    finally:
        await engine.stop()


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
async def test_configs_set_at_once_on_two_processes_are_held_to_the_limit(
        store: str, tmp_path: object, request: pytest.FixtureRequest) -> None:
    """The same on two engines sharing one store (two processes): each counts what the
    other wrote, in its own write."""
    import asyncio

    url = f"sqlite:///{tmp_path}/t.db" if store == "sqlite" else \
        request.getfixturevalue("pg_clean_url")
    settings = dev_settings(max_configs_per_task=3, dispatch=False)
    one = await start_engine(echo, settings, url)
    two = await start_engine(echo, settings, url)
    try:
        tid = await task_of(one)
        results = await asyncio.gather(*((one, two)[i % 2].handle(set_call(tid, f"c{i}"), ALICE)
                                         for i in range(30)), return_exceptions=True)
        assert sum(isinstance(r, InvalidParams) for r in results) == 27, results
        assert len(await two.handle(ListPushConfigs(task_id=tid), ALICE)) == 3  # type: ignore[arg-type]
    finally:
        await one.stop()
        await two.stop()


async def test_a_config_kept_before_the_field_bounds_still_loads(engine: Engine) -> None:
    """core/bounds.py holds requests, not what a store holds: a config kept with a
    token, URL and schemes past their bounds is read back and listed as it was."""
    from interlingua.core.bounds import MAX_PUSH_TOKEN_BYTES, MAX_SCHEMES, MAX_URL_BYTES
    from interlingua.core.model import AuthInfo

    tid = await task_of(engine)
    old = PushConfig(url=URL + "?" + "u" * MAX_URL_BYTES, id="old", task_id=tid,
                     token="t" * (MAX_PUSH_TOKEN_BYTES * 4),
                     authentication=AuthInfo(schemes=["Bearer"] * (MAX_SCHEMES + 1)))
    await engine.store.put_push_config(Scope(owner="alice"), tid, old, dialect="1.0",
                                       now="2025-01-01T00:00:00.000Z")
    got = await engine.handle(GetPushConfig(task_id=tid, config_id="old"), ALICE)
    assert got == old
    listed = await engine.handle(ListPushConfigs(task_id=tid), ALICE)
    assert listed == [old]
