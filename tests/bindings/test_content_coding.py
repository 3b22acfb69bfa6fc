"""A request body in a content coding (RFC 9110 §8.4), on every HTTP binding.

gzip and deflate are undone, held to the body limit once decoded; a coding the
server does not know is refused with 415 naming it, and the codings it takes in
Accept-Encoding; a body that is not what its coding says is a parse error in the
caller's shape, not one about the compressed bytes.
"""

from __future__ import annotations

import asyncio
import gzip
import uuid
import zlib
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Agent
from interlingua.bindings.http.request import BodyTooLarge, read_body
from interlingua.bindings.http.request_headers import RequestHeaders
from interlingua.core import codings

from ..live import live_agent
from ..security.helpers import send_request

_LIMIT = 20_000


async def _echo(text: str) -> str:
    return text


#: (name, path) of each HTTP route a message is sent on
_CALLS = [("jsonrpc-1.0", "/"), ("jsonrpc-0.3", "/"), ("jsonrpc-0.1", "/"),
          ("rest-1.0", "/message:send"), ("rest-0.3", "/v1/message:send")]
_IDS = [name for name, _ in _CALLS]


def _send(name: str) -> tuple[bytes, dict[str, str]]:
    """(body, headers) of a new message send on the route ``name``."""
    if name.startswith("jsonrpc-"):
        body, headers = send_request(name.removeprefix("jsonrpc-"))
        return msgspec.json.encode(body), headers
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    if name == "rest-1.0":
        return msgspec.json.encode({"message": message}), {"A2A-Version": "1.0"}
    message.update(role="user", parts=[{"kind": "text", "text": "hi"}])
    return msgspec.json.encode({"message": message}), {}


def _is_rest(name: str) -> bool:
    return name.startswith("rest")


def _error(name: str, r: httpx.Response) -> dict[str, Any]:
    """The error object of an answer: v0.3's HTTP+JSON gives it bare."""
    found: dict[str, Any] = r.json() if name == "rest-0.3" else r.json()["error"]
    return found


def _post(c: httpx.Client, url: str, path: str, content: bytes, headers: dict[str, str],
          coding: str) -> httpx.Response:
    return c.post(url + path, content=content, headers={
        **headers, "Content-Type": "application/json", "Content-Encoding": coding})


@pytest.fixture(scope="module")
def url() -> Any:
    with live_agent(Agent("Echo", "d", _echo), max_body_bytes=_LIMIT) as base:
        yield base


@pytest.mark.parametrize(("name", "path"), _CALLS, ids=_IDS)
@pytest.mark.parametrize("coding", ["gzip", "x-gzip", "deflate", "raw-deflate",
                                    "gzip, identity"])
def test_a_compressed_body_is_read_as_the_json_it_holds(
        url: str, name: str, path: str, coding: str) -> None:
    plain, headers = _send(name)
    if coding == "deflate":
        content = zlib.compress(plain)
    elif coding == "raw-deflate":  # what some senders call deflate: no zlib header
        squeeze = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        content, coding = squeeze.compress(plain) + squeeze.flush(), "deflate"
    else:
        content = gzip.compress(plain)
    with httpx.Client() as c:
        r = _post(c, url, path, content, headers, coding)
    assert r.status_code == 200, r.text
    answer = r.json() if _is_rest(name) else r.json()["result"]
    if "task" in answer:  # v1.0 wraps the task; v0.3 and v0.1 give it as it is
        answer = answer["task"]
    assert answer["id"] and "error" not in r.json()
    assert "hi" in r.text


@pytest.mark.parametrize(("name", "path"), _CALLS, ids=_IDS)
def test_a_coding_the_server_does_not_know_is_refused_by_name(
        url: str, name: str, path: str) -> None:
    plain, headers = _send(name)
    with httpx.Client() as c:
        r = _post(c, url, path, plain, headers, "br")
    assert r.status_code == 415, r.text
    assert r.headers["accept-encoding"] == "gzip, deflate"
    assert _error(name, r)["message"] == ("Content-Encoding 'br' is not supported; send "
                                          "the body uncompressed, gzip or deflate")
    if name != "rest-1.0":
        assert _error(name, r)["code"] == -32600


@pytest.mark.parametrize(("name", "path"), _CALLS, ids=_IDS)
def test_a_body_that_is_not_what_its_coding_says_is_a_parse_error(
        url: str, name: str, path: str) -> None:
    body, headers = _send(name)
    with httpx.Client() as c:
        cut = _post(c, url, path, gzip.compress(body)[:-6], headers, "gzip")
        plain = _post(c, url, path, body, headers, "gzip")
    for r, says in ((cut, "the body's gzip data is cut short"),
                    (plain, "the body is not valid gzip data, as its Content-Encoding says")):
        assert _error(name, r)["message"] == f"Parse error: {says}"
        assert r.status_code == (400 if _is_rest(name) else 200)
        if name != "rest-1.0":
            assert _error(name, r)["code"] == -32700


