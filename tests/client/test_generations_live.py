"""The client's A2A 1.1 task generations against our own server over loopback, on every
binding: long polls, the guarded send and its typed error, a stream's generations, and
a stream cut and resumed with Last-Event-ID (whose generations then have no gap, so no
GetTask is needed to fill one)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from interlingua.cli.main import main
from interlingua.client import Client, GenerationsNotSupported, ResumePolicy, TaskGenerationMismatch
from interlingua.core.model import Task, TaskState
from tests.e2e.agents import story
from tests.live import grpc_address_of, live_agent, live_grpc_agent

from .agents import agent
from .test_stream_resume import CuttingProxy, Sleeps, check_story, read_all

pytestmark = pytest.mark.timeout(60)

BINDINGS = ["jsonrpc", "rest", "grpc"]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_grpc_agent(agent) as (base, _):
        yield base


@pytest.fixture(scope="module")
def offering_url() -> Iterator[str]:
    """The same agent, its card naming 1.1 on its v1.0 interfaces (``offer_1_1``)."""
    with live_grpc_agent(agent, offer_1_1=True) as (base, _):
        yield base


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_card_offering_1_1_is_spoken_to_in_1_1(offering_url: str,
                                                       binding: str) -> None:
    async with Client(offering_url, binding=binding) as client:
        started = await client.send("sleep 0.5", blocking=False)
        assert client.version == "1.1" and client.endpoint is not None
        assert isinstance(started, Task) and started.generation >= 1
        moved = await client.get_task(started.id, after_generation=started.generation,
                                      wait=10)
        assert moved.generation > started.generation


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_card_of_1_0_is_spoken_to_in_1_0(url: str, binding: str) -> None:
    async with Client(url, binding=binding) as client:
        task = await client.send("hello")
        assert client.version == "1.0" and isinstance(task, Task)
        with pytest.raises(GenerationsNotSupported):
            await client.get_task(task.id, after_generation=1)
        with pytest.raises(GenerationsNotSupported):
            await client.send("more", task_id=task.id, if_generation_match=1)
        assert task.generation == 0  # a 1.0 answer carries none


#: clients that read no card to choose their version: (how made, what to call it)
NO_CARD = ["grpc address", "dialect 1.0", "dialect 0.3 rest", "dialect 1.0 grpc"]


def no_card_client(url: str, how: str) -> Client:
    if how == "grpc address":
        return Client(grpc_address_of(url))
    if how == "dialect 1.0":
        return Client(url + "/", dialect="1.0")
    if how == "dialect 0.3 rest":
        return Client(url, dialect="0.3", binding="rest")
    return Client(grpc_address_of(url), dialect="1.0")


@pytest.mark.parametrize("how", NO_CARD)
async def test_a_client_that_read_no_card_says_how_to_ask_for_1_1(offering_url: str,
                                                                  how: str) -> None:
    """A client made for a gRPC address, or given a dialect, reads no card to choose
    its version (docs/grpc.md): asked for a generation, it says so and names how to
    ask for 1.1, not that the card (which offers 1.1 here) offers none."""
    async with no_card_client(offering_url, how) as client:
        task = await client.send("hello")
        assert isinstance(task, Task)
        for ask in (lambda: client.get_task(task.id, after_generation=1),
                    lambda: client.send("more", task_id=task.id, if_generation_match=1)):
            with pytest.raises(GenerationsNotSupported) as refused:
                await ask()
            said = str(refused.value)
            assert "card offers" not in said, said
            assert "dialect='1.1'" in said and "--dialect 1.1" in said, said


async def test_a_card_without_1_1_is_the_reason_given(url: str) -> None:
    async with Client(url) as client:
        task = await client.send("hello")
        with pytest.raises(GenerationsNotSupported, match=r"its card offers no 1\.1 interface"):
            await client.get_task(task.id, after_generation=1)


def test_get_wait_at_a_grpc_address_says_how_to_ask_for_1_1(offering_url: str) -> None:
    """``interlingua get grpc://… --wait`` polls, and its note says why (no card read)
    and names ``--dialect 1.1``."""
    address = grpc_address_of(offering_url)
    task_id = _started(address)
    result = CliRunner().invoke(main, ["get", address, task_id, "--wait", "--timeout", "20"],
                                prog_name="interlingua")
    assert result.exit_code == 0, (result.output, result.stderr)
    assert "no long polls" in result.stderr and "--dialect 1.1" in result.stderr, result.stderr
    assert "card offers" not in result.stderr, result.stderr


def client_11(url: str, binding: str, **kw: object) -> Client:
    """A client asking for 1.1 on ``binding`` (the card's interfaces may say 1.0)."""
    if binding == "grpc":
        return Client(grpc_address_of(url), dialect="1.1", **kw)  # type: ignore[arg-type]
    if binding == "rest":
        return Client(url, dialect="1.1", binding="rest", **kw)  # type: ignore[arg-type]
    return Client(url + "/", dialect="1.1", **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_long_poll_returns_when_the_task_moves_on(url: str, binding: str) -> None:
    async with client_11(url, binding) as client:
        started = await client.send("sleep 1", blocking=False)
        assert isinstance(started, Task) and started.generation >= 1
        seen = [started.generation]
        task = started
        while task.status.state is not TaskState.COMPLETED:
            task = await client.get_task(task.id, after_generation=task.generation, wait=10)
            assert task.generation > seen[-1]  # each answer a step on, never the same
            seen.append(task.generation)
        begun = time.monotonic()
        # past the end: nothing will change, and a finished task is answered at once
        done = await client.get_task(task.id, after_generation=task.generation, wait=5)
        assert time.monotonic() - begun < 2 and done.generation == task.generation


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_long_poll_of_a_task_already_past_is_answered_at_once(
        url: str, binding: str) -> None:
    async with client_11(url, binding) as client:
        task = await client.send("hello")
        assert isinstance(task, Task) and task.generation > 1
        begun = time.monotonic()
        again = await client.get_task(task.id, after_generation=1)
        assert time.monotonic() - begun < 2
        assert again.generation == task.generation


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_stale_follow_up_is_refused_with_the_typed_error(url: str,
                                                                 binding: str) -> None:
    async with client_11(url, binding) as client:
        asked = await client.send("greet")
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        g = asked.generation
        with pytest.raises(TaskGenerationMismatch) as caught:
            await client.send("Ada", task_id=asked.id, context_id=asked.context_id,
                              if_generation_match=g - 1)
        err = caught.value
        assert (err.task_id, err.expected_generation, err.current_generation) == (
            asked.id, g - 1, g)
        # refused means not taken: the task still waits, at the same generation
        still = await client.get_task(asked.id)
        assert still.status.state is TaskState.INPUT_REQUIRED and still.generation == g
        done = await client.send("Ada", task_id=asked.id, context_id=asked.context_id,
                                 if_generation_match=g)
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED


async def test_two_guarded_follow_ups_at_once_one_is_taken(url: str) -> None:
    async with client_11(url, "jsonrpc") as a, client_11(url, "rest") as b:
        asked = await a.send("greet")
        assert isinstance(asked, Task)
        results = await asyncio.gather(
            *(c.send(name, task_id=asked.id, context_id=asked.context_id,
                     if_generation_match=asked.generation)
              for c, name in ((a, "Ada"), (b, "Bob"))),
            return_exceptions=True)
    taken = [r for r in results if isinstance(r, Task)]
    refused = [r for r in results if isinstance(r, TaskGenerationMismatch)]
    assert len(taken) == 1 and len(refused) == 1, results


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_streams_generations_follow_one_another(url: str, binding: str) -> None:
    async with client_11(url, binding) as client:
        events = [e async for e in client.stream("sleep 0.2")]
    numbers = [e.generation for e in events]
    assert numbers[0] >= 1 and not any(e.reconciled for e in events)
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), numbers


@pytest.fixture(scope="module")
def story_port() -> Iterator[int]:
    with live_agent(story) as base:
        yield int(base.rsplit(":", 1)[1])


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_resumed_stream_has_no_generation_gap(story_port: int, binding: str) -> None:
    # Last-Event-ID replays what the cut lost: generations continue without a hole, so
    # the gap check never has to fetch the task
    with CuttingProxy(story_port, cut_after={0: 5, 1: 4}) as proxy:
        async with Client(proxy.url, dialect="1.1",
                          binding=binding,
                          resume=ResumePolicy(sleep=Sleeps(), random=lambda: 1.0)) as client:
            events = await read_all(client.stream("40 0.005"))
    check_story(events, 40)
    assert proxy.connections == 3
    numbers = [e.generation for e in events]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert not any(e.reconciled for e in events)


def _started(url: str) -> str:
    """The id of a task of a second's sleep sent to ``url``, not waited for."""
    async def start() -> str:
        async with Client(url) as client:
            task = await client.send("sleep 1", blocking=False)
            assert isinstance(task, Task)
            return task.id

    return asyncio.run(start())


def test_get_wait_follows_a_card_offering_1_1(offering_url: str) -> None:
    task_id = _started(offering_url)
    result = CliRunner().invoke(main, ["get", offering_url, task_id, "--wait", "--json",
                                       "--timeout", "20"], prog_name="interlingua")
    assert result.exit_code == 0, (result.output, result.stderr)
    numbers = [int(json.loads(line)["generation"]) for line in result.stdout.splitlines()]
    assert len(numbers) >= 2 and numbers == sorted(set(numbers))  # each step once, in order
    assert json.loads(result.stdout.splitlines()[-1])["status"]["state"] == (
        "TASK_STATE_COMPLETED")
    assert "no long polls" not in result.stderr


def test_get_wait_follows_our_server(url: str) -> None:
    async def start() -> str:
        async with Client(url + "/", dialect="1.1") as client:
            task = await client.send("sleep 1", blocking=False)
            assert isinstance(task, Task)
            return task.id

    task_id = asyncio.run(start())
    result = CliRunner().invoke(main, ["get", url + "/", task_id, "--wait", "--dialect", "1.1",
                                       "--timeout", "20"], prog_name="interlingua")
    assert result.exit_code == 0, (result.output, result.stderr)
    heads = [line for line in result.stdout.splitlines() if line.startswith("Task ")]
    assert heads[-1].endswith("completed") and len(heads) >= 2
    assert "no long polls" not in result.stderr


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_subscription_goes_on_from_its_snapshots_generation(url: str,
                                                                   binding: str) -> None:
    async with client_11(url, binding) as client:
        started = await client.send("sleep 0.5", blocking=False)
        assert isinstance(started, Task)
        events = [e async for e in client.subscribe(started.id)]
    assert isinstance(events[0].item, Task)  # the task as it stands, then what follows it
    numbers = [e.generation for e in events]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), numbers
    assert not any(e.reconciled for e in events)
    assert events[-1].state is TaskState.COMPLETED


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_caller_gives_up_a_held_long_poll(url: str, binding: str) -> None:
    async with client_11(url, binding) as client:
        asked = await client.send("greet")  # waits for input: held, nothing moves it
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        begun = time.monotonic()
        same = await client.get_task(asked.id, after_generation=asked.generation, wait=0.5)
        took = time.monotonic() - begun
        # given up at the caller's wait (the server would hold it 30 s), then read as is
        assert 0.5 <= took < 3, took
        assert same.generation == asked.generation
        # and the client goes on working after the cancelled request
        assert (await client.get_task(asked.id)).id == asked.id
