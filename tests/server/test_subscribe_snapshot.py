"""A fresh subscription to a running task, over real HTTP in every JSON-RPC dialect: it
starts with the task as it stands, artifacts included, however the dialect's stream
can say it (v0.1's carries no task: the artifacts come as events of their own), and
a resume after that snapshot repeats nothing of it. A snapshot of several events names
its id on its last alone: a reader cut off within it resumes from before it."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Agent, ArtifactAssembler, Client, Context
from interlingua.core.dialects import get_codec
from interlingua.core.model import ArtifactUpdate, StatusUpdate, Task, TaskState
from tests.e2e.sse_client import V1, events, rpc, v03_message, v1_message
from tests.live import live_agent

pytestmark = pytest.mark.timeout(60)

#: the gate each gated turn waits at after its first two chunks, by its key
GATES: dict[str, threading.Event] = {}


async def _work(ctx: Context) -> None:
    # "ask": a draft, then a question; "gated KEY": two chunks, then (once the
    # test opens KEY's gate) two more, then done
    words = ctx.text.split()
    if words[0] == "ask":
        await ctx.artifact("draft;", name="out.txt")
        await ctx.require_input("more?")
        return
    gate = GATES[words[1]]
    await ctx.update("writing")
    aid = await ctx.artifact("c0;", name="out.txt")
    await ctx.artifact("c1;", artifact_id=aid, append=True)
    while not gate.is_set():
        await asyncio.sleep(0.01)
    await ctx.artifact("c2;", artifact_id=aid, append=True)
    await ctx.artifact("c3;", artifact_id=aid, append=True, last_chunk=True)
    await ctx.complete("done")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_agent(Agent("Writer", "Writes in chunks.", _work)) as base:
        yield base


@pytest.fixture
def c() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


def _send_params(dialect: str, text: str) -> dict[str, Any]:
    if dialect == "1.0":
        return {"message": v1_message(text)}
    if dialect == "0.3":
        return {"message": v03_message(text)}
    if dialect == "0.1":
        return {"id": f"task-{uuid.uuid4()}",
                "message": {"role": "user", "parts": [{"type": "text", "text": text}]}}
    if dialect == "sam":
        return {"message": {"message_id": str(uuid.uuid4()), "role": "user",
                            "parts": [{"text": text}]}}
    return {"message": {"role": "user", "parts": [{"type": "text", "text": text}]}}


#: per dialect: (streaming send, subscribe, headers)
METHODS = {
    "1.0": ("SendStreamingMessage", "SubscribeToTask", V1),
    "0.3": ("message/stream", "tasks/resubscribe", {}),
    "0.1": ("tasks/sendSubscribe", "tasks/resubscribe", {}),
    # a SAM task resubscribed with its family's method is answered in SAM
    "sam": ("tasks/send-streaming", "tasks/resubscribe", {}),
    "tutorial": ("message/stream", "task/subscribe", {}),
}


def _item(dialect: str, data: Any) -> Any:
    return get_codec(dialect).decode_stream_item(msgspec.json.encode(data["result"]))


def _task_id(item: Any) -> str:
    return item.id if isinstance(item, Task) else item.task_id


def _started(c: httpx.Client, url: str, dialect: str, text: str) -> str:
    """The id of a task streamed in ``dialect`` until its first two chunks came
    (the connection is then dropped)."""
    send, _, headers = METHODS[dialect]
    seen = ArtifactAssembler()
    task_id = ""
    for _, _, data in events(c, url + "/", rpc(send, _send_params(dialect, text)), headers):
        item = _item(dialect, data)
        task_id = task_id or _task_id(item)
        seen.feed(item)
        if len(seen) and seen.text("out.txt") == "c0;c1;":
            return task_id
    raise AssertionError("the stream ended before its second chunk")


def _subscribe(c: httpx.Client, url: str, dialect: str, task_id: str,
               last_event_id: int | None = None, opens: threading.Event | None = None,
               limit: int | None = None) -> list[tuple[int | None, Any, Any]]:
    """(the reader's last event id after it, stream item, raw result) of each event of
    a subscription (None: no id yet); ``opens`` is set once its first event came."""
    _, subscribe, headers = METHODS[dialect]
    if last_event_id is not None:
        headers = {**headers, "Last-Event-ID": str(last_event_id)}
    got = []
    for i, _, data in events(c, url + "/", rpc(subscribe, {"id": task_id}), headers,
                             limit=limit):
        got.append((None if i is None else int(i), _item(dialect, data), data["result"]))
        if opens is not None:
            opens.set()
    return got


def _assembled(items: list[Any]) -> ArtifactAssembler:
    whole = ArtifactAssembler()
    for item in items:
        whole.feed(item)
    return whole


@pytest.mark.parametrize("dialect", list(METHODS))
def test_a_subscriber_that_joins_mid_stream_gets_the_chunks_streamed_before_it(
        dialect: str, url: str, c: httpx.Client) -> None:
    key = str(uuid.uuid4())
    gate = GATES[key] = threading.Event()
    task_id = _started(c, url, dialect, f"gated {key}")
    got = _subscribe(c, url, dialect, task_id, opens=gate)
    whole = _assembled([item for _, item, _ in got])
    assert whole.text() == "c0;c1;c2;c3;"
    assert whole.is_complete(whole.artifacts[0].artifact_id)
    ids = [i for i, _, _ in got if i is not None]
    assert ids == sorted(ids), ids
    last = got[-1][1]
    assert isinstance(last, StatusUpdate) and last.status.state is TaskState.COMPLETED

    # A resume from the snapshot's id brings what followed it, none of it twice.
    snapshot = [item for i, item, _ in got if i is None or i == ids[0]]
    rest = _subscribe(c, url, dialect, task_id, last_event_id=ids[0])
    assert [i for i, _, _ in rest] == [i for i in ids if i > ids[0]]
    again = _assembled(snapshot + [item for _, item, _ in rest])
    assert again.text() == "c0;c1;c2;c3;"


def test_a_v01_snapshot_comes_as_its_artifacts_then_its_status(url: str, c: httpx.Client) -> None:
    """v0.1's stream carries no task: each artifact so far whole (no ``append``), then
    the status, all under the snapshot's id, which the status alone names."""
    key = str(uuid.uuid4())
    gate = GATES[key] = threading.Event()
    task_id = _started(c, url, "0.1", f"gated {key}")
    # (opened a while after: the snapshot is read before anything can follow it)
    later = threading.Timer(1.0, gate.set)
    later.start()
    try:
        snapshot = _subscribe(c, url, "0.1", task_id, limit=2)
    finally:
        later.cancel()
        gate.set()
    (first, art, raw_art), (second, status, raw_status) = snapshot
    assert first is None and second is not None
    assert isinstance(art, ArtifactUpdate) and not art.append and not art.last_chunk
    assert [p["text"] for p in raw_art["artifact"]["parts"]] == ["c0;", "c1;"]
    assert isinstance(status, StatusUpdate) and status.status.state is TaskState.WORKING
    assert raw_status["final"] is False


@pytest.mark.parametrize("dialect", ["0.1", "0.3", "1.0"])
async def test_the_clients_subscriber_assembles_the_whole_artifact(dialect: str, url: str) -> None:
    key = str(uuid.uuid4())
    gate = GATES[key] = threading.Event()
    async with Client(url, dialect=dialect) as client:
        seen = ArtifactAssembler()
        task_id = ""
        async for event in client.stream(f"gated {key}"):
            task_id = task_id or _task_id(event.item)
            seen.feed(event)
            if len(seen) and seen.text("out.txt") == "c0;c1;":
                break
        whole = ArtifactAssembler()
        async for event in client.subscribe(task_id):
            gate.set()
            whole.feed(event)
    assert whole.text() == "c0;c1;c2;c3;"


@pytest.mark.parametrize("dialect", [d for d in METHODS if d != "1.0"])
def test_a_fresh_subscription_to_a_task_waiting_for_input_ends_with_a_final_status(
        dialect: str, url: str, c: httpx.Client) -> None:
    """Older dialects end a subscription at an interruption, with the status marked
    ``final``, as they end it at a terminal state; the artifacts so far come first."""
    send, _, headers = METHODS[dialect]
    made = list(events(c, url + "/", rpc(send, _send_params(dialect, "ask")), headers))
    task_id = _task_id(_item(dialect, made[0][2]))
    got = _subscribe(c, url, dialect, task_id)
    # one snapshot, under one id: named by its last event (the reader has none before)
    assert [i for i, _, _ in got[:-1]] == [None] * (len(got) - 1) and got[-1][0] is not None
    *_, (_, last, raw) = got
    assert isinstance(last, StatusUpdate) and last.status.state is TaskState.INPUT_REQUIRED
    assert raw["final"] is True
    assert _assembled([item for _, item, _ in got]).text() == "draft;"


def test_a_v10_subscription_to_a_task_waiting_for_input_starts_with_the_task(
        url: str, c: httpx.Client) -> None:
    """v1.0 follows the task through its interruption: the task first, then (later
    turns') events, with nothing to end it at the question."""
    made = list(events(c, url + "/", rpc("SendStreamingMessage",
                                         {"message": v1_message("ask")}), V1))
    task_id = _task_id(_item("1.0", made[0][2]))
    got = _subscribe(c, url, "1.0", task_id, limit=1)
    task = got[0][1]
    assert isinstance(task, Task) and task.status.state is TaskState.INPUT_REQUIRED
    assert [a.name for a in task.artifacts] == ["out.txt"]


@pytest.mark.parametrize("dialect", [d for d in METHODS if d != "1.0"])
def test_a_resume_from_any_event_of_a_snapshot_still_brings_its_final_status(
        dialect: str, url: str, c: httpx.Client) -> None:
    """A reader cut off after each event of a snapshot that ends the stream resumes
    with the last event id it holds (none yet: a fresh subscription, as an
    EventSource reconnects) and still hears the ``final`` status, once."""
    send, subscribe, headers = METHODS[dialect]
    made = list(events(c, url + "/", rpc(send, _send_params(dialect, "ask")), headers))
    task_id = _task_id(_item(dialect, made[0][2]))
    whole = list(events(c, url + "/", rpc(subscribe, {"id": task_id}), headers))
    for cut in range(1, len(whole)):
        held = whole[cut - 1][0]  # the reader's last event id after the events it read
        resumed = {**headers} if held is None else {**headers, "Last-Event-ID": held}
        rest = [data["result"] for _, _, data in
                events(c, url + "/", rpc(subscribe, {"id": task_id}), resumed)]
        assert rest, f"nothing after event {held} (cut after {cut}): the final status was lost"
        finals = [r for r in rest if r.get("final")]
        assert len(finals) == 1 and rest[-1] is finals[0], (cut, rest)
