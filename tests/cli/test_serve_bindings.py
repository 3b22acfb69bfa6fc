"""``interlingua serve --bindings``: JSON-RPC always, HTTP+JSON and gRPC when listed
(both by default, gRPC with the ``grpc`` extra); a binding left out is neither
served nor named in the card."""

from __future__ import annotations

import subprocess
import sys
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


def test_every_binding_by_default() -> None:
    with serving() as info:
        card = httpx.get(info["card"], timeout=10).json()
        assert bindings_of(card) == {"JSONRPC", "HTTP+JSON", "GRPC"}
        assert rest_answers(info["listen"]) == 404  # an HTTP+JSON TaskNotFound
        assert "grpc" in info


@pytest.mark.parametrize(("listed", "offered"), [
    ("jsonrpc,grpc", {"JSONRPC", "GRPC"}),
    ("jsonrpc,rest", {"JSONRPC", "HTTP+JSON"}),
    ("jsonrpc", {"JSONRPC"}),
])
def test_what_is_listed_is_served(listed: str, offered: set[str]) -> None:
    with serving("--bindings", listed) as info:
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
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--store", "memory://", "--port", "0", "--bindings", "rest,grpc"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "jsonrpc too" in done.stderr
