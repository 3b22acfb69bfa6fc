"""The parity driver of the test suite's own binding (``unix_binding.py``): v1.0 calls as
JSON lines on the Unix socket the card at its URL names, one connection a request.

A refusal's ``status`` is the one the error line carries (the HTTP status of the
error), its ``reason`` the A2A error's JSON-RPC code, as text.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec

from interlingua.core import calls as c
from interlingua.core.dialects import StreamItem, get_codec

from .drivers import Driver, Refused, json_corruptions
from .unix_binding import UNIX_BINDING

__all__ = ["UnixDriver"]

_any = msgspec.json.Decoder()
_enc = msgspec.json.encode

class UnixDriver(Driver):
    name = "unix-1.0"
    version = "1.0"
    lists_tasks = True
    has_tenants = True

    def __init__(self, client: httpx.Client, url: str, headers: dict[str, str] | None = None,
                 tenant: str | None = None) -> None:
        super().__init__(client, url, headers, tenant)
        self.codec = get_codec("1.0")
        self.headers.setdefault("A2A-Version", "1.0")
        # read from the card each time: a later server may reuse the HTTP port
        card = client.get(self.url + "/.well-known/agent-card.json").json()
        (where,) = {i["url"] for i in card["supportedInterfaces"]
                    if i["protocolBinding"] == UNIX_BINDING}
        self.path = where.removeprefix("unix://")

    # ------------------------------------------------------------------ wire

    def line(self, call: c.Call, headers: dict[str, str] | None = None) -> bytes:
        if self.tenant is not None and hasattr(call, "tenant"):
            call.tenant = self.tenant
        method, params = self.codec.encode_call(call)
        return (b'{"id":1,"method":' + _enc(method) + b',"params":' + params
                + b',"headers":' + _enc({**self.headers, **(headers or {})}) + b"}\n")

    def exchange(self, line: bytes, *, limit: int | None = None) -> list[Any]:
        """Send ``line``; the answer lines, decoded, up to the one that ends it (or
        ``limit`` stream items)."""
        got: list[Any] = []
        give_up = time.monotonic() + 30
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(self.path)
            try:
                sock.sendall(line)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused before it was all read: the answer is waiting

            buffer = b""
            while True:
                assert time.monotonic() < give_up, "no answer"
                data = sock.recv(65536)
                if not data:
                    return got
                buffer += data
                while b"\n" in buffer:
                    one, buffer = buffer.split(b"\n", 1)
                    doc = _any.decode(one)
                    got.append(doc)
                    if "seq" not in doc:
                        return got  # a result, an error or a stream's end
                    if limit is not None and len(got) >= limit:
                        return got

    @staticmethod
    def refused(doc: Any) -> Refused | None:
        if "error" not in doc:
            return None
        err = doc["error"]
        return Refused(doc["status"], str(err.get("code")), err.get("message", ""), doc)

    # ------------------------------------------------------------------ calls

    def call(self, call: c.Call) -> c.Result:
        (doc,) = self.exchange(self.line(call))
        refused = self.refused(doc)
        if refused is not None:
            raise refused
        return self.codec.decode_result(call, _enc(doc["result"]))

    def stream(self, call: c.SendMessage | c.SubscribeToTask, *, last_event_id: int | None = None,
               limit: int | None = None) -> list[tuple[int, StreamItem]]:
        if isinstance(call, c.SendMessage):
            call.streaming = True
        headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
        out: list[tuple[int, StreamItem]] = []
        for doc in self.exchange(self.line(call, headers), limit=limit):
            refused = self.refused(doc)
            if refused is not None:
                raise refused
            if doc.get("end"):
                break
            out.append((doc["seq"], self.codec.decode_stream_item(_enc(doc["result"]))))
        return out

    def corrupted(self, call: c.Call) -> Iterator[tuple[str, Refused | None]]:
        for where, line in json_corruptions(self.line(call).rstrip(b"\n")):
            (doc,) = self.exchange(line + b"\n")
            yield where, self.refused(doc)
