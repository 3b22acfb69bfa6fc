"""The ``interlingua`` command against a live server (click's CliRunner, in process)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from click.testing import CliRunner, Result
from starlette.applications import Starlette

import interlingua
from interlingua.cli.main import main
from tests.live import live_server
from tests.ports import free_port


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="interlingua")


def ok(*args: str) -> Result:
    result = run(*args)
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def as_json(result: Result) -> Any:
    return msgspec.json.decode(result.stdout)


def closed_port() -> int:
    return free_port()  # nobody else is given it, and nothing here listens on it


def test_version() -> None:
    result = ok("--version")
    assert interlingua.__version__ in result.stdout


# ---------------------------------------------------------------------------- card


def test_card(agent_url: str) -> None:
    out = ok("card", agent_url).stdout
    assert "Test assistant" in out
    assert "version 2.1.0" in out
    assert "Greets, echoes, sleeps and fails on request." in out
    assert f"JSONRPC    1.0   {agent_url}/  (used by default)" in out
    assert f"JSONRPC    0.3   {agent_url}/" in out
    assert "Dialects: JSON-RPC 1.0, 0.3" in out
    assert "streaming yes" in out
    for text in ("greet", "Greeting", "Asks your name, then greets you.", "echo", "test, echo"):
        assert text in out
    assert f"Card: {agent_url}/.well-known/agent-card.json" in out


def test_card_json_is_the_served_document(agent_url: str) -> None:
    served = httpx.get(agent_url + "/.well-known/agent-card.json").json()
    assert as_json(ok("card", agent_url, "--json")) == served


def test_card_where_no_agent_is_served_exits_3() -> None:
    with live_server(Starlette()) as url:
        result = run("card", url)
    assert result.exit_code == 3
    assert result.stderr.startswith("error: no agent card found")
    assert result.stderr.count("\n") == 1


def test_card_where_a_web_server_answers_html_names_its_page_not_its_markup() -> None:
    """Before: each URL tried pasted the start of the error page's HTML into the line."""
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    page = "<!DOCTYPE html><html><head><title>Nothing  here</title></head><body>" \
           "<h1>404</h1><p>Error code explanation</p></body></html>"

    async def missing(request: object) -> HTMLResponse:
        return HTMLResponse(page, status_code=404)

    with live_server(Starlette(routes=[Route("/{p:path}", missing)])) as url:
        result = run("card", url)
    assert result.exit_code == 3
    assert "HTTP 404: an HTML page titled 'Nothing here'" in result.stderr, result.stderr
    assert "<" not in result.stderr and "explanation" not in result.stderr


# ---------------------------------------------------------------------------- send


@pytest.mark.parametrize("dialect", [[], ["--dialect", "1.0"], ["--dialect", "0.3"]],
                         ids=["card", "v1.0", "v0.3"])
def test_send_shows_state_status_message_and_artifact(agent_url: str, dialect: list[str]) -> None:
    out = ok("send", agent_url, "hello there", *dialect).stdout
    lines = out.splitlines()
    assert lines[0].startswith("Task ") and lines[0].endswith("  completed")
    assert "Status message" in lines and "  done" in lines
    assert "Artifacts (1)" in lines
    assert lines[lines.index("Artifacts (1)") + 1].startswith("  echo  (")
    assert "    hello there" in lines


