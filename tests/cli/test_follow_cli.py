"""``interlingua send`` against an agent that answers before its task settles (fasta2a
never blocks): the CLI follows the task to its end within --timeout, by subscribing when
the card says the agent streams, else by polling.

The first agent replays fasta2a 2.1.1's captured answers (tests/dialects/fixtures/peers),
the second is interlingua's own made to answer early (tests/client/early.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from interlingua.cli.main import main
from tests.client.agents import agent
from tests.client.early import early_agent
from tests.dialects.peer_replay import Replay
from tests.live import live_agent, live_server

EARLY = "fasta2a-2.1.1/server-message-send.json"  # {"task": …} still "submitted"
DONE = "fasta2a-2.1.1/server-tasks-get.json"  # the same task, completed


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="interlingua")


def test_send_follows_an_early_answer_to_its_end() -> None:
    replay = Replay([EARLY, DONE])
    with live_server(replay) as url:
        result = run("send", url, "hello", "--dialect", "0.3")
    assert result.exit_code == 0, (result.output, result.stderr)
    assert "completed" in result.stdout and "submitted" not in result.stdout
    assert "echo: hello" in result.stdout
    assert [p["method"] for p in replay.posts] == ["message/send", "tasks/get"]


def test_no_wait_prints_the_early_answer() -> None:
    replay = Replay([EARLY, DONE])
    with live_server(replay) as url:
        result = run("send", url, "hello", "--dialect", "0.3", "--no-wait")
    assert result.exit_code == 0, (result.output, result.stderr)
    assert "submitted" in result.stdout
    assert len(replay.posts) == 1


def test_a_task_that_never_settles_ends_at_the_timeout() -> None:
    """Says which task and how to follow it; sends the message only once."""
    replay = Replay([EARLY])  # every tasks/get answers "submitted" again
    with live_server(replay) as url:
        result = run("send", url, "hello", "--dialect", "0.3", "--timeout", "0.6")
    assert result.exit_code == 3, (result.output, result.stderr)
    assert "no answer within 0.6 s" in result.stderr
    # this agent does not stream (its card): what follows it is a poll, not subscribe,
    # which it would refuse
    assert "is submitted; follow it with: interlingua get " in result.stderr
    assert result.stderr.rstrip().endswith(" --wait (with this command's --dialect too)"), \
        result.stderr
    assert [p["method"] for p in replay.posts].count("message/send") == 1


# ------------------------------------------------------- an agent whose card says it streams


def test_send_follows_an_early_answer_by_subscribing() -> None:
    """interlingua's own agent made to answer early (tests/client/early.py): the CLI
    subscribes to the task, then reads it once; no polling."""
    with early_agent(agent) as (url, early):
        result = run("send", url, "sleep 0.5")
    assert result.exit_code == 0, (result.output, result.stderr)
    assert "completed" in result.stdout and "slept" in result.stdout
    assert [c for c in early.calls if c != "card"] == ["send", "subscribe", "get"]


@pytest.mark.parametrize("dialect", [None, "1.0", "0.3"], ids=["card", "1.0", "0.3"])
def test_send_with_task_id_waits_for_its_own_turns_end(dialect: str | None) -> None:
    """Answering a task that waits for input: the send is followed to the end of the
    turn the answer starts (working 0.5 s, then completed), not taken as ended by the
    input-required it answers, which the task's log replays first. With a dialect
    given (no card) the task is polled."""
    chosen = ["--dialect", dialect] if dialect else []
    with live_agent(agent) as url:
        asked = run("send", url, "ask 0.5", *chosen)
        assert asked.exit_code == 0, (asked.output, asked.stderr)
        header = asked.stdout.splitlines()[0]
        assert header.endswith("input-required"), asked.stdout
        task_id = header.split()[1]
        result = run("send", url, "yes", "--task-id", task_id, *chosen)
    assert result.exit_code == 0, (result.output, result.stderr)
    assert f"Task {task_id}  completed" in result.stdout.splitlines(), result.stdout
    assert "answered yes" in result.stdout and "went on" in result.stdout


def test_a_subscribed_task_that_never_settles_ends_at_the_timeout() -> None:
    with early_agent(agent) as (url, early):
        result = run("send", url, "sleep 30", "--timeout", "1")
    assert result.exit_code == 3, (result.output, result.stderr)
    assert "no answer within 1 s" in result.stderr
    assert "is working; follow it with: interlingua subscribe" in result.stderr
    # the task named is read as it stands at the timeout
    assert [c for c in early.calls if c != "card"] == ["send", "subscribe", "get"]


def test_an_agent_that_answers_nothing_ends_the_send_about_its_timeout() -> None:
    # (after --timeout the message is sent again to learn its task, which waited a
    # whole --timeout more: twice what was asked, against an agent that answers nothing)
    import socket
    import threading
    import time

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        held: list[socket.socket] = []
        stop = threading.Event()

        def accept() -> None:  # takes every connection, reads, answers nothing
            server.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(server.accept()[0])
                except OSError:
                    continue

        taker = threading.Thread(target=accept, daemon=True)
        taker.start()
        url = f"http://127.0.0.1:{server.getsockname()[1]}/"
        started = time.monotonic()
        result = run("send", url, "hello", "--dialect", "1.0", "--timeout", "3")
        took = time.monotonic() - started
        stop.set()
        taker.join()
        for conn in held:
            conn.close()
    assert result.exit_code == 3, result.output
    assert "within 3 s" in result.output, result.output
    assert took < 5.3, took  # 3 s and a second for the look; it took 6


def test_a_send_past_its_timeout_is_never_sent_again() -> None:
    """An agent that blocks a blocking send past --timeout and takes every message as a
    new task, whatever its id (a2a-sdk, Microsoft Agent Framework): the timeout names the
    task the send started, as it is then; a second send would start a second task."""
    import asyncio

    import msgspec
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    tasks: list[str] = []
    methods: list[str] = []

    def task(task_id: str, state: str) -> dict[str, object]:
        return {"id": task_id, "contextId": "c1", "status": {"state": state}}

    async def rpc(request: Request) -> Response:
        body = msgspec.json.decode(await request.body())
        methods.append(body["method"])
        params = body["params"]
        if body["method"] == "SendMessage":
            tasks.append(f"task-{len(tasks) + 1}")
            answer: dict[str, object] = {"task": task(tasks[-1], "TASK_STATE_SUBMITTED")}
            if not params.get("configuration", {}).get("returnImmediately"):
                await asyncio.sleep(2)  # blocks past the timeout
        else:
            answer = task(params["id"], "TASK_STATE_WORKING")
        doc = {"jsonrpc": "2.0", "id": body["id"], "result": answer}
        return Response(msgspec.json.encode(doc), media_type="application/json")

    app = Starlette(routes=[Route("/", rpc, methods=["POST"])])
    with live_server(app) as url:
        result = run("send", url + "/", "slow", "--dialect", "1.0", "--timeout", "0.8")
    assert result.exit_code == 3, (result.output, result.stderr)
    assert tasks == ["task-1"], methods
    assert "no answer within 0.8 s; task task-1 is working; follow it with: " \
        "interlingua get " in result.stderr, result.stderr


def test_a_send_to_a_quick_agent_counts_no_error_on_the_server() -> None:
    """The send is answered before its task ends, then followed: a task that finished in
    between was subscribed to afresh, which a v1.0 agent refuses (counted and traced as
    an error, one per send); now the follow resumes from the task's log, which a
    finished task allows."""
    import httpx

    with live_agent(agent, metrics=True) as url:
        for _ in range(5):
            result = run("send", url, "hello")
            assert result.exit_code == 0, (result.output, result.stderr)
            assert "completed" in result.stdout and "hello" in result.stdout
        metrics = httpx.get(url + "/metrics").text
    counted = [line for line in metrics.splitlines()
               if line.startswith("interlingua_requests_total{")]
    assert any('method="SendMessage"' in line for line in counted), counted
    assert not [line for line in counted if 'outcome="ok"' not in line], counted


# ------------------------------------------------ each dialect, the task named at once

DIALECTS = ["1.0", "0.3", "0.1"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_send_past_its_timeout_names_its_task_in_each_dialect(dialect: str,
                                                                  tmp_path: Path) -> None:
    """v0.1 has no send without waiting: its client names the task, so a timeout can
    too; the command it prints then follows the task to its end."""
    gate = tmp_path / "gate"
    with live_agent(agent) as url:
        result = run("send", url, f"until {gate}", "--dialect", dialect, "--timeout", "1")
        assert result.exit_code == 3, (result.output, result.stderr)
        assert "no answer within 1 s; task " in result.stderr, result.stderr
        hint = result.stderr.rstrip().split("follow it with: ", 1)[1]
        assert hint.endswith(" --wait (with this command's --dialect too)"), hint
        command = hint.split(" (with", 1)[0].split()
        assert command[:3] == ["interlingua", "get", url], command
        gate.touch()
        followed = run(*command[1:], "--dialect", dialect)
    assert followed.exit_code == 0, (followed.output, followed.stderr)
    assert f"Task {command[3]}  completed" in followed.stdout.splitlines()  # (each state)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_no_wait_returns_at_once_naming_the_task_in_each_dialect(dialect: str,
                                                                   tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    with live_agent(agent) as url:
        started = time.monotonic()
        result = run("send", url, f"until {gate}", "--no-wait", "--dialect", dialect,
                     "--timeout", "10")
        took = time.monotonic() - started
        assert result.exit_code == 0, (result.output, result.stderr)
        header = result.stdout.splitlines()[0]
        assert header.startswith("Task ") and header.split()[-1] in ("submitted", "working")
        task_id = header.split()[1]
        gate.touch()
        followed = run("get", url, task_id, "--wait", "--dialect", dialect)
    assert took < 3, took  # it waited for the task (10 s, the timeout)
    assert followed.exit_code == 0, (followed.output, followed.stderr)
    assert f"Task {task_id}  completed" in followed.stdout.splitlines()
