"""The MCP bridge, both ways, through the official mcp SDK's client and server
(stdio subprocesses and streamable HTTP on loopback)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client as MCPClient
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

from interlingua import Agent, Client, Context, DataPart, FilePart, Task, TaskState, get_text
from interlingua.adapters.mcp import MCPFunctionTool, mcp_agent, mcp_server, mcp_tools
from interlingua.adapters.openai import chat_agent
from interlingua.cli.main import main
from interlingua.cli.serve import load_agent
from tests.e2e.procs import free_port
from tests.live import live_agent, live_server

from . import mcp_math
from .chat_server import ChatServer
from .peers import PNG, filer, pictures, slow_agent, stateless_v01, v03_without_card
from .processes import stop

ROOT = Path(__file__).resolve().parents[2]
EXE = str(Path(sys.executable).parent / "interlingua")


@pytest.fixture(scope="module")
def agents() -> Iterator[dict[str, str]]:
    story = load_agent("examples/story.py")
    sys.modules["_interlingua_agent_story"].DELAY = 0.01  # the story streams slowly for people
    with live_agent(story) as s, \
            live_agent(load_agent("examples/flight_booking.py")) as f, \
            live_agent(load_agent("examples/image_rotate.py")) as i:
        yield {"story": s, "flights": f, "images": i}


def stdio(url: str, *options: str) -> StdioServerParameters:
    # the MCP SDK passes on only a few variables: the sources under test too
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    return StdioServerParameters(command=EXE, args=["mcp", url, *options], cwd=str(ROOT),
                                 env=env)


async def test_stdio_tools_are_the_skills_and_progress_is_reported(
        agents: dict[str, str], tmp_path: Path) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    with open(tmp_path / "stderr", "w+") as errlog:
        async with MCPClient(stdio_client(stdio(agents["story"]), errlog=errlog)) as client:
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == ["short-story"]
            assert tools[0].description is not None
            assert tools[0].description.startswith("Writes a very short story")
            assert tools[0].input_schema["required"] == ["message"]
            # described as RemoteAgent describes them to a model (they were not at all)
            described = {name: p.get("description")
                         for name, p in tools[0].input_schema["properties"].items()}
            assert described == {
                "message": "What to ask or tell the agent.",
                "task_id": "Only to answer a question the agent asked: its task id."}
            result = await client.call_tool("short-story", {"message": "a robot on Mars"},
                                            progress_callback=on_progress)
        errlog.seek(0)
        said = errlog.read()
    # the requests to the agent are not logged (an MCP client shows stderr)
    assert "HTTP Request" not in said and "INFO" not in said, said
    assert not result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text.startswith("Pip was the smallest rover on Mars")
    assert text.endswith("The story is complete!")
    assert progress[0] == (1, "Okay, I'm starting to write that story for you...")
    assert [v for v, _ in progress] == list(range(1, len(progress) + 1))
    # each chunk of the story is reported with its text
    chunks = [m or "" for _, m in progress[1:-1]]
    assert len(chunks) == 5 and chunks[0] == "Pip was the smallest rover on Mars, and the most curious."
    assert " ".join(chunks) in " ".join(text.split())


def _wait_for_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60  # (a loaded machine: its imports alone)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"exited {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("did not start")


async def test_streamable_http_and_a_question_answered_by_task_id(
        agents: dict[str, str]) -> None:
    port = free_port()
    proc = subprocess.Popen([EXE, "mcp", agents["flights"], "--http", "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, proc)
        async with MCPClient(f"http://127.0.0.1:{port}/mcp") as client:
            (tool,) = (await client.list_tools()).tools
            asked = await client.call_tool(tool.name, {"message": "book a flight"})
            text = asked.content[0].text  # type: ignore[union-attr]
            assert text.startswith("The agent asks:") and "task_id=" in text
            task_id = text.split("task_id='")[1].split("'")[0]
            done = await client.call_tool(tool.name, {"message": "From JFK to LHR",
                                                      "task_id": task_id})
        assert not done.is_error
        assert '"from":"JFK"' in done.content[0].text  # type: ignore[union-attr]
    finally:
        stop(proc)


async def test_a_rejected_task_is_a_tool_error(agents: dict[str, str]) -> None:
    async with MCPClient(stdio(agents["images"])) as client:
        (tool,) = (await client.list_tools()).tools
        result = await client.call_tool(tool.name, {"message": "no file here"})
    assert result.is_error
    assert "ended rejected" in result.content[0].text  # type: ignore[union-attr]


def test_mcp_command_usage() -> None:
    bad = CliRunner().invoke(main, ["mcp", "ftp://x"])
    assert bad.exit_code == 2 and "is not an agent URL" in bad.output
    gone = CliRunner().invoke(main, ["mcp", f"http://127.0.0.1:{free_port()}"])
    assert gone.exit_code == 3 and "cannot read the agent's card" in gone.output
    assert "Traceback" not in bad.output + gone.output


def test_mcp_takes_the_client_options_of_the_other_client_commands(tmp_path: Path) -> None:
    """--dialect, --binding, --timeout, --insecure and the TLS options, as every other
    command that talks to an agent takes them (none were there: an agent behind a
    private CA could not be bridged, and its answers were waited for 60 s)."""
    impossible = CliRunner().invoke(main, ["mcp", "http://127.0.0.1:9", "--dialect", "0.1",
                                           "--binding", "rest"])
    assert impossible.exit_code == 2 and "binding" in impossible.output, impossible.output
    grpc_only = CliRunner().invoke(main, ["mcp", "grpc://127.0.0.1:9", "--binding", "rest"])
    assert grpc_only.exit_code == 2 and "is a gRPC address" in grpc_only.output
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("no certificate here")
    bad_ca = CliRunner().invoke(main, ["mcp", "https://127.0.0.1:9", "--ca-bundle",
                                       str(not_pem)])
    assert bad_ca.exit_code == 2, bad_ca.output
    with socket.socket() as silent:  # takes connections and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        done = subprocess.run([EXE, "mcp", url, "--timeout", "0.5"], cwd=ROOT,
                              capture_output=True, text=True, timeout=50)
        took = time.monotonic() - started
    assert done.returncode == 3, done.stderr
    # (60 s without --timeout; a busy machine takes seconds to start the process)
    assert "cannot read the agent's card" in done.stderr and took < 40, (took, done.stderr)


def test_ctrl_c_while_the_card_is_read_is_an_interruption() -> None:
    """As every client command: "error: interrupted", exit 130 (it was exit 0, silent)."""
    import signal

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        proc = subprocess.Popen([EXE, "mcp", url], cwd=ROOT, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            silent.settimeout(20)
            conn, _ = silent.accept()  # the card is being asked for
            with conn:
                proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=20)
        finally:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 130, err
    assert err.strip().endswith("error: interrupted"), err


def test_mcp_http_on_a_taken_port_is_one_line() -> None:
    # (it read the card, then exited 3 with uvicorn's log lines; the other commands
    # that listen say it in one line, exit 2)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([EXE, "mcp", "http://127.0.0.1:9", "--http", "--port",
                               str(port)], cwd=ROOT, capture_output=True, text=True,
                              timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"error: --port {port}: cannot listen on 127.0.0.1:{port}: "
                           "Address already in use\n")


async def test_an_agent_at_a_grpc_address_is_bridged() -> None:
    # (its card was asked for at grpc://…/.well-known/agent-card.json, which httpx
    # refused: every gRPC address was "cannot read the agent's card")
    from tests.live import live_grpc_agent

    with live_grpc_agent(load_agent("examples/echo.py")) as (_, target):
        port = free_port()
        proc = subprocess.Popen([EXE, "mcp", f"grpc://{target}", "--http", "--port",
                                 str(port)], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        try:
            _wait_for_port(port, proc)
            async with MCPClient(f"http://127.0.0.1:{port}/mcp") as client:
                (tool,) = (await client.list_tools()).tools
                answer = await client.call_tool(tool.name, {"message": "over grpc"})
            assert not answer.is_error
            assert "over grpc" in answer.content[0].text  # type: ignore[union-attr]
        finally:
            stop(proc)


@pytest.mark.parametrize("streaming", [True, False])
async def test_the_timeout_bounds_a_tool_call_and_names_the_task_still_running(
        streaming: bool) -> None:
    """``--timeout`` bounds the whole call, whether the agent streams or not (a
    streaming one was waited for to the end; another for twice the timeout), and the
    error names the task working on, so that its answer can be picked up."""
    release = threading.Event()
    with live_agent(slow_agent(release, streaming=streaming)) as url:
        try:
            async with MCPClient(stdio(url, "--timeout", "1")) as client:
                started = time.monotonic()
                async with asyncio.timeout(20):
                    result = await client.call_tool("Slow", {"message": "take your time"})
                took = time.monotonic() - started
            async with Client(url) as c:
                (task,) = (await c.list_tasks()).tasks
        finally:
            release.set()
    assert result.is_error and task.status.state is TaskState.WORKING
    text = result.content[0].text  # type: ignore[union-attr]
    assert f"no answer within 1 s; the agent's task {task.id!r} is still working" in text
    assert took < 5, took  # 1 s, and (without a stream) a moment to learn the task


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_tool_call_canceled_cancels_the_task_it_started(streaming: bool) -> None:
    """The MCP client's user stopped the call: the agent's task is canceled (it
    worked on to its end, for nobody)."""
    release = threading.Event()
    with live_agent(slow_agent(release, streaming=streaming)) as url:
        try:
            async with MCPClient(stdio(url)) as client, Client(url) as a2a:
                call = asyncio.create_task(client.call_tool("Slow", {"message": "long job"}))
                task = await _settled(a2a, lambda t: t.status.state is TaskState.WORKING)
                call.cancel()  # the client says notifications/cancelled
                with contextlib.suppress(asyncio.CancelledError):
                    await call
                task = await _settled(a2a, lambda t: t.status.state is not TaskState.WORKING)
        finally:
            release.set()
    assert task.status.state is TaskState.CANCELED


async def test_a_canceled_call_to_an_agent_that_keeps_no_message_ids_cancels_its_task(
        ) -> None:
    """Before: the task was asked for by sending the message again, which such an agent
    takes as a new task: a second task was started, and it alone was canceled."""
    from .peers import NewTaskEachSend

    peer = NewTaskEachSend()
    with live_server(peer.app) as url:
        async with MCPClient(stdio(url, "--dialect", "0.3")) as client:
            tool = (await client.list_tools()).tools[0].name
            call = asyncio.create_task(client.call_tool(tool, {"message": "long job"}))
            async with asyncio.timeout(15):
                while not peer.sends:
                    await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # (followed by then)
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            async with asyncio.timeout(15):
                while not peer.cancels:
                    await asyncio.sleep(0.05)
    assert [task_id for _, _, task_id in peer.sends] == ["task-1"], peer.sends
    assert peer.cancels == ["task-1"]


async def _settled(a2a: Client, done: Callable[[Task], bool]) -> Task:
    """The agent's one task, once ``done`` says so of it (within 15 s)."""
    async with asyncio.timeout(15):
        while True:
            tasks = (await a2a.list_tasks()).tasks
            if tasks and done(tasks[0]):
                return tasks[0]
            await asyncio.sleep(0.05)


