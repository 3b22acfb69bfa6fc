"""``interlingua push …`` and ``interlingua listen`` against a real agent and webhook."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import msgspec
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from interlingua import Agent, create_app
from interlingua.cli.main import main
from interlingua.server.push.settings import PushSettings
from tests.live import bind_loopback, live_server, url_of


async def _echo(text: str) -> str:
    return text


def test_dead_letters_listed_and_redriven(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    hits: list[bytes] = []

    async def broken_hook(request: Request) -> Response:
        hits.append(await request.body())
        return Response("down", status_code=500)

    hook = Starlette(routes=[Route("/hook", broken_hook, methods=["POST"])])
    push = PushSettings(allow_http=True, allow_private_networks=True, max_attempts=1,
                        poll_interval=0.05)
    sock = bind_loopback()
    app = create_app(Agent("Echo", "Echoes", _echo, push_notifications=True), store=store,
                     public_url=url_of(sock), push=push)
    with live_server(hook) as hook_url, live_server(app, sock=sock) as url, httpx.Client() as c:
        r = c.post(url + "/", headers={"A2A-Version": "1.0"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
                "configuration": {"taskPushNotificationConfig": {"url": hook_url + "/hook"}}}})
        task_id = r.json()["result"]["task"]["id"]
        deadline = time.monotonic() + 10
        runner = CliRunner()
        counts: dict[str, int] = {}
        while time.monotonic() < deadline:
            # every notification of the task (one a state) has been tried and died
            listed = runner.invoke(main, ["push", "outbox", "--store", store, "--json"])
            assert listed.exit_code == 0, listed.output
            counts = msgspec.json.decode(listed.output)
            if counts["dead"] and not counts["pending"]:
                break
            time.sleep(0.05)
        shown = runner.invoke(main, ["push", "dead", "--store", store, "--json"])
        assert shown.exit_code == 0, shown.output
        dead = msgspec.json.decode(shown.output)
        assert dead and all(d["task_id"] == task_id for d in dead)
        assert hits  # it was attempted before it died
        assert counts["dead"] == len(dead)
        again = runner.invoke(main, ["push", "redrive", "--store", store, str(dead[0]["id"])])
        assert again.exit_code == 0 and "queued again" in again.output
        for nothing in ("999999", str(2**63), "99999999999999999999999"):
            missing = runner.invoke(main, ["push", "redrive", "--store", store, nothing])
            assert missing.exit_code == 1, missing.output
            assert f"no dead delivery #{nothing}" in missing.output


def test_listen_prints_notifications() -> None:
    port_sock = bind_loopback()
    port = port_sock.getsockname()[1]
    port_sock.close()
    proc = subprocess.Popen([sys.executable, "-m", "interlingua.cli.main", "listen",
                             "--port", str(port), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/hook", json={
                    "statusUpdate": {"taskId": "t1", "contextId": "c1",
                                     "status": {"state": "TASK_STATE_COMPLETED"}}},
                    headers={"Content-Type": "application/a2a+json",
                             "X-A2A-Notification-Id": "t1:c:1"})
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert r.status_code < 300
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    line = msgspec.json.decode(out.splitlines()[0])
    assert line["taskId"] == "t1" and line["state"] in ("completed", "TASK_STATE_COMPLETED")


def test_push_commands_need_the_store_or_the_agent(tmp_path: Path) -> None:
    runner = CliRunner()
    none = runner.invoke(main, ["push", "outbox"])
    assert none.exit_code == 2 and "--store URL" in none.output
    both = runner.invoke(main, ["push", "outbox", "--store", "memory://",
                                "--agent", "examples/echo.py"])
    assert both.exit_code == 2 and "not both" in both.output
    agent = Path(__file__).resolve().parents[2] / "examples" / "echo.py"
    command = [sys.executable, "-m", "interlingua.cli.main", "push", "outbox", "--agent",
               str(agent)]
    # the agent's default store, read where serving it would keep it: none there yet
    unserved = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert unserved.returncode == 2, unserved.stderr
    assert unserved.stderr.startswith("error: no store at .interlingua/echo.db"), unserved.stderr
    assert not (tmp_path / ".interlingua").exists()
    made = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "db", "upgrade", "--store",
         "sqlite:///.interlingua/echo.db"], cwd=tmp_path, capture_output=True, text=True,
        timeout=60)
    assert made.returncode == 0, made.stderr
    derived = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert derived.returncode == 0, derived.stderr
    assert "pending: 0" in derived.stdout
