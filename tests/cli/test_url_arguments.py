"""A URL that urllib cannot split (a bracket left open) is a usage error of the option or
argument that gave it, in every command that takes one: never a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from interlingua.cli.main import main
from tests.e2e.procs import free_port


@pytest.mark.parametrize("args", [
    ["send", "http://[::1/", "hi"],
    ["send", "grpc://[::1", "hi"],
    ["send", "mqtt://[::1/demo/Echo", "hi"],
    ["card", "http://[::1/"],
    ["mcp", "http://[::1/"],
    ["serve", "examples/echo.py", "--port", "0", "--public-url", "http://[::1/"],
])
def test_an_unsplittable_url_is_a_usage_error(args: list[str]) -> None:
    done = CliRunner().invoke(main, args, prog_name="interlingua")
    assert done.exit_code == 2, (done.output, done.exception)
    assert "is not a URL: Invalid IPv6 URL" in done.output, done.output


def test_a_port_out_of_range_is_a_usage_error_of_mcp_too() -> None:
    done = CliRunner().invoke(main, ["mcp", "http://127.0.0.1:99999/"], prog_name="interlingua")
    assert done.exit_code == 2 and "has no valid port (0-65535)" in done.output, done.output


@pytest.mark.parametrize("command", [["listen", "--jwks"], ["inspect"]])
def test_a_server_command_checks_its_url_before_it_listens(command: list[str]) -> None:
    # else every notification would be refused later, the JWKS unreachable, or the
    # inspector would offer an agent no one can reach (a subprocess with a time limit:
    # a command that took the URL would listen until stopped)
    for url, says in (("not-a-url", "'not-a-url' is not an http:// or https:// URL"),
                      ("http://[::1/", "is not a URL: Invalid IPv6 URL")):
        done = subprocess.run(
            [sys.executable, "-m", "interlingua.cli.main", command[0], "--port",
             str(free_port()), *command[1:], url], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and says in done.stderr, done.stderr


@pytest.mark.parametrize(("url", "says"), [
    ("http://:8080/", "is not an http:// or https:// URL with a host"),
    ("http://agents\x07.example/", "is not a URL: Invalid non-printable ASCII character"),
])
def test_a_url_httpx_could_not_call_is_refused_as_every_http_setting_refuses_it(
        url: str, says: str) -> None:
    # (urllib splits both: a port without a host, and a control character httpx refuses;
    # a subprocess with a time limit: a server that took the URL would serve until stopped)
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", str(free_port()), "--public-url", url],
        capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and says in done.stderr, done.stderr


@pytest.mark.parametrize("args", [
    ["send", "{space}", "hi"],
    ["send", "{space}", "hi", "--dialect", "1.0"],
    ["stream", "{space}", "hi"],
    ["get", "{space}", "t1"],
    ["cancel", "{space}", "t1"],
    ["subscribe", "{space}", "t1"],
    ["tasks", "{space}"],
    ["card", "{space}"],
    ["card", "{url}\t"],
    ["send", "{url}", "hi", "--push-url", " http://127.0.0.1:9/hook"],
    ["send", "grpc:// 127.0.0.1:{port}", "hi"],
    ["send", "dns:/// 127.0.0.1:{port}", "hi"],
    ["send", "http:// 127.0.0.1:{port}", "hi"],
    ["send", "mqtt:// 127.0.0.1/demo/Echo", "hi"],
    ["mcp", "{space}"],
    ["inspect", "--port", "{free}", "{space}"],
    ["listen", "--port", "{free}", "--jwks", "{space}/jwks.json"],
    ["serve", "examples/echo.py", "--port", "{free}", "--store", "memory://",
     "--public-url", "{space}"],
])
def test_a_url_with_white_space_at_its_start_or_in_its_host_is_a_usage_error(
        agent_url: str, args: list[str]) -> None:
    # urllib strips a leading space and splits the rest, so it passed, and the command
    # failed later (exit 1 or 3), or a server command served with it; a live agent at
    # the URL shows none of them gets as far as calling it (a subprocess with a time
    # limit: a server command that took the URL would serve until stopped)
    url = agent_url.rstrip("/")
    given = [a.format(space=" " + url, url=url, port=url.rpartition(":")[2],
                      free=free_port()) for a in args]
    done = subprocess.run([sys.executable, "-m", "interlingua.cli.main", *given],
                          capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert "is not a URL: it starts or ends with white space" in done.stderr \
        or "is not a URL: its host holds white space" in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
