"""Restarts of ``interlingua serve --mesh`` processes: the default instance name is
the same on every start, so the broker session it left (and what was queued in it)
is resumed, and no request is left waiting for a session nobody comes back to."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlingua.client.stream import StreamEvent
from interlingua.core.model import StatusUpdate, Task, TaskState
from interlingua.mesh.client import MeshClient
from interlingua.mesh.instance import host_name

from .helpers import BROKER, Peer, stop_child, stop_children

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")


def _start(ns: str, *options: str, agent: str = "examples/echo.py",
           http: bool = False) -> subprocess.Popen[str]:
    """A mesh-only agent with the default instance name; returned once it is on the
    mesh (its JSON line is printed when its request topic is subscribed). ``http``:
    served over HTTP as well, with the default drain; its line is printed once its
    instance name is held, before it connects to the broker."""
    layout = ("--port", "0") if http else ("--drain-seconds", "0", "--no-http")
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", agent, "--store", "memory://", "--json",
         "--log-level", "warning", *layout,
         "--mesh", BROKER, "--namespace", ns, "--mesh-session-expiry", "60", *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.communicate()
    assert "request_topic" in json.loads(line)
    return proc


def _end(proc: subprocess.Popen[str], how: str) -> None:
    """SIGTERM (a clean stop) or SIGKILL, and wait for the process to be gone."""
    if how == "term":
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    else:
        proc.kill()
        proc.wait(20)
    proc.communicate()


async def _answered(client: MeshClient, sends: list[asyncio.Task[object]]) -> int:
    done = await asyncio.gather(*sends, return_exceptions=True)
    return sum(isinstance(d, Task) and d.status.state is TaskState.COMPLETED for d in done)


def _burst(client: MeshClient, tag: str, n: int = 20) -> list[asyncio.Task[object]]:
    return [asyncio.create_task(client.send(f"{tag}-{i}")) for i in range(n)]


@pytest.mark.parametrize("how", ["term", "kill"])
async def test_every_request_after_each_of_five_restarts_is_answered(ns: str, how: str) -> None:
    proc = _start(ns)
    try:
        async with MeshClient(f"{BROKER}/{ns}/Echo", timeout=15) as client:
            assert await _answered(client, _burst(client, "fresh")) == 20
            counts = []
            for n in range(5):
                _end(proc, how)
                proc = _start(ns)
                counts.append(await _answered(client, _burst(client, f"r{n}")))
            assert counts == [20] * 5
    finally:
        stop_child(proc)


@pytest.mark.parametrize("how", ["term", "kill"])
async def test_every_request_published_during_a_five_second_outage_is_answered(
        ns: str, how: str) -> None:
    proc = _start(ns)
    try:
        async with MeshClient(f"{BROKER}/{ns}/Echo", timeout=40) as client:
            assert await _answered(client, _burst(client, "before")) == 20
            _end(proc, how)
            sends = _burst(client, "away")
            await asyncio.sleep(5)  # the outage: the requests wait in the broker's session
            proc = _start(ns)
            assert await _answered(client, sends) == 20
    finally:
        stop_child(proc)


async def test_requests_that_arrive_while_an_instance_stops_are_left_for_its_restart(
        ns: str) -> None:
    """A clean stop lets a running turn finish; requests the broker hands the
    instance meanwhile are not taken (nor acknowledged), and its restart answers them."""
    proc = _start(ns, agent="tests/mesh/slow_agent.py")
    try:
        async with MeshClient(f"{BROKER}/{ns}/Slow", timeout=40) as client, Peer(ns) as peer:
            await peer.listen(peer.topics.withdrawals())
            stream = client.stream("2")
            await anext(stream)  # the slow turn is running
            rest = asyncio.create_task(_drain(stream))
            proc.send_signal(signal.SIGTERM)
            await peer.next(timeout=10)  # its withdrawal: the stop has begun
            # published while it stops (the slow turn keeps it connected), until it is gone
            sends: list[asyncio.Task[object]] = []
            while proc.poll() is None:
                sends.append(asyncio.create_task(client.send("0")))
                await asyncio.sleep(0.05)
            assert proc.wait(20) == 0
            proc.communicate()
            assert len(sends) >= 10
            proc = _start(ns, agent="tests/mesh/slow_agent.py")
            assert await _answered(client, sends) == len(sends)
            assert await rest is TaskState.COMPLETED
    finally:
        stop_child(proc)


@pytest.mark.parametrize("given", [False, True], ids=["default-name", "given-name"])
async def test_an_instance_started_while_the_last_one_still_stops_resumes_its_session(
        ns: str, given: bool) -> None:
    """A supervisor starts the new process before the old one has finished its stop (a
    slow turn keeps it busy): the new one waits for the old one's name and resumes its
    session, with the requests left in it while the old one stopped. It took the next
    name ({host}-1), and those requests waited for a session nobody came back to until
    it expired; a name given was refused as held by a live process."""
    instance = "one" if given else f"{host_name()}-0"
    options = ("--mesh-card-interval", "0.3", *(("--mesh-instance", "one") if given else ()))
    slow = "tests/mesh/slow_agent.py"
    proc = _start(ns, *options, agent=slow)
    try:
        async with MeshClient(f"{BROKER}/{ns}/Slow", timeout=40) as client, Peer(ns) as peer:
            await peer.listen(peer.topics.withdrawals())
            stream = client.stream("3")
            await anext(stream)  # the slow turn keeps the stop busy for 3 s
            rest = asyncio.create_task(_drain(stream))
            proc.send_signal(signal.SIGTERM)
            await peer.next(timeout=10)  # its withdrawal: the stop has begun
            left = [asyncio.create_task(client.send("0")) for _ in range(5)]
            await asyncio.sleep(0.3)  # published while it stops
            old, proc = proc, await asyncio.to_thread(_start, ns, *options, agent=slow)
            assert old.wait(20) == 0
            old.communicate()
            await peer.listen(peer.topics.discovery())
            card, _ = await peer.until(peer.topics.discovery())
            assert card.properties["a2aInstance"] == instance
            assert await _answered(client, left) == 5
            assert await rest is TaskState.COMPLETED
    finally:
        stop_child(proc)


@pytest.mark.parametrize("given", [False, True], ids=["default-name", "given-name"])
async def test_an_instance_served_with_http_started_while_the_last_one_drains_resumes_its_session(
        ns: str, given: bool) -> None:
    """Served over HTTP too (the common case), a process begins its stop with the HTTP
    drain, which a slow turn keeps busy; a supervisor starts the new process at once.
    The new one waits for the old one's name and resumes its session, with the
    requests published while it waited. The old one said it was stopping only once
    the drain was over: the new one took the next name ({host}-1), or was refused the
    name given, and the requests left in the old session waited for nobody (those
    sent during the drain were refused as sent to a server shutting down)."""
    instance = "one" if given else f"{host_name()}-0"
    options = ("--mesh-card-interval", "0.3", *(("--mesh-instance", "one") if given else ()))
    slow = "tests/mesh/slow_agent.py"
    async with Peer(ns) as peer:
        await peer.listen(peer.topics.discovery(), peer.topics.withdrawals())
        proc = _start(ns, *options, agent=slow, http=True)
        starting: asyncio.Task[subprocess.Popen[str]] | None = None
        try:
            await peer.until(peer.topics.discovery())  # on the mesh
            async with MeshClient(f"{BROKER}/{ns}/Slow", timeout=60) as client:
                stream = client.stream("3")
                await anext(stream)  # the slow turn keeps the drain busy for 3 s
                rest = asyncio.create_task(_drain(stream))
                proc.send_signal(signal.SIGTERM)
                # started at once, while the old one drains
                starting = asyncio.create_task(
                    asyncio.to_thread(_start, ns, *options, agent=slow, http=True))
                await peer.until(peer.topics.withdrawals())  # the old one's stop has begun
                await asyncio.sleep(0.2)
                left = [asyncio.create_task(client.send("0")) for _ in range(5)]
                await asyncio.sleep(0.3)  # published while the new one waits
                drained = not rest.done()  # and while the old one drains: the turn runs
                old = proc
                # (uvicorn raises the signal again once it has stopped)
                assert await asyncio.to_thread(old.wait, 60) in (0, -signal.SIGTERM)
                old.communicate()
                proc, starting = await starting, None
                while not peer.heard.empty():
                    peer.heard.get_nowait()
                card, _ = await peer.until(peer.topics.discovery())
                assert card.properties["a2aInstance"] == instance
                assert await _answered(client, left) == 5
                assert await rest is TaskState.COMPLETED
                assert drained
        finally:
            await stop_children(proc, starting)


async def _drain(stream: AsyncIterator[StreamEvent]) -> TaskState:
    """The state the stream ends with."""
    last = None
    async for event in stream:
        last = event.item
    assert isinstance(last, (Task, StatusUpdate))
    return last.status.state


async def _instances(peer: Peer, count: int) -> set[str]:
    """The instance names of the next cards heard, until ``count`` different ones."""
    seen: set[str] = set()
    while len(seen) < count:
        card = await peer.next(timeout=20)
        if card.topic == peer.topics.discovery():
            seen.add(card.properties["a2aInstance"])
    return seen


async def test_two_instances_on_one_host_hold_names_of_their_own_across_restarts(
        ns: str) -> None:
    host = host_name()
    procs = [_start(ns, "--mesh-card-interval", "0.3")]
    try:
        procs.append(_start(ns, "--mesh-card-interval", "0.3"))
        async with MeshClient(f"{BROKER}/{ns}/Echo", timeout=15) as client, Peer(ns) as peer:
            await peer.listen(peer.topics.discovery())
            # one session each (one shared would be taken from each other in turn)
            assert await _instances(peer, 2) == {f"{host}-0", f"{host}-1"}
            assert await _answered(client, _burst(client, "both")) == 20
            for how in ("kill", "term"):
                # the first one restarted takes the slot the other does not hold: its own
                _end(procs.pop(0), how)
                procs.append(_start(ns, "--mesh-card-interval", "0.3"))
                assert await _answered(client, _burst(client, how)) == 20
            while not peer.heard.empty():
                peer.heard.get_nowait()
            assert await _instances(peer, 2) == {f"{host}-0", f"{host}-1"}
    finally:
        for proc in procs:
            stop_child(proc)


async def test_a_clean_stop_of_one_of_two_instances_hands_its_share_to_the_other(
        ns: str) -> None:
    procs = [_start(ns, "--mesh-card-interval", "0.3")]
    try:
        async with MeshClient(f"{BROKER}/{ns}/Echo", timeout=10) as client, Peer(ns) as peer:
            await peer.listen(peer.topics.discovery())
            procs.append(_start(ns, "--mesh-card-interval", "0.3"))
            # two cards of each after both are up: each has heard the other
            cards: dict[str, int] = {}
            while len(cards) < 2 or min(cards.values()) < 2:
                card = await peer.next(timeout=20)
                instance = card.properties["a2aInstance"]
                cards[instance] = cards.get(instance, 0) + 1
            _end(procs.pop(), "term")  # scaled down for good
            # no share of the requests waits for the session of the one stopped
            assert await _answered(client, _burst(client, "one")) == 20
    finally:
        for proc in procs:
            stop_child(proc)


def test_a_stop_as_soon_as_an_instance_is_on_the_mesh_ends_it_at_once(ns: str) -> None:
    """SIGTERM the moment the instance says it is on the mesh, when its first card
    falls due: the stop is not lost (it once waited for SIGKILL)."""
    for _ in range(3):
        proc = _start(ns)
        try:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == 0
        finally:
            stop_child(proc)


def test_an_instance_name_held_by_a_live_process_is_refused(ns: str) -> None:
    proc = _start(ns, "--mesh-instance", "one")
    try:
        done = subprocess.run(
            [str(SCRIPT), "serve", "examples/echo.py", "--store", "memory://", "--no-http",
             "--mesh", BROKER, "--namespace", ns, "--mesh-instance", "one"],
            cwd=ROOT, capture_output=True, text=True, timeout=30)
        assert done.returncode == 2
        assert done.stderr.startswith("error: instance 'one' of 'Echo'")
        assert "already running on this host" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        # on another namespace the name is free
        stop_child(_start(ns + "x", "--mesh-instance", "one"))
    finally:
        stop_child(proc)
