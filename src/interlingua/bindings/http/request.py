"""What every HTTP binding reads from a request the same way: the body (with a size
limit) and the ``A2A-Version`` (header or query parameter); and how it writes a large
answer. (The extensions asked for are the front door's to read: ``FrontDoor.enter``.)"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

from ...core import codings
from ...core.errors import ContentTypeNotSupported, header_text
from ...core.origins import Origins
from .request_headers import RequestHeaders

__all__ = [
    "A2A_VERSION",
    "CHUNK",
    "BodyTooLarge",
    "check_content_type",
    "read_body",
    "until_gone",
    "version_of",
    "write_body",
]

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: the version header's name as ``RequestHeaders.combined`` takes it
A2A_VERSION = b"a2a-version"

#: how much of a large answer is written at a time
CHUNK = 1 << 20


class BodyTooLarge(Exception):
    """The request's body (or its Content-Length) is over the limit."""


async def read_body(receive: Receive, limit: int, headers: RequestHeaders,
                    origins: Origins | None = None) -> bytes:
    """The whole body, its Content-Encoding undone (``core.codings``: raises
    ``CodingNotSupported`` or ``BadCoding``); ``BodyTooLarge`` once it (or its
    announced length, or its decoded length) passes ``limit``. With ``origins``,
    a browser's request from a page of another origin raises ``CrossOrigin``
    before anything is read (``core/origins.py``)."""
    length, coding, origin = headers.framing()
    if origin is not None and origins is not None:
        origins.check_request(origin, headers.raw)
    # (the body read below is held to the limit whatever the header says)
    if length is not None and length.isascii() and length.isdigit() and int(length) > limit:
        raise BodyTooLarge
    message = await receive()
    if (coding is None and message["type"] == "http.request"
            and not message.get("more_body", False)):
        # nearly every request: its whole body in one message, no list to join
        body: bytes = message.get("body", b"")
        if len(body) > limit:
            raise BodyTooLarge
        return body
    chunks: list[bytes] = []
    size = 0
    while message["type"] != "http.disconnect":
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
        message = await receive()
    body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if coding is not None:
        try:
            return codings.decode(body, coding, limit)
        except codings.TooLarge:
            raise BodyTooLarge from None
    return body


def version_of(scope: Mapping[str, Any], headers: RequestHeaders) -> str | None:
    """The raw ``A2A-Version``: the header, else the query parameter (v1.0 allows
    either, the query "instead of a header"). Given more than once with different
    values, their list ("1.1, 1.0"), as one comma-joined header line is: the front
    door refuses it (``FrontDoor.check_version``), no value is picked."""
    found = headers.combined(A2A_VERSION)
    if found:
        return found
    qs: bytes = scope.get("query_string", b"")
    if not qs or (b"A2A-Version" not in qs and b"a2a-version" not in qs):
        return None
    values = [v for k, v in parse_qsl(qs.decode("latin-1")) if k.lower() == "a2a-version"]
    if not values:
        return None
    return ", ".join(dict.fromkeys(values))


async def write_body(send: Send, status: int, headers: Sequence[tuple[bytes, bytes]],
                     parts: Sequence[bytes]) -> None:
    """A response whose body is ``parts`` one after another, written a ``CHUNK`` at a
    time: the whole is never copied into one body (for an answer of many megabytes
    that copy, and the server's copy of it into its buffer, would hold every other
    request), and other requests are served between the writes."""
    length = sum(len(part) for part in parts)
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(length).encode())]})
    pending: list[bytes] = []
    size = 0
    for part in parts:
        start = 0
        while len(part) - start >= CHUNK - size:  # the part fills the chunk
            end = start + CHUNK - size
            pending.append(part[start:end])
            await send({"type": "http.response.body", "body": b"".join(pending),
                        "more_body": True})
            await asyncio.sleep(0)
            pending, size, start = [], 0, end
        if start < len(part):
            pending.append(part[start:] if start else part)
            size += len(part) - start
    await send({"type": "http.response.body", "body": b"".join(pending)})


async def until_gone(receive: Any) -> object:
    """What a held call (a long poll) awaits to learn that its caller hung up: the
    ASGI ``http.disconnect`` that ``receive`` gives once the body has been read.
    A binding hands on ``partial(until_gone, receive)``: made in C, no Python call
    per request for a signal few calls await."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return message


def check_content_type(value: str | None, wanted: str) -> None:
    """``ContentTypeNotSupported`` for a body sent as anything but JSON (none given,
    ``application/json``, ``application/a2a+json`` and any ``+json`` are JSON);
    ``wanted`` names what to send instead. One rule for every HTTP binding."""
    if value is None:
        return
    media = value.split(";", 1)[0].strip().lower()
    if media in ("application/json", "application/a2a+json", "") or media.endswith("+json"):
        return
    shown = header_text(value.split(";", 1)[0].strip()).lower()  # as sent, not latin-1
    raise ContentTypeNotSupported(
        f"Content-Type {shown!r} is not supported; send {wanted}")