@pytest.mark.parametrize(("name", "path"), _CALLS, ids=_IDS)
def test_a_body_larger_than_the_limit_once_decoded_is_refused(
        url: str, name: str, path: str) -> None:
    # 10 MB of spaces after the JSON squeeze into about 10 kB: the limit holds the
    # decoded body, not the bytes that came
    body, headers = _send(name)
    squeezed = gzip.compress(body + b" " * 10_000_000)
    assert len(squeezed) < _LIMIT
    with httpx.Client() as c:
        r = _post(c, url, path, squeezed, headers, "gzip")
    assert r.status_code == 413, r.text
    assert f"larger than the limit of {_LIMIT} bytes" in _error(name, r)["message"]


def test_a_streaming_send_in_gzip_is_streamed() -> None:
    body, headers = send_request("1.0")
    body["method"] = "SendStreamingMessage"
    with live_agent(Agent("Echo", "d", _echo)) as base, httpx.Client() as c:
        r = _post(c, base, "/", gzip.compress(msgspec.json.encode(body)), headers, "gzip")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert "TASK_STATE_COMPLETED" in r.text


def test_an_agent_of_several_takes_a_compressed_body() -> None:
    body, headers = send_request("0.3")
    agents = [Agent("One", "d", _echo), Agent("Two", "d", _echo)]
    with live_agent(agents) as base, httpx.Client() as c:
        r = _post(c, base, "/agents/Two/", gzip.compress(msgspec.json.encode(body)),
                  headers, "gzip")
        refused = _post(c, base, "/agents/Two/", msgspec.json.encode(body), headers, "zstd")
    assert r.status_code == 200 and r.json()["result"]["status"]["state"] == "completed"
    assert refused.status_code == 415


# ---------------------------------------------------------------- the decoding


def test_decode_undoes_codings_from_the_last_applied() -> None:
    data = b'{"a": 1}'
    assert codings.decode(gzip.compress(zlib.compress(data)), "deflate, gzip", 100) == data
    assert codings.decode(data, "identity", 100) == data
    assert codings.decode(gzip.compress(data), " GZIP ", 100) == data
    # several gzip members, one after another, are one body (RFC 1952 §2.2)
    assert codings.decode(gzip.compress(b"ab") + gzip.compress(b"cd"), "gzip", 100) == b"abcd"


@pytest.mark.parametrize(("data", "header", "error"), [
    (zlib.compress(b"x") + b"more", "deflate", codings.BadCoding),
    (b"not compressed", "deflate", codings.BadCoding),
    (gzip.compress(b"x") + b"junk", "gzip", codings.BadCoding),
    (b"{}", "compress", codings.CodingNotSupported),
    (b"{}", "gzip, zstd", codings.CodingNotSupported),
    (gzip.compress(b"x" * 101), "gzip", codings.TooLarge),
    (gzip.compress(b"x" * 60) + gzip.compress(b"x" * 60), "gzip", codings.TooLarge),
], ids=["deflate-then-more", "deflate-of-nothing", "gzip-then-junk", "compress", "zstd-listed",
        "gzip-too-large", "gzip-members-too-large"])
def test_decode_refuses(data: bytes, header: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        codings.decode(data, header, 100)
    assert codings.decode(gzip.compress(b"x" * 100), "gzip", 100) == b"x" * 100


def test_a_coding_named_at_length_is_cut_in_the_refusal() -> None:
    with pytest.raises(codings.CodingNotSupported) as refused:
        codings.decode(b"{}", "z" * 5000, 100)
    assert len(str(refused.value)) < 200


def test_read_body_decodes_a_body_in_several_messages() -> None:
    squeezed = gzip.compress(b'{"hello": "world"}')
    messages = [{"type": "http.request", "body": squeezed[:5], "more_body": True},
                {"type": "http.request", "body": squeezed[5:]}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    headers = RequestHeaders([(b"content-encoding", b"gzip")])
    assert asyncio.run(read_body(receive, 100, headers)) == b'{"hello": "world"}'
    messages[:] = [{"type": "http.request", "body": gzip.compress(b"x" * 101)}]
    with pytest.raises(BodyTooLarge):
        asyncio.run(read_body(receive, 100, headers))
