"""A scripted A2A 1.1 peer on a loopback port, for what a correct server never does.

Our own server numbers every event and replays what a reader missed, so a client
following it never sees a generation gap. This peer does what others may: its
stream skips a generation, its long polls answer as told. It records every request
(path, headers, body), so a test can also check what was *not* sent. It speaks
JSON-RPC at ``/`` and HTTP+JSON under ``/rest``; its card's interfaces say
``version`` (``"1.1"``, or ``"1.0"`` for an agent without generations).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from interlingua.core.dialects.v1_0 import encode_card_v1
from interlingua.core.model import AgentCapabilities, AgentCard, AgentInterface

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def task_doc(task_id: str, generation: int, state: str = "TASK_STATE_WORKING") -> dict[str, Any]:
    return {"id": task_id, "contextId": "ctx", "status": {"state": state},
            "generation": str(generation)}


def status_event(task_id: str, generation: int, state: str) -> dict[str, Any]:
    return {"statusUpdate": {"taskId": task_id, "contextId": "ctx",
                             "status": {"state": state}, "generation": str(generation)}}


def mismatch_info(task_id: str, expected: int, current: int) -> dict[str, Any]:
    return {"@type": ERROR_INFO, "reason": "TASK_GENERATION_MISMATCH",
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": task_id, "expectedGeneration": str(expected),
                         "currentGeneration": str(current)}}


@dataclass
class Script:
    """What the peer answers."""

    #: the task GetTask answers with (its generation moves as the test says)
    task: dict[str, Any] = field(default_factory=lambda: task_doc("t1", 3))
    #: a long poll is held this long before it is answered
    hold: float = 0.0
    #: the events a streaming send answers with (StreamResponse documents)
    events: list[dict[str, Any]] = field(default_factory=list)
    #: the task's current generation, for ifGenerationMatch
    current: int = 3


class Peer11:
    def __init__(self, version: str = "1.1") -> None:
        self.version = version
        self.script = Script()
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Peer11:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def card(self) -> bytes:
        card = AgentCard(
            name="peer 1.1", description="scripted", version="1",
            interfaces=[AgentInterface(url=self.url + "/", binding="JSONRPC",
                                       protocol_version=self.version),
                        AgentInterface(url=self.url + "/rest", binding="HTTP+JSON",
                                       protocol_version=self.version)],
            capabilities=AgentCapabilities(streaming=True))
        return json.dumps(encode_card_v1(card)).encode()

    def calls(self) -> list[tuple[str, str, dict[str, str], bytes]]:
        """Every request but the card's."""
        return [r for r in self.requests if "well-known" not in r[1]]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        peer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                peer.requests.append(("GET", self.path, dict(self.headers), b""))
                if "well-known" in self.path:
                    self._send(200, peer.card())
                    return
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                if parts.path.startswith("/rest/tasks/"):
                    after = query.get("currentGeneration")
                    self._send(200, json.dumps(peer._get_task(after[0] if after else None))
                               .encode(), "application/a2a+json")
                    return
                self._send(404, b"{}")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                peer.requests.append(("POST", self.path, dict(self.headers), body))
                if self.path.startswith("/rest/message:send"):
                    self._rest_send(json.loads(body))
                    return
                doc = json.loads(body)
                method, params, rid = doc["method"], doc.get("params") or {}, doc["id"]
                if method == "GetTask":
                    self._result(rid, peer._get_task(params.get("currentGeneration")))
                elif method == "SendMessage":
                    error = peer._refusal(params)
                    if error is not None:
                        self._send(200, json.dumps({"jsonrpc": "2.0", "id": rid, "error": {
                            "code": -32010, "message": "Task generation mismatch",
                            "data": [error]}}).encode())
                    else:
                        self._result(rid, {"task": peer.script.task})
                elif method == "SendStreamingMessage":
                    self._stream(rid)
                else:
                    self._send(200, json.dumps({"jsonrpc": "2.0", "id": rid, "error": {
                        "code": -32601, "message": "Method not found"}}).encode())

            def _rest_send(self, params: dict[str, Any]) -> None:
                error = peer._refusal(params)
                if error is None:
                    self._send(200, json.dumps({"task": peer.script.task}).encode())
                    return
                self._send(409, json.dumps({"error": {
                    "code": 409, "status": "ABORTED", "message": "Task generation mismatch",
                    "details": [error]}}).encode(), "application/a2a+json")

            def _stream(self, rid: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event in peer.script.events:
                    frame = {"jsonrpc": "2.0", "id": rid, "result": event}
                    self.wfile.write(b"data: " + json.dumps(frame).encode() + b"\n\n")
                    self.wfile.flush()

            def _result(self, rid: int, result: Any) -> None:
                self._send(200, json.dumps({"jsonrpc": "2.0", "id": rid, "result": result})
                           .encode())

            def _send(self, status: int, body: bytes,
                      media: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", media)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def _get_task(self, after: str | None) -> dict[str, Any]:
        if after is not None and self.script.hold:
            time.sleep(self.script.hold)
        return self.script.task

    def _refusal(self, params: dict[str, Any]) -> dict[str, Any] | None:
        expected = (params.get("configuration") or {}).get("ifGenerationMatch")
        if expected is None or int(expected) == self.script.current:
            return None
        task_id = params["message"].get("taskId", "")
        return mismatch_info(task_id, int(expected), self.script.current)
