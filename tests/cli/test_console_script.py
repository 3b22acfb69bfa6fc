"""The installed ``interlingua`` console script, run as a real process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec

from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "interlingua"


def interlingua(*args: str, timeout: float = 30,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, check=False, env={**os.environ, **(env or {})})


def test_the_script_is_installed() -> None:
    assert SCRIPT.is_file(), f"{SCRIPT} is missing: install the package (pip install -e .)"


def test_send_through_the_script(agent_url: str) -> None:
    done = interlingua("send", agent_url, "hello from a shell")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Task ") and lines[0].endswith("  completed")
    assert "    hello from a shell" in lines


def test_agent_errors_through_the_script(agent_url: str) -> None:
    done = interlingua("get", agent_url, "missing-task", "--dialect", "0.3")
    assert done.returncode == 1
    assert done.stderr == "error: TaskNotFound (-32001): Task not found: missing-task\n"


@contextlib.contextmanager
def serving(*options: str, spec: str = "tests/client/agents.py",
            env: dict[str, str] | None = None) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``interlingua serve SPEC`` on a free port, as a real process."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", spec, "--port", str(port),
         "--store", "memory://", "--log-level", "warning",
         # stopped at once: a turn a test leaves running is not waited for
         "--drain-seconds", "0", *options],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, proc.communicate()
            try:
                if httpx.get(url + "/healthz", timeout=0.5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "interlingua serve did not start"
            time.sleep(0.05)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=15)


def test_serve_then_talk_to_it() -> None:
    with serving() as (url, proc):
        card = interlingua("card", url, "--json")
        assert card.returncode == 0, card.stderr
        assert msgspec.json.decode(card.stdout)["name"] == "Test assistant"
        sent = interlingua("send", url, "greet", "--json")
        assert msgspec.json.decode(sent.stdout)["task"]["status"]["state"] == (
            "TASK_STATE_INPUT_REQUIRED")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=15)
    # uvicorn shuts down cleanly, then re-raises the signal it caught
    assert proc.returncode in (0, -signal.SIGTERM), err
    assert "Traceback" not in err
    assert out.splitlines()[:4] == [
        f"Serving tests/client/agents.py on {url} (store memory://)",
        f"  agent card: {url}/.well-known/agent-card.json",
        f"  JSON-RPC:   {url}/",
        f"  HTTP+JSON:  {url}/  (v0.3 under {url}/v1/)",
    ]


def test_serve_finds_a_module_of_the_working_directory() -> None:
    """``interlingua serve package.module``, run where the package is, as ``python -m``
    and uvicorn find it (before: "No module named 'tests'")."""
    with serving(spec="tests.client.agents:agent", env={"PYTHONPATH": ""}) as (url, _):
        assert httpx.get(url + "/.well-known/agent-card.json").json()["name"] == \
            "Test assistant"


def _send_with_webhook(url: str, hook: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "role": "user", "messageId": f"m-{time.time_ns()}",
                    "parts": [{"kind": "text", "text": "hello"}]},
        "configuration": {"pushNotificationConfig": {"url": hook, "token": "t-1"}}}}
    answer: dict[str, Any] = httpx.post(url + "/", json=body, timeout=10).json()
    return answer


def test_serve_push_options_let_a_local_http_webhook_in() -> None:
    hook = "http://127.0.0.1:9/hook"
    report = "examples/report_agent.py"  # an agent that declares push notifications
    quick = {"REPORT_SECONDS": "0"}
    with serving(spec=report, env=quick) as (url, _):
        refused = _send_with_webhook(url, hook)
    assert refused["error"]["code"] == -32602, refused
    assert "http" in refused["error"]["message"]
    with serving("--push-allow-http", "--push-allow-private", spec=report, env=quick) as (url, _):
        accepted = _send_with_webhook(url, hook)
        assert accepted["result"]["status"]["state"] == "completed", accepted
        task_id = accepted["result"]["id"]
        listed = httpx.post(url + "/", json={
            "jsonrpc": "2.0", "id": 2, "method": "tasks/pushNotificationConfig/list",
            "params": {"id": task_id}}, timeout=10).json()
        assert [c["pushNotificationConfig"]["url"] for c in listed["result"]] == [hook]
