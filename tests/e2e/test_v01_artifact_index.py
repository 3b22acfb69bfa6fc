"""A v0.1 artifact's ``index`` is its position in the task: v0.1 peers tell artifacts
apart by it alone. Artifacts made one after another in a turn (some still queued when
the next is made) each get their own, a chunk of one keeps its, and a later turn's
new artifacts go after the earlier turns'. Over real HTTP, on each store."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from tests.live import live_agent

from .sse_client import V1, events, rpc


async def _agent(ctx: Context) -> None:
    if ctx.text == "three":
        await ctx.update("working")  # the task is written before its artifacts
        await ctx.artifact("first", name="X")
        await ctx.artifact("second", name="Y")
        await ctx.artifact({"k": 1}, name="Z")  # data: not the plain text path
        await ctx.complete("done")
    elif ctx.text == "final":
        await ctx.update("working")
        await ctx.artifact("notes", name="notes.txt")
        await ctx.complete("done", artifact="final answer", name="answer.txt")
    else:  # "multi": asks again, and every turn adds two artifacts
        a = await ctx.artifact("a1", name="A")
        await ctx.artifact("b1", name="B")
        await ctx.artifact("a2", artifact_id=a, append=True, last_chunk=True)
        await ctx.require_input("again?")


@pytest.fixture(scope="module", params=["memory", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> Iterator[str]:
    store = "memory://"
    if request.param == "sqlite":
        folder: Path = tmp_path_factory.mktemp("v01-index")
        store = f"sqlite:///{folder}/tasks.db"
    with live_agent(Agent("Idx", "Several artifacts a turn", _agent, streaming=True),
                    store=store) as base:
        yield base + "/"


@pytest.fixture
def c() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


def _send(task_id: str, text: str) -> dict[str, Any]:
    return {"id": task_id, "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


def _call(c: httpx.Client, url: str, method: str, params: Any) -> Any:
    r = c.post(url, json=rpc(method, params), headers=V1 if method[0].isupper() else {})
    assert r.status_code == 200, r.text
    body = r.json()
    assert "result" in body, body
    return body["result"]


def _indexed(task: dict[str, Any]) -> list[tuple[int, str]]:
    return [(a["index"], a["name"]) for a in task["artifacts"]]


def _streamed(c: httpx.Client, url: str, task_id: str, text: str) -> list[tuple[int, str | None]]:
    got = events(c, url, rpc("tasks/sendSubscribe", _send(task_id, text)))
    return [(r["artifact"]["index"], r["artifact"].get("name"))
            for r in (d["result"] for _, _, d in got) if "artifact" in r]


def _agrees_with_v1(c: httpx.Client, url: str, task_id: str, names: list[str]) -> None:
    """The task as v1.0 reads it: the same artifacts, in the same order."""
    task = _call(c, url, "GetTask", {"id": task_id})
    assert [a["name"] for a in task["artifacts"]] == names
    assert len({a["artifactId"] for a in task["artifacts"]}) == len(names)


@pytest.mark.parametrize("text, expected", [
    ("three", [(0, "X"), (1, "Y"), (2, "Z")]),
    ("final", [(0, "notes.txt"), (1, "answer.txt")]),
])
def test_each_artifact_of_a_turn_has_its_own_index(c: httpx.Client, url: str, text: str,
                                                   expected: list[tuple[int, str]]) -> None:
    tid = f"task-{uuid.uuid4()}"
    assert _indexed(_call(c, url, "tasks/send", _send(tid, text))) == expected
    assert _indexed(_call(c, url, "tasks/get", {"id": tid})) == expected
    _agrees_with_v1(c, url, tid, [name for _, name in expected])
    streamed = f"task-{uuid.uuid4()}"
    assert _streamed(c, url, streamed, text) == expected
    assert _indexed(_call(c, url, "tasks/get", {"id": streamed})) == expected


def test_a_later_turn_numbers_on_and_a_chunk_keeps_its_index(c: httpx.Client, url: str) -> None:
    tid = f"task-{uuid.uuid4()}"
    first = _call(c, url, "tasks/send", _send(tid, "multi"))
    assert _indexed(first) == [(0, "A"), (1, "B")]
    second = _call(c, url, "tasks/send", _send(tid, "multi"))
    assert _indexed(second) == [(0, "A"), (1, "B"), (2, "A"), (3, "B")]
    assert [[p["text"] for p in a["parts"]] for a in second["artifacts"]] == \
        [["a1", "a2"], ["b1"], ["a1", "a2"], ["b1"]]
    assert _indexed(_call(c, url, "tasks/get", {"id": tid})) == _indexed(second)
    _agrees_with_v1(c, url, tid, ["A", "B", "A", "B"])
    # streamed: the chunk that continues A goes out under A's index
    streamed = f"task-{uuid.uuid4()}"
    assert _streamed(c, url, streamed, "multi") == [(0, "A"), (1, "B"), (0, None)]
    # the second turn's stream opens with the task's artifacts so far, whole (v0.1's
    # snapshot of the task it continues), then the turn's own
    assert _streamed(c, url, streamed, "multi") == [(0, "A"), (1, "B"), (2, "A"), (3, "B"),
                                                    (2, None)]
    assert _indexed(_call(c, url, "tasks/get", {"id": streamed})) == \
        [(0, "A"), (1, "B"), (2, "A"), (3, "B")]
