"""A JSON-RPC path that would hide one of the server's own is refused where it is set.
Before, ``--rpc-path /.well-known/agent-card.json`` served JSON-RPC there, and the card
answered 405: no client could discover the agent; ``/tasks`` hid HTTP+JSON's ListTasks
the same way. A path of its own serves JSON-RPC beside everything else."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from interlingua import Agent, create_app
from tests.live import live_agent

AGENT = Agent("Echo", "Echoes.", lambda text: text)


@pytest.mark.parametrize(("path", "said"), [
    ("/.well-known/agent-card.json", "is a path the server answers itself"),
    ("/.well-known/agent.json", "is a path the server answers itself"),
    ("/healthz", "is a path the server answers itself"),
    ("/.well-known/jwks.json", "is a path the server answers itself"),
    ("/inspector/rpc", "is a path the server answers itself"),
    ("/tasks", "is an HTTP+JSON route (GET /tasks)"),
    ("/message:send", "is an HTTP+JSON route (POST /message:send)"),
    ("/v1/card", "is an HTTP+JSON route (GET /v1/card)"),
])
def test_a_path_the_server_answers_itself_is_refused(path: str, said: str) -> None:
    with pytest.raises(ValueError) as refused:
        create_app(AGENT, rpc_path=path, store="memory://")
    assert str(refused.value).startswith(f"rpc_path '{path}' {said}"), refused.value


def test_an_http_json_route_is_the_json_rpc_path_of_a_server_without_http_json() -> None:
    create_app(AGENT, rpc_path="/tasks", rest=False, store="memory://")


def test_the_command_line_says_it_in_one_line() -> None:
    done = subprocess.run([sys.executable, "-m", "interlingua.cli.main", "serve",
                           "examples/echo.py", "--port", "0", "--store", "memory://",
                           "--rpc-path", "/.well-known/agent-card.json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: rpc_path '/.well-known/agent-card.json' is a path "
                                  "the server answers itself"), done.stderr


def test_a_path_of_its_own_serves_json_rpc_beside_the_card() -> None:
    with live_agent(AGENT, rpc_path="/a2a") as base, httpx.Client(timeout=30) as http:
        card = http.get(base + "/.well-known/agent-card.json")
        assert card.status_code == 200 and card.json()["url"] == base + "/a2a"
        answer = http.post(base + "/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
                                                "params": {"id": "none"}})
        assert answer.json()["error"]["code"] == -32001
