"""``Client.subscribe(task_id, last_event_id=N)`` of a task that asked for input, over
every binding and dialect against a live server: a question the task has left since
(answered, the task completed) is passed, and the stream ends where the task stands,
as a v1.0 subscription does; a question still open ends it there."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from interlingua.client import Client, StreamEvent
from interlingua.core.model import ArtifactUpdate, TaskState
from tests.cli.test_follow_turns import waiter
from tests.client.test_bindings_live import ERROR_WAYS, _client
from tests.e2e.sse_client import STREAM_DEADLINE
from tests.live import live_grpc_agent

pytestmark = pytest.mark.timeout(60)

WAY_IDS = ["-".join(w) for w in ERROR_WAYS]


@pytest.fixture(scope="module")
def urls() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(waiter) as where:
        yield where


async def asked(client: Client, tmp_path: Path) -> tuple[str, str, Path]:
    """A task waiting on its question (id, context id), and the gate file it waits for."""
    gate = tmp_path / "gate"
    gate.touch()
    task = await client.send(f"input {gate}")
    assert task.status.state is TaskState.INPUT_REQUIRED, task  # type: ignore[union-attr]
    return task.id, task.context_id, gate  # type: ignore[union-attr]


async def resumed(client: Client, task_id: str) -> list[StreamEvent]:
    """``subscribe(task_id, last_event_id=1)``, read to its end."""
    async with asyncio.timeout(STREAM_DEADLINE), \
            contextlib.aclosing(client.subscribe(task_id, last_event_id=1)) as events:
        return [e async for e in events]


@pytest.mark.parametrize("way", ERROR_WAYS, ids=WAY_IDS)
async def test_a_question_answered_since_is_passed_to_the_task_s_end(
        urls: tuple[str, str], way: tuple[str, str], tmp_path: Path) -> None:
    """Before: in v0.1-v0.3 the stream ended at the replayed input-required, not
    reconciled, and the caller took the completed task to wait for an answer."""
    async with _client(urls, way) as client:
        task_id, context_id, gate = await asked(client, tmp_path)
        done = await client.send(f"done {gate}", task_id=task_id, context_id=context_id)
        assert done.status.state is TaskState.COMPLETED  # type: ignore[union-attr]
        events = await resumed(client, task_id)
    states = [e.state for e in events if e.state is not None]
    assert TaskState.INPUT_REQUIRED in states, states
    assert states[-1] is TaskState.COMPLETED, states
    assert events[-1].final
    texts = [p.text for e in events if isinstance(e.item, ArtifactUpdate)  # type: ignore[union-attr]
             for p in e.item.artifact.parts]
    artifacts = [a for e in events if e.reconciled
                 for a in e.item.artifacts or ()]  # type: ignore[union-attr]
    assert texts == ["the answer"] or [p.text for a in artifacts  # type: ignore[union-attr]
                                       for p in a.parts] == ["the answer"], events


@pytest.mark.parametrize("way", [w for w in ERROR_WAYS if w[1] != "1.0"],
                         ids=[i for i, w in zip(WAY_IDS, ERROR_WAYS, strict=True)
                              if w[1] != "1.0"])
async def test_a_question_still_open_ends_the_stream_there(
        urls: tuple[str, str], way: tuple[str, str], tmp_path: Path) -> None:
    """(A v1.0 subscription goes on through it to the task's end.)"""
    async with _client(urls, way) as client:
        task_id, _, _ = await asked(client, tmp_path)
        events = await resumed(client, task_id)
    assert events[-1].state is TaskState.INPUT_REQUIRED and not events[-1].reconciled, events
