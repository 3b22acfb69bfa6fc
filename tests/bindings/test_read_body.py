"""A request's body read from ASGI messages, within a size limit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from interlingua.bindings.http.request import BodyTooLarge, read_body
from interlingua.bindings.http.request_headers import RequestHeaders


def _receiver(*messages: dict[str, Any]) -> Any:
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    return receive


def _read(limit: int, *messages: dict[str, Any], length: str | None = None) -> bytes:
    headers = RequestHeaders([] if length is None else [(b"content-length", length.encode())])
    return asyncio.run(read_body(_receiver(*messages), limit, headers))


def test_a_body_in_one_message_and_in_several() -> None:
    assert _read(10, {"type": "http.request", "body": b"hello"}) == b"hello"
    assert _read(10, {"type": "http.request"}) == b""
    assert _read(10, {"type": "http.request", "body": b"", "more_body": True},
                 {"type": "http.request", "body": b"hel", "more_body": True},
                 {"type": "http.request", "body": b"lo"}) == b"hello"


def test_a_client_gone_midway_leaves_what_came() -> None:
    assert _read(10, {"type": "http.request", "body": b"he", "more_body": True},
                 {"type": "http.disconnect"}) == b"he"
    assert _read(10, {"type": "http.disconnect"}) == b""


@pytest.mark.parametrize("messages", [
    [{"type": "http.request", "body": b"x" * 11}],
    [{"type": "http.request", "body": b"x" * 6, "more_body": True},
     {"type": "http.request", "body": b"x" * 6}],
])
def test_a_body_over_the_limit(messages: list[dict[str, Any]]) -> None:
    with pytest.raises(BodyTooLarge):
        _read(10, *messages)
    size = sum(len(m["body"]) for m in messages)
    assert _read(size, *messages) == b"x" * size


def test_an_announced_length_over_the_limit_is_refused_before_reading() -> None:
    with pytest.raises(BodyTooLarge):
        _read(10, length="11")  # no message: nothing is received


def test_a_length_of_no_ascii_digits_is_left_to_the_body_read() -> None:
    # a server that passes the header on as it came: b"\xb2" reads as "\xb2" ("²"),
    # which str.isdigit() takes and int() refuses
    headers = RequestHeaders([(b"content-length", b"\xb2")])
    body = asyncio.run(read_body(_receiver({"type": "http.request", "body": b"hi"}), 10,
                                 headers))
    assert body == b"hi"

