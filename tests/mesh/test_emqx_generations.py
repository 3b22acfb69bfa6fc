"""A2A 1.1 (draft) on the mesh: the A2A-over-MQTT profile carries v1.0, and a request
whose ``a2a-version`` user property asks for 1.1 is read and answered as 1.1, as over
HTTP: generations in tasks and events (the same numbers the HTTP bindings give for
the task), ``ifGenerationMatch`` refusals, long polls. One that does not stays 1.0
(its ``currentGeneration`` a long poll all the same, as over HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua import create_app
from interlingua.core import calls as c
from interlingua.mesh import MeshSettings, attach
from tests.bindings.drivers import DRIVERS_11
from tests.bindings.generations_agent import AGENT
from tests.live import bind_loopback, live_server, url_of

from .helpers import BROKER, EmqxPeer, decoded, need_broker, org_unit

pytestmark = pytest.mark.timeout(60)

MAX_WAIT = 1.0
V11 = {"a2a-version": "1.1"}


@contextlib.contextmanager
def served(org: str, unit: str) -> Iterator[str]:
    """The agent over HTTP (JSON-RPC, HTTP+JSON, gRPC) and in the profile: its base URL."""
    from interlingua.bindings.grpc import add_grpc

    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store="memory://", freeze_gc=False,
                     long_poll_max_wait=MAX_WAIT)
    add_grpc(app, "127.0.0.1:0")
    attach(app, MeshSettings(url=BROKER, namespace="", profile="emqx", org=org, unit=unit,
                             session_expiry=30), name="Gen")
    with live_server(app, sock=sock) as url:
        yield url


def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "r-" + uuid.uuid4().hex[:6], "method": method,
            "params": params}


def message(text: str, task_id: str) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}],
            "taskId": task_id}


class Asker:
    """A requester of the profile: one request at a time, its answers in order."""

    def __init__(self, peer: EmqxPeer) -> None:
        self.peer = peer

    async def ask(self, method: str, params: dict[str, Any], *, until: str = "",
                  **properties: Any) -> list[Any]:
        """The answers to one request: one, or a stream's up to a status in ``until``."""
        correlation = uuid.uuid4().bytes
        await self.peer.request("Gen", request(method, params), correlation=correlation,
                                **properties)
        got = []
        while True:
            msg = await self.peer.next(15)
            if msg.correlation != correlation:
                continue
            got.append(decoded(msg))
            update = got[-1].get("result", {}).get("statusUpdate")
            if not until or "error" in got[-1] or (update and update["status"]["state"] == until):
                return got


def test_a_1_1_request_on_the_mesh_gets_the_generations_the_http_bindings_give() -> None:
    need_broker()
    org, unit = org_unit()
    task_id = str(uuid.uuid4())
    with served(org, unit) as url, httpx.Client(timeout=30) as client:

        async def on_mesh() -> dict[str, Any]:
            async with EmqxPeer(org, unit) as peer:
                await peer.listen(peer.reply_topic)
                asker = Asker(peer)
                out: dict[str, Any] = {}
                events = await asker.ask("SendStreamingMessage",
                                         {"message": message("chunks 2", task_id)},
                                         until="TASK_STATE_INPUT_REQUIRED", **V11)
                out["stream"] = [r["result"] for r in events]
                (got,) = await asker.ask("GetTask", {"id": task_id}, **V11)
                out["get"] = got["result"]
                # a follow-up for a generation the task is past; then the one it is at
                follow = {"message": message("ask", task_id),
                          "configuration": {"ifGenerationMatch": "4"}}
                (out["stale"],) = await asker.ask("SendMessage", follow, **V11)
                follow["configuration"] = {"ifGenerationMatch": "5"}
                (out["taken"],) = await asker.ask("SendMessage", follow, **V11)
                # a long poll: at once for a passed generation, else held to the maximum wait
                (out["passed"],) = await asker.ask(
                    "GetTask", {"id": task_id, "currentGeneration": "6"}, **V11)
                began = time.monotonic()
                (out["held"],) = await asker.ask(
                    "GetTask", {"id": task_id, "currentGeneration": "7"}, **V11)
                out["held_for"] = time.monotonic() - began
                # a 1.0 request (no property): no generation; a long poll all the same
                # (the draft's example sends one with A2A-Version: 1.0), whose answer
                # names the generation; ifGenerationMatch refused
                (out["get_1_0"],) = await asker.ask("GetTask", {"id": task_id})
                (out["poll_1_0"],) = await asker.ask(
                    "GetTask", {"id": task_id, "currentGeneration": "1"})
                (out["field_1_0"],) = await asker.ask(
                    "SendMessage", {"message": message("ask", task_id),
                                    "configuration": {"ifGenerationMatch": "7"}})
                # a version the agent does not speak: refused, naming it and the served ones
                (out["unknown"],) = await asker.ask("GetTask", {"id": task_id},
                                                    **{"a2a-version": "9.9"})
                return out

        out = asyncio.run(on_mesh())
        stream = out["stream"]
        numbers = [next(iter(e.values())).get("generation") for e in stream]
        # the task (1), working, two chunks, input-required: one each, as strings
        assert numbers == ["1", "2", "3", "4", "5"], stream
        assert out["get"]["generation"] == "5"
        http = {d.name: d.call(c.GetTask(id=task_id, history_length=0)).generation  # type: ignore[union-attr]
                for d in (k(client, url) for k in DRIVERS_11.values())}
        # the follow-up taken (the task made working, then input-required) moved it twice
        assert set(http.values()) == {7}, http
    error = out["stale"]["error"]
    assert error["code"] == -32010, error
    assert error["data"][0]["reason"] == "TASK_GENERATION_MISMATCH"
    assert error["data"][0]["metadata"] == {"taskId": task_id, "expectedGeneration": "4",
                                            "currentGeneration": "5"}
    assert out["taken"]["result"]["task"]["generation"] == "7"
    assert out["passed"]["result"]["generation"] == "7"
    assert out["held"]["result"]["generation"] == "7"
    assert MAX_WAIT * 0.9 <= out["held_for"] < MAX_WAIT + 2, out["held_for"]
    assert "generation" not in str(out["get_1_0"]) and out["get_1_0"]["result"]["id"] == task_id
    assert out["poll_1_0"]["result"]["generation"] == "7"
    assert out["field_1_0"]["error"]["code"] == -32602
    assert "A2A-Version: 1.1" in out["field_1_0"]["error"]["message"]
    unknown = out["unknown"]["error"]
    assert unknown["code"] == -32009, unknown
    assert "'9.9'" in unknown["message"] and "1.0" in unknown["message"], unknown


