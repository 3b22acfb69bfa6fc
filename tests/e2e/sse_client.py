"""A small SSE reader for the tests: JSON-RPC events with their ids."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec

from interlingua.core.sse import SSEDecoder


def rpc(method: str, params: dict[str, Any], rid: int | str = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def v1_message(text: str, **extra: Any) -> dict[str, Any]:
    import uuid

    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def v03_message(text: str, **extra: Any) -> dict[str, Any]:
    import uuid

    return {"kind": "message", "messageId": str(uuid.uuid4()), "role": "user",
            "parts": [{"kind": "text", "text": text}], **extra}


V1 = {"A2A-Version": "1.0"}


#: how long a test reads one stream at most: heartbeats reset the read timeout,
#: so without an overall deadline a stream that never ends would hang the test
STREAM_DEADLINE = 30.0


def events(client: httpx.Client, url: str, body: dict[str, Any],
           headers: dict[str, str] | None = None,
           limit: int | None = None,
           deadline: float = STREAM_DEADLINE) -> Iterator[tuple[str | None, str, Any]]:
    """POST ``body`` and yield (id, event, data) per SSE event; stop after ``limit``.

    Fails when the stream is still open ``deadline`` seconds after it began.
    """
    dec = SSEDecoder()
    n = 0
    give_up = time.monotonic() + deadline
    with client.stream("POST", url, json=body, headers=headers or {}) as resp:
        assert resp.status_code == 200, resp.read()
        assert resp.headers["content-type"].startswith("text/event-stream")
        for chunk in resp.iter_raw():
            for ev in dec.feed(chunk):
                yield ev.id, ev.event, msgspec.json.decode(ev.data)
                n += 1
                if limit is not None and n >= limit:
                    return
            if time.monotonic() > give_up:
                raise AssertionError(f"the stream was still open after {deadline} s "
                                     f"({n} events read)")
