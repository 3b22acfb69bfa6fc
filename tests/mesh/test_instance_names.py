"""One broker spelt two ways (``127.0.0.1`` and ``localhost``) is one broker to the
instance names of this host: a second instance of an agent takes ``{host}-1`` (SAM's
layout), or is refused (the A2A-over-MQTT profile, one process per agent), instead of
taking the first one's client id and, with it, its session in turn (real Mosquitto)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest

from interlingua import Agent, client_for, create_app
from interlingua.core.model import Task, TaskState
from interlingua.mesh import MeshSettings, attach
from interlingua.mesh.agent import MeshAgent
from interlingua.mesh.instance import InstanceTaken, host_name

from .helpers import need_broker, org_unit

pytestmark = pytest.mark.timeout(30)

SPELLINGS = ("mqtt://127.0.0.1:1883", "mqtt://localhost:1883", "mqtt://LocalHost:1883")


async def echo(text: str) -> str:
    return text


ECHO = Agent("Echo", "Echoes.", echo)


def _localhost_is_loopback() -> None:
    need_broker()
    try:
        found = {a[4][0] for a in socket.getaddrinfo("localhost", 1883, type=socket.SOCK_STREAM)}
    except OSError:
        found = set()
    if "127.0.0.1" not in found:
        pytest.skip("localhost does not resolve to 127.0.0.1 here")


@asynccontextmanager
async def served(url: str, ns: str) -> AsyncIterator[MeshAgent]:
    app = create_app(ECHO, store="memory://", freeze_gc=False)
    attach(app, MeshSettings(url=url, namespace=ns, session_expiry=30, card_interval=0.5,
                             http=False))
    async with app.router.lifespan_context(app):
        yield app.state.mesh


async def test_instances_given_one_broker_spelt_otherwise_take_names_of_their_own(
        ns: str) -> None:
    _localhost_is_loopback()
    async with AsyncExitStack() as stack:
        agents = [await stack.enter_async_context(served(url, ns)) for url in SPELLINGS]
        host = host_name()
        assert sorted(a.instance for a in agents) == [f"{host}-0", f"{host}-1", f"{host}-2"]
        assert len({a.client_id for a in agents}) == 3
        # none takes another's session: every request is answered
        async with client_for(f"{SPELLINGS[0]}/{ns}/Echo", timeout=5) as client:
            for n in range(9):
                task = await client.send(f"hello {n}")
                assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert sum(a.handled for a in agents) == 9


async def test_a_second_agent_of_the_profile_on_one_broker_spelt_otherwise_is_refused() -> None:
    _localhost_is_loopback()
    org, unit = org_unit()

    def attached(url: str) -> Any:
        app = create_app(ECHO, store="memory://", freeze_gc=False)
        attach(app, MeshSettings(url=url, namespace="", profile="emqx", org=org, unit=unit,
                                 session_expiry=30, http=False))
        return app

    first = attached(SPELLINGS[0])
    async with first.router.lifespan_context(first):
        with pytest.raises(InstanceTaken, match="already served by another process"):
            attached(SPELLINGS[1])


async def test_a_name_whose_holder_stops_in_this_very_loop_is_not_waited_for(ns: str) -> None:
    """An agent attached in the event loop (thread) where the holder of its name stops
    does not wait for that holder: the stop cannot go on while the claim blocks the
    thread. The claim waited in vain, the loop standing still for all the time the
    holder said its stop may take (16 s), before it took the next name all the same."""
    need_broker()
    async with served(SPELLINGS[0], ns) as first:
        stopping = asyncio.create_task(first.stop())
        await asyncio.sleep(0)  # its stop has begun: the name is marked as being let go of
        began = time.monotonic()
        async with served(SPELLINGS[0], ns) as second:
            assert time.monotonic() - began < 3
            assert second.instance == f"{host_name()}-1"
        await stopping
