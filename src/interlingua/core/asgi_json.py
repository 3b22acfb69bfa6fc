"""A whole JSON answer written straight to an ASGI ``send``: what the server's own
refusals (a Host it does not answer, a listing) and the client's webhook receiver
answer with, outside any framework's response classes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec

__all__ = ["send_json", "send_json_body"]

_encode = msgspec.json.encode


async def send_json(send: Callable[[Any], Awaitable[None]], status: int, doc: Any,
                    headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """``doc`` as JSON, with ``status`` and ``headers``, in one body."""
    await send_json_body(send, status, _encode(doc), headers)


async def send_json_body(send: Callable[[Any], Awaitable[None]], status: int, body: bytes,
                         headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """``body``, JSON already encoded (a codec's error body), as ``send_json`` sends."""
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        *headers]})
    await send({"type": "http.response.body", "body": body})