async def test_an_answer_that_is_a_file_is_mcp_content() -> None:
    """An image as image content, a file by URL as a resource link, each named in the
    text (the tool answered "(the agent answered nothing)")."""
    from mcp.types import ImageContent, ResourceLink

    with live_agent(filer()) as url:
        server = await mcp_server(url)
        async with MCPClient(server) as client:
            result = await client.call_tool("Filer", {"message": "draw"})
    text, image, link = result.content
    assert text.text == (  # type: ignore[union-attr]
        f"[file 'chart.png' (image/png, {len(PNG)} bytes)]\n"
        "[file 'report.pdf' (application/pdf, at https://files.example/report.pdf)]")
    assert result.structured_content == {"result": text.text}  # type: ignore[union-attr]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    assert isinstance(link, ResourceLink) and link.name == "report.pdf"
    assert (link.uri, link.mime_type) == ("https://files.example/report.pdf",
                                          "application/pdf")


async def test_a_streamed_turn_is_taken_as_the_stream_told_it() -> None:
    """A v0.1 agent whose stream says the whole turn and which keeps no tasks: the
    question and the answer are the stream's (the call failed with "Task not found",
    the task read again when the stream had ended)."""
    with live_server(stateless_v01()) as url:
        server = await mcp_server(url)
        async with MCPClient(server) as client:
            asked = await client.call_tool("ask", {"message": "book"})
            text = asked.content[0].text  # type: ignore[union-attr]
            assert not asked.is_error and text.startswith("The agent asks: Which city?"), text
            task_id = text.split("task_id='")[1].split("'")[0]
            done = await client.call_tool("ask", {"message": "Paris", "task_id": task_id})
    assert not done.is_error
    assert done.content[0].text == "answer to Paris"  # type: ignore[union-attr]


