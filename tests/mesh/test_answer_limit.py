"""``max_answer_bytes`` holds on the mesh as over HTTP and gRPC: a mesh client (SAM's
layout and the A2A-over-MQTT profile's) refuses an answer, or a card, larger than it
with ``BadResponse`` naming the bound, where the keyword was taken and dropped
(real Mosquitto)."""

from __future__ import annotations

import pytest

from interlingua import Agent, Context, client_for
from interlingua.client.errors import BadResponse
from interlingua.core.model import Task, TaskState

from .helpers import BROKER, need_broker, on_emqx, on_mesh, org_unit

pytestmark = pytest.mark.timeout(40)


async def echo(ctx: Context) -> None:
    """The text it is sent, or 20,000 characters for "big"."""
    await ctx.artifact("x" * 20_000 if ctx.text == "big" else ctx.text)
    await ctx.complete()


ECHO = Agent("Echo", "Echoes.", echo, streaming=True)


@pytest.fixture(params=["sam", "emqx"])
async def mesh_url(request: pytest.FixtureRequest) -> object:
    """The URL of ``ECHO`` on the mesh, in each layout."""
    need_broker()
    org, unit = org_unit()
    if request.param == "sam":
        async with on_mesh(ECHO, org):
            yield f"{BROKER}/{org}/Echo"
    else:
        async with on_emqx(ECHO, org, unit):
            yield f"{BROKER}/{org}/{unit}/Echo"


async def test_an_answer_past_the_bound_is_refused_and_one_within_it_read(
        mesh_url: str) -> None:
    async with client_for(mesh_url, timeout=10, max_answer_bytes=8_000) as client:
        task = await client.send("small")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        with pytest.raises(BadResponse, match="answered more than 8000 bytes"):
            await client.send("big")
        with pytest.raises(BadResponse, match="answered more than 8000 bytes"):
            [e async for e in client.stream("big")]  # the last event holds the artifact


async def test_a_card_past_the_bound_is_refused(mesh_url: str) -> None:
    async with client_for(mesh_url, timeout=10, max_answer_bytes=100) as client:
        with pytest.raises(BadResponse, match="answered more than 100 bytes"):
            await client.get_card()


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_a_bound_that_is_no_number_of_bytes_is_refused(bad: object) -> None:
    for url in (f"{BROKER}/ns/Echo", f"{BROKER}/org/unit/Echo"):
        with pytest.raises(ValueError, match="max_answer_bytes must be a positive number"):
            client_for(url, max_answer_bytes=bad)


async def test_an_agent_holds_its_answers_to_max_answer_bytes_in_the_profile_too() -> None:
    """The A2A-over-MQTT agent's answers are held to ``max_answer_bytes`` as every other
    binding's are (SAM's layout: tests/bindings/test_parity.py): past it, an internal
    error naming the limit, where the whole answer was published."""
    from interlingua import create_app
    from interlingua.core.errors import InternalError
    from interlingua.mesh import MeshSettings, attach

    need_broker()
    org, unit = org_unit()
    app = create_app(ECHO, store="memory://", freeze_gc=False, max_answer_bytes=4096)
    attach(app, MeshSettings(url=BROKER, namespace="", profile="emqx", org=org, unit=unit,
                             session_expiry=30, http=False))
    async with app.router.lifespan_context(app), \
            client_for(f"{BROKER}/{org}/{unit}/Echo", timeout=10) as client:
        with pytest.raises(InternalError, match="limit of 4096 bytes"):
            await client.send("big")
        task = await client.send("small")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED


async def test_a_streamed_sends_last_answer_is_held_to_max_answer_bytes_too() -> None:
    """In SAM's layout a stream ends with the whole task on the reply topic: held to
    ``max_answer_bytes`` as a blocking send's answer is (it was published whole)."""
    from interlingua import create_app
    from interlingua.core.errors import InternalError
    from interlingua.mesh import MeshSettings, attach

    need_broker()
    org, _ = org_unit()
    app = create_app(ECHO, store="memory://", freeze_gc=False, max_answer_bytes=4096)
    attach(app, MeshSettings(url=BROKER, namespace=org, session_expiry=30, http=False))
    async with app.router.lifespan_context(app), \
            client_for(f"{BROKER}/{org}/Echo", timeout=10) as client:
        with pytest.raises(InternalError, match="limit of 4096 bytes"):
            [e async for e in client.stream("x" * 6_000)]
        small = [e.item async for e in client.stream("small")]
        assert small[-1].status.state is TaskState.COMPLETED, small  # type: ignore[union-attr]



async def _counts(ctx: Context) -> None:
    await ctx.artifact(f"{len(ctx.text)} characters")
    await ctx.complete("counted")


async def test_a_gateway_ends_a_task_as_the_agent_did_when_its_last_answer_is_too_large(
) -> None:
    """A streamed turn through the gateway whose every event fits the agent's
    ``max_answer_bytes`` but whose final Task (with the history: the long message) does
    not: the agent completed the task and answered its last answer with the -32603 of
    the limit, which the gateway took for the turn's end ("The agent failed")."""
    from interlingua import Client, create_app
    from interlingua.mesh import MeshSettings, attach

    from .test_gateway import gateway

    need_broker()
    ns, _ = org_unit()
    counter = Agent("Counter", "Counts the characters.", _counts, streaming=True)
    app = create_app(counter, store="memory://", freeze_gc=False, max_answer_bytes=4096)
    attach(app, MeshSettings(url=BROKER, namespace=ns, session_expiry=30, http=False,
                             card_interval=0.5))
    async with app.router.lifespan_context(app), gateway(ns) as url, \
            Client(url + "/agents/Counter/", timeout=20) as client, \
            client_for(f"{BROKER}/{ns}/Counter", timeout=10) as direct:
        events = [e async for e in client.stream("x" * 6_000)]
        task_id = events[0].task_id
        assert (await direct.get_task(task_id, history_length=0)).status.state \
            is TaskState.COMPLETED
        task = await client.get_task(task_id, history_length=0)
    assert events[-1].state is TaskState.COMPLETED, events[-1]
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message.parts[0].text == "counted"  # type: ignore[union-attr]
    assert task.artifacts[0].parts[0].text == "6000 characters"  # type: ignore[union-attr]
