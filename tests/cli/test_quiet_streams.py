"""``interlingua stream`` and ``interlingua subscribe`` with ``--timeout`` against an agent
that goes quiet: the same wait for its next event, the same exit and the same words over
every binding (JSON-RPC, HTTP+JSON and gRPC, in A2A 1.0 and 0.3). A quiet agent is no
broken stream: the command gives up at its timeout as ``send`` does, not resuming it; a
connection that is cut is resumed."""

from __future__ import annotations

import re
import time

import msgspec
import pytest
from click.testing import Result

from tests.cli.ways import run
from tests.client.test_stream_resume import CuttingProxy
from tests.e2e.agents import story
from tests.live import live_agent

# the agent sleeps 30 s: a command that waits for it is this module's likely failure
pytestmark = pytest.mark.timeout(60)

WAYS = ["jsonrpc-1.0", "jsonrpc-0.3", "rest-1.0", "rest-0.3", "grpc-1.0", "grpc-0.3"]


def address(where: tuple[str, str], way: str) -> tuple[str, list[str]]:
    """(the URL a command is given, its options) to speak to the agent the ``way`` says."""
    url, target = where
    binding, _, dialect = way.partition("-")
    if binding == "grpc":
        return f"grpc://{target}", ["--dialect", dialect]
    return url, ["--binding", binding, "--dialect", dialect]


def assert_gave_up_waiting(result: Result, at: str, task_id: str, started: float) -> None:
    """The command stopped at its --timeout, at once (no resumption), saying which task
    and how to go on, in the words of ``send`` past its --timeout (exit 3)."""
    assert time.monotonic() - started < 5, "the quiet stream was resumed"
    assert result.exit_code == 3, (result.output, result.stderr)
    said = re.fullmatch(
        rf"error: no answer within 1 s; task {task_id} is working; resume with: "
        rf"interlingua subscribe {re.escape(at)} {task_id} --last-event-id (\d+) "
        r"\(with this command's --dialect(, --binding)? too\)\n", result.stderr)
    assert said is not None, result.stderr


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


@pytest.mark.parametrize("way", ["jsonrpc-1.0", "jsonrpc-0.3", "rest-1.0", "rest-0.3"])
def test_a_stream_cut_is_resumed_within_its_timeout(way: str) -> None:
    # the connection is reset after 3 events: a break, resumed, not a quiet agent
    binding, _, dialect = way.partition("-")
    with live_agent(story) as url, \
            CuttingProxy(int(url.rsplit(":", 1)[1]), cut_after={0: 3}) as proxy:
        result = run("stream", proxy.url, "8 0.05", "--timeout", "2", "--binding", binding,
                     "--dialect", dialect, "--json")
        assert result.exit_code == 0, (result.output, result.stderr)
        assert proxy.connections == 2
    events = [msgspec.json.decode(line) for line in result.stdout.splitlines()]
    assert "completed" in msgspec.json.encode(events[-1]).decode().lower()


def test_a_quiet_stream_with_json_says_its_error_as_json(where: tuple[str, str]) -> None:
    at, options = address(where, "jsonrpc-1.0")
    result = run("stream", at, "sleep 30", "--timeout", "1", "--json", *options)
    error = msgspec.json.decode(result.stdout.splitlines()[-1])["error"]
    task_id = msgspec.json.decode(result.stdout.splitlines()[0])["task"]["id"]
    try:
        assert result.exit_code == 3, (result.output, result.stderr)
        assert error["message"].startswith(f"no answer within 1 s; task {task_id} is working;")
    finally:
        run("cancel", at, task_id, *options)
