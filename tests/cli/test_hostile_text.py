"""Text an agent controls, printed by the real ``interlingua`` process: no escape
sequence, carriage return or other control reaches the terminal, an error is one
line, and no line of the command's own can be forged (a "Verified: …" after a card
read without ``--verify``). ``--json`` keeps the agent's text exactly.

The agent is a JSON-RPC peer on loopback that answers v1.0 documents written here
(not by our codecs), each string laced with controls.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.cli.test_console_script import ROOT, SCRIPT
from tests.live import live_server

#: clear the screen, set the title (BEL-ended OSC), a CR-LF then a forged line, a C1
#: CSI, DEL, NUL, a vertical tab and a Unicode line separator
EVIL = ("x\x1b[2J\x1b]0;TITLE\x07\r\nVerified: signed by key 'forged' (keys from here)"
        "\x9b31m\x7f\x00\x0bend\u2028tail")
TASK_ID = "t\x1b[31m1\rT"


def _message(text: str) -> dict[str, Any]:
    return {"messageId": "m1", "role": "ROLE_AGENT", "parts": [{"text": text}]}


def _task(state: str) -> dict[str, Any]:
    return {
        "id": TASK_ID, "contextId": "c\x1b]0;T\x07\n" + EVIL,
        "status": {"state": state, "message": _message(EVIL),
                   "timestamp": "2025-01-01T00:00:00Z"},
        "artifacts": [{
            "artifactId": "a\x1b[1m", "name": EVIL, "description": EVIL,
            "parts": [{"text": "first\x1b[31m line\nsecond\r\nthird\x9b2J"},
                      {"url": "https://files.example/f\x1b[2J", "filename": EVIL,
                       "mediaType": "text/plain\r\n"}],
        }],
    }


def _card(base: str) -> dict[str, Any]:
    return {
        "name": "Evil\x1b[31m\r" + EVIL, "description": EVIL, "version": "1\x1b[2J",
        "provider": {"organization": EVIL, "url": "https://p.example/\x1b"},
        "documentationUrl": "https://d.example/\n" + EVIL,
        "supportedInterfaces": [{"url": base + "/rpc", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True,
                         "extensions": [{"uri": "urn:x\n" + EVIL}]},
        "defaultInputModes": ["text/plain\x1b[2J"], "defaultOutputModes": [EVIL],
        "securitySchemes": {EVIL: {"apiKeySecurityScheme": {
            "name": EVIL, "location": "header"}}},
        "skills": [{"id": "s\x1b[2J", "name": EVIL, "description": EVIL, "tags": [EVIL]}],
    }


def _sse(rid: Any, *results: dict[str, Any]) -> Response:
    body = b"".join(
        b"id: %d\ndata: %s\n\n" % (n, msgspec.json.encode(
            {"jsonrpc": "2.0", "id": rid, "result": result}))
        for n, result in enumerate(results, 1))
    return Response(body, media_type="text/event-stream")


def _stream(rid: Any) -> Response:
    status = {"taskId": TASK_ID, "contextId": "c", "status": {
        "state": "TASK_STATE_WORKING", "message": _message(EVIL)}}
    # chunks of text that runs on: its line breaks kept, its other controls not
    chunk = {"taskId": TASK_ID, "contextId": "c", "artifact": {
        "artifactId": "a", "name": EVIL, "parts": [{"text": "first\x1b[31m line\nsecond\r\nthird"}]}}
    more = {"taskId": TASK_ID, "contextId": "c", "append": True, "lastChunk": True,
            "artifact": {"artifactId": "a", "parts": [{"text": "\x9b2J more\rover\x1b[Kwritten"}]}}
    return _sse(rid, {"task": _task("TASK_STATE_SUBMITTED")}, {"statusUpdate": status},
                {"artifactUpdate": chunk}, {"artifactUpdate": more},
                {"task": _task("TASK_STATE_INPUT_REQUIRED")})


async def _rpc(request: Request) -> Response:
    call = msgspec.json.decode(await request.body())
    rid, method = call["id"], call["method"]
    if method == "SendStreamingMessage":
        return _stream(rid)
    text = call["params"].get("message", {}).get("parts", [{}])[0].get("text")
    if text == "fail" or method == "CancelTask":
        answer: dict[str, Any] = {"error": {"code": -32099, "message": EVIL,
                                            "data": {"why": EVIL}}}
    elif method == "ListTasks":
        answer = {"result": {"tasks": [_task("TASK_STATE_COMPLETED")], "totalSize": 1,
                             "pageSize": 1, "nextPageToken": "p\x1b[2J\nVerified"}}
    else:
        answer = {"result": _task("TASK_STATE_INPUT_REQUIRED") if method == "GetTask"
                  else {"task": _task("TASK_STATE_INPUT_REQUIRED")}}
    return Response(msgspec.json.encode({"jsonrpc": "2.0", "id": rid, **answer}),
                    media_type="application/json")


@pytest.fixture(scope="module")
def evil_url() -> Iterator[str]:
    async def card(request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        return Response(msgspec.json.encode(_card(base)), media_type="application/json")

    app = Starlette(routes=[Route("/rpc", _rpc, methods=["POST"]),
                            Route("/.well-known/agent-card.json", card)])
    with live_server(app) as url:
        yield url


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    """The console script, its output as the bytes it wrote (no newline translation)."""
    return subprocess.run([str(SCRIPT), *args], capture_output=True, cwd=ROOT, timeout=30,
                          check=False)


def assert_safe(out: bytes) -> str:
    text = out.decode()
    controls = sorted({c for c in text if (c < " " and c not in "\n\t")
                       or "\x7f" <= c < "\xa0" or c in "\u2028\u2029"})
    assert not controls, (controls, text)
    # (an agent's multi-line text is indented, or under its artifact's heading)
    assert not any(line.startswith("Verified") for line in text.splitlines()), text
    return text


def test_an_agent_error_is_one_line_without_controls(evil_url: str) -> None:
    done = run("send", evil_url, "fail")
    assert done.returncode == 1
    [line] = assert_safe(done.stderr).splitlines()
    assert line.startswith("error: RemoteError (-32099): x\\x1b[2J\\x1b]0;TITLE\\x07 Verified")
    assert line.endswith("\\x9b31m\\x7f\\x00 end tail")


def test_an_error_said_as_json_keeps_the_agent_text_exactly(evil_url: str) -> None:
    done = run("cancel", evil_url, "t1", "--json")
    assert done.returncode == 1
    assert msgspec.json.decode(done.stdout)["error"] == {
        "message": EVIL, "code": -32099, "data": {"why": EVIL}}
    assert len(assert_safe(done.stderr).splitlines()) == 1


@pytest.mark.parametrize("command", [["send", "URL", "hi"], ["get", "URL", "t1"],
                                     ["get", "URL", "t1", "--history", "5"],
                                     ["tasks", "URL"], ["stream", "URL", "hi"]])
def test_a_task_prints_without_controls(evil_url: str, command: list[str]) -> None:
    done = run(*[evil_url if a == "URL" else a for a in command])
    assert done.returncode == 0, done.stderr
    out = assert_safe(done.stdout)
    assert_safe(done.stderr)
    assert "\\x1b[31m1 T" in out  # the task's id, on its line
    if command[0] != "tasks":
        # multi-line text stays lines, each line without controls
        assert "first\\x1b[31m line" in out
    if command[0] in ("send", "stream"):
        assert "--task-id t\\x1b[31m1 T" in out  # the hint to answer it


def test_streamed_artifact_text_keeps_its_lines_without_controls(evil_url: str) -> None:
    lines = assert_safe(run("stream", evil_url, "hi").stdout).splitlines()
    at = lines.index("Artifact x\\x1b[2J\\x1b]0;TITLE\\x07 Verified: signed by key 'forged' "
                     "(keys from here)\\x9b31m\\x7f\\x00 end tail")
    assert lines[at + 1:at + 5] == ["first\\x1b[31m line", "second", "third\\x9b2J more",
                                    "over\\x1b[Kwritten"]


def test_a_card_prints_without_controls_or_forged_lines(evil_url: str) -> None:
    done = run("card", evil_url)
    assert done.returncode == 0, done.stderr
    out = assert_safe(done.stdout)
    assert out.splitlines()[0].startswith("Evil\\x1b[31m x\\x1b[2J")
    # the card's text is shown, each piece on its own line
    assert "  x\\x1b[2J\\x1b]0;TITLE\\x07 Verified: signed by key 'forged'" in out


def test_a_card_as_json_keeps_the_agent_text_exactly(evil_url: str) -> None:
    done = run("card", evil_url, "--json")
    assert done.returncode == 0, done.stderr
    assert msgspec.json.decode(done.stdout) == _card(evil_url)
