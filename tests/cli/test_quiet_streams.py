"""``interlingua stream`` and ``interlingua subscribe`` with ``--timeout`` against an agent
that goes quiet: the same wait for its next event, the same exit and the same words over
every binding (JSON-RPC, HTTP+JSON and gRPC, in A2A 1.0 and 0.3)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import msgspec
import pytest
from click.testing import CliRunner, Result

from interlingua.cli.main import main
from interlingua.client.stream import ResumePolicy
from tests.client.agents import agent
from tests.live import live_grpc_agent

# the agent sleeps 30 s: a command that waits for it is this module's likely failure
pytestmark = pytest.mark.timeout(60)

WAYS = ["jsonrpc-1.0", "jsonrpc-0.3", "rest-1.0", "rest-0.3", "grpc-1.0", "grpc-0.3"]


@pytest.fixture(scope="module")
def where() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(agent) as found:
        yield found


@pytest.fixture(autouse=True)
def quick_resumptions(monkeypatch: pytest.MonkeyPatch) -> None:
    # the resumptions without their growing pauses (some seconds in all)
    monkeypatch.setattr(ResumePolicy, "delay", lambda self, attempt, retry_after=None: 0.01)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="interlingua")


def address(where: tuple[str, str], way: str) -> tuple[str, list[str]]:
    """(the URL a command is given, its options) to speak to the agent the ``way`` says."""
    url, target = where
    binding, _, dialect = way.partition("-")
    if binding == "grpc":
        return f"grpc://{target}", ["--dialect", dialect]
    return url, ["--binding", binding, "--dialect", dialect]


def assert_gave_up_waiting(result: Result, at: str, task_id: str, started: float) -> None:
    """The command stopped at its --timeout, saying which task and how to go on, as a
    stream the agent stopped answering says it (exit 3)."""
    assert time.monotonic() - started < 20, "the quiet stream was waited on"
    assert result.exit_code == 3, (result.output, result.stderr)
    said = re.fullmatch(
        rf"error: the stream of task {task_id} broke \((\S+) sent nothing for 1 s\); "
        rf"gave up after 5 attempts to resume it after event (\d+); resume with: "
        rf"interlingua subscribe {re.escape(at)} {task_id} --last-event-id \2 "
        r"\(with this command's --dialect(, --binding)? too\)\n", result.stderr)
    assert said is not None, result.stderr
    assert at.partition("://")[2] in said[1]


@pytest.mark.parametrize("way", WAYS)
def test_stream_of_an_agent_gone_quiet_ends_at_its_timeout(where: tuple[str, str],
                                                           way: str) -> None:
    at, options = address(where, way)
    started = time.monotonic()
    result = run("stream", at, "sleep 30", "--timeout", "1", *options)
    lines = result.stdout.splitlines()
    task_id = lines[0].split()[1]
    try:
        assert_gave_up_waiting(result, at, task_id, started)
        assert lines[-1] == "working  sleeping", result.output
    finally:
        run("cancel", at, task_id, *options)


@pytest.mark.parametrize("way", WAYS)
def test_subscribe_to_an_agent_gone_quiet_ends_at_its_timeout(where: tuple[str, str],
                                                              way: str) -> None:
    at, options = address(where, way)
    sent = run("send", at, "sleep 30", "--no-wait", "--json", *options)
    assert sent.exit_code == 0, (sent.output, sent.stderr)
    answer = msgspec.json.decode(sent.stdout)
    task_id = answer["task"]["id"] if "task" in answer else answer["id"]
    try:
        started = time.monotonic()
        result = run("subscribe", at, task_id, "--timeout", "1", *options)
        assert result.stdout.splitlines()[0] == f"Task {task_id}  working", result.output
        assert_gave_up_waiting(result, at, task_id, started)
    finally:
        run("cancel", at, task_id, *options)
