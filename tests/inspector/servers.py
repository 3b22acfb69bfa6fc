"""The example agents and the inspector, served over loopback for the inspector's tests.

Most are served in this process (a uvicorn server per app, each on its own
thread and port), which starts in a few milliseconds; the push example runs
as ``interlingua serve ... --push-allow-private`` in a child process, as a
user would run it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import uvicorn

from interlingua import create_app
from interlingua.server.auth import AuthConfig
from interlingua.server.cards.signer import CardSigning

from ..e2e.procs import ROOT, Process

EXAMPLES = ROOT / "examples"
#: the API key the secure example accepts in these tests
API_KEY = "inspector-test-key-0123456789abcdef"


def example(name: str) -> ModuleType:
    """``examples/NAME.py`` as a module (imported once)."""
    key = f"inspector_example_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


class Served:
    """An ASGI app on a loopback port, in a thread of this process."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                timeout_graceful_shutdown=1, lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def agent_app(name: str, **options: Any) -> Any:
    return create_app(example(name).agent, freeze_gc=False, **options)


def secure_app() -> Any:
    """The secure example behind an API key, with a signed card."""
    module = example("secure_agent")
    # the example reads its key from the environment; set it only while it reads it,
    # so the other tests of this process (and their child processes) do not inherit it
    saved = os.environ.get("SECURE_AGENT_API_KEY")
    os.environ["SECURE_AGENT_API_KEY"] = API_KEY
    try:
        auth: AuthConfig = module.auth()
    finally:
        if saved is None:
            del os.environ["SECURE_AGENT_API_KEY"]
        else:
            os.environ["SECURE_AGENT_API_KEY"] = saved
    return create_app(module.agent, auth=auth, card_signing=CardSigning(), freeze_gc=False)


class ReportAgent(Process):
    """``interlingua serve examples/report_agent.py --push-allow-http --push-allow-private``."""

    def start(self, seconds: float = 1.0) -> ReportAgent:
        cli = Path(sys.executable).with_name("interlingua")
        self.launch([str(cli), "serve", str(EXAMPLES / "report_agent.py"), "--port",
                     str(self.port), "--store", "memory://", "--push-allow-http",
                     "--push-allow-private", "--bindings", "jsonrpc", "--log-level", "warning",
                     "--drain-seconds", "0"],
                    env={**os.environ, "REPORT_SECONDS": str(seconds), "PYTHONUNBUFFERED": "1"})
        self.wait_ready()
        return self


def gappy_app() -> Any:
    """A v0.3 agent whose stream skips sequence number 3 (as a broken relay
    might): the inspector's timeline must show the gap."""
    import json

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def card(request: Request) -> Response:
        base = str(request.base_url)
        return JSONResponse({
            "name": "Gappy", "description": "Streams with a hole in it.", "url": base,
            "version": "1", "protocolVersion": "0.3.0", "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": []})

    async def rpc(request: Request) -> Response:
        call = await request.json()
        ids = {"taskId": "t-1", "contextId": "c-1"}
        results = [
            (1, {"kind": "task", "id": "t-1", "contextId": "c-1",
                 "status": {"state": "submitted"}}),
            (2, {"kind": "status-update", **ids, "status": {"state": "working"}, "final": False}),
            (4, {"kind": "artifact-update", **ids, "artifact": {
                "artifactId": "a-1", "name": "out.txt", "parts": [{"kind": "text", "text": "x"}]},
                "lastChunk": True}),
            (5, {"kind": "status-update", **ids, "status": {"state": "completed"}, "final": True}),
        ]
        body = "".join(
            f"id: {seq}\ndata: {json.dumps({'jsonrpc': '2.0', 'id': call['id'], 'result': r})}\n\n"
            for seq, r in results)
        return Response(body, media_type="text/event-stream")

    return Starlette(routes=[Route("/.well-known/agent-card.json", card),
                             Route("/", rpc, methods=["POST"])])
