"""Peers the bridge and ``RemoteAgent`` are tested against: agents that answer
with files or slowly, an MCP server's image, and agents of other makes (ASGI apps
for ``tests.live.live_server``)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from interlingua import Agent, Context, file_part

__all__ = ["PNG", "filer", "pictures", "slow_agent", "stateless_v01", "v03_without_card"]

#: a 1x1 PNG
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c63f8cf0000000301010018dd8db000"
                    "00000049454e44ae426082")


def slow_agent(release: threading.Event, *, streaming: bool) -> Agent:
    """An agent whose task works until ``release`` is set (at most a minute): a test
    sets it before its server stops, so that no request is held past the stop."""
    async def slow(ctx: Context) -> None:
        await ctx.update("working slowly")
        await asyncio.to_thread(release.wait, 60)
        await ctx.complete("done slowly")

    return Agent("Slow", "Works slowly.", slow, streaming=streaming)


def filer() -> Agent:
    """An agent whose answer is files: a picture inline and a report by URL."""
    async def draw(ctx: Context) -> None:
        await ctx.artifact(file_part(raw=PNG, media_type="image/png", filename="chart.png"),
                           name="chart.png")
        await ctx.complete(artifact=file_part(uri="https://files.example/report.pdf",
                                              media_type="application/pdf",
                                              filename="report.pdf"), name="report")

    return Agent("Filer", "Answers with files.", draw)


def pictures() -> MCPServer:
    """An MCP server whose tool answers with an image."""
    server = MCPServer(name="pictures")

    @server.tool()
    def picture() -> Image:
        """Draws a picture."""
        return Image(data=PNG, format="png")

    return server


def stateless_v01() -> Starlette:
    """A v0.1 agent that streams the whole turn (a question, then the answer to the
    task's next message) and keeps no tasks for ``tasks/get``."""
    asked: set[str] = set()

    async def card(request: Request) -> Response:
        return JSONResponse({
            "name": "Old agent", "description": "A v0.1 agent.", "version": "0.1",
            "url": str(request.base_url),
            "capabilities": {"streaming": True, "pushNotifications": False},
            "authentication": None,  # (as v0.1 spells its card)
            "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
            "skills": [{"id": "ask", "name": "Ask", "description": "Asks, then answers"}]})

    async def rpc(request: Request) -> Response:
        body = await request.json()
        method, params = body["method"], body.get("params", {})
        if method != "tasks/sendSubscribe":  # (tasks/get: it keeps none)
            return JSONResponse({"jsonrpc": "2.0", "id": body["id"],
                                 "error": {"code": -32001, "message": "Task not found"}})
        task_id = params["id"]
        events: list[dict[str, Any]] = []
        if task_id in asked:
            text = params["message"]["parts"][0]["text"]
            events.append({"id": task_id, "artifact": {
                "name": "answer", "index": 0, "lastChunk": True,
                "parts": [{"type": "text", "text": f"answer to {text}"}]}})
            status = {"state": "completed"}
        else:
            asked.add(task_id)
            status = {"state": "input-required", "message": {
                "role": "agent", "parts": [{"type": "text", "text": "Which city?"}]}}
        events.append({"id": task_id, "status": status, "final": True})

        async def stream() -> AsyncIterator[str]:
            for event in events:
                yield "data: " + json.dumps({"jsonrpc": "2.0", "id": body["id"],
                                             "result": event}) + "\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/.well-known/agent.json", card),
                             Route("/", rpc, methods=["POST"])])


def v03_without_card() -> Starlette:
    """A v0.3 JSON-RPC endpoint that serves no card and replies ``pong: TEXT``."""
    async def rpc(request: Request) -> Response:
        body = await request.json()
        text = body["params"]["message"]["parts"][0]["text"]
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": {
            "kind": "message", "role": "agent", "messageId": "m1",
            "parts": [{"kind": "text", "text": f"pong: {text}"}]}})

    return Starlette(routes=[Route("/", rpc, methods=["POST"])])


class NewTaskEachSend:
    """A card-less v0.3 agent that keeps no message ids, as many do: every
    ``message/send`` starts a task of its own. A blocking send is held until the caller
    goes; one that does not wait is answered at once with the working task."""

    def __init__(self, answered_as: str = "working", answered_after: float = 0.0) -> None:
        #: the state a send is answered with (``tasks/get`` says working), and when
        self.answered_as = answered_as
        self.answered_after = answered_after
        self.sends: list[tuple[str, bool, str]] = []  # (messageId, blocking, task id)
        self.cancels: list[str] = []
        self.app = Starlette(routes=[Route("/", self._rpc, methods=["POST"])])

    async def _rpc(self, request: Request) -> JSONResponse:
        body = await request.json()
        method, params = body["method"], body.get("params", {})
        rid = body["id"]
        if method == "message/send":
            task_id = f"task-{len(self.sends) + 1}"
            blocking = (params.get("configuration") or {}).get("blocking", True)
            self.sends.append((params["message"]["messageId"], blocking, task_id))
            if blocking:
                while not await request.is_disconnected():
                    await asyncio.sleep(0.05)
            await asyncio.sleep(self.answered_after)
            answer = {**_working(task_id), "status": {"state": self.answered_as}}
            return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": answer})
        if method == "tasks/get":
            return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": _working(params["id"])})
        if method == "tasks/cancel":
            self.cancels.append(params["id"])
            canceled = {**_working(params["id"]), "status": {"state": "canceled"}}
            return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": canceled})
        return JSONResponse({"jsonrpc": "2.0", "id": rid,
                             "error": {"code": -32601, "message": "Method not found"}})


def _working(task_id: str) -> dict[str, Any]:
    return {"kind": "task", "id": task_id, "contextId": "ctx", "status": {"state": "working"}}
