"""``interlingua stream`` and ``interlingua subscribe`` against live servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner, Result

from interlingua.cli.main import main
from tests.e2e.agents import story
from tests.live import live_agent
from tests.ports import free_port


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="interlingua")


def ok(*args: str) -> Result:
    result = run(*args)
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def json_lines(result: Result) -> list[Any]:
    return [msgspec.json.decode(line) for line in result.stdout.splitlines()]


@pytest.fixture(scope="module")
def story_url() -> Iterator[str]:
    with live_agent(story) as url:
        yield url


@pytest.mark.parametrize("dialect", [[], ["--dialect", "1.0"], ["--dialect", "0.3"]],
                         ids=["card", "v1.0", "v0.3"])
def test_stream_prints_states_and_artifact_text_as_it_comes(story_url: str,
                                                            dialect: list[str]) -> None:
    lines = ok("stream", story_url, "5", *dialect).stdout.splitlines()
    assert lines[0].startswith("Task ") and lines[0].endswith("  submitted")
    assert lines[1].startswith("  context: ")
    # the chunks run on in one line: no newline between appended chunks
    assert lines[2:] == [
        "working  writing",
        "Artifact story.txt",
        "chunk 0;chunk 1;chunk 2;chunk 3;chunk 4;",
        "completed  The story is complete!",
    ]


def test_a_v0_1_stream_names_no_context_it_does_not_have(story_url: str) -> None:
    # v0.1's streamed events carry no sessionId: no "context:" line, rather than an empty one
    lines = ok("stream", story_url, "2", "--dialect", "0.1").stdout.splitlines()
    assert lines[0].startswith("Task ") and lines[0].endswith("  submitted")
    assert not any(line.strip().startswith("context:") for line in lines), lines
    assert lines[-1] == "completed  The story is complete!"


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_stream_json_prints_each_event_on_a_line(story_url: str, dialect: str) -> None:
    events = json_lines(ok("stream", story_url, "3", "--json", "--dialect", dialect))
    assert len(events) == 1 + 1 + 3 + 1  # task, working, chunks, completed
    if dialect == "1.0":
        assert [next(iter(e)) for e in events] == (
            ["task", "statusUpdate"] + ["artifactUpdate"] * 3 + ["statusUpdate"])
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        chunks = [e["artifactUpdate"] for e in events[2:5]]
    else:
        assert [e["kind"] for e in events] == (
            ["task", "status-update"] + ["artifact-update"] * 3 + ["status-update"])
        assert events[-1]["final"] is True
        chunks = events[2:5]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == ["chunk 0;", "chunk 1;",
                                                                   "chunk 2;"]
    assert [c.get("append", False) for c in chunks] == [False, True, True]
    assert chunks[-1]["lastChunk"] is True


def test_subscribe_from_an_event_id_prints_the_rest(story_url: str) -> None:
    streamed = ok("stream", story_url, "4", "--json").stdout.splitlines()
    task_id = msgspec.json.decode(streamed[0])["task"]["id"]
    rest = ok("subscribe", story_url, task_id, "--last-event-id", "2", "--json")
    assert rest.stdout.splitlines() == streamed[2:]
    text = ok("subscribe", story_url, task_id, "--last-event-id", "3").stdout.splitlines()
    assert text == [
        "Artifact story.txt (continued)",
        "chunk 1;chunk 2;chunk 3;",
        "completed  The story is complete!",
    ]
    assert ok("subscribe", story_url, task_id, "--last-event-id", "7").stdout == ""


def test_subscribe_to_a_running_task(story_url: str) -> None:
    sent = msgspec.json.decode(
        ok("send", story_url, "20 0.02", "--no-wait", "--json").stdout)["task"]
    out = ok("subscribe", story_url, sent["id"]).stdout.splitlines()
    assert out[0] == f"Task {sent['id']}  {out[0].rsplit(' ', 1)[1]}"
    assert out[-1] == "completed  The story is complete!"
    # whatever was sent before subscribing comes in the snapshot, the rest as it arrives
    assert "".join(line for line in out if line.startswith(("chunk", "    chunk"))).replace(
        "    ", "") == "".join(f"chunk {i};" for i in range(20))


def test_stream_to_a_task_waiting_for_input_then_continue(agent_url: str) -> None:
    first = ok("stream", agent_url, "greet").stdout.splitlines()
    task_id = first[0].split()[1]
    assert "input-required  What is your name?" in first
    assert first[-1] == (f"The agent waits for an answer: interlingua stream {agent_url} TEXT "
                         f"--task-id {task_id}")
    second = ok("stream", agent_url, "Ada", "--task-id", task_id).stdout.splitlines()
    assert second[0] == f"Task {task_id}  working"
    assert second[-3:] == ["Artifact greeting", "Hello, Ada!", "completed"]


def test_a_hint_names_the_options_the_command_it_names_needs_too(agent_url: str) -> None:
    """Before: the command a hint named, run as printed, lacked the credentials (-H) and
    the dialect that reached the agent (an agent with auth then refused it); the header's
    value is not printed."""
    reaching = ("-H", "X-Secret: s3cret", "--dialect", "0.3")
    streamed = ok("stream", agent_url, "greet", *reaching).stdout.splitlines()
    task_id = streamed[0].split()[1]
    assert streamed[-1] == (f"The agent waits for an answer: interlingua stream {agent_url} "
                            f"TEXT --task-id {task_id} (with this command's --dialect, "
                            "--header too)")
    sent = ok("send", agent_url, "greet", *reaching).stdout
    assert "TEXT --task-id" in sent and "(with this command's --dialect, --header too)" in sent
    assert "s3cret" not in sent and "s3cret" not in streamed[-1]
    # none given, none named
    assert "with this command's" not in ok("send", agent_url, "greet").stdout


def test_stream_reply_data_and_files(agent_url: str, tmp_path: Path) -> None:
    assert ok("stream", agent_url, "reply [red]plain[/red]").stdout.splitlines() == [
        "Reply", "  [red]plain[/red]"]
    data = ok("stream", agent_url, "data").stdout.splitlines()
    assert "Artifact result" in data and '    "answer": 42,' in data
    sheet = tmp_path / "n.csv"
    sheet.write_bytes(b"x\n1\n")
    files = ok("stream", agent_url, "files", "--file", str(sheet), "--data", '{"k": 1}').stdout
    assert '"name": "n.csv"' in files and "file report.csv (text/csv, 8 bytes)" in files


def test_failed_task_exits_4(agent_url: str) -> None:
    result = run("stream", agent_url, "fail")
    assert result.exit_code == 4, (result.output, result.stderr)
    assert result.stdout.splitlines()[-1] == "failed  it broke"


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_subscribe_to_an_unknown_task_exits_1(agent_url: str, dialect: str) -> None:
    result = run("subscribe", agent_url, "no-such-task", "--dialect", dialect)
    assert result.exit_code == 1
    assert result.stderr == "error: TaskNotFound (-32001): Task not found: no-such-task\n"
    as_json = run("subscribe", agent_url, "no-such-task", "--json")
    assert as_json.exit_code == 1
    assert json_lines(as_json) == [{"error": {"code": -32001,
                                              "message": "Task not found: no-such-task"}}]


def test_subscribe_to_a_finished_task_prints_how_it_ended(agent_url: str) -> None:
    """The command ``send`` names past its --timeout, run once the task has finished:
    before, the v1.0 refusal of a fresh subscription to a finished task (exit 1)."""
    import time

    result = run("send", agent_url, "sleep 0.6", "--timeout", "0.2")
    assert result.exit_code == 3, (result.output, result.stderr)
    hint = result.stderr.rstrip().split("follow it with: ", 1)[1]
    assert hint.startswith(f"interlingua subscribe {agent_url} ")
    command = hint.split()[1:]
    time.sleep(0.8)  # the task finishes
    followed = ok(*command).stdout.splitlines()
    task_id = command[-1]
    assert followed[0] == f"Task {task_id}  completed"
    assert "  slept" in followed
    # with --json: the task as GetTask answers it, on one line (as a stream's end read so)
    as_json = json_lines(ok(*command, "--json"))
    assert [t["status"]["state"] for t in as_json] == ["TASK_STATE_COMPLETED"]
    # a failed one exits 4, as its send does
    failed_id = msgspec.json.decode(run("send", agent_url, "fail", "--json").stdout)[
        "task"]["id"]
    failed = run("subscribe", agent_url, failed_id)
    assert failed.exit_code == 4, (failed.output, failed.stderr)
    assert failed.stdout.splitlines()[0] == f"Task {failed_id}  failed"
    assert "it broke" in failed.stdout and failed.stderr == ""
    # v0.3 sends the final state once: the task is shown whole all the same
    in_v03 = ok(*command, "--dialect", "0.3").stdout.splitlines()
    assert in_v03[0] == f"Task {task_id}  completed" and "  slept" in in_v03


def test_unreachable_agent_exits_3() -> None:
    port = free_port()  # nothing listens on it
    url = f"http://127.0.0.1:{port}"
    for args in (["stream", url, "hi", "--dialect", "1.0"], ["subscribe", url, "t1"]):
        result = run(*args)
        assert result.exit_code == 3, result.output
        assert result.stderr.startswith(f"error: cannot reach {url}")


@pytest.mark.parametrize("args", [
    ["stream", "URL", "hi", "--data", "{bad"],
    ["subscribe", "URL", "t1", "--last-event-id", "-1"],
    ["subscribe", "URL", "t1", "--last-event-id", "x"],
])
def test_usage_errors_exit_2(agent_url: str, args: list[str]) -> None:
    result = run(*[agent_url if a == "URL" else a for a in args])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
    assert result.stderr.endswith(f"(see 'interlingua {args[0]} --help')\n")


@pytest.fixture
def scripted() -> Iterator[tuple[str, Any]]:
    """An agent answering each request with the next reply of its script, at /rpc."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    from tests.client.test_stream_logic import Agent
    from tests.live import live_server

    agent = Agent()
    app = Starlette(routes=[Route("/rpc", agent.endpoint, methods=["POST"])])
    with live_server(app) as base:
        yield base + "/rpc", agent