def test_send_json_is_the_agents_result_in_its_dialect(agent_url: str) -> None:
    v1 = as_json(ok("send", agent_url, "hi", "--json"))
    assert v1["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert v1["task"]["artifacts"][0]["parts"] == [{"text": "hi"}]
    v03 = as_json(ok("send", agent_url, "hi", "--json", "--dialect", "0.3"))
    assert v03["kind"] == "task" and v03["status"]["state"] == "completed"
    assert v03["artifacts"][0]["parts"] == [{"kind": "text", "text": "hi"}]


def test_send_data_and_files(agent_url: str, tmp_path: Path) -> None:
    sheet = tmp_path / "numbers.csv"
    sheet.write_bytes(b"x\n1\n2\n")
    out = ok("send", agent_url, "files", "--data", '{"k": [1, 2]}', "--file", str(sheet)).stdout
    assert '"name": "numbers.csv"' in out
    assert '"type": "text/csv"' in out
    assert '"size": 6' in out
    assert "file report.csv (text/csv, 8 bytes)" in out


def test_send_data_artifact_is_pretty_printed(agent_url: str) -> None:
    out = ok("send", agent_url, "data").stdout
    assert '      "answer": 42,' in out.splitlines()


def test_two_turns_from_the_command_line(agent_url: str) -> None:
    first = ok("send", agent_url, "greet").stdout
    header = first.splitlines()[0]
    assert header.endswith("  input-required")
    task_id = header.split()[1]
    assert "What is your name?" in first
    assert f"--task-id {task_id}" in first
    second = ok("send", agent_url, "Ada", "--task-id", task_id).stdout
    assert second.splitlines()[0] == f"Task {task_id}  completed"
    assert "    Hello, Ada!" in second.splitlines()


def test_reply_message(agent_url: str) -> None:
    # (sent without waiting, so that a timeout can name its task: this agent answers
    # with the task, which its reply completed)
    out = ok("send", agent_url, "reply [bold]not markup[/bold]").stdout
    lines = out.splitlines()
    assert lines[0].startswith("Task ") and lines[0].endswith("  completed")
    assert "  [bold]not markup[/bold]" in lines


def test_failed_task_exits_4(agent_url: str) -> None:
    result = run("send", agent_url, "fail")
    assert result.exit_code == 4, (result.output, result.stderr)
    out = result.stdout
    assert out.splitlines()[0].endswith("  failed")
    assert "  it broke" in out.splitlines()


@pytest.mark.parametrize("args", [
    ["--data", "{not json"],
    ["--data", "[" * 5000 + "]" * 5000],
    ["--file", "/no/such/file.txt"],
    ["--dialect", "0.9"],
    ["--history", "-1"],
    ["-H", "no colon here"],
], ids=["bad-json", "deep-json", "missing-file", "unknown-dialect", "negative-history",
        "bad-header"])
def test_send_usage_errors_exit_2(agent_url: str, args: list[str]) -> None:
    result = run("send", agent_url, "hi", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
    assert result.stderr.endswith("(see 'interlingua send --help')\n")
    assert result.stderr.count("\n") == 1


def test_missing_argument_exits_2() -> None:
    result = run("send", "http://example.com")
    assert result.exit_code == 2
    assert result.stderr == "error: Missing argument 'TEXT'. (see 'interlingua send --help')\n"


def test_no_command_shows_the_commands() -> None:
    result = run()
    assert result.exit_code == 2
    for command in ("serve", "card", "send", "get", "tasks", "cancel"):
        assert f"  {command} " in result.output


def test_bad_url_exits_2() -> None:
    result = run("send", "ftp://example.com", "hi")
    assert result.exit_code == 2
    assert "'ftp://example.com' is not an agent URL: http(s)://" in result.stderr


@pytest.mark.parametrize("address", ["localhost:8000", "127.0.0.1:8000/agents/a", "[::1]:9"])
def test_a_bare_host_and_port_is_refused_naming_the_url_meant(address: str) -> None:
    result = run("card", address)
    assert result.exit_code == 2
    assert "is not an agent URL" in result.stderr
    assert f"did you mean 'http://{address}'?" in result.stderr, result.stderr


def test_unreachable_agent_exits_3() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    for args in (["card", url], ["send", url, "hi"], ["send", url, "hi", "--dialect", "0.3"],
                 ["get", url, "some-task", "--wait"]):
        result = run(*args)
        assert result.exit_code == 3, result.output
        assert result.stderr.startswith(f"error: cannot reach {url}")
        assert result.stderr.count("\n") == 1


# ------------------------------------------------------------------ get and cancel


def test_no_wait_get_and_cancel(agent_url: str) -> None:
    sent = as_json(ok("send", agent_url, "sleep 30", "--no-wait", "--json"))
    task_id = sent["task"]["id"]
    assert sent["task"]["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    got = ok("get", agent_url, task_id).stdout
    assert got.splitlines()[0] in (f"Task {task_id}  submitted", f"Task {task_id}  working")
    canceled = ok("cancel", agent_url, task_id).stdout
    assert canceled.splitlines()[0] == f"Task {task_id}  canceled"
    again = run("cancel", agent_url, task_id)
    assert again.exit_code == 1
    assert again.stderr.startswith("error: TaskNotCancelable (-32002): ")
    assert again.stderr.count("\n") == 1


def test_get_with_history(agent_url: str) -> None:
    task_id = as_json(ok("send", agent_url, "remember this", "--json"))["task"]["id"]
    out = ok("get", agent_url, task_id, "--history", "5").stdout.splitlines()
    head = next(i for i, line in enumerate(out) if line.startswith("History ("))
    assert out[head + 1:head + 3] == ["  user:", "    remember this"]
    assert as_json(ok("get", agent_url, task_id, "--json", "--dialect", "0.3"))["id"] == task_id


def test_send_with_history_shows_it(agent_url: str) -> None:
    """``send --history N`` prints the history it asked for: an agent that answers
    only in status updates has its answer nowhere else."""
    for dialect in ("1.0", "0.3"):
        out = ok("send", agent_url, "status the answer is 42", "--history", "10",
                 "--dialect", dialect).stdout.splitlines()
        assert out[0].endswith("  completed")
        head = next(i for i, line in enumerate(out) if line.startswith("History ("))
        assert out[head + 1:head + 3] == ["  user:", "    status the answer is 42"]
        assert out[head + 3:head + 5] == ["  agent:", "    the answer is 42"]
    # without --history, no history
    plain = ok("send", agent_url, "status the answer is 42").stdout
    assert "History (" not in plain and "the answer is 42" not in plain.replace(
        "status the answer is 42", "")


def test_unknown_task_exits_1_with_code_and_message(agent_url: str) -> None:
    for dialect, wait in (("1.0", ()), ("0.3", ()), ("1.0", ("--wait",))):
        result = run("get", agent_url, "no-such-task", "--dialect", dialect, *wait)
        assert result.exit_code == 1
        assert result.stderr == "error: TaskNotFound (-32001): Task not found: no-such-task\n"
        assert result.stdout == ""


def test_unknown_task_with_json_prints_the_error_as_json(agent_url: str) -> None:
    result = run("get", agent_url, "no-such-task", "--json")
    assert result.exit_code == 1
    assert as_json(result) == {"error": {"code": -32001,
                                         "message": "Task not found: no-such-task"}}


# --------------------------------------------------------------------------- tasks


def test_tasks_table_filters_and_pages(agent_url: str) -> None:
    context = str(uuid.uuid4())
    done = as_json(ok("send", agent_url, "one", "--context-id", context, "--json"))["task"]["id"]
    failed = as_json(run("send", agent_url, "fail", "--context-id", context,
                         "--json"))["task"]["id"]
    out = ok("tasks", agent_url, "--context-id", context).stdout
    rows = {line.split()[0]: line.split()[2] for line in out.splitlines() if context in line}
    assert rows == {done: "completed", failed: "failed"}
    assert "2 shown of 2" in out

    only_failed = ok("tasks", agent_url, "--context-id", context, "--status", "failed").stdout
    assert failed in only_failed and done not in only_failed

    first = ok("tasks", agent_url, "--context-id", context, "--page-size", "1").stdout
    token = next(line.split("--page-token ")[1] for line in first.splitlines()
                 if "--page-token" in line)
    second = ok("tasks", agent_url, "--context-id", context, "--page-size", "1",
                "--page-token", token).stdout
    assert {done, failed} == {t for t in (done, failed) if t in first or t in second}
    assert (done in first) != (done in second)

    with_artifacts = ok("tasks", agent_url, "--context-id", context, "--include-artifacts").stdout
    assert "Artifacts" in with_artifacts.splitlines()[0]

    page = as_json(ok("tasks", agent_url, "--context-id", context, "--json"))
    assert {t["id"] for t in page["tasks"]} == {done, failed}
    assert page["totalSize"] == 2


def test_tasks_in_v03_is_bad_usage(agent_url: str) -> None:
    result = run("tasks", agent_url, "--dialect", "0.3")
    assert result.exit_code == 2
    assert "needs A2A 1.0" in result.stderr


@pytest.mark.parametrize("status", ["sleeping", "unknown"])
def test_tasks_rejects_an_unknown_status(agent_url: str, status: str) -> None:
    """"unknown" is TASK_STATE_UNSPECIFIED on the wire, which filters nothing:
    asked for, it listed every task."""
    result = run("tasks", agent_url, "--status", status)
    assert result.exit_code == 2 and "'failed'" in result.stderr


# --------------------------------------------------------------------------- serve


def test_serve_a_missing_file_exits_2() -> None:
    result = run("serve", "no/such/agent.py", "--port", str(closed_port()))
    assert result.exit_code == 2
    assert result.stderr == "error: no such file: no/such/agent.py\n"


def test_serve_a_file_without_agent_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    result = run("serve", str(empty), "--port", str(closed_port()))
    assert result.exit_code == 2
    assert "defines no interlingua.Agent" in result.stderr


@pytest.mark.parametrize(("spec", "said"), [
    ("", "'' is neither a Python file nor a module's name"),
    (":agent", "'' is neither a Python file nor a module's name"),
    (".", "'.' is neither a Python file nor a module's name"),
    (".agents", "'.agents' is neither a Python file nor a module's name"),
    ("{dir}/factory.py:make", "{dir}/factory.py:make failed: ValueError: no key set"),
    ("raising_at_import", "raising_at_import failed to load: RuntimeError: boom"),
])
def test_serve_an_agent_that_cannot_be_had_is_one_line(
        spec: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (a traceback each: an empty or relative module name, a factory that raised, a
    # module, not a file, whose import raised; as --auth and --limits load theirs)
    (tmp_path / "factory.py").write_text("def make():\n    raise ValueError('no key set')\n")
    (tmp_path / "raising_at_import.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec, said = spec.format(dir=tmp_path), said.format(dir=tmp_path)
    result = run("serve", spec, "--port", str(closed_port()), "--store", "memory://")
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {said}\n"
    if spec.endswith(":make"):
        result = run("serve", "tests/client/agents.py", "--auth", spec, "--port",
                     str(closed_port()), "--store", "memory://")
        assert result.exit_code == 2 and said in result.stderr, result.output


@pytest.mark.parametrize("option", ["--auth", "--limits"])
def test_serve_an_empty_security_option_is_refused_not_dropped(option: str) -> None:
    # (--auth "", an unset shell variable, served with no authentication at all; a
    # process with a time limit: a server that took it would serve until stopped)
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "tests/client/agents.py",
         option, "", "--port", str(free_port()), "--store", "memory://"],
        capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"error: {option} must be given as FILE_OR_MODULE:ATTR, not ''\n"


def test_serve_a_local_bus_with_a_path_says_what_it_takes() -> None:
    # (it said "unsupported bus URL (local://): use local:// or redis://…")
    result = run("serve", "tests/client/agents.py", "--bus", "local://x", "--port",
                 str(closed_port()), "--store", "memory://")
    assert result.exit_code == 2, result.output
    assert "local:// takes nothing after it, not 'local://x'" in result.stderr


@pytest.mark.parametrize("command", ["send", "stream"])
def test_a_file_that_cannot_be_read_is_the_option_s_fault(command: str) -> None:
    # (it was read once the agent was called, and said as the agent not reached, exit 3)
    result = run(command, f"http://127.0.0.1:{closed_port()}", "hi", "--file",
                 "/proc/self/mem")
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--file': cannot read /proc/self/mem" in result.stderr


def test_serve_a_bad_push_allow_host_exits_2() -> None:
    result = run("serve", "tests/client/agents.py", "--store", "memory://",
                 "--push-allow-host", "10.0.0.0/99", "--port", str(closed_port()))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: allow_hosts: '10.0.0.0/99' is neither")


def test_serve_an_unknown_store_exits_2() -> None:
    result = run("serve", "tests/client/agents.py", "--store", "bogus://x",
                 "--port", str(closed_port()))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unsupported store URL")


def test_serve_names_the_message_id_modes() -> None:
    result = run("serve", "examples/echo.py", "--message-ids", "loose")
    assert result.exit_code == 2
    assert "'content'" in result.stderr and "'strict'" in result.stderr
    assert "--message-ids" in ok("serve", "--help").output


@pytest.mark.parametrize(("option", "kind"), [("--auth", "an AuthConfig"),
                                               ("--limits", "Limits")])
def test_serve_a_security_factory_that_gives_none_is_refused_not_served_open(
        option: str, kind: str, tmp_path: Path) -> None:
    # (a factory that returns its config only when a variable is set: it served with
    # no authentication, or no limits, at all)
    (tmp_path / "config.py").write_text("import os\n\ndef make():\n"
                                        "    if os.environ.get('UNSET_HERE'):\n"
                                        "        raise AssertionError\n")
    result = run("serve", "tests/client/agents.py", option, f"{tmp_path}/config.py:make",
                 "--port", str(closed_port()), "--store", "memory://")
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {option} {tmp_path}/config.py:make is a NoneType, " \
                            f"not {kind}\n"


def test_serve_two_agent_files_whose_neighbours_share_a_name_is_refused(
        tmp_path: Path) -> None:
    # (the second file's ``import helpers`` got the first file's module: its agent ran
    # the other's code, with no word said)
    import subprocess
    import sys

    name = "helpers_" + tmp_path.name.replace("-", "_")
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{name}.py").write_text(f"PREFIX = {folder!r}\n")
        (tmp_path / folder / "agent.py").write_text(
            f"from interlingua import Agent\nfrom {name} import PREFIX\n\n"
            "async def run(text: str) -> str:\n    return PREFIX + text\n\n"
            f"agent = Agent('Agent {folder}', 'Prefixes.', run)\n")
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", str(tmp_path / "one/agent.py"),
         str(tmp_path / "two/agent.py"), "--port", str(free_port()), "--store", "memory://"],
        capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"error: {tmp_path}/two/agent.py and {tmp_path}/one/agent.py each import a module "
        f"named {name!r} from their own folders, and a process keeps one module of a name: "
        "rename one of them, or serve the agents from separate processes\n")


def test_serve_an_agent_file_that_exits_or_a_folder_is_one_line(tmp_path: Path) -> None:
    # (a file calling sys.exit(7) as it loads: exit 7 and nothing said; a folder: "no
    # such file")
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(7)\n")
    result = run("serve", str(tmp_path / "exits.py"), "--port", str(closed_port()),
                 "--store", "memory://")
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {tmp_path}/exits.py failed to load: it called sys.exit(7)\n"
    result = run("serve", "tests/client/agents.py", "--auth", f"{tmp_path}/exits.py:auth",
                 "--port", str(closed_port()), "--store", "memory://")
    assert result.exit_code == 2 and "it called sys.exit(7)" in result.stderr, result.output
    (tmp_path / "folder").mkdir()
    result = run("serve", f"{tmp_path}/folder/", "--port", str(closed_port()),
                 "--store", "memory://")
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {tmp_path}/folder/ is a folder, not a Python file\n"


def test_serve_one_agent_on_a_sqlite_folder_is_refused(tmp_path: Path) -> None:
    # (SQLite made a file of the folder's name, which serving several agents on the
    # same URL then refused as "a file, not a folder")
    result = run("serve", "examples/echo.py", "--store", f"sqlite:///{tmp_path}/data/",
                 "--port", str(closed_port()))
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: the SQLite store sqlite:///{tmp_path}/data/ names a folder; a store is one "
        f"file (sqlite:///{tmp_path}/data/tasks.db): a folder is for several agents, each "
        "its {name}.db in it\n")
    assert not (tmp_path / "data").is_file()