def test_a_message_to_a_task_that_does_not_wait_for_input_is_answered_as_over_http() -> None:
    """A new message (a new message id) for a task that is finished, or working: refused
    as JSON-RPC over HTTP refuses it, a 1.1 one whose ``ifGenerationMatch`` is not the
    task's generation with -32010 and its metadata, else -32004. The same message sent
    again (a retry: its message id) is still answered with the task, nothing run again.
    Before, the profile answered every message to such a task with the task (a retry,
    whatever its message id), and ``ifGenerationMatch`` was not looked at."""
    need_broker()
    org, unit = org_unit()
    done_id, held_id = str(uuid.uuid4()), str(uuid.uuid4())
    first = message("done", done_id)
    with served(org, unit) as url, httpx.Client(timeout=30) as client:

        def over_http(params: dict[str, Any]) -> Any:
            return client.post(url + "/", json=request("SendMessage", params),
                               headers={"A2A-Version": "1.1"}).json()

        async def on_mesh() -> dict[str, Any]:
            async with EmqxPeer(org, unit) as peer:
                await peer.listen(peer.reply_topic)
                asker = Asker(peer)
                out: dict[str, Any] = {}
                (out["done"],) = await asker.ask("SendMessage", {"message": first}, **V11)
                await asker.ask("SendStreamingMessage", {"message": message("hold", held_id)},
                                until="TASK_STATE_WORKING", **V11)
                for name, task_id in (("done", done_id), ("held", held_id)):
                    for asked in (None, "1"):
                        params: dict[str, Any] = {"message": message("more", task_id)}
                        if asked is not None:
                            params["configuration"] = {"ifGenerationMatch": asked}
                        (got,) = await asker.ask("SendMessage", params, **V11)
                        out[f"{name}-{asked}"] = (got, await asyncio.to_thread(over_http, params))
                (out["retry"],) = await asker.ask("SendMessage", {"message": first}, **V11)
                (out["retry-1"],) = await asker.ask(
                    "SendMessage", {"message": first, "configuration": {"ifGenerationMatch": "1"}},
                    **V11)
                return out

        out = asyncio.run(on_mesh())
    done = out["done"]["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED" and done["generation"] != "1"
    for key in ("done-None", "done-1", "held-None", "held-1"):
        mesh, http = out[key]
        assert "error" in http, (key, http)
        assert mesh.get("error") == http["error"], (key, mesh, http)
    assert out["done-None"][0]["error"]["code"] == -32004
    mismatch = out["done-1"][0]["error"]
    assert mismatch["code"] == -32010
    assert mismatch["data"][0]["metadata"] == {
        "taskId": done_id, "expectedGeneration": "1", "currentGeneration": done["generation"]}
    assert out["held-1"][0]["error"]["code"] == -32010
    # a retry is answered with the task as it stands, whatever generation it names
    for key in ("retry", "retry-1"):
        assert out[key]["result"]["task"]["id"] == done_id, out[key]
        assert out[key]["result"]["task"]["generation"] == done["generation"]


def test_a_stream_sent_again_for_a_finished_task_is_answered_as_over_http() -> None:
    """A streaming send repeated (its message id) once its task is finished: the task,
    at its generation, as JSON-RPC over HTTP answers the same repeat; no event of it
    without a generation. Before, the task was followed by a made-up ``statusUpdate``
    with no generation (0, which a 1.1 server must never send)."""
    need_broker()
    org, unit = org_unit()
    task_id = str(uuid.uuid4())
    first = message("done", task_id)
    with served(org, unit) as url, httpx.Client(timeout=30) as client:

        async def on_mesh() -> list[Any]:
            async with EmqxPeer(org, unit) as peer:
                await peer.listen(peer.reply_topic)
                asker = Asker(peer)
                await asker.ask("SendStreamingMessage", {"message": first},
                                until="TASK_STATE_COMPLETED", **V11)
                again: list[Any] = []
                correlation = uuid.uuid4().bytes
                await peer.request("Gen", request("SendStreamingMessage", {"message": first}),
                                   correlation=correlation, **V11)
                again += [decoded(m) for m in await peer.quiet(1.0)
                          if m.correlation == correlation]
                return again

        again = asyncio.run(on_mesh())
        with client.stream("POST", url + "/", json=request("SendStreamingMessage",
                                                           {"message": first}),
                           headers={"A2A-Version": "1.1"}) as resp:
            http = [json.loads(line[5:]) for line in resp.iter_lines()
                    if line.startswith("data:")]
    assert [e["result"] for e in again] == [e["result"] for e in http], (again, http)
    for event in again:
        (item,) = event["result"].values()
        assert int(item["generation"]) >= 1, event


# ------------------------------------------------------------------ our client


def test_the_client_speaks_1_1_on_the_mesh_when_asked() -> None:
    """``client_for(url, dialect="1.1")`` for an agent of the profile: its requests say
    ``a2a-version: 1.1``, so tasks carry generations, ``if_generation_match`` is checked
    and ``after_generation`` is a long poll. Without it the client speaks 1.0, and asking
    for a generation is ``GenerationsNotSupported`` before anything is sent."""
    from interlingua import client_for
    from interlingua.client.generations import GenerationsNotSupported, TaskGenerationMismatch

    need_broker()
    org, unit = org_unit()
    where = f"{BROKER}/{org}/{unit}/Gen"
    with served(org, unit):

        async def go() -> None:
            async with client_for(where, dialect="1.1", timeout=10) as client:
                assert client.version == "1.1"
                task = await client.send("ask")
                assert task.generation == 2  # type: ignore[union-attr]
                with pytest.raises(TaskGenerationMismatch):
                    await client.send("ask", task_id=task.id, if_generation_match=1)
                taken = await client.send("ask", task_id=task.id, if_generation_match=2)
                assert taken.generation == 4  # type: ignore[union-attr]
                began = time.monotonic()
                assert (await client.get_task(task.id, after_generation=3)).generation == 4
                assert time.monotonic() - began < MAX_WAIT / 2
                held = await client.get_task(task.id, after_generation=4)
                assert held.generation == 4 and time.monotonic() - began >= MAX_WAIT * 0.9
            async with client_for(where, timeout=10) as client:
                assert client.version == "1.0"
                assert (await client.get_task(task.id)).generation == 0  # a 1.0 answer
                with pytest.raises(GenerationsNotSupported, match=r"dialect='1\.1'"):
                    await client.get_task(task.id, after_generation=1)
                with pytest.raises(GenerationsNotSupported):
                    await client.send("ask", task_id=task.id, if_generation_match=4)
            async with client_for(where, dialect="1.1", timeout=10) as client:
                assert (await client.get_task(task.id)).generation == 4

        asyncio.run(go())
    with pytest.raises(ValueError, match=r"carries A2A 1\.0"):
        client_for(where, dialect="0.3")
    with pytest.raises(ValueError, match=r"A2A 1\.1 is not spoken there"):
        client_for(f"{BROKER}/ns/Agent", dialect="1.1")  # SAM's layout


def test_the_cli_speaks_1_1_on_the_mesh_with_dialect_1_1() -> None:
    from click.testing import CliRunner

    from interlingua.cli.main import main

    def cli(*args: str) -> Any:
        done = CliRunner().invoke(main, list(args), prog_name="interlingua")
        assert done.exit_code == 0, (done.output, done.stderr)
        return json.loads(done.stdout)

    need_broker()
    org, unit = org_unit()
    where = f"{BROKER}/{org}/{unit}/Gen"
    with served(org, unit):
        sent = cli("send", where, "ask", "--json", "--dialect", "1.1", "--timeout", "10")
        task_id = sent["task"]["id"]
        assert sent["task"]["generation"] == "2", sent
        assert cli("get", where, task_id, "--json", "--dialect", "1.1")["generation"] == "2"
        assert "generation" not in cli("get", where, task_id, "--json")  # 1.0
        # --wait follows a task by long polls (no note that it asks again every few
        # seconds), each generation of the task shown once
        working = cli("send", where, "chunks 3 0.3", "--no-wait", "--json", "--dialect", "1.1")
        done = CliRunner().invoke(main, ["get", where, working["task"]["id"], "--wait",
                                         "--json", "--dialect", "1.1", "--timeout", "20"])
        assert done.exit_code == 0 and "no long polls" not in done.stderr, done.stderr
        seen = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        numbers = [int(t["generation"]) for t in seen]
        assert len(numbers) > 1 and numbers == list(range(numbers[0], numbers[-1] + 1)), numbers
        assert seen[-1]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", seen[-1]
