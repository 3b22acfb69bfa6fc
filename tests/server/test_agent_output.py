"""What an agent emits is checked before any store or binding takes it (core/output.py):
nested no deeper than every binding carries (core/nesting.py), as requests are; text
that UTF-8 carries; data and metadata that JSON encodes. The same on every store.

Before, the memory store kept an agent's events as objects and encoded a task's log
when it finished, after the write was taken: an artifact nested 3,000 levels deep, a
text chunk holding a lone surrogate (half of a pair, as a model's stream split between
the halves leaves) or data JSON cannot encode was answered with a bare internal error,
the task left completed in the store and failed to its writer; SQLite failed the task
with the encoder's words; 33 levels of objects were kept but could not be read back
over gRPC. Now the agent's call raises ``InvalidOutput`` saying what is wrong, and,
uncaught, the task fails with that message, readable on every binding. Real HTTP and
gRPC on loopback, real SQLite and PostgreSQL."""

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
from interlingua.server import InvalidOutput
from interlingua.server.auth.limits import Limits
from tests.bindings.drivers import DRIVERS
from tests.live import live_agent, live_grpc_agent
from tests.stores.conftest import store_url

pytestmark = pytest.mark.timeout(90)

#: the first half of a surrogate pair, alone
HALF = "\ud83d"


def objects(levels: int) -> Any:
    """A value of ``levels`` nested objects: ``{"k": {"k": ... 1}}``."""
    value: Any = 1
    for _ in range(levels):
        value = {"k": value}
    return value


async def emit(ctx: Context, where: str, value: Any) -> None:
    """Emit ``value`` as ``where`` says."""
    if where == "data":
        await ctx.artifact(m.DataPart(data=value))
    elif where == "chunk-metadata":
        await ctx.artifact("a chunk", append=True, metadata=value)
    elif where == "chunk":
        await ctx.artifact(value, append=True)
    elif where == "chunk-name":
        await ctx.artifact("a chunk", name=value)
    elif where == "chunk-id":
        await ctx.artifact("a chunk", artifact_id=value, append=True)
    elif where == "status":
        await ctx.update(m.DataPart(data=value) if not isinstance(value, str) else value)
    elif where == "final":  # a level more: the object around it
        await ctx.complete("kept", artifact={"deep": value})
    elif where == "reply":
        await ctx.reply(m.DataPart(data=value) if not isinstance(value, str) else value)
    elif where == "event-metadata":
        await ctx.update("working", metadata=value)


def value_of(kind: str, levels: int) -> Any:
    if kind == "surrogate":
        return f"half an emoji: {HALF}"
    if kind == "surrogate-in-data":
        return {"text": f"half an emoji: {HALF}"}
    if kind == "object":
        return {"when": object()}
    return objects(levels)


async def emits(ctx: Context) -> None:
    """Emits, by the text it is sent ("WHERE KIND LEVELS"), a value of KIND (a value
    nested LEVELS deep, a text with a lone surrogate, an object JSON cannot encode)."""
    where, kind, levels = ctx.text.split()
    value = value_of(kind, int(levels) - (where == "final"))
    try:
        await emit(ctx, where, value)
    except InvalidOutput as exc:
        await ctx.complete(f"refused: {exc}")
        return
    if where not in ("final", "reply"):
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
    with live_grpc_agent(Agent("Output", "Emits what it is told.", emits)) as (url, _):
        yield url


@pytest.mark.parametrize("where", ["data", "chunk-metadata", "status", "final",
                                   "event-metadata"])
def test_output_every_binding_carries_is_kept_and_read_on_every_binding(
        everywhere: str, where: str) -> None:
    with httpx.Client(timeout=30) as client:
        task = send(DRIVERS["jsonrpc-1.0"](client, everywhere), f"{where} deep {CARRIED}")
        assert isinstance(task, m.Task)
        assert said(task) == "kept"
        for name, kind in DRIVERS.items():
            read = kind(client, everywhere).call(c.GetTask(id=task.id))
            assert isinstance(read, m.Task), name
            assert read.status.state == m.TaskState.COMPLETED, name


DEEP = f"nests more than {CARRIED} levels deep, more than every binding carries " \
       "(Limits.max_nesting)"
SURROGATE = "holds a lone surrogate (U+D83D at 15), which UTF-8 cannot carry"
IN_DATA = "holds a lone surrogate, which UTF-8 cannot carry ('utf-8' codec can't encode " \
          "character '\\ud83d' in position 15: surrogates not allowed)"
