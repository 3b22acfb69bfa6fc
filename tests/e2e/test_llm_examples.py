"""The examples that need a model, run as their docstrings say, against the stand-in model server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from interlingua import Client, Task, TaskState, get_text
from interlingua.cli.serve import load_agent
from interlingua.core.model import StatusUpdate
from tests.adapters.chat_server import ChatServer
from tests.adapters.processes import serving, stop
from tests.live import live_agent, live_server

from .procs import free_port


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with live_server(ChatServer().app) as url:
        yield url + "/v1"


async def test_chat_openai(model_url: str) -> None:
    port = free_port()
    proc = serving([sys.executable, "examples/chat_openai.py", "--openai-base-url", model_url,
                    "--model", "stand-in", "--port", str(port), "--store", "memory://"], port)
    try:
        async with Client(f"http://127.0.0.1:{port}") as c:
            assert (await c.get_card()).name == "Chat"
            first = await c.send("Why is the sky blue?")
            assert isinstance(first, Task) and first.status.state is TaskState.COMPLETED
            again = await c.send("And at sunset?", context_id=first.context_id)
            assert isinstance(again, Task)
            assert get_text(again.artifacts[0], sep="") == "You said: And at sunset? (turn 2)"
    finally:
        stop(proc)


async def test_pydantic_ai_agent(model_url: str) -> None:
    port = free_port()
    proc = serving([sys.executable, "examples/pydantic_ai_agent.py", "--openai-base-url",
                    model_url, "--model", "stand-in", "--port", str(port), "--store",
                    "memory://"], port)
    try:
        async with Client(f"http://127.0.0.1:{port}") as c:
            card = await c.get_card()
            assert card.name == "Writing helper"
            assert [s.id for s in card.skills] == ["word_count"]
            events = [e async for e in c.stream("the quick brown fox")]
            task = await c.get_task(events[-1].task_id or "")
        said = [get_text(e.item.status.message) for e in events
                if isinstance(e.item, StatusUpdate) and e.item.status.message is not None]
        assert said == ["Calling word_count"]
        assert task.status.state is TaskState.COMPLETED
        # the stand-in model answers with what the tool returned
        assert get_text(task.artifacts[0], sep="") == "Combined: 4"
    finally:
        stop(proc)


async def test_orchestrator(model_url: str) -> None:
    with live_agent(load_agent("examples/echo.py")) as echo, \
            live_agent(load_agent("examples/support_tickets.py")) as tickets:
        port = free_port()
        proc = serving([sys.executable, "examples/orchestrator.py", "--openai-base-url",
                        model_url, "--model", "stand-in", "--agent", echo, "--agent", tickets,
                        "--port", str(port), "--store", "memory://"], port)
        try:
            async with Client(f"http://127.0.0.1:{port}") as c:
                events = [e async for e in c.stream("Which tickets are open?")]
                task = await c.get_task(events[-1].task_id or "")
        finally:
            stop(proc)
    said = [get_text(e.item.status.message) for e in events
            if isinstance(e.item, StatusUpdate) and e.item.status.message is not None]
    assert said == ["Calling Echo", "Calling Support_tickets"]
    answer = get_text(task.artifacts[0], sep="")
    # each agent was asked, and their answers reached the model
    assert answer.startswith("Combined: Which tickets are open?; [{")
    assert '"ticketId":"IT00123"' in answer


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
async def test_langgraph_agent(dialect: str) -> None:
    with live_agent(load_agent("examples/langgraph_agent.py")) as url:
        async with Client(url, dialect=dialect) as c:
            asked = await c.send("Help me pack")
            assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
            assert get_text(asked.status.message) == "Where are you going?"  # type: ignore[arg-type]
            done = await c.send("Oslo", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    assert get_text(done.artifacts[0], sep="") == (
        "- passport\n- charger\n- toothbrush\n- warm coat\n- gloves\n"
        "Have a good trip to Oslo!")


async def test_the_readme_three_lines(model_url: str) -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## An LLM agent in three lines")[1]
    code = section.split("```python\n")[1].split("```")[0]
    assert len(code.strip().splitlines()) == 3
    namespace: dict[str, object] = {}
    exec(code.replace("http://localhost:11434/v1", model_url)  # the stand-in for the model
         .replace('"llama3.1"', '"stand-in"'), namespace)
    with live_agent(namespace["agent"]) as url:
        async with Client(url) as c:
            task = await c.send("hello")
    assert isinstance(task, Task)
    assert get_text(task.artifacts[0], sep="") == "You said: hello (turn 1)"
