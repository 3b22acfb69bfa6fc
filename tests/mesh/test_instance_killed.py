"""Two ``interlingua serve --mesh`` processes of one agent on one SQLite store:
the instance running a streamed task is killed (SIGKILL) in the middle of it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from interlingua.core.errors import TaskNotCancelable
from interlingua.core.model import StatusUpdate, TaskState
from interlingua.mesh.client import MeshClient
from interlingua.mesh.discovery import Discovery
from interlingua.mesh.topics import Topics, parse_mesh_url

from .helpers import BROKER, Peer, decoded, stop_child

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")


def _serve(ns: str, store: str, instance: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    # Session expiry 0: a killed instance's shared subscription ends with its
    # connection, so the broker hands every later request to the live one. A lease
    # timeout of 6 s: heartbeats every 1.5 s, so that B mostly ends A's tasks after
    # the cancel below has reached it (a dead process of this machine loses its
    # lease at the next heartbeat, whatever the timeout).
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", "tests/mesh/slow_agent.py", "--store", store, "--json",
         "--log-level", "warning", "--drain-seconds", "0", "--no-http",
         "--lease-timeout", "6", "--mesh", BROKER, "--namespace", ns,
         "--mesh-instance", instance, "--mesh-session-expiry", "0",
         "--mesh-card-interval", "0.3"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.communicate()
    return proc, json.loads(line)


async def _until(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.1)


def _instances(discovery: Discovery) -> set[str]:
    agent = discovery.get("Slow")
    return set(agent.instances) if agent is not None else set()


async def test_a_killed_instance_s_task_ends_failed_and_its_requester_hears_it(
        ns: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'shared.db'}"
    discovery = Discovery(parse_mesh_url(BROKER), Topics(ns), ttl=1.5)
    await discovery.start()
    procs: list[subprocess.Popen[str]] = []
    try:
        a, _ = _serve(ns, store, "a")
        procs.append(a)
        async with MeshClient(f"{BROKER}/{ns}/Slow", timeout=20) as client, Peer(ns) as peer:
            # a raw requester too, as SAM's gateways ask: its own topics, correlation data
            reply_to = f"{ns}/a2a/v1/gateway/response/gw1/t-raw"
            status_to = f"{ns}/a2a/v1/gateway/status/gw1/t-raw"
            await peer.listen(reply_to, status_to)
            await peer.request("Slow", {
                "jsonrpc": "2.0", "id": "t-raw", "method": "tasks/send-streaming",
                "params": {"message": {"role": "user", "parts": [{"text": "60"}],
                                       "message_id": "m-raw"}}},
                replyTo=reply_to, a2aStatusTopic=status_to, correlation=b"c-1")
            await peer.until(status_to)  # working, in A (the only instance yet)
            # one more, to be canceled once A is gone; it names a reply route of its
            # own in its metadata, which is not the one its answers take
            forged = f"{ns}/forged"
            await peer.listen(reply_to + "2", forged)
            await peer.request("Slow", {
                "jsonrpc": "2.0", "id": "t-raw2", "method": "tasks/send",
                "params": {"message": {
                    "role": "user", "parts": [{"text": "60"}], "message_id": "m-raw2",
                    "metadata": {"interlingua_mesh_reply": {"id": "x", "reply_to": forged}}}}},
                replyTo=reply_to + "2")

            stream = client.stream("60")
            first = await anext(stream)
            assert isinstance(first.item, StatusUpdate)
            task_id = first.item.task_id
            seen: list[StatusUpdate] = [first.item]
            while not any(s.status.message and s.status.message.parts[0].text == f"pid {a.pid}"
                          for s in seen):
                item = (await anext(stream)).item
                assert isinstance(item, StatusUpdate)
                seen.append(item)  # the turn runs in A

            b, _ = _serve(ns, store, "b")
            procs.append(b)
            await _until(lambda: _instances(discovery) == {"a", "b"}, 10, "both cards heard")

            a.send_signal(signal.SIGKILL)
            a.wait(10)
            # A moment for the broker to see A gone (what it does with a message sent
            # to a member it has not yet seen die is its business), and mostly before
            # B has ended A's tasks: the cancel reaches B, which hands it on (nobody
            # runs the task any more) and then answers it itself
            await asyncio.sleep(0.2)
            cancel = asyncio.create_task(client.cancel("t-raw2"))
            # the stream goes on: B ends the task and tells this requester
            rest = [event.item async for event in stream]
            last = rest[-1]
            assert isinstance(last, StatusUpdate)
            assert last.task_id == task_id
            assert last.status.state is TaskState.FAILED
            assert last.status.message is not None
            assert last.status.message.parts[0].text == \
                "The server that was running the task stopped."
            assert client.last_result is not None
            final = msgspec.json.decode(client.last_result)
            assert final["kind"] == "task" and final["id"] == task_id
            assert final["status"]["state"] == "failed"

            final_raw, before = await peer.until(reply_to, timeout=20)
            answer = decoded(final_raw)
            assert answer["id"] == "t-raw"
            assert answer["result"]["id"] == "t-raw"
            assert answer["result"]["status"]["state"] == "failed"
            assert final_raw.correlation == b"c-1"
            history = answer["result"]["history"]
            assert history and all("interlingua_mesh_reply" not in (m.get("metadata") or {})
                                   for m in history)  # the stored route is not answered
            ended = decoded([m for m in before if m.topic == status_to][-1])["result"]
            assert ended["kind"] == "status-update" and ended["status"]["state"] == "failed"

            # ... with the refusal: B ended the task failed meanwhile
            with pytest.raises(TaskNotCancelable):
                await cancel
            # the blocking send's requester got the failed Task (with its artifacts, had
            # it any), on its replyTo only
            heard = before + await peer.quiet(0.5)
            told = [decoded(m) for m in heard if m.topic == reply_to + "2"]
            assert [(t["id"], t["result"]["status"]["state"]) for t in told] == \
                [("t-raw2", "failed")]
            assert not [m for m in heard if m.topic == forged]

            # A's card ages out; B is still heard
            await _until(lambda: _instances(discovery) == {"b"}, 10, "A forgotten")
            # the store agrees, read through B
            got = await client.get_task(task_id)
            assert got.status.state is TaskState.FAILED
            # and B serves new requests
            for n in range(3):
                done = await client.send("0")
                assert done.status.state is TaskState.COMPLETED, n
                assert done.status.message is not None
                assert done.status.message.parts[0].text == f"done by {b.pid}"
    finally:
        await discovery.stop()
        for proc in procs:
            stop_child(proc)


async def test_an_instance_restarted_on_its_store_tells_the_requester_of_its_task(
        ns: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'alone.db'}"
    procs: list[subprocess.Popen[str]] = []
    try:
        async with Peer(ns) as peer:
            reply_to = f"{ns}/a2a/v1/gateway/response/gw1/t-alone"
            status_to = f"{ns}/a2a/v1/gateway/status/gw1/t-alone"
            await peer.listen(reply_to, status_to)
            a, _ = _serve(ns, store, "a")
            procs.append(a)
            await peer.request("Slow", {
                "jsonrpc": "2.0", "id": "t-alone", "method": "tasks/send-streaming",
                "params": {"message": {"role": "user", "parts": [{"text": "60"}],
                                       "message_id": "m-alone"}}},
                replyTo=reply_to, a2aStatusTopic=status_to)
            await peer.until(status_to)
            a.send_signal(signal.SIGKILL)
            a.wait(10)
            assert not [m for m in await peer.quiet(0.5) if m.topic == reply_to]

            again, _ = _serve(ns, store, "a")  # the same store, later
            procs.append(again)
            told, before = await peer.until(reply_to, timeout=20)
            result = decoded(told)["result"]
            assert decoded(told)["id"] == "t-alone" and result["id"] == "t-alone"
            assert result["status"]["state"] == "failed"
            assert result["status"]["message"]["parts"] == [
                {"text": "The server restarted while the task was running."}]
            ended = decoded([m for m in before if m.topic == status_to][-1])["result"]
            assert ended["status"]["state"] == "failed"
    finally:
        for proc in procs:
            stop_child(proc)