OBJECT = "cannot be encoded as JSON: Encoding objects of type object is unsupported"

REFUSED = [
    ("data deep", "artifact.parts[0].data " + DEEP),
    ("chunk-metadata deep", "artifact.metadata " + DEEP),
    ("status deep", "status.message.parts[0].data " + DEEP),
    ("final deep", "artifact.parts[0].data " + DEEP),
    ("reply deep", "reply.parts[0].data " + DEEP),
    ("event-metadata deep", "event.metadata " + DEEP),
    ("chunk surrogate", "artifact.parts[0].text " + SURROGATE),
    ("chunk-name surrogate", "artifact.name " + SURROGATE),
    ("chunk-id surrogate", "artifact.artifact_id " + SURROGATE),
    ("status surrogate", "status.message.parts[0].text " + SURROGATE),
    ("reply surrogate", "reply.parts[0].text " + SURROGATE),
    ("data surrogate-in-data", "artifact.parts[0].data " + IN_DATA),
    ("event-metadata surrogate-in-data", "event.metadata " + IN_DATA),
    ("data object", "artifact.parts[0].data " + OBJECT),
    ("chunk-metadata object", "artifact.metadata " + OBJECT),
]


@pytest.mark.parametrize(("what", "named"), REFUSED, ids=[r[0] for r in REFUSED])
def test_output_no_binding_carries_is_refused_to_the_agent_saying_what(
        everywhere: str, what: str, named: str) -> None:
    with httpx.Client(timeout=30) as client:
        task = send(DRIVERS["jsonrpc-1.0"](client, everywhere), f"{what} {CARRIED + 1}")
        assert isinstance(task, m.Task)
        assert said(task) == f"refused: the agent's {named}"
        # and the task, with nothing of the refused output, reads on every binding
        for name, kind in DRIVERS.items():
            read = kind(client, everywhere).call(c.GetTask(id=task.id))
            assert isinstance(read, m.Task), name
            assert read.status.state == m.TaskState.COMPLETED, name
            assert not read.artifacts, name


async def raises(ctx: Context) -> None:
    """Emits what it is sent ("WHERE KIND LEVELS") and does not catch a refusal."""
    where, kind, levels = ctx.text.split()
    await emit(ctx, where, value_of(kind, int(levels) - (where == "final")))
    if where not in ("final", "reply"):
        await ctx.complete("kept")


@pytest.fixture(params=["memory", "sqlite-file", "postgres"])
def unbounded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An agent whose requests may nest without bound (``max_nesting=None``)."""
    with live_agent(Agent("Output", "Emits what it is told.", raises),
                    store=store_url(request.param, tmp_path, request),
                    limits=Limits(max_nesting=None)) as base:
        yield base


def test_output_no_store_keeps_fails_the_task_alike_on_every_store(unbounded: str) -> None:
    deeper = f"nests more than {ENCODED} levels deep, more than every binding carries " \
             "(Limits.max_nesting)"
    failed = {
        f"data deep {ENCODED + 1}": "artifact.parts[0].data " + deeper,
        "data deep 3000": "artifact.parts[0].data " + deeper,
        "chunk surrogate 1": "artifact.parts[0].text " + SURROGATE,
        "final surrogate-in-data 1": "artifact.parts[0].data " + IN_DATA,
        "status surrogate 1": "status.message.parts[0].text " + SURROGATE,
        "data object 1": "artifact.parts[0].data " + OBJECT,
    }
    with httpx.Client(timeout=30) as client:
        driver = DRIVERS["jsonrpc-1.0"](client, unbounded)
        for levels in (CARRIED + 8, ENCODED):  # a bound loosened: more is kept
            kept = send(driver, f"data deep {levels}")
            assert isinstance(kept, m.Task) and said(kept) == "kept", levels
            read = driver.call(c.GetTask(id=kept.id))
            assert isinstance(read, m.Task) and len(read.artifacts) == 1
        for what, named in failed.items():
            task = send(driver, what)
            assert isinstance(task, m.Task)
            assert task.status.state == m.TaskState.FAILED, what
            assert said(task) == f"The agent failed: InvalidOutput: the agent's {named}"
            read = driver.call(c.GetTask(id=task.id))
            assert isinstance(read, m.Task) and read.status.state == m.TaskState.FAILED
            assert not read.artifacts
