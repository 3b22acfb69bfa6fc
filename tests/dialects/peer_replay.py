"""The peers' captured exchanges (``fixtures/peers/``), and an agent that replays them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.live import asgi_body

FIXTURES = Path(__file__).with_name("fixtures") / "peers"


def exchange(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return doc


class Replay:
    """An agent that answers every POST with one captured exchange's bytes
    (``answers`` in turn, the last one kept), and serves the card ``card``."""

    def __init__(self, answers: list[str], card: dict[str, Any] | None = None) -> None:
        self.answers = [exchange(a) for a in answers]
        self.card = card
        self.posts: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = await asgi_body(receive)
        if scope["method"] == "GET":
            await _answer(send, 200 if self.card else 404, "application/json",
                          json.dumps(self.card or {}).encode())
            return
        request = json.loads(body)
        self.posts.append(request)
        ex = self.answers[min(len(self.posts), len(self.answers)) - 1]
        # the captured answer as it was, but for the request id it echoes
        answer = _ID.sub(lambda m: m[1] + json.dumps(request["id"]), ex["response"], count=1)
        await _answer(send, ex["status"], ex["response_type"], answer.encode())


_ID = re.compile(r'^(\{"jsonrpc":\s*"2.0",\s*"id":\s*)(?:"[^"]*"|\d+|null)')


async def _answer(send: Any, status: int, content_type: str, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode())]})
    await send({"type": "http.response.body", "body": body})
