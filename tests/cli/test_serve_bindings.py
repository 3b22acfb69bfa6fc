"""``interlingua serve --bindings``: JSON-RPC always, HTTP+JSON by default, gRPC only
when asked for with a port (``--grpc-port``); a binding left out is neither served
nor named in the card, and the banner says how to serve it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def serving(*args: str) -> Iterator[dict[str, Any]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--store", "memory://", "--json", "--log-level", "warning", "--port", "0", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        yield msgspec.json.decode(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def bindings_of(card: dict[str, Any]) -> set[str]:
    return {i["protocolBinding"] for i in card["supportedInterfaces"]}


def rest_answers(base: str) -> int:
    return httpx.get(base + "/tasks/no-such-task", headers={"A2A-Version": "1.0"},
                     timeout=10).status_code


def run_serve(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    command = ["-c", code] if code else ["-m", "interlingua.cli.main"]
    return subprocess.run(
        [sys.executable, *command, "serve", "examples/echo.py", "--store", "memory://",
         "--port", "0", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_no_grpc_unless_asked() -> None:
    with serving() as info:
        card = httpx.get(info["card"], timeout=10).json()
        assert bindings_of(card) == {"JSONRPC", "HTTP+JSON"}
        assert rest_answers(info["listen"]) == 404  # an HTTP+JSON TaskNotFound
        assert "grpc" not in info
        assert info["off"] == {"grpc": "--grpc-port PORT serves it"}


def test_a_grpc_port_serves_every_binding() -> None:
    with serving("--grpc-port", "0") as info:
        card = httpx.get(info["card"], timeout=10).json()
        assert bindings_of(card) == {"JSONRPC", "HTTP+JSON", "GRPC"}
        assert "grpc" in info and "off" not in info


def banner(*args: str, code: str | None = None) -> list[str]:
    """The text lines ``serve`` prints at start-up (read once it answers, so that a
    banner shorter than expected is seen as such, not waited for)."""
    command = ["-c", code] if code else ["-m", "interlingua.cli.main"]
    with subprocess.Popen(
            [sys.executable, *command, "serve", "examples/echo.py", "--store", "memory://",
             "--log-level", "warning", "--port", "0", *args],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        try:
            first = proc.stdout.readline()
            listen = first.split(" on ")[1].split()[0]
            deadline = time.monotonic() + 20
            while True:
                try:
                    httpx.get(listen + "/healthz", timeout=1)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, "serve did not answer"
                    time.sleep(0.05)
        finally:
            proc.terminate()
        # read through the text stream: communicate() reads the pipe itself and
        # would miss what readline() above already buffered
        rest = proc.stdout.read()
    return [first.rstrip("\n"), *rest.splitlines()]


def test_the_banner_names_every_binding_with_its_url() -> None:
    lines = banner("--grpc-port", "0")
    listen = lines[0].split(" on ")[1].split()[0]
    host = listen.split("//")[1].split(":")[0]
    assert lines[2].split() == ["JSON-RPC:", listen + "/"]
    assert lines[3].split()[:2] == ["HTTP+JSON:", listen + "/"]
    assert lines[4].split()[0] == "gRPC:"
    assert lines[4].split()[1].startswith(f"grpc://{host}:")
    assert len(lines) == 5


def test_an_ipv6_host_is_named_in_brackets_in_every_url() -> None:
    # (it named http://::1:PORT and grpc://::1:PORT, which no client takes)
    lines = banner("--host", "::1", "--grpc-port", "0")
    listen = lines[0].split(" on ")[1].split()[0]
    assert listen.startswith("http://[::1]:")
    assert lines[2].split() == ["JSON-RPC:", listen + "/"]
    assert lines[4].split()[1].startswith("grpc://[::1]:")
    grpc_url = lines[4].split()[1]
    from interlingua.cli.urls import check_agent_url

    assert check_agent_url(None, None, grpc_url) == grpc_url  # as `card`, `send` take it


def test_grpc_without_its_extra_says_what_to_install() -> None:
    # the extra hidden from the child, as on a machine without interlingua[grpc]
    hidden = ("import sys; sys.modules['grpc'] = None; "
              "from interlingua.cli.main import main; main()")
    lines = banner(code=hidden)
    assert lines[4].split(None, 1) == ["gRPC:",
                                       "off: needs the grpc extra: pip install "
                                       "'interlingua[grpc]'"]
    asked = run_serve("--grpc-port", "0", code=hidden)
    assert asked.returncode == 2
    assert asked.stderr == ("error: the gRPC binding needs the grpc extra: "
                            "pip install 'interlingua[grpc]'\n")


@pytest.mark.parametrize(("args", "said"), [
    (["--bindings", "jsonrpc,grpc"], "--bindings grpc needs --grpc-port PORT"),
    (["--bindings", "jsonrpc,rest", "--grpc-port", "0"], "--grpc-port serves gRPC"),
])
def test_grpc_and_its_port_go_together(args: list[str], said: str) -> None:
    done = run_serve(*args)
    assert done.returncode == 2
    assert done.stderr.startswith("error: " + said) and done.stderr.count("\n") == 1


@pytest.mark.parametrize(("listed", "offered"), [
    ("jsonrpc,grpc", {"JSONRPC", "GRPC"}),  # with --grpc-port 0
    ("jsonrpc,rest", {"JSONRPC", "HTTP+JSON"}),
    ("jsonrpc", {"JSONRPC"}),
])
def test_what_is_listed_is_served(listed: str, offered: set[str]) -> None:
    with serving("--bindings", listed, *(["--grpc-port", "0"] if "grpc" in listed else [])) \
            as info:
        card = httpx.get(info["card"], timeout=10).json()
        assert bindings_of(card) == offered
        assert ("grpc" in info) == ("GRPC" in offered)
        answer = httpx.get(info["listen"] + "/tasks/no-such-task",
                           headers={"A2A-Version": "1.0"}, timeout=10)
        if "HTTP+JSON" in offered:
            assert answer.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
        else:  # no such route: not an A2A error body
            assert answer.status_code in (404, 405) and "error" not in answer.text[:20]


def test_json_rpc_must_be_listed() -> None:
    done = run_serve("--bindings", "rest,grpc", "--grpc-port", "0")
    assert done.returncode == 2
    assert "jsonrpc too" in done.stderr
