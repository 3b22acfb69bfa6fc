"""Remote A2A agents as tools: OpenAI function tools and pydantic-ai tools, over real HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Iterator

import pytest
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.test import TestModel

from interlingua import Client, Task, TaskState, get_text
from interlingua.adapters.openai import chat_agent
from interlingua.cli.serve import load_agent
from interlingua.tools import RemoteAgent
from tests.e2e.procs import free_port
from tests.live import live_agent

from .chat_server import ChatServer


@pytest.fixture(scope="module")
def agents() -> Iterator[dict[str, str]]:
    with live_agent(load_agent("examples/flight_booking.py")) as flights, \
            live_agent(load_agent("examples/support_tickets.py")) as tickets:
        yield {"flights": flights, "tickets": tickets}


async def test_definition_from_the_card(agents: dict[str, str]) -> None:
    d = await RemoteAgent(agents["tickets"]).definition()
    assert d["type"] == "function"
    assert d["function"]["name"] == "Support_tickets"
    assert d["function"]["description"] == (
        "Ask the agent 'Support tickets': Lists your open IT support tickets as JSON.")
    assert d["function"]["parameters"]["required"] == ["message"]
    named = await RemoteAgent(agents["tickets"], name="tickets", description="IT").definition()
    assert (named["function"]["name"], named["function"]["description"]) == ("tickets", "IT")


async def test_a_call_answers_with_the_artifacts(agents: dict[str, str]) -> None:
    answer = await RemoteAgent(agents["tickets"])(json.dumps({"message": "open tickets?"}))
    assert json.loads(answer)[0]["ticketId"] == "IT00123"


async def test_a_question_is_answered_with_the_task_id(agents: dict[str, str]) -> None:
    flights = RemoteAgent(agents["flights"])
    asked = await flights('{"message": "book me a flight"}')
    assert asked.startswith("The agent asks: ") and "Where would you like to fly" in asked
    task_id = asked.split("task_id='")[1].split("'")[0]
    done = await flights(json.dumps({"message": "From JFK to LHR", "task_id": task_id}))
    assert '"from":"JFK"' in done and '"to":"LHR"' in done


async def test_an_answer_is_told_at_the_end_of_the_turn_it_starts() -> None:
    """The answer works a while before it completes: the tool waits for that end, not
    for the input-required it answered (which the task's log replays first)."""
    from tests.client.agents import agent

    with live_agent(agent) as url:
        remote = RemoteAgent(url, timeout=10)
        asked = await remote.ask("ask 0.5")
        assert asked.startswith("The agent asks: ") and "Go on?" in asked
        task_id = asked.split("task_id='")[1].split("'")[0]
        done = await remote.ask("yes", task_id=task_id)
    assert "answered yes" in done, done


@pytest.mark.parametrize("arguments", ["", "not json", "[]", '{"task_id": "x"}',
                                       '{"message": 3}'])
async def test_bad_arguments_are_told_to_the_model(agents: dict[str, str],
                                                   arguments: str) -> None:
    answer = await RemoteAgent(agents["tickets"])(arguments)
    assert answer.startswith("error: the arguments must be")


async def test_an_unreachable_agent_is_told_to_the_model() -> None:
    answer = await RemoteAgent(f"http://127.0.0.1:{free_port()}").ask("hi")
    assert answer.startswith("error: the agent could not be asked")


async def test_pydantic_ai_tools(agents: dict[str, str]) -> None:
    tools = [RemoteAgent(agents["tickets"]).pydantic_ai_tool()]
    orchestrator = PydanticAgent(TestModel(), tools=tools)
    result = await orchestrator.run("which tickets are open?")
    # TestModel calls every tool it is offered, then reports what they returned
    calls = json.loads(result.output)
    assert list(calls) == ["Support_tickets"]
    assert "IT00123" in calls["Support_tickets"]
    offered = result.all_messages()[1].parts[0]
    assert offered.tool_name == "Support_tickets"  # type: ignore[union-attr]


async def test_declared_skills_are_named_in_the_description(agents: dict[str, str]) -> None:
    d = await RemoteAgent(agents["flights"]).definition()
    described = d["function"]["description"]
    assert " Skills: " in described and "Book a flight" in described.split(" Skills: ")[1]


async def test_an_unreachable_agent_is_left_out_of_a_pydantic_ai_turn(
        agents: dict[str, str]) -> None:
    """As chat_agent leaves it out: the turn goes on with the other tools (the
    card read failed the whole run, every turn, while the agent was down)."""
    gone = RemoteAgent(f"http://127.0.0.1:{free_port()}").pydantic_ai_tool()
    orchestrator = PydanticAgent(TestModel(), tools=[gone, RemoteAgent(agents["tickets"])
                                                     .pydantic_ai_tool()])
    result = await orchestrator.run("which tickets are open?")
    assert list(json.loads(result.output)) == ["Support_tickets"]


async def test_agents_whose_cards_share_a_name_get_names_of_their_own(
        agents: dict[str, str], chat_server: tuple[ChatServer, str]) -> None:
    """Two deployments of one agent: ``name``, ``name_2``, as ``interlingua mcp``
    names skills alike (every turn failed on the name taken twice)."""
    with live_agent(load_agent("examples/support_tickets.py")) as other:
        first, second = RemoteAgent(agents["tickets"]), RemoteAgent(other)
        orchestrator = PydanticAgent(TestModel(), tools=[first.pydantic_ai_tool(),
                                                         second.pydantic_ai_tool()])
        for _ in range(2):  # each keeps its name from turn to turn
            result = await orchestrator.run("which tickets are open?")
            calls = json.loads(result.output)
            assert list(calls) == ["Support_tickets", "Support_tickets_2"]
            assert all("IT00123" in answer for answer in calls.values())
        # and for a chat model
        task, offered = await _chat_with(chat_server, [first, second])
    assert offered == ["Support_tickets", "Support_tickets_2"]
    assert get_text(task.artifacts[0], sep="").count("IT00123") == 2
    # a name given is the caller's: it does not give way
    named = RemoteAgent(agents["tickets"], name="Support_tickets")
    assert named.name_among("Support_tickets", {"Support_tickets"}) == "Support_tickets"
    # listed after one whose card says that name, it is still kept: the card's gives way
    # (before: every turn failed, "Two tools are named 'Support_tickets'")
    _, offered = await _chat_with(chat_server, [first, named])
    assert offered == ["Support_tickets_2", "Support_tickets"]


async def _chat_with(chat_server: tuple[ChatServer, str],
                     tools: list[RemoteAgent]) -> tuple[Task, list[str]]:
    """A chat agent with ``tools`` asked once: its completed task, and the names of the
    tools it offered the model."""
    with live_agent(chat_agent("stand-in", base_url=chat_server[1], tools=tools)) as url:
        async with Client(url) as c:
            task = await c.send("open tickets?")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED, task.status
    return task, [t["function"]["name"] for t in chat_server[0].requests[-2]["tools"]]


async def test_a_task_still_running_at_the_timeout_is_named() -> None:
    """Its id, so that its answer can be picked up (the model was told only that the
    agent did not answer within the timeout, while the task worked on)."""
    import threading

    from .peers import slow_agent

    release = threading.Event()
    with live_agent(slow_agent(release, streaming=False)) as url:
        answer = await RemoteAgent(url, timeout=0.5).ask("take your time")
        async with Client(url) as c:
            (task,) = (await c.list_tasks()).tasks
        release.set()
    assert answer.startswith("error: no answer within 0.5 s; the agent's task "), answer
    assert f"{task.id!r} is still working" in answer and task.status.state.value == "working"


async def test_a_timeout_names_the_task_of_an_agent_that_keeps_no_message_ids() -> None:
    """Before: the task was asked for by sending the message again, which such an agent
    takes as a new task: a second one was started, and named as the one still running."""
    from tests.live import live_server

    from .peers import NewTaskEachSend

    peer = NewTaskEachSend()
    with live_server(peer.app) as url:
        answer = await RemoteAgent(url, dialect="0.3", timeout=0.5).ask("take your time")
    assert [task_id for _, _, task_id in peer.sends] == ["task-1"], peer.sends
    assert "the agent's task 'task-1' is still working" in answer, answer


async def test_a_timeout_names_the_task_as_it_is_then() -> None:
    """Not as the send first answered it: the task had moved on to working, and was
    said to be still submitted."""
    from tests.live import live_server

    from .peers import NewTaskEachSend

    # (answered late: the time left to follow it ends before the client's own limit)
    peer = NewTaskEachSend(answered_as="submitted", answered_after=0.25)
    with live_server(peer.app) as url:
        answer = await RemoteAgent(url, dialect="0.3", timeout=0.5).ask("take your time")
    assert "the agent's task 'task-1' is still working" in answer, answer


async def test_an_answer_that_is_a_file_is_named_to_the_model() -> None:
    """Name, media type, size or URL (it was "(the agent answered nothing)")."""
    from .peers import PNG, filer

    with live_agent(filer()) as url:
        answer = await RemoteAgent(url).ask("draw")
    assert answer == (f"[file 'chart.png' (image/png, {len(PNG)} bytes)]\n"
                      "[file 'report.pdf' (application/pdf, at "
                      "https://files.example/report.pdf)]")


async def test_an_endpoint_with_no_card_spoken_to_in_a_dialect_is_a_tool() -> None:
    """Named after its host (``definition`` raised CardNotFound, so chat_agent left
    out a tool whose calls work)."""
    from tests.live import live_server

    from .peers import v03_without_card

    with live_server(v03_without_card()) as url:
        remote = RemoteAgent(url, dialect="0.3")
        d = await remote.definition()
        answer = await remote('{"message": "ping"}')
    host = url.split("//")[1].replace(".", "_").replace(":", "_")
    assert (d["function"]["name"], answer) == (host, "pong: ping")
    assert d["function"]["description"] == f"Ask the agent at {url}."


async def test_an_endpoint_with_no_card_is_named_without_its_credentials() -> None:
    """Before: a user and password in the URL (or a token in its query) went into the
    tool's name and description, to the model server and to MCP clients."""
    from interlingua.adapters.mcp import mcp_server
    from tests.live import live_server

    from .peers import v03_without_card

    with live_server(v03_without_card()) as url:
        secret = url.replace("://", "://alice:s3cretPW@") + "?token=t0ken"
        d = (await RemoteAgent(secret, dialect="0.3").definition())["function"]
        server = await mcp_server(secret, dialect="0.3")
        tools = [(t.name, t.description) for t in await server.list_tools()]
    shown = json.dumps([d, tools, server.name])
    assert "s3cretPW" not in shown and "alice" not in shown and "t0ken" not in shown, shown
    assert d["description"] == f"Ask the agent at {url}."


async def _one_task(c: Client, done: Callable[[Task], bool]) -> Task:
    """The agent's one task, once ``done`` says so of it (within 15 s)."""
    async with asyncio.timeout(15):
        while True:
            tasks = (await c.list_tasks()).tasks
            if tasks and done(tasks[0]):
                return tasks[0]
            await asyncio.sleep(0.05)


async def test_a_canceled_call_cancels_the_task_it_started() -> None:
    """As ``interlingua mcp`` does: the remote task worked on to its end, for nobody."""
    from .peers import slow_agent

    release = threading.Event()
    with live_agent(slow_agent(release, streaming=False)) as url:
        try:
            async with Client(url) as remote:
                call = asyncio.create_task(RemoteAgent(url).ask("long job"))
                await _one_task(remote, lambda t: t.status.state is TaskState.WORKING)
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await call
                task = await _one_task(remote, lambda t: t.status.state is not TaskState.WORKING)
        finally:
            release.set()
    assert task.status.state is TaskState.CANCELED


async def test_canceling_an_orchestrator_s_task_cancels_the_task_its_tool_call_started(
        chat_server: tuple[ChatServer, str]) -> None:
    from .peers import slow_agent

    release = threading.Event()
    with live_agent(slow_agent(release, streaming=False)) as slow:
        try:
            orchestrator = chat_agent("stand-in", base_url=chat_server[1],
                                      tools=[RemoteAgent(slow)])
            with live_agent(orchestrator) as url:
                async with Client(url) as c, Client(slow) as remote:
                    asked = await c.send("long job", blocking=False)
                    assert isinstance(asked, Task)
                    await _one_task(remote, lambda t: t.status.state is TaskState.WORKING)
                    canceled = await c.cancel(asked.id)
                    task = await _one_task(remote,
                                           lambda t: t.status.state is not TaskState.WORKING)
        finally:
            release.set()
    assert canceled.status.state is TaskState.CANCELED
    assert task.status.state is TaskState.CANCELED
