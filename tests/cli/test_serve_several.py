"""``interlingua serve a.py b.py``: several agents in one process, each at
``/agents/{name}/``, listed at ``/agents``, on one gRPC port by tenant; two agents with
one name are refused at start-up. The CLI runs as a subprocess."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Client
from interlingua.core.model import TaskState
from tests.live import draining

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ("examples/echo.py", "examples/flight_booking.py")


@contextmanager
def serving(*args: str) -> Iterator[dict[str, Any]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", *AGENTS, "--store", "memory://",
         "--json", "--log-level", "warning", "--port", "0", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else b""
        yield msgspec.json.decode(line)
    finally:
        proc.terminate()  # drains every agent's engine, then stops
        _, err = proc.communicate(timeout=40)
    assert proc.returncode in (0, -15), err  # uvicorn ends by the signal it was given, as alone
    assert b"Traceback" not in err, err


async def test_two_files_are_two_agents_on_one_server() -> None:
    with serving("--grpc-port", "0") as info:
        assert set(info["served"]) == {"Echo", "Flight_booker"}
        rows = httpx.get(info["agents"], timeout=10).json()["agents"]
        assert {r["path"]: r["url"] for r in rows} == {
            n: row["url"] for n, row in info["served"].items()}
        for name, row in info["served"].items():
            card = httpx.get(row["card"], timeout=10).json()
            assert card["name"] == row["name"] and card["url"] == row["url"]
            (grpc_iface,) = [i for i in card["supportedInterfaces"]
                             if i["protocolBinding"] == "GRPC"]
            assert grpc_iface["tenant"] == name and grpc_iface["url"] == "dns:///" + info["grpc"]
        async with Client(info["served"]["Echo"]["url"]) as echo:
            task = await echo.send("hello")
            assert task.status.state is TaskState.COMPLETED
        sent = subprocess.run(
            [sys.executable, "-m", "interlingua.cli.main", "send", info["served"]["Echo"]["url"],
             "hi from the CLI", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert sent.returncode == 0, sent.stderr
        assert "hi from the CLI" in sent.stdout
        async with Client(info["served"]["Flight_booker"]["url"], binding="grpc") as booker:
            asked = await booker.send("I'd like to book a flight.")
            assert asked.status.state is TaskState.INPUT_REQUIRED
            with_grpc = booker.endpoint
            assert with_grpc is not None and with_grpc.tenant == "Flight_booker"
            # the echo agent's task is not the flight booker's
            from interlingua.core.errors import TaskNotFound

            try:
                await booker.get_task(task.id)
            except TaskNotFound:
                pass
            else:
                raise AssertionError("one agent's task was found through another")
        # a refusal names the path the caller sent, the agent's prefix too
        echo_url = info["served"]["Echo"]["url"]
        prefix = echo_url[echo_url.index("/agents/"):]
        for method, path, says in [
                ("GET", "", f"Method not allowed: GET '{prefix}' (allowed: POST)"),
                ("GET", "nothing", f"Not found: no A2A route GET '{prefix}nothing'"),
                ("DELETE", "tasks/x",
                 f"Method not allowed: DELETE '{prefix}tasks/x' (allowed: GET, HEAD)")]:
            refused = httpx.request(method, echo_url + path, timeout=10)
            assert refused.json()["error"]["message"] == says, refused.text
        # the host's own paths answer in JSON too: a wrong verb, a path under no agent
        root = echo_url[:echo_url.index("/agents/")]
        wrong = httpx.post(root + "/agents", timeout=10)
        assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, HEAD"
        assert wrong.json()["error"]["message"] == \
            "Method not allowed: POST '/agents' (allowed: GET, HEAD)"
        card = httpx.get(root + "/.well-known/agent-card.json", timeout=10)
        assert card.status_code == 404 and card.json()["error"]["message"] == (
            "Not found: '/.well-known/agent-card.json': this server hosts several agents, "
            "each under /agents/{name}/; these are: Echo, Flight_booker (GET /agents/)")


def test_the_banner_lists_every_agent() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", *AGENTS, "--store", "memory://",
         "--log-level", "warning", "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
    assert lines[0].startswith("Serving 2 agents on http://127.0.0.1:")
    assert "/agents)" in lines[0]
    assert lines[1].strip().startswith("Echo: http://127.0.0.1:")
    assert lines[2].strip().startswith("Flight_booker: http://127.0.0.1:")


def test_two_agents_with_one_name_stop_the_start() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "examples/echo.py", "--store", "memory://", "--port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "two agents would be served at /agents/Echo/" in done.stderr
    assert "Traceback" not in done.stderr


def test_several_agents_on_a_mesh_is_not_yet() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", *AGENTS, "--store", "memory://",
         "--port", "0", "--mesh", "mqtt://127.0.0.1:1883"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "several agents" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("option", "said"), [
    (("--system", "Be brief."), "--openai-base-url, --openai-timeout and --system go with "
                               "--openai-model"),
    (("--namespace", "ns"), "go with --mesh URL"),
    (("--org", "acme"), "go with --mesh URL"),
    (("--mesh-profile", "emqx"), "go with --mesh URL"),
])
def test_an_option_of_one_agent_alone_is_refused_as_for_one(option: tuple[str, ...],
                                                              said: str) -> None:
    # (each was taken, and did nothing, with several agents)
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", *AGENTS, "--store", "memory://",
         "--port", "0", *option], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr


def test_otel_traces_every_agent() -> None:
    # (--otel was passed over with several agents: no SDK set up, no span made)
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", *AGENTS, "--store", "memory://",
         "--json", "--log-level", "warning", "--port", "0", "--otel", "--otel-exporter",
         "console"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        info = msgspec.json.decode(proc.stdout.readline())
        assert info["traces"] == {"exporter": "console", "endpoint": "stdout"}
        answer = httpx.post(info["served"]["Echo"]["url"], timeout=30, json={
            "jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
                "kind": "message", "messageId": "m-1", "role": "user",
                "parts": [{"kind": "text", "text": "hi"}]}}})
        assert answer.json()["result"]["status"]["state"] == "completed"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=40)
    assert b'"name": "A2A SendMessage"' in out


def test_sigterm_drains_every_agent(tmp_path: Path) -> None:
    """A turn running on one agent finishes; meanwhile every agent refuses new sends (503)
    and says it drains; then the process stops by itself."""
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "tests/client/agents.py",
         "examples/echo.py", "--store", f"sqlite:///{tmp_path}/", "--json", "--log-level",
         "warning", "--port", "0", "--drain-seconds", "30"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        info = msgspec.json.decode(proc.stdout.readline())
        slow, echo = info["served"]["Test_assistant"]["url"], info["served"]["Echo"]["url"]
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": "m-slow", "role": "ROLE_USER",
            "parts": [{"text": f"until {tmp_path / 'go'}"}]},
            "configuration": {"returnImmediately": True}}}
        started = httpx.post(slow, json=body, headers={"A2A-Version": "1.0"}, timeout=10).json()
        task_id = started["result"]["task"]["id"]
        root = info["listen"] + "/healthz"
        assert httpx.get(root, timeout=10).json()["status"] == "ok"
        proc.send_signal(signal.SIGTERM)
        # the server's own health check, which a load balancer asks (it was a 404)
        assert {a["path"]: a["status"] for a in draining(root).json()["agents"]} == \
            {"Test_assistant": "draining", "Echo": "draining"}
        for url in (slow, echo):
            assert draining(url + "healthz").json()["status"] == "draining"
            refused = httpx.post(url, headers={"A2A-Version": "1.0"}, timeout=5, json={
                "jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": {
                    "messageId": "m-new", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
            assert refused.status_code == 503
        assert proc.poll() is None  # the turn still runs: so does the process
        (tmp_path / "go").touch()
        proc.wait(20)  # the running turn finished, then the process stopped
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=20)
    # the turn that ran through the drain completed, in its agent's own store
    import sqlite3

    with sqlite3.connect(tmp_path / "Test_assistant.db") as db:
        (state,) = db.execute("SELECT state FROM tasks WHERE id = ?", (task_id,)).fetchone()
    assert state == "completed"
    assert (tmp_path / "Echo.db").exists()


def test_an_allowed_origins_page_reads_the_listing_and_each_agent_once() -> None:
    """``--allow-origin`` with several agents: the listing answers the page's CORS as
    each agent does (it sent none), and an agent's answer names the page once (the
    host's CORS layer and the agent's own do not both answer)."""
    page = "https://app.example"
    with serving("--allow-origin", page) as info:
        listing = httpx.get(info["agents"], headers={"Origin": page}, timeout=10)
        assert listing.headers.get("access-control-allow-origin") == page
        echo = info["served"]["Echo"]["url"]
        preflight = httpx.options(echo, timeout=10, headers={
            "Origin": page, "Access-Control-Request-Method": "POST"})
        assert preflight.status_code == 200
        answer = httpx.post(echo, timeout=30, headers={"Origin": page}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "none"}})
        assert answer.headers.get_list("access-control-allow-origin") == [page]
        assert answer.json()["error"]["code"] == -32001
        refused = httpx.post(echo, timeout=30, headers={"Origin": "https://evil.example"},
                             json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                                   "params": {"id": "none"}})
        assert refused.status_code == 403


def test_db_upgrade_given_the_agents_upgrades_each_agents_schema(pg_url: str) -> None:
    """Several agents over PostgreSQL keep a schema each: serve with ``migrate=0``
    named no store that was behind ("--store URL"), and ``db upgrade --store URL``, as
    it said, upgraded the one schema no agent uses. The refusal names the agent's
    store; ``db upgrade`` given the agents' files upgrades each agent's."""
    from click.testing import CliRunner

    from interlingua.cli.main import main
    from interlingua.host.agents import store_url_for
    from interlingua.stores.postgres.schema import SCHEMA_VERSION

    held = pg_url + "&migrate=0"
    refused = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", *AGENTS, "--store", held,
         "--port", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused.stderr
    echo_store = store_url_for(held, "Echo")
    assert f"run interlingua db upgrade --store '{echo_store}'" in refused.stderr, \
        refused.stderr
    done = CliRunner().invoke(main, ["db", "upgrade", "--store", pg_url, *AGENTS])
    assert done.exit_code == 0, done.output
    assert done.output.splitlines() == [
        f"Made the schema of {store_url_for(pg_url, name)}, version {SCHEMA_VERSION}: no "
        "store was there." for name in ("Echo", "Flight_booker")], done.output
    with serving("--store", held) as info:
        assert set(info["served"]) == {"Echo", "Flight_booker"}
