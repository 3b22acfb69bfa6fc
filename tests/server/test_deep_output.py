"""What an agent emits is held to the nesting every binding carries (core/nesting.py),
as requests are, on every store. Before, an artifact nested 3,000 levels deep was
answered with a bare internal error on the memory store (its packing of the finished
log recursed after the write was taken, leaving the task completed in the store and
failed to its writer) and failed the task on SQLite; one nested 33 levels of objects
was kept but could not be read back over gRPC. Now the agent's call raises
``OutputTooDeep`` saying what nests too deep, and the task fails with that message,
readable on every binding. Real HTTP and gRPC on loopback, real SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.nesting import CARRIED, ENCODED
from interlingua.core.parts import new_id
from interlingua.server.auth.limits import Limits
from interlingua.server.run import OutputTooDeep
from tests.bindings.drivers import DRIVERS
from tests.live import live_agent, live_grpc_agent
from tests.stores.conftest import store_url

pytestmark = pytest.mark.timeout(90)


def objects(levels: int) -> Any:
    """A value of ``levels`` nested objects: ``{"k": {"k": ... 1}}``."""
    value: Any = 1
    for _ in range(levels):
        value = {"k": value}
    return value


async def emits(ctx: Context) -> None:
    """Emits, by the text it is sent ("WHERE LEVELS"), a value nested LEVELS deep."""
    where, levels = ctx.text.split()
    value = objects(int(levels))
    try:
        if where == "data":
            await ctx.artifact(m.DataPart(data=value))
        elif where == "chunk-metadata":
            await ctx.artifact("a chunk", append=True, metadata=value)
        elif where == "status":
            await ctx.update(m.DataPart(data=value))
        elif where == "final":  # a level more: the object around it
            await ctx.complete("kept", artifact={"deep": objects(int(levels) - 1)})
            return
        elif where == "reply":
            await ctx.reply(m.DataPart(data=value))
            return
        elif where == "event-metadata":
            await ctx.update("working", metadata=value)
    except OutputTooDeep as exc:
        await ctx.complete(f"refused: {exc}")
        return
    await ctx.complete("kept")


def send(driver: Any, text: str) -> m.Task | m.Message:
    result = driver.call(c.SendMessage(message=m.Message(
        message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)])))
    assert isinstance(result, m.Task | m.Message)
    return result


def said(task: m.Task) -> str:
    assert task.status.message is not None
    return "".join(p.text for p in task.status.message.parts if isinstance(p, m.TextPart))


@pytest.fixture(scope="module")
def everywhere() -> Iterator[str]:
    with live_grpc_agent(Agent("Deep", "Emits nested values.", emits)) as (url, _):
        yield url


@pytest.mark.parametrize("where", ["data", "chunk-metadata", "status", "final",
                                   "event-metadata"])
def test_output_every_binding_carries_is_kept_and_read_on_every_binding(
        everywhere: str, where: str) -> None:
    with httpx.Client(timeout=30) as client:
        task = send(DRIVERS["jsonrpc-1.0"](client, everywhere), f"{where} {CARRIED}")
        assert isinstance(task, m.Task)
        assert said(task) == "kept"
        for name, kind in DRIVERS.items():
            read = kind(client, everywhere).call(c.GetTask(id=task.id))
            assert isinstance(read, m.Task), name
            assert read.status.state == m.TaskState.COMPLETED, name


@pytest.mark.parametrize(("where", "named"), [
    ("data", "artifact.parts[0].data"),
    ("chunk-metadata", "artifact.metadata"),
    ("status", "status.message.parts[0].data"),
    ("final", "artifact.parts[0].data"),
    ("reply", "reply.parts[0].data"),
    ("event-metadata", "event.metadata"),
])
def test_output_deeper_is_refused_to_the_agent_saying_what(
        everywhere: str, where: str, named: str) -> None:
    with httpx.Client(timeout=30) as client:
        task = send(DRIVERS["jsonrpc-1.0"](client, everywhere), f"{where} {CARRIED + 1}")
        assert isinstance(task, m.Task)
        assert said(task) == (f"refused: the agent's {named} nests more than {CARRIED} "
                              "levels deep, more than every binding carries "
                              "(Limits.max_nesting)")
        # and the task, with nothing of the refused output, reads on every binding
        for name, kind in DRIVERS.items():
            read = kind(client, everywhere).call(c.GetTask(id=task.id))
            assert isinstance(read, m.Task), name
            assert read.status.state == m.TaskState.COMPLETED, name
            assert not read.artifacts, name


async def raises(ctx: Context) -> None:
    await ctx.artifact(m.DataPart(data=objects(int(ctx.text))))
    await ctx.complete("kept")


@pytest.fixture(params=["memory", "sqlite-file", "postgres"])
def unbounded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An agent whose requests may nest without bound (``max_nesting=None``)."""
    with live_agent(Agent("Deep", "Emits nested values.", raises),
                    store=store_url(request.param, tmp_path, request),
                    limits=Limits(max_nesting=None)) as base:
        yield base


def test_output_past_what_the_stores_encode_fails_the_task_alike_on_every_store(
        unbounded: str) -> None:
    with httpx.Client(timeout=30) as client:
        driver = DRIVERS["jsonrpc-1.0"](client, unbounded)
        for levels in (CARRIED + 8, ENCODED):  # a bound loosened: more is kept
            kept = send(driver, str(levels))
            assert isinstance(kept, m.Task) and said(kept) == "kept", levels
            read = driver.call(c.GetTask(id=kept.id))
            assert isinstance(read, m.Task) and len(read.artifacts) == 1
        for levels in (ENCODED + 1, 3000):
            task = send(driver, str(levels))
            assert isinstance(task, m.Task)
            assert task.status.state == m.TaskState.FAILED
            assert said(task) == (
                "The agent failed: OutputTooDeep: the agent's artifact.parts[0].data nests "
                f"more than {ENCODED} levels deep, more than every binding carries "
                "(Limits.max_nesting)")
            read = driver.call(c.GetTask(id=task.id))
            assert isinstance(read, m.Task) and read.status.state == m.TaskState.FAILED
            assert not read.artifacts