def test_a_stream_cut_near_its_end_prints_how_the_task_ended(
        scripted: tuple[str, Any]) -> None:
    # the first answer cut after the task's snapshot; the resumption refused, the task
    # finished meanwhile (a2a-sdk 1.3.0): its end is printed, and a failure exits 4
    from tests.client.test_stream_logic import json_answer, sse, v1_done, v1_task

    url, agent = scripted
    failed = v1_done("TASK_STATE_FAILED")
    failed["status"]["message"] = {"messageId": "m9", "role": "ROLE_AGENT",
                                   "parts": [{"text": "it broke"}]}
    agent.replies = [
        sse((None, v1_task())),
        json_answer("error", {"code": -32004, "message": "Task is in terminal state"}),
        json_answer("result", failed),
    ]
    result = run("stream", url, "hi", "--dialect", "1.0")
    assert result.exit_code == 4, (result.output, result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0] == "Task task-1  submitted" and "Task task-1  failed" in lines
    assert "it broke" in result.stdout and "the whole story" in result.stdout


def test_a_silent_subscription_to_a_task_canceled_meanwhile_exits_4(
        scripted: tuple[str, Any]) -> None:
    # a2a-sdk 0.3.26: the subscription ends without a word once the task is canceled
    from tests.client.test_stream_logic import json_answer, sse

    url, agent = scripted
    agent.replies = [
        sse(),
        json_answer("error", {"code": -32004, "message": "Task is in terminal state"}),
        json_answer("result", {"kind": "task", "id": "task-1", "contextId": "ctx-1",
                               "status": {"state": "canceled"}}),
    ]
    result = run("subscribe", url, "task-1", "--dialect", "0.3")
    assert result.exit_code == 4, (result.output, result.stderr)
    assert "canceled" in result.stdout