async def test_an_endpoint_with_no_card_is_bridged_in_the_dialect_given() -> None:
    """As ``send --dialect`` speaks to it: one tool, named after the host (``mcp``
    exited 3, "cannot read the agent's card")."""
    with live_server(v03_without_card()) as url:
        async with MCPClient(stdio(url, "--dialect", "0.3")) as client:
            (tool,) = (await client.list_tools()).tools
            result = await client.call_tool(tool.name, {"message": "ping"})
    assert tool.name == url.split("//")[1].replace(".", "_").replace(":", "_")
    assert not result.is_error
    assert result.content[0].text == "pong: ping"  # type: ignore[union-attr]


# -------------------------------------------------------- MCP -> A2A


@pytest.fixture(scope="module")
def math_agent_url() -> Iterator[str]:
    import asyncio

    agent = asyncio.run(mcp_agent(mcp_math.server, name="Math"))
    with live_agent(agent) as url:
        yield url


async def test_mcp_tools_as_skills_and_calls(math_agent_url: str) -> None:
    async with Client(math_agent_url) as c:
        card = await c.get_card()
        assert [s.id for s in card.skills] == ["add", "shout", "divide"]
        added = await c.send([], data={"tool": "add", "arguments": {"a": 2, "b": 3}})
        assert isinstance(added, Task) and added.status.state is TaskState.COMPLETED
        assert get_text(added.artifacts[0]) == "5"
        structured = [p for p in added.artifacts[0].parts if isinstance(p, DataPart)]
        assert structured and structured[0].data == {"result": 5}
        shouted = await c.send("hello")  # text goes to the one tool taking one string
        assert isinstance(shouted, Task) and get_text(shouted.artifacts[0]) == "HELLO"
        failed = await c.send([], data={"tool": "divide", "arguments": {"a": 1, "b": 0}})
        assert isinstance(failed, Task) and failed.status.state is TaskState.FAILED
        assert "cannot divide by zero" in get_text(failed.status.message)  # type: ignore[arg-type]
        unknown = await c.send([], data={"tool": "nope"})
        assert isinstance(unknown, Task) and unknown.status.state is TaskState.REJECTED
        assert "the tools are: add, shout, divide" in get_text(unknown.status.message)  # type: ignore[arg-type]


