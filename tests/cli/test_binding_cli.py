"""``--binding`` on the client commands, against a live server whose JSON-RPC
endpoint is at ``/rpc`` and whose HTTP+JSON routes hang off the root: a
command that works on the root URL with ``--dialect 1.0 --binding rest``
spoke HTTP+JSON, since JSON-RPC is not served there."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner, Result

from interlingua.cli.main import main
from tests.client.agents import agent
from tests.live import live_agent

REST = ["--dialect", "1.0", "--binding", "rest"]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_agent(agent, rpc_path="/rpc") as base:
        yield base


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="interlingua")


def ok(*args: str) -> Result:
    result = run(*args)
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def as_json(result: Result) -> Any:
    return msgspec.json.decode(result.stdout)


def test_card_shows_every_interface(url: str) -> None:
    out = ok("card", url).stdout
    assert f"JSONRPC    1.0   {url}/rpc  (used by default)" in out
    assert f"HTTP+JSON  1.0   {url}\n" in out
    assert f"JSONRPC    0.3   {url}/rpc\n" in out
    assert f"HTTP+JSON  0.3   {url}\n" in out
    assert "Dialects: JSON-RPC 1.0, 0.3; HTTP+JSON 1.0, 0.3" in out
    rest = ok("card", url, "--binding", "rest").stdout
    assert f"HTTP+JSON  1.0   {url}  (used by default)" in rest
    assert "Dialects: HTTP+JSON 1.0, 0.3" in rest


def test_the_root_url_is_not_json_rpc(url: str) -> None:
    # without --binding rest, --dialect 1.0 posts JSON-RPC to the URL given
    assert run("get", url, "some-task", "--dialect", "1.0").exit_code != 0


@pytest.mark.parametrize("how", [REST, ["--binding", "rest"]], ids=["forced", "card"])
def test_send_get_cancel_over_rest(url: str, how: list[str]) -> None:
    sent = as_json(ok("send", url, "hello", "--json", *how))
    assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert sent["task"]["artifacts"][0]["parts"] == [{"text": "hello"}]
    task_id = sent["task"]["id"]
    got = ok("get", url, task_id, *how).stdout
    assert got.splitlines()[0] == f"Task {task_id}  completed"
    waiting = as_json(ok("send", url, "sleep 30", "--no-wait", "--json", *how))["task"]["id"]
    assert ok("cancel", url, waiting, *how).stdout.splitlines()[0] == (
        f"Task {waiting}  canceled")
    again = run("cancel", url, waiting, *how)
    assert again.exit_code == 1
    assert again.stderr.startswith("error: TaskNotCancelable (-32002): ")


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_errors_read_as_over_json_rpc(url: str, dialect: str) -> None:
    rest = run("get", url, "no-such-task", "--dialect", dialect, "--binding", "rest")
    rpc = run("get", url + "/rpc", "no-such-task", "--dialect", dialect)
    assert rest.exit_code == rpc.exit_code == 1
    assert rest.stderr == rpc.stderr == (
        "error: TaskNotFound (-32001): Task not found: no-such-task\n")


def test_v03_over_rest(url: str) -> None:
    v03 = ["--dialect", "0.3", "--binding", "rest"]
    sent = as_json(ok("send", url, "hi", "--json", *v03))
    # v0.3-ProtoJSON, as the v0.3 HTTP+JSON binding spells a task
    assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id = sent["task"]["id"]
    assert ok("get", url, task_id, *v03).stdout.splitlines()[0] == f"Task {task_id}  completed"


def test_tasks_over_rest(url: str) -> None:
    sent = as_json(ok("send", url, "listed", "--json", *REST))["task"]
    page = as_json(ok("tasks", url, "--context-id", sent["contextId"], "--json", *REST))
    assert [t["id"] for t in page["tasks"]] == [sent["id"]]


def test_stream_and_subscribe_over_rest(url: str) -> None:
    lines = [msgspec.json.decode(line) for line in
             ok("stream", url, "hi", "--json", *REST).stdout.splitlines() if line.strip()]
    assert next(iter(lines[0])) == "task"
    assert lines[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id = lines[0]["task"]["id"]
    rest = ok("subscribe", url, task_id, "--last-event-id", "1", "--json", *REST).stdout
    replayed = [msgspec.json.decode(line) for line in rest.splitlines() if line.strip()]
    assert replayed == lines[1:]


@pytest.mark.parametrize("args", [["--binding", "grpc", "--dialect", "0.1"],
                                  ["--binding", "rest", "--dialect", "0.1"]])
def test_impossible_bindings_are_usage_errors(url: str, args: list[str]) -> None:
    result = run("get", url, "t1", *args)
    assert result.exit_code == 2
    assert "binding" in result.stderr


@pytest.mark.parametrize("command", [["send", "{url}", "hi"], ["card", "{url}"],
                                     ["get", "{url}", "t1"], ["cancel", "{url}", "t1"],
                                     ["subscribe", "{url}", "t1"], ["tasks", "{url}"],
                                     ["stream", "{url}", "hi"]])
@pytest.mark.parametrize(("address", "args"), [
    ("grpc://127.0.0.1:9", ["--binding", "rest"]),
    ("grpc://127.0.0.1:9", ["--dialect", "0.1"]),
    ("dns:///127.0.0.1:9", ["--binding", "jsonrpc"]),
])
def test_a_grpc_address_with_another_binding_is_a_usage_error(
        command: list[str], address: str, args: list[str]) -> None:
    """A gRPC address is spoken to over gRPC alone: another binding (or a dialect
    gRPC does not carry) is said in one line, exit 2, as for an HTTP URL (it was a
    traceback, exit 1)."""
    result = run(*[a.format(url=address) for a in command], *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, \
        result.stderr