def test_a_stream_the_agent_stops_answering_names_how_to_resume(
        story_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent out of reach mid-stream (its connection reset, every resumption
    refused): the one-line error names the subscribe that picks up after the last event
    printed, as Ctrl-C's does. Before: the error alone."""
    import threading
    import time
    from urllib.parse import urlsplit

    from interlingua.client.stream import ResumePolicy
    from tests.tcp_proxy import TcpProxy

    # the resumptions without their growing pauses (some seconds in all)
    monkeypatch.setattr(ResumePolicy, "delay", lambda self, attempt, retry_after=None: 0.01)
    with TcpProxy(urlsplit(story_url).port or 80) as proxy:
        url = f"http://127.0.0.1:{proxy.port}"
        cutter = threading.Timer(0.5, proxy.cut)
        cutter.start()
        started = time.monotonic()
        result = run("stream", url, "40 0.05", "--dialect", "1.0")
        cutter.join()
    assert result.exit_code == 3, (result.output, result.stderr)
    assert time.monotonic() - started < 5
    assert "chunk 1;" in result.stdout
    task_id = result.stdout.splitlines()[0].split()[1]
    [line] = result.stderr.splitlines()
    assert line.startswith("error: the stream of task ")
    hint = line.split("; resume with: ", 1)[1]
    assert hint.startswith(f"interlingua subscribe {url} {task_id} --last-event-id ")
    assert hint.endswith(" (with this command's --dialect too)")
    seen = int(hint.split("--last-event-id ")[1].split()[0])
    assert seen >= 3  # the task, "writing", chunks
