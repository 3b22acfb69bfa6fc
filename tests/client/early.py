"""An interlingua agent that answers a blocking send before its task settles.

Some agents never block (fasta2a answers every send ``submitted``); a blocking
``Client.send`` then follows the task to its end. ``AnswersEarly`` wraps a real
interlingua app on real HTTP and turns every send it carries into a non-blocking
one (v0.3 ``blocking: false``, v1.0 ``returnImmediately: true``), in JSON-RPC and
HTTP+JSON alike, so the agent answers at once with the task still running and the
rest of the exchange is the real server's. It records each operation asked of it
(``calls``: "send", "subscribe", "get", ...) and can:

- keep only the card's interfaces of some protocol versions (``versions``), so the
  client picks a v0.3 endpoint from the card; "1.1" offers the v1.0 interfaces as
  A2A 1.1 (task generations), which the server speaks there when asked for it;
- refuse every subscription (``refuse_subscribe``) with ``UnsupportedOperation``,
  encoded by the dialect's own codec, as an agent that does not offer it would;
- lag behind, as a replica reading a store that lags does (``lagging_reads``): after
  each send, that many reads of a task (``GetTask``) are answered as the read before
  the send was;
- write no status timestamps (``untimed``), which are optional: every answer and
  event leaves them out.

    with early_agent(agent, versions={"0.3"}) as (url, early):
        ...
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

from interlingua.core.dialects import get_codec
from interlingua.core.errors import UnsupportedOperation
from tests.live import asgi_body, bind_loopback, live_server, url_of

__all__ = ["AnswersEarly", "early_agent"]

#: JSON-RPC methods of either dialect -> the operation they ask for
_METHODS = {
    "message/send": "send", "SendMessage": "send",
    "tasks/get": "get", "GetTask": "get",
    "tasks/resubscribe": "subscribe", "SubscribeToTask": "subscribe",
    "message/stream": "stream", "SendStreamingMessage": "stream",
}


class AnswersEarly:
    """ASGI middleware: the wrapped agent answers blocking sends early (see above)."""

    def __init__(self, app: Any, *, versions: set[str] | None = None,
                 refuse_subscribe: bool = False, lagging_reads: int = 0,
                 untimed: bool = False) -> None:
        self.app = app
        self.state = app.state  # live_server ends the engine's streams through it
        self.versions = versions
        self.refuse_subscribe = refuse_subscribe
        self.lagging_reads = lagging_reads
        self.untimed = untimed
        self.calls: list[str] = []
        #: reads still to answer as ``read`` (the last read before the last send)
        self.lagging = 0
        self.read: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await asgi_body(receive)
        path: str = scope["path"]
        if path.startswith("/.well-known/"):
            self.calls.append("card")
            if self.versions is not None:
                await self._card(scope, body, send)
                return
        elif scope["method"] == "POST" and path == "/":  # the JSON-RPC endpoint
            body = await self._rpc(body, send)
        else:
            body = await self._rest(scope["method"], path, body, send)
        if body is None:
            return  # answered here
        if self.untimed:
            send = _untimed(send)
        if self.lagging_reads and self.calls[-1] == "get":
            await self._lag(scope, body, receive, send)
            return
        if self.calls[-1] == "send":
            self.lagging = self.lagging_reads
        await self.app(scope, _replay(body, receive), send)

    async def _lag(self, scope: Any, body: bytes, receive: Any, send: Any) -> None:
        """A read answered as the one before the last send was, while lagging."""
        if self.lagging and self.read:
            self.lagging -= 1
            start, *rest = self.read
            doc = json.loads(b"".join(m.get("body", b"") for m in rest))
            if "jsonrpc" in doc:
                doc["id"] = json.loads(body)["id"]
            await _answer(send, start["status"], doc)
            return
        answered: list[dict[str, Any]] = []

        async def keep(message: dict[str, Any]) -> None:
            answered.append(message)
            await send(message)

        await self.app(scope, _replay(body, receive), keep)
        self.read = answered

    async def _rpc(self, body: bytes, send: Any) -> bytes | None:
        doc = json.loads(body)
        method = doc.get("method", "")
        op = _METHODS.get(method, method)
        self.calls.append(op)
        v03 = "/" in method
        if op == "send":
            _answer_early(doc["params"], v03=v03)
            return json.dumps(doc).encode()
        if op == "subscribe" and self.refuse_subscribe:
            codec = get_codec("0.3" if v03 else "1.0")
            error = json.loads(codec.encode_error(_refusal()))
            await _answer(send, 200, {"jsonrpc": "2.0", "id": doc.get("id"), "error": error})
            return None
        return body

    async def _rest(self, verb: str, path: str, body: bytes, send: Any) -> bytes | None:
        v03 = path.startswith("/v1/")
        if path.endswith("message:send"):
            self.calls.append("send")
            doc = json.loads(body)
            _answer_early(doc, v03=v03)
            return json.dumps(doc).encode()
        if path.endswith(":subscribe"):
            self.calls.append("subscribe")
            if self.refuse_subscribe:
                codec = get_codec("0.3-pj" if v03 else "1.0")
                status = codec.http_status(_refusal())
                await _answer(send, status, json.loads(codec.encode_http_error(_refusal(),
                                                                               status)))
                return None
        elif verb == "GET" and "/tasks/" in path:
            self.calls.append("get")
        else:
            self.calls.append(f"{verb} {path}")
        return body

    async def _card(self, scope: Any, body: bytes, send: Any) -> None:
        """The card, with the interfaces of ``versions`` only."""
        parts: list[dict[str, Any]] = []

        async def keep(message: dict[str, Any]) -> None:
            parts.append(message)

        await self.app(scope, _replay(body, None), keep)
        card = json.loads(b"".join(p.get("body", b"") for p in parts[1:]))
        versions = self.versions or set()
        if "1.1" in versions:
            for interface in card.get("supportedInterfaces", []):
                if interface["protocolVersion"] == "1.0":
                    interface["protocolVersion"] = "1.1"
        card["supportedInterfaces"] = [i for i in card.get("supportedInterfaces", [])
                                       if i["protocolVersion"] in versions]
        await _answer(send, parts[0]["status"], card)


def _answer_early(params: dict[str, Any], *, v03: bool) -> None:
    config = params.setdefault("configuration", {})
    if v03:
        config["blocking"] = False
    else:
        config["returnImmediately"] = True


#: a status timestamp (the last member of a status, as the server writes it)
_TIMESTAMP = re.compile(rb',"timestamp":"[^"]*"')


def _untimed(send: Any) -> Any:
    """An ASGI ``send`` that leaves the status timestamps out of every body (each SSE
    event is one body message: none is split)."""

    async def sent(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", [])
                       if k.lower() != b"content-length"]
            message = {**message, "headers": headers}
        elif message.get("body"):
            message = {**message, "body": _TIMESTAMP.sub(b"", message["body"])}
        await send(message)

    return sent


def _refusal() -> UnsupportedOperation:
    return UnsupportedOperation("This agent does not offer subscriptions")


def _replay(body: bytes, receive: Any) -> Any:
    """An ASGI ``receive`` that gives ``body`` (read already), then what ``receive``
    gives (the client's disconnect, which a stream listens for)."""
    given = False

    async def replayed() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        if receive is None:
            return {"type": "http.disconnect"}
        message: dict[str, Any] = await receive()
        return message

    return replayed


async def _answer(send: Any, status: int, doc: Any) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(doc).encode()})


@contextlib.contextmanager
def early_agent(agent: Any, **options: Any) -> Iterator[tuple[str, AnswersEarly]]:
    """``agent`` served on loopback (memory store) behind ``AnswersEarly(**options)``:
    its base URL, which its card names, and the middleware (its ``calls``)."""
    from interlingua.host import create_app

    sock = bind_loopback()
    base_url = url_of(sock)
    early = AnswersEarly(create_app(agent, public_url=base_url, store="memory://"), **options)
    with live_server(early, sock=sock) as url:
        yield url, early
