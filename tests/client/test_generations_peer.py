"""The client's A2A 1.1 task generations against a scripted peer over loopback HTTP
(``peer11.py``): what it sends (``A2A-Version``, ``currentGeneration``,
``ifGenerationMatch``), what it refuses to send to a 1.0 agent, how it reads the
mismatch error on each HTTP binding, and how a stream's generation gap is filled."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from interlingua.cli.main import main
from interlingua.client import Client
from interlingua.client.generations import (
    GenerationsNotSupported,
    GenerationTracker,
    TaskGenerationMismatch,
)
from interlingua.core.model import StatusUpdate, Task, TaskState

from .peer11 import Peer11, status_event, task_doc

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def peer() -> Iterator[Peer11]:
    with Peer11("1.1") as p:
        yield p


@pytest.fixture
def old_peer() -> Iterator[Peer11]:
    with Peer11("1.0") as p:
        yield p


def _params(body: bytes) -> dict[str, object]:
    return json.loads(body)["params"]


# ------------------------------------------------------------------ negotiation


async def test_a_card_offering_1_1_is_spoken_to_in_1_1(peer: Peer11) -> None:
    async with Client(peer.url) as client:
        task = await client.get_task("t1")
    assert client.version == "1.1" and client.dialect == "1.0"
    assert task.generation == 3
    ((_, _, headers, _),) = peer.calls()
    assert headers["A2A-Version"] == "1.1"


async def test_a_card_of_1_0_is_spoken_to_in_1_0(old_peer: Peer11) -> None:
    async with Client(old_peer.url) as client:
        await client.get_task("t1")
    assert client.version == "1.0"
    assert [h["A2A-Version"] for _, _, h, _ in old_peer.calls()] == ["1.0"]


# -------------------------------------------------------------------- long polls


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_long_poll_carries_current_generation(peer: Peer11, binding: str) -> None:
    async with Client(peer.url, binding=binding) as client:
        task = await client.get_task("t1", after_generation=2)
    assert task.generation == 3
    ((verb, path, headers, body),) = peer.calls()
    assert headers["A2A-Version"] == "1.1"
    if binding == "rest":
        assert (verb, path) == ("GET", "/rest/tasks/t1?currentGeneration=2")
    else:
        assert _params(body) == {"id": "t1", "currentGeneration": "2"}


async def test_a_long_poll_of_a_1_0_agent_is_refused_before_anything_is_sent(
        old_peer: Peer11) -> None:
    async with Client(old_peer.url) as client:
        with pytest.raises(GenerationsNotSupported, match=r"after_generation needs A2A 1\.1"):
            await client.get_task("t1", after_generation=1)
        with pytest.raises(GenerationsNotSupported):
            await client.get_task("t1", after_generation=1, wait=1)
    assert old_peer.calls() == []


async def test_wait_asks_again_while_the_agent_answers_unchanged(peer: Peer11) -> None:
    peer.script.hold = 0.6

    def advance() -> None:
        # once the third held request is in (two came back unchanged), however
        # long a loaded machine took to send the first
        deadline = time.monotonic() + 8
        while len(peer.calls()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        peer.script.task = task_doc("t1", 4, "TASK_STATE_COMPLETED")

    threading.Thread(target=advance, daemon=True).start()
    async with Client(peer.url) as client:
        task = await client.get_task("t1", after_generation=3, wait=10)
    assert task.generation == 4 and task.status.state is TaskState.COMPLETED
    assert len(peer.calls()) >= 3  # held answers came back unchanged, and were asked again


async def test_wait_ends_with_the_task_as_it_stands(peer: Peer11) -> None:
    peer.script.hold = 5.0  # longer than the caller waits
    async with Client(peer.url) as client:
        started = time.monotonic()
        task = await client.get_task("t1", after_generation=3, wait=0.5)
    assert time.monotonic() - started < 4.5
    assert task.generation == 3  # unchanged: the caller compares
    # the held request given up, then the task asked for without a hold
    assert "currentGeneration" not in json.loads(peer.calls()[-1][3])["params"]


async def test_generation_0_from_a_1_1_card_is_no_generation(peer: Peer11) -> None:
    peer.script.task = task_doc("t1", 0)
    async with Client(peer.url) as client:
        with pytest.raises(GenerationsNotSupported, match="without a generation"):
            await client.get_task("t1", after_generation=1)


# ------------------------------------------------------------ ifGenerationMatch


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_stale_generation_is_refused_with_the_typed_error(
        peer: Peer11, binding: str) -> None:
    peer.script.current = 5
    async with Client(peer.url, binding=binding) as client:
        with pytest.raises(TaskGenerationMismatch) as caught:
            await client.send("more", task_id="t1", if_generation_match=3, blocking=False)
        # not blocking: the scripted task stays working, which a blocking send would follow
        result = await client.send("more", task_id="t1", if_generation_match=5, blocking=False)
    err = caught.value
    assert (err.task_id, err.expected_generation, err.current_generation) == ("t1", 3, 5)
    assert isinstance(result, Task)
    calls = peer.calls()
    # not yet seen to number its tasks: the task is looked at first, once
    first = calls[0]
    assert first[0] == "GET" or json.loads(first[3])["method"] == "GetTask"
    sent = [json.loads(body) for _, _, _, body in calls[1:]]
    if binding == "jsonrpc":
        sent = [doc["params"] for doc in sent]
    assert [doc["configuration"]["ifGenerationMatch"] for doc in sent] == ["3", "5"]


async def test_if_generation_match_to_a_1_0_agent_is_refused_before_anything_is_sent(
        old_peer: Peer11) -> None:
    async with Client(old_peer.url) as client:
        with pytest.raises(GenerationsNotSupported, match="if_generation_match"):
            await client.send("more", task_id="t1", if_generation_match=3)
    assert old_peer.calls() == []


async def test_a_forced_1_1_dialect_sends_1_1() -> None:
    with Peer11("1.0") as p:  # what the card says does not matter: none is read
        async with Client(p.url + "/", dialect="1.1") as client:
            await client.get_task("t1", after_generation=1)
        ((_, _, headers, body),) = p.calls()
    assert headers["A2A-Version"] == "1.1"
    assert _params(body)["currentGeneration"] == "1"


# ---------------------------------------------------------------------- streams


def _story(*generations: int) -> list[dict[str, object]]:
    first, *rest = generations
    events: list[dict[str, object]] = [
        {"task": task_doc("t1", first, "TASK_STATE_SUBMITTED")}]
    for n, g in enumerate(rest):
        last = n == len(rest) - 1
        events.append(status_event("t1", g, "TASK_STATE_COMPLETED" if last
                                   else "TASK_STATE_WORKING"))
    return events


async def test_a_gap_in_a_stream_is_filled_with_the_task(peer: Peer11) -> None:
    peer.script.events = _story(1, 2, 4, 5)  # generation 3 never arrives
    peer.script.task = task_doc("t1", 4)
    async with Client(peer.url) as client:
        events = [e async for e in client.stream("go")]
    assert [(type(e.item).__name__, e.generation, e.reconciled) for e in events] == [
        ("Task", 1, False), ("StatusUpdate", 2, False), ("Task", 4, True),
        ("StatusUpdate", 5, False)]
    gets = [json.loads(b)["method"] for _, _, _, b in peer.calls()]
    assert gets == ["SendStreamingMessage", "GetTask"]


async def test_events_already_in_the_fetched_task_are_not_repeated(peer: Peer11) -> None:
    # the task fetched for the gap is further on than the event that showed it
    peer.script.events = _story(1, 3, 4, 5, 6)
    peer.script.task = task_doc("t1", 4)
    async with Client(peer.url) as client:
        events = [e async for e in client.stream("go")]
    assert [(e.generation, e.reconciled) for e in events] == [(1, False), (4, True),
                                                               (5, False), (6, False)]


async def test_a_stream_without_generations_is_taken_as_it_comes(peer: Peer11) -> None:
    peer.script.events = _story(0, 0, 0)
    async with Client(peer.url) as client:
        events = [e async for e in client.stream("go")]
    assert len(events) == 3 and not any(e.reconciled for e in events)
    assert len(peer.calls()) == 1  # no GetTask


async def test_a_1_0_stream_is_not_checked(old_peer: Peer11) -> None:
    old_peer.script.events = _story(1, 2, 7)  # a gap, in a stream spoken in 1.0
    async with Client(old_peer.url) as client:
        events = [e async for e in client.stream("go")]
    assert [e.generation for e in events] == [1, 2, 7]
    assert not any(e.reconciled for e in events) and isinstance(events[-1].item, StatusUpdate)
    assert len(old_peer.calls()) == 1  # no GetTask


def test_the_tracker_reads_generations_as_the_spec_says() -> None:
    t = GenerationTracker()
    assert [t.see(1, snapshot=True), t.see(2), t.see(4)] == ["next", "next", "gap"]
    t.reconciled(6)
    assert [t.see(5), t.see(6), t.see(7)] == ["old", "old", "next"]
    assert t.see(7) == "off" and t.see(8) == "off"  # the same twice: no generations
    t = GenerationTracker()
    assert [t.see(3), t.see(2)] == ["next", "off"]  # going back: no generations


# -------------------------------------------------------------------------- CLI


def test_get_wait_follows_the_task_by_long_polls(peer: Peer11) -> None:
    peer.script.hold = 0.3

    def advance() -> None:
        while not peer.calls():  # the first look at the task, unheld
            time.sleep(0.01)
        time.sleep(0.5)
        peer.script.task = task_doc("t1", 4)
        time.sleep(1.0)
        peer.script.task = task_doc("t1", 5, "TASK_STATE_COMPLETED")

    threading.Thread(target=advance, daemon=True).start()
    result = CliRunner().invoke(main, ["get", peer.url, "t1", "--wait", "--json",
                                       "--timeout", "20"], prog_name="interlingua")
    assert result.exit_code == 0, (result.output, result.stderr)
    shown = [json.loads(line)["generation"] for line in result.stdout.splitlines()]
    assert shown == ["3", "4", "5"]
    polls = [json.loads(b)["params"] for _, _, _, b in peer.calls()]
    assert [p.get("currentGeneration") for p in polls][:1] == [None]
    assert {"3", "4"} <= {p.get("currentGeneration") for p in polls}


def test_get_wait_polls_a_1_0_agent_and_says_so(old_peer: Peer11) -> None:
    def finish() -> None:
        time.sleep(0.8)
        old_peer.script.task = task_doc("t1", 0, "TASK_STATE_COMPLETED")

    old_peer.script.task = task_doc("t1", 0)
    threading.Thread(target=finish, daemon=True).start()
    result = CliRunner().invoke(main, ["get", old_peer.url, "t1", "--wait",
                                       "--timeout", "20"], prog_name="interlingua")
    assert result.exit_code == 0, (result.output, result.stderr)
    assert "no long polls" in result.stderr
    assert "completed" in result.stdout.splitlines()[-3] or "completed" in result.stdout
    assert all("currentGeneration" not in b.decode() for _, _, _, b in old_peer.calls())


def test_get_wait_gives_up_at_the_timeout(peer: Peer11) -> None:
    peer.script.hold = 0.2
    started = time.monotonic()
    result = CliRunner().invoke(main, ["get", peer.url, "t1", "--wait", "--timeout", "1"],
                                prog_name="interlingua")
    assert time.monotonic() - started < 5
    assert result.exit_code == 3
    assert "has not finished within 1 s" in result.stderr


@pytest.mark.parametrize(("codec", "version"), [("1.1", "1.0"), ("1.1", ""), ("1.0", "1.1")])
def test_every_binding_refuses_to_write_generations_outside_1_1(codec: str,
                                                                 version: str) -> None:
    # the last line of defence, under the client's own check: the one encoder of
    # every binding never writes a request that would drop the field (a 1.0 request,
    # or the 1.0 codec, which has no such field to write)
    from interlingua.client.encoding import encode_call
    from interlingua.core.calls import GetTask
    from interlingua.core.dialects import get_codec

    poll = GetTask(id="t1", current_generation=1)
    with pytest.raises(GenerationsNotSupported):
        encode_call(get_codec(codec), poll, "1.0", version)
    _, params = encode_call(get_codec("1.1"), poll, "1.0", "1.1")
    assert json.loads(params)["currentGeneration"] == "1"


def test_a_card_naming_1_1_and_1_0_is_spoken_to_in_1_1_first() -> None:
    from interlingua.client.card import endpoints
    from interlingua.core.model import AgentCard, AgentInterface

    card = AgentCard(name="a", description="", version="1", interfaces=[
        AgentInterface(url="http://h/", binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url="http://h/", binding="JSONRPC", protocol_version="0.3"),
        AgentInterface(url="http://h/", binding="JSONRPC", protocol_version="1.1"),
        AgentInterface(url="http://h/", binding="JSONRPC", protocol_version="1.2"),
    ])
    found = [(e.dialect, e.version) for e in endpoints(card)]
    # a later 1.x is spoken as the newest this client knows, 1.1
    assert found == [("1.0", "1.1"), ("1.0", ""), ("0.3", "")]


def test_a_mismatch_reads_generations_of_ascii_digits_only() -> None:
    from interlingua.client.generations import _int

    assert (_int(3), _int(" 12 "), _int(True), _int("\u00b2"), _int("-1")) == (
        3, 12, None, None, None)

