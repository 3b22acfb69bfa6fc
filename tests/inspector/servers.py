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
from interlingua.server.card_signer import CardSigning

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
    os.environ.setdefault("SECURE_AGENT_API_KEY", API_KEY)
    auth: AuthConfig = module.auth()
    return create_app(module.agent, auth=auth, card_signing=CardSigning(), freeze_gc=False)


class ReportAgent(Process):
    """``interlingua serve examples/report_agent.py --push-allow-http --push-allow-private``."""

    def start(self, seconds: float = 1.0) -> ReportAgent:
        cli = Path(sys.executable).with_name("interlingua")
        self.launch([str(cli), "serve", str(EXAMPLES / "report_agent.py"), "--port",
                     str(self.port), "--store", "memory://", "--push-allow-http",
                     "--push-allow-private", "--log-level", "warning", "--drain-seconds", "0"],
                    env={**os.environ, "REPORT_SECONDS": str(seconds), "PYTHONUNBUFFERED": "1"})
        self.wait_ready()
        return self
