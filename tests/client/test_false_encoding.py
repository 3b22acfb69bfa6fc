"""A body that is not what its ``Content-Encoding`` says (labelled gzip, sent plain) is
an answer the client cannot read: ``BadResponse``, on every path it reads, over real
HTTP; never httpx's own ``DecodingError``. The CLI says it in one line, exit 1."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from interlingua import Client
from interlingua.cli.main import main
from interlingua.client.errors import BadResponse
from tests.live import asgi_body, live_server

pytestmark = pytest.mark.timeout(30)


class FalseGzip:
    """An agent whose card is sound (at ``/``) and whose every other answer is labelled
    gzip but is not; below ``/badcard``, the card is labelled so too."""

    def __init__(self) -> None:
        self.url = ""

    def card(self, base: str) -> bytes:
        return json.dumps({
            "name": "false gzip", "description": "d", "version": "1", "skills": [],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
            "supportedInterfaces": [
                {"url": base + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
        }).encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await asgi_body(receive)
        path: str = scope["path"]
        headers = [(b"content-type", b"application/json")]
        if path.endswith("/agent-card.json") and not path.startswith("/badcard"):
            body = self.card(self.url)
        else:
            if path.endswith(":stream") or path == "/stream/":
                headers = [(b"content-type", b"text/event-stream")]
            headers.append((b"content-encoding", b"gzip"))
            body = b"this is not gzip"
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture
def false_gzip() -> Any:
    peer = FalseGzip()
    with live_server(peer) as url:
        peer.url = url
        yield url


async def test_a_card_labelled_gzip_that_is_not_is_a_bad_response(false_gzip: str) -> None:
    async with Client(false_gzip + "/badcard", timeout=10) as client:
        with pytest.raises(BadResponse, match="Content-Encoding"):
            await client.get_card()


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_an_answer_labelled_gzip_that_is_not_is_a_bad_response(
        false_gzip: str, binding: str) -> None:
    async with Client(false_gzip, binding=binding, timeout=10) as client:
        with pytest.raises(BadResponse, match="Content-Encoding"):
            await client.get_task("t1")


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_stream_labelled_gzip_that_is_not_is_a_bad_response(
        false_gzip: str, binding: str) -> None:
    # (the JSON-RPC stream at its own endpoint, so that its answer is an event stream)
    url = false_gzip + "/stream/" if binding == "jsonrpc" else false_gzip
    async with Client(url, dialect="1.0", binding=binding, timeout=10) as client:
        with pytest.raises(BadResponse, match="Content-Encoding"):
            [e async for e in client.stream("hi")]


@pytest.mark.parametrize("args", [["card", "{url}/badcard"], ["get", "{url}", "t1"]],
                         ids=["card", "get"])
def test_the_cli_says_it_in_one_line(false_gzip: str, args: list[str]) -> None:
    args = [a.format(url=false_gzip) for a in args]
    runner = CliRunner()
    plain = runner.invoke(main, args, prog_name="interlingua")
    done = runner.invoke(main, [*args, "--json"], prog_name="interlingua")
    for result in (plain, done):
        assert result.exit_code == 1, (result.stderr, result.exception)
        [line] = result.stderr.splitlines()
        assert line.startswith("error: ") and "Content-Encoding" in line
    assert "Content-Encoding" in msgspec.json.decode(done.stdout)["error"]["message"]
