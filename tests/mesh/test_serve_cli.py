"""``interlingua serve --mesh``: a real process on the machine's Mosquitto."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import msgspec
import pytest

from interlingua import client_for
from interlingua.client.card import endpoints as endpoints_of
from interlingua.client.card import parse_card
from interlingua.client.errors import DialectMismatch
from interlingua.core.model import Task, TaskState

from .helpers import BROKER, Peer, decoded

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")


def _serve(ns: str, *options: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", "examples/echo.py", "--store", "memory://", "--json",
         "--log-level", "warning", "--drain-seconds", "0",
         "--mesh", BROKER, "--namespace", ns, "--mesh-instance", "one",
         "--mesh-session-expiry", "30", *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.communicate()
    return proc, json.loads(line)


def _ask(text: str) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": "t-" + text, "method": "tasks/send", "params": {
        "message": {"role": "user", "parts": [{"text": text}], "message_id": "m-" + text}}}


async def test_serve_no_http_answers_on_the_mesh_and_withdraws_on_sigterm(ns: str) -> None:
    async with Peer(ns) as peer:
        await peer.listen(peer.topics.client_response("me"), peer.topics.withdrawals())
        proc, info = _serve(ns, "--no-http")
        try:
            assert info["request_topic"] == f"{ns}/a2a/v1/agent/request/Echo"
            assert "listen" not in info
            await peer.request("Echo", _ask("hello"), clientId="me")
            got = decoded(await peer.next())
            assert got["id"] == "t-hello"
            assert got["result"]["status"]["state"] == "completed"
            proc.send_signal(signal.SIGTERM)
            gone = await peer.next()
            assert gone.topic == peer.topics.withdrawals()
            assert decoded(gone) == {"name": "Echo", "instance": "one", "agent": "Echo"}
            assert proc.wait(20) == 0
        finally:
            proc.kill()
            proc.communicate()


async def test_serve_with_http_beside_the_mesh_shares_one_store(ns: str) -> None:
    async with Peer(ns) as peer:
        await peer.listen(peer.topics.client_response("me"), peer.topics.discovery())
        proc, info = _serve(ns, "--port", "0")
        try:
            card, _ = await peer.until(peer.topics.discovery(), timeout=20)  # on the mesh now
            assert decoded(card)["name"] == "Echo"
            assert decoded(card)["url"] == info["jsonrpc"]  # where HTTP answers
            assert card.properties["a2aInstance"] == "one"
            await peer.request("Echo", _ask("both"), clientId="me")
            got, _ = await peer.until(peer.topics.client_response("me"))
            assert decoded(got)["result"]["id"] == "t-both"
            # the task made over the mesh, read over HTTP
            answer = httpx.post(info["jsonrpc"], json={
                "jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t-both"}})
            assert answer.json()["result"]["status"]["state"] == "completed"
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(20)
            proc.communicate()
    assert info["listen"].startswith("http://127.0.0.1:")


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


async def test_a_mesh_only_card_names_the_mesh_address_and_no_http(ns: str) -> None:
    address = f"{BROKER}/{ns}/Echo"
    async with Peer(ns) as peer:
        await peer.listen(peer.topics.discovery())
        proc, _ = _serve(ns, "--no-http", "--mesh-card-interval", "0.3")
        try:
            card = decoded((await peer.until(peer.topics.discovery(), timeout=20))[0])
            assert card["url"] == address
            assert card["supportedInterfaces"] == [
                {"url": address, "protocolBinding": "MQTT", "protocolVersion": "0.3"}]
            assert card["capabilities"]["pushNotifications"] is False
            assert not [s for s in _strings(card) if s.startswith(("http://", "https://"))]
            # the address is one interlingua's client takes
            async with client_for(card["url"], timeout=10) as client:
                done = await client.send("by the card's address")
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
            # and a client that speaks none of the card's bindings says so
            with pytest.raises(DialectMismatch, match=r"MQTT 0\.3 at mqtt:"):
                endpoints_of(parse_card(msgspec.json.encode(card)))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(20)
            proc.communicate()


def test_mesh_options_without_a_mesh_are_a_usage_error() -> None:
    done = subprocess.run([str(SCRIPT), "serve", "examples/echo.py", "--namespace", "x"],
                          cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "--mesh URL" in done.stderr


@pytest.mark.parametrize("option", [["--grpc-port", "0"], ["--bindings", "jsonrpc,grpc"],
                                    ["--metrics"], ["--port", "0"]])
def test_no_http_with_an_option_of_the_http_port_is_a_usage_error(option: list[str]) -> None:
    # (each was passed over: the agent was served on the mesh alone, no gRPC port
    # listened, and nothing said so)
    done = subprocess.run([str(SCRIPT), "serve", "examples/echo.py", "--store", "memory://",
                           "--no-http", "--mesh", "mqtt://127.0.0.1:1/x", *option],
                          cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: --no-http serves the agent on the mesh alone: {option[0]} "
                           "would have nothing to serve it\n")


def test_an_unreachable_broker_is_one_line_of_error() -> None:
    done = subprocess.run([str(SCRIPT), "serve", "examples/echo.py", "--store", "memory://",
                           "--no-http", "--mesh", "mqtt://127.0.0.1:1", "--namespace", "x"],
                          cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert done.stderr.startswith("error: cannot reach the broker at mqtt://127.0.0.1:1")
    assert "Traceback" not in done.stderr


#: the CLI with the mqtt extra hidden, as on a machine without interlingua[mqtt]
NO_MQTT = ("import sys; sys.modules['aiomqtt'] = None; "
           "from interlingua.cli.main import main; main()")


@pytest.mark.parametrize("args", [
    ["serve", "examples/echo.py", "--store", "memory://", "--port", "0",
     "--mesh", "mqtt://127.0.0.1:1", "--namespace", "x"],
    ["serve", "examples/echo.py", "--store", "memory://", "--no-http",
     "--mesh", "mqtt://127.0.0.1:1", "--namespace", "x"],
    ["gateway", "--mesh", "mqtt://127.0.0.1:1", "--namespace", "x", "--port", "0"],
    ["mesh", "agents", "--mesh", "mqtt://127.0.0.1:1", "--namespace", "x"],
    ["send", "mqtt://127.0.0.1:1/x/Echo", "hi"],
    ["card", "mqtt://127.0.0.1:1/x/Echo"],
], ids=["serve", "serve-no-http", "gateway", "mesh-agents", "send", "card"])
def test_the_mesh_without_its_extra_says_what_to_install(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", NO_MQTT, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("error: the mesh needs the mqtt extra: "
                           "pip install 'interlingua[mqtt]'\n"), done.stderr
    assert "Serving" not in done.stdout


@pytest.mark.parametrize("http", [True, False])
async def test_the_banner_names_the_mesh_url_that_clients_take(ns: str, http: bool) -> None:
    """The start-up lines name the agent's mesh URL (``mqtt://HOST:PORT/NS/AGENT``, what
    ``send`` and ``Client`` take), and a client at that URL is answered."""
    options = ["--port", "0"] if http else ["--no-http"]
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", "examples/echo.py", "--store", "memory://",
         "--log-level", "warning", "--drain-seconds", "0", "--mesh", BROKER,
         "--namespace", ns, "--mesh-instance", "one", "--mesh-session-expiry", "30",
         # the client reads the card the agent next publishes: not up to 10 s later
         "--mesh-card-interval", "0.3", *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        url = f"{BROKER}/{ns}/Echo"
        first = proc.stdout.readline()
        assert first, proc.communicate()
        if not http:
            assert first.startswith(f"Serving examples/echo.py on {url} "), first
        while not (line := proc.stdout.readline()).startswith("  mesh:"):
            assert line, proc.communicate()
        assert line.split() == ["mesh:", url, "(requests", "on",
                                f"{ns}/a2a/v1/agent/request/Echo)"], line
        async with client_for(url, timeout=20) as client:
            # its card: on the mesh now (with HTTP the banner comes as HTTP listens)
            await client.get_card()
            task = await client.send("from the banner")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def _serve_slow(ns: str, *options: str) -> subprocess.Popen[str]:
    """``tests/mesh/slow_agent.py`` served on the mesh, with ``options`` (its card
    every half second: a test waits for one, said only once it has subscribed)."""
    return subprocess.Popen(
        [str(SCRIPT), "serve", "tests/mesh/slow_agent.py", "--store", "memory://", "--json",
         "--log-level", "warning", "--mesh", BROKER, "--namespace", ns,
         "--mesh-instance", "one", "--mesh-session-expiry", "30",
         "--mesh-card-interval", "0.5", *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})


async def _subscribed(peer: Peer) -> None:
    """Once the agent's card is heard: it publishes one only once it has subscribed
    to its requests (one sent before would be lost)."""
    await peer.listen(peer.topics.discovery())
    await peer.until(peer.topics.discovery(), timeout=30)


async def test_serve_no_http_relays_a_running_turns_answer_within_the_drain(ns: str) -> None:
    """SIGTERM while a turn runs: the turn finishes within ``--drain-seconds`` and its
    answer reaches the requester on the mesh. The mesh agent stopped first, cut its
    answering after 5 s and closed the broker: the answer was never published (a
    gateway's task waited for ever)."""
    proc = _serve_slow(ns, "--drain-seconds", "20", "--no-http")
    try:
        assert proc.stdout is not None and proc.stdout.readline()
        async with Peer(ns) as peer:
            await _subscribed(peer)
            await peer.listen(peer.topics.client_response("me"))
            await peer.request("Slow", {
                "jsonrpc": "2.0", "id": "t-slow", "method": "tasks/send", "params": {
                    "message": {"role": "user", "parts": [{"text": "7"}],
                                "message_id": "m-slow"}}}, clientId="me")
            await asyncio.sleep(1.0)  # the turn is running
            proc.send_signal(signal.SIGTERM)
            answer, _ = await peer.until(peer.topics.client_response("me"), timeout=30)
            got = decoded(answer)
            assert got["id"] == "t-slow", got
            assert got["result"]["status"]["state"] == "completed", got
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        proc.communicate()


async def test_a_stream_cut_by_the_end_of_the_drain_ends_in_an_error_not_a_working_task(
        ns: str) -> None:
    """Past ``--drain-seconds``, a streamed send's turn is still running: it is ended
    failed while the mesh is still there, and its requester gets that task as its final
    answer, saying the server stopped (it was sent the task "working" as its final
    answer, then an error)."""
    proc = _serve_slow(ns, "--drain-seconds", "1", "--port", "0")
    try:
        assert proc.stdout is not None and proc.stdout.readline()
        async with Peer(ns) as peer:
            await _subscribed(peer)  # (the line says HTTP listens: the mesh subscribes after)
            await peer.listen(peer.topics.client_response("me") + "/#",
                              peer.topics.client_status("me") + "/#")
            await peer.request("Slow", {
                "jsonrpc": "2.0", "id": "t-long", "method": "tasks/send-streaming",
                "params": {"message": {"role": "user", "parts": [{"text": "60"}],
                                       "message_id": "m-long"}}}, clientId="me")
            await asyncio.sleep(1.0)
            proc.send_signal(signal.SIGTERM)
            final = None
            while final is None:
                msg = await asyncio.wait_for(peer.next(), 30)
                if msg.topic.startswith(peer.topics.client_response("me")):
                    final = decoded(msg)
        assert final["result"]["status"]["state"] == "failed", final
        assert "The server stopped while the task was running" in \
            final["result"]["status"]["message"]["parts"][0]["text"], final
    finally:
        proc.kill()
        proc.communicate()