async def test_an_agent_from_an_mcp_server_over_stdio() -> None:
    target = StdioServerParameters(command=sys.executable,
                                   args=["-m", "tests.adapters.mcp_math"], cwd=str(ROOT))
    agent = await mcp_agent(target, name="Math")
    with live_agent(agent) as url:
        async with Client(url) as c:
            task = await c.send([], data={"tool": "add", "arguments": {"a": 40, "b": 2}})
    assert isinstance(task, Task) and get_text(task.artifacts[0]) == "42"


async def test_an_image_from_an_mcp_tool_is_a_file_part() -> None:
    """In the A2A answer, and named to a model (the task completed with an empty text,
    and the model was told '')."""
    server = pictures()
    with live_agent(await mcp_agent(server, name="Pictures")) as url:
        async with Client(url) as c:
            task = await c.send([], data={"tool": "picture", "arguments": {}})
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    (part,) = task.artifacts[0].parts
    assert isinstance(part, FilePart)
    assert (part.raw, part.media_type) == (PNG, "image/png")
    (tool,) = await mcp_tools(server)
    assert await tool("{}") == f"[file (image/png, {len(PNG)} bytes)]"


async def test_mcp_tools_for_a_chat_model(chat_server: tuple[ChatServer, str]) -> None:
    _, base = chat_server
    tools = await mcp_tools(mcp_math.server)
    shout = [t for t in tools if t.tool.name == "shout"]
    with live_agent(chat_agent("stand-in", base_url=base, tools=shout)) as url:
        async with Client(url) as c:
            task = await c.send("quiet please")
    assert isinstance(task, Task)
    assert get_text(task.artifacts[0], sep="") == "Combined: QUIET PLEASE"


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_bare_reply_and_an_agent_that_does_not_stream(streaming: bool) -> None:
    async def hello(ctx: Context) -> None:
        await ctx.reply(f"hello, {ctx.text}")

    with live_agent(Agent("Hello", "Says hello.", hello, streaming=streaming)) as url:
        server = await mcp_server(url)
        async with MCPClient(server) as client:  # in process
            (tool,) = (await client.list_tools()).tools
            assert tool.name == "Hello"
            result = await client.call_tool("Hello", {"message": "Ada"})
    assert not result.is_error
    assert result.content[0].text == "hello, Ada"  # type: ignore[union-attr]


