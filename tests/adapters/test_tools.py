"""Remote A2A agents as tools: OpenAI function tools and pydantic-ai tools, over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.test import TestModel

from interlingua.cli.serve import load_agent
from interlingua.tools import RemoteAgent
from tests.e2e.procs import free_port
from tests.live import live_agent


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
