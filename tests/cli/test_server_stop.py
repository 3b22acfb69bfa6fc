"""How a command ends on Ctrl-C (README's exit codes): a server command (``serve``,
``listen``, ``inspect``, ``gateway``, ``mcp --http``) is stopped on purpose, finishes its work and
exits 0; after SIGTERM it stops the same way and ends as terminated by that signal. (A
client command is interrupted: 130, tests/cli/test_cli_user_path.py.)"""

from __future__ import annotations

import signal
import subprocess
import time

import httpx
import pytest

from tests.cli.as_from_a_terminal import from_a_terminal
from tests.cli.test_console_script import ROOT
from tests.mesh.helpers import BROKER, namespace, need_broker
from tests.ports import free_port


def _start(args: list[str], port: int) -> subprocess.Popen[str]:
    """The command, once it answers HTTP on ``port``."""
    proc = subprocess.Popen(from_a_terminal(*args), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        assert proc.poll() is None, proc.communicate()
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=0.5)
            return proc
        except httpx.HTTPError:
            assert time.monotonic() < deadline, f"{args[0]} did not start"
            time.sleep(0.05)


@pytest.mark.parametrize("command", ["serve", "listen", "inspect", "gateway", "mcp"])
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 0),
                                           (signal.SIGTERM, -signal.SIGTERM)],
                         ids=["ctrl-c", "sigterm"])
def test_a_server_command_stopped_on_purpose_is_no_failure(
        agent_url: str, command: str, sig: signal.Signals, code: int) -> None:
    if command == "gateway":
        need_broker()
    port = free_port()
    args = {"serve": ["serve", "tests/client/agents.py", "--port", str(port),
                      "--store", "memory://"],
            "listen": ["listen", "--port", str(port)],
            "inspect": ["inspect", "--port", str(port)],
            "gateway": ["gateway", "--mesh", BROKER, "--namespace", namespace(),
                        "--port", str(port)],
            "mcp": ["mcp", agent_url, "--http", "--port", str(port)]}[command]
    proc = _start(args, port)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert "Traceback" not in err and "error:" not in err, err

