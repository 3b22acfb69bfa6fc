"""A gateway whose agent is killed (``kill -9``): an ``interlingua serve --mesh``
process of ``tests/mesh/slow_agent.py`` with a persistent session, and a gateway in
this process (real Mosquitto).

- Killed before a request: the gateway gives up on it ("did not take the request"),
  and the request must not run when the agent is back. Its session had kept the
  request, and the restarted agent ran and completed what the caller had been told
  had failed.
- Killed in the middle of a blocking turn: the turn waited for ever. It ends failed
  once the agent has left the registry, and the gateway's tasks of that agent stay
  readable (they were 404 "no agent is live" with the agent away).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from interlingua import Client
from interlingua.core.errors import A2AError, TaskNotCancelable, TaskNotFound
from interlingua.core.model import Task, TaskState
from interlingua.mesh.client import MeshClient
from interlingua.mesh.gateway import Gateway
from interlingua.mesh.topics import parse_mesh_url
from tests.live import live_server

from .helpers import BROKER, need_broker, stop_child
from .test_serve_cli import ROOT, SCRIPT

pytestmark = pytest.mark.timeout(90)


def _serve_slow(ns: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", "tests/mesh/slow_agent.py", "--store", "memory://", "--json",
         "--log-level", "warning", "--drain-seconds", "0", "--no-http",
         "--mesh", BROKER, "--namespace", ns, "--mesh-instance", "one",
         "--mesh-session-expiry", "60", "--mesh-card-interval", "0.3"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()  # said once it has subscribed to its requests
    assert line, proc.communicate()
    json.loads(line)
    return proc


@contextlib.contextmanager
def _agent(ns: str) -> Iterator[list[subprocess.Popen[str]]]:
    need_broker()
    procs = [_serve_slow(ns)]
    try:
        yield procs
    finally:
        for proc in procs:
            stop_child(proc)


@contextlib.asynccontextmanager
async def _gateway(ns: str, **options: Any) -> AsyncIterator[tuple[str, Gateway]]:
    app = Gateway(parse_mesh_url(BROKER), ns, warmup=0, **options)
    with live_server(app) as url:
        async with httpx.AsyncClient() as http:
            for _ in range(100):
                if (await http.get(url + "/agents")).json()["agents"]:
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the gateway heard no agent")
        yield url, app


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


async def test_a_request_the_gateway_gave_up_on_does_not_run_when_the_agent_is_back(
        ns: str) -> None:
    with _agent(ns) as procs:
        async with _gateway(ns) as (url, gateway), \
                Client(url + "/agents/Slow/", timeout=60) as client:
            gateway.link.take_within = 2.0  # (30 s by default)
            _kill(procs[0])
            began = time.monotonic()
            task = await client.send("1")
            assert isinstance(task, Task)
            assert task.status.state is TaskState.FAILED
            said = task.status.message.parts[0].text  # type: ignore[union-attr]
            assert "did not take the request" in said, said
            assert time.monotonic() - began < 15
            # the agent back, with the session that kept what was published meanwhile
            procs.append(_serve_slow(ns))
            async with MeshClient(f"{BROKER}/{ns}/Slow", timeout=10) as direct:
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    with pytest.raises(TaskNotFound):
                        ran = await direct.get_task(task.id)
                        pytest.fail(f"the request ran after the gateway gave up on it: "
                                    f"{ran.status.state.value}")
                    await asyncio.sleep(0.3)
            again = await client.get_task(task.id)
            assert again.status.state is TaskState.FAILED


async def test_a_blocking_turn_ends_once_its_agent_has_left_and_its_tasks_stay_readable(
        ns: str) -> None:
    with _agent(ns) as procs:
        # the agent's instance is forgotten 1.8 s after its last card (six periods)
        async with _gateway(ns, ttl=1.0) as (url, gateway), \
                Client(url + "/agents/Slow/", timeout=60) as client:
            gateway.away_grace = 0.5  # (10 s by default: the time a stopping agent has)
            turn = asyncio.create_task(client.send("20"))
            listed: list[Task] = []
            for _ in range(100):
                listed = (await client.list_tasks()).tasks
                if listed and listed[0].status.state is TaskState.WORKING:
                    break
                await asyncio.sleep(0.1)
            assert listed and listed[0].status.state is TaskState.WORKING
            _kill(procs[0])
            began = time.monotonic()
            async with asyncio.timeout(20):
                task = await turn
            assert isinstance(task, Task)
            assert time.monotonic() - began < 10
            assert task.status.state is TaskState.FAILED
            said = task.status.message.parts[0].text  # type: ignore[union-attr]
            assert "Slow" in said and "left the mesh" in said, said
            # the agent away: its tasks at the gateway are read as before
            got = await client.get_task(task.id)
            assert got.status.state is TaskState.FAILED
            assert [t.id for t in (await client.list_tasks()).tasks] == [task.id]
            replay = [e async for e in client.subscribe(task.id, last_event_id=0)]
            assert replay[-1].state is TaskState.FAILED
            with pytest.raises(TaskNotCancelable):
                await client.cancel(task.id)
            # a new turn is refused at once, saying why
            with pytest.raises(A2AError, match="no agent 'Slow' is live"):
                await client.send("1")
            # a client that reads the card now reads the task too
            async with Client(url + "/agents/Slow/") as fresh:
                assert (await fresh.get_task(task.id)).status.state is TaskState.FAILED
            # the listing and its health say it is gone
            async with httpx.AsyncClient() as http:
                assert (await http.get(url + "/agents")).json()["agents"] == []
                health = await http.get(url + "/agents/Slow/healthz")
                assert health.status_code == 404, health.text


async def test_a_turn_whose_agent_stops_cleanly_ends_as_the_agent_ends_it(ns: str) -> None:
    """SIGTERM: the agent withdraws its card at once, and ends the turn it has in hand
    before it goes. The turn is not failed meanwhile (``away_grace``)."""
    with _agent(ns) as procs:
        async with _gateway(ns) as (url, gateway), \
                Client(url + "/agents/Slow/", timeout=60) as client:
            # (10 s by default: room for a stop slowed down by a busy machine; without
            # the grace the turn fails at once)
            gateway.away_grace = 30.0
            turn = asyncio.create_task(client.send("2"))
            for _ in range(100):
                listed = (await client.list_tasks()).tasks
                if listed and listed[0].status.state is TaskState.WORKING:
                    break
                await asyncio.sleep(0.1)
            procs[0].send_signal(signal.SIGTERM)
            stopped = time.monotonic()
            async with asyncio.timeout(40):
                task = await turn
            assert isinstance(task, Task)
            assert task.status.state is TaskState.COMPLETED, task.status
            # the agent's task, read to check the gateway's copy, is not waited for as
            # from an agent on the mesh: the agent that withdrew answers no more (the
            # turn's end waited 10 s, past the grace of a busy machine)
            assert time.monotonic() - stopped < 8


@pytest.mark.parametrize("way", ["jsonrpc-1.0", "rest-1.0", "jsonrpc-0.3"])
async def test_a_cancel_of_a_running_task_whose_agent_was_killed_is_refused(
        ns: str, way: str) -> None:
    """The agent cannot be told of the cancel (killed mid-turn, its card not aged out
    yet): the cancel is refused as not cancelable, in the caller's dialect, and the
    gateway's task is left working. It was answered canceled at once, while the agent,
    restarted, ended the same task failed."""
    binding, _, dialect = way.partition("-")
    with _agent(ns) as procs:
        async with _gateway(ns, cancel_grace=1.0) as (url, _), \
                Client(url + "/agents/Slow/", timeout=60) as client, \
                Client(url + "/agents/Slow/", binding=binding, dialect=dialect,
                       timeout=30) as caller:
            stream = client.stream("30")
            try:
                task_id = (await anext(stream)).task_id
                assert task_id is not None
                async for event in stream:  # the agent has it
                    if event.state is TaskState.WORKING:
                        break
                _kill(procs[0])
                began = time.monotonic()
                with pytest.raises(TaskNotCancelable, match="Slow could not be told"):
                    await caller.cancel(task_id)
                assert time.monotonic() - began < 5
                kept = await caller.get_task(task_id)
                assert kept.status.state is TaskState.WORKING, kept.status
            finally:
                await stream.aclose()
