"""What a user of the CLI sees: one-line errors (never a traceback), an exit code per
outcome, what to run next, human output by default, webhooks and saved files."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import msgspec
import pytest

from tests.cli.as_from_a_terminal import from_a_terminal
from tests.cli.test_cli import as_json, ok, run
from tests.cli.test_console_script import ROOT, SCRIPT, interlingua, serving
from tests.mesh.helpers import BROKER, need_broker
from tests.ports import free_port


def _one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr and "ExceptionGroup" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


def test_card_with_a_port_out_of_range_is_a_usage_error() -> None:
    done = interlingua("card", "http://127.0.0.1:99999")
    assert done.returncode == 2
    assert "99999" in _one_line_error(done)


def test_serve_with_a_store_under_a_regular_file(tmp_path: Path) -> None:
    regular = tmp_path / "plain-file"
    regular.write_text("not a folder")
    done = interlingua("serve", "examples/echo.py", "--port", "0",
                       "--store", f"sqlite:///{regular}/t.db")
    assert done.returncode == 2
    assert str(regular) in _one_line_error(done)


@pytest.mark.parametrize("command", ["send", "get", "stream"])
def test_a_failed_task_exits_4(agent_url: str, command: str) -> None:
    if command == "get":
        task_id = as_json(ok("send", agent_url, "sleep 0", "--json"))["task"]["id"]
        failed = as_json(run("send", agent_url, "fail", "--json"))["task"]["id"]
        assert run("get", agent_url, task_id).exit_code == 0
        result = run("get", agent_url, failed)
    else:
        result = run(command, agent_url, "fail")
    assert result.exit_code == 4, (result.output, result.stderr)
    assert "it broke" in result.output


def test_a_canceled_task_exits_4_when_read(agent_url: str) -> None:
    task_id = as_json(ok("send", agent_url, "sleep 30", "--no-wait", "--json"))["task"]["id"]
    assert run("cancel", agent_url, task_id).exit_code == 0  # asked for: done
    assert run("get", agent_url, task_id).exit_code == 4


def test_send_timeout_says_how_to_follow_the_task(agent_url: str) -> None:
    result = run("send", agent_url, "sleep 5", "--timeout", "0.5")
    assert result.exit_code == 3, (result.output, result.stderr)
    task_id = next(w for w in result.stderr.split() if len(w) > 20 and "-" in w)
    assert f"interlingua subscribe {agent_url} {task_id}" in result.stderr
    assert ok("get", agent_url, task_id)
    # not left running: a server stopped while its turn sleeps would wait it out (the
    # fixture's server may stop right after this test)
    assert run("cancel", agent_url, task_id).exit_code == 0


def test_ctrl_c_on_stream_says_how_to_resume() -> None:
    with serving() as (url, _):
        proc = subprocess.Popen(from_a_terminal("stream", url, "sleep 20"), cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        # Interrupted once the stream shows its task (a cold start may take a while):
        # the hint names that task.
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "the stream showed nothing in 30 s"
        first = proc.stdout.readline()
        assert first.startswith("Task "), first
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert f"interlingua subscribe {url} " in err and "--last-event-id" in err


def test_push_outbox_is_readable_and_json_on_request(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/tasks.db"
    ok("db", "upgrade", "--store", store)  # made: the push commands read a store, make none
    human = ok("push", "outbox", "--store", store).stdout
    assert "pending" in human and not human.lstrip().startswith("{")
    raw = msgspec.json.decode(ok("push", "outbox", "--store", store, "--json").stdout)
    assert isinstance(raw, dict)




@pytest.mark.parametrize("as_json_output", [False, True], ids=["human", "json"])
def test_send_registers_a_webhook_that_listen_receives(as_json_output: bool) -> None:
    port = free_port()
    listen_args = [str(SCRIPT), "listen", "--port", str(port), "--token", "tok-1"]
    if as_json_output:
        listen_args.append("--json")
    listener = subprocess.Popen(listen_args, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=0.5)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "listen did not start"
                time.sleep(0.05)
        with serving("--push-allow-http", "--push-allow-private",
                     spec="examples/report_agent.py", env={"REPORT_SECONDS": "0"}) as (url, _):
            sent = interlingua("send", url, "quarterly", "--push-url",
                               f"http://127.0.0.1:{port}/", "--push-token", "tok-1")
            assert sent.returncode == 0, sent.stderr
            # until the listener has printed the last notification (the task's end)
            assert listener.stdout is not None
            fd = listener.stdout.fileno()
            printed = b""
            deadline = time.monotonic() + 30
            while b"completed" not in printed and time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.5)
                if ready:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    printed += chunk
    finally:
        listener.send_signal(signal.SIGINT)
        rest, err = listener.communicate(timeout=15)
    out = printed.decode() + rest
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines, err
    if as_json_output:
        assert msgspec.json.decode(lines[-1])["state"] == "completed"
    else:
        assert not lines[-1].startswith("{") and "completed" in out


def test_send_and_get_save_file_parts(agent_url: str, tmp_path: Path) -> None:
    upload = tmp_path / "in.txt"
    upload.write_text("hello")
    saved = tmp_path / "saved"
    result = ok("send", agent_url, "files", "--file", str(upload), "--save", str(saved))
    assert (saved / "report.csv").read_bytes() == b"a,b\n1,2\n"
    assert "report.csv" in result.stdout
    task_id = as_json(ok("send", agent_url, "files", "--file", str(upload), "--json"))["task"]["id"]
    again = tmp_path / "again"
    ok("get", agent_url, task_id, "--save", str(again))
    assert (again / "report.csv").read_bytes() == b"a,b\n1,2\n"


def test_save_makes_no_folder_for_an_answer_without_files(agent_url: str,
                                                          tmp_path: Path) -> None:
    # before: DIR was made, empty, whatever the answer held
    nothing = tmp_path / "nothing"
    ok("send", agent_url, "hello", "--save", str(nothing))
    task_id = as_json(ok("send", agent_url, "hello", "--json"))["task"]["id"]
    ok("get", agent_url, task_id, "--save", str(nothing / "deeper"))
    assert not nothing.exists()


@pytest.mark.parametrize("command", [
    ["inspect"], ["listen"],
    ["gateway", "--mesh", BROKER, "--namespace", "taken-port"]])
def test_a_taken_port_is_one_line_and_a_usage_error(command: list[str]) -> None:
    if command[0] == "gateway":
        need_broker()  # it reaches the broker before it binds
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = interlingua(*command, "--port", str(port))
    assert done.returncode == 2
    assert "Listening" not in done.stderr  # nothing said to listen before it fails
    assert _one_line_error(done) == (f"error: --port {port}: cannot listen on "
                                     f"127.0.0.1:{port}: Address already in use")


@pytest.mark.parametrize("command", [["card"], ["send", "hi"]])
def test_a_url_that_is_no_agents_names_every_form(command: list[str]) -> None:
    done = interlingua(command[0], "notaurl", *command[1:])
    assert done.returncode == 2
    line = _one_line_error(done)
    assert "'notaurl' is not an agent URL" in line
    for form in ("http(s)://", "grpc(s)://HOST:PORT", "mqtt(s)://HOST[:PORT]/NAMESPACE/AGENT"):
        assert form in line