async def test_skills_whose_ids_make_the_same_tool_name_each_get_a_tool() -> None:
    from interlingua.core.model import AgentSkill

    async def hello(ctx: Context) -> None:
        await ctx.reply(f"hello, {ctx.text}")

    long = "x" * 70  # past the 64 characters of a tool's name
    skills = [AgentSkill(id=i, name=f"skill {n}", description="d", tags=[])
              for n, i in enumerate(["a b", "a_b", "a/b", long, long + "y"])]
    with live_agent(Agent("Hello", "Says hello.", hello, skills=skills)) as url:
        server = await mcp_server(url)
        async with MCPClient(server) as client:  # in process
            tools = (await client.list_tools()).tools
            result = await client.call_tool("a_b_3", {"message": "Ada"})
    assert [(t.name, t.title) for t in tools] == [
        ("a_b", "skill 0"), ("a_b_2", "skill 1"), ("a_b_3", "skill 2"),
        ("x" * 64, "skill 3"), ("x" * 62 + "_2", "skill 4")]
    assert result.content[0].text == "hello, Ada"  # type: ignore[union-attr]


async def test_progress_shows_a_chunk_s_text_on_one_line_cut_short() -> None:
    async def write(ctx: Context) -> None:
        aid = await ctx.artifact("word " * 100 + "end", name="long.txt")
        await ctx.artifact("two\n  lines", artifact_id=aid, append=True)
        await ctx.artifact(" \n", artifact_id=aid, append=True)  # blank: nothing to show
        await ctx.artifact(DataPart(data={"n": 1}), name="numbers.json")
        await ctx.complete()

    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    with live_agent(Agent("Writer", "Writes.", write, streaming=True)) as url:
        server = await mcp_server(url)
        async with MCPClient(server) as client:
            result = await client.call_tool("Writer", {"message": "go"},
                                            progress_callback=on_progress)
    assert not result.is_error
    long, two, data = progress
    assert long is not None and len(long) == 200 and long.endswith("word…")
    assert long.startswith("word word ")
    assert two == "two lines"
    assert data == "artifact numbers.json"


@pytest.mark.parametrize("tool", [["add"], {"name": "add"}, 5, None])
def test_a_tool_named_by_no_string_is_refused_by_the_tools_names(tool: object) -> None:
    from types import SimpleNamespace

    from interlingua.adapters.mcp import _pick
    from interlingua.core.model import Message, Role

    message = Message(message_id="m", role=Role.USER,
                      parts=[DataPart(data={"tool": tool, "arguments": {}})])
    tools = {"add": SimpleNamespace(input_schema={"properties": {"a": {"type": "number"}}})}
    picked = _pick(SimpleNamespace(message=message, text=""), tools)  # type: ignore[arg-type]
    assert picked == f"No tool named {tool!r}; the tools are: add."



@pytest.mark.parametrize("arguments", ["{not json", "[" * 5000 + "]" * 5000])
async def test_tool_arguments_a_model_got_wrong_are_said_to_it(arguments: str) -> None:
    """The model's arguments, unreadable (or nested deeper than a reader goes): the
    tool's answer to the model says so, and no MCP server is called."""
    tool = MCPFunctionTool(mcp_math.server, None)
    assert await tool(arguments) == "error: the arguments are not JSON"


async def test_an_agent_on_the_mesh_is_an_mcp_server_too() -> None:
    """``interlingua mcp`` takes every agent URL the other client commands take: an
    agent on an MQTT mesh as well (it was refused as no http:// URL)."""
    from tests.mesh.helpers import BROKER, namespace, need_broker, on_mesh

    need_broker()

    async def hello(ctx: Context) -> None:
        await ctx.reply(f"hello, {ctx.text}")

    ns = namespace()
    async with on_mesh(Agent("Hello", "Says hello.", hello, streaming=True), ns):
        server = await mcp_server(f"{BROKER}/{ns}/Hello", timeout=10)
        async with MCPClient(server) as client:  # in process
            (tool,) = (await client.list_tools()).tools
            result = await client.call_tool(tool.name, {"message": "Ada"})
    assert not result.is_error, result
    assert result.content[0].text == "hello, Ada"  # type: ignore[union-attr]
    usage = CliRunner().invoke(main, ["mcp", "mqtt://127.0.0.1:1/ns"])
    assert usage.exit_code == 2 and "a mesh agent is mqtt://HOST" in usage.output
