"""``interlingua subscribe`` and ``interlingua get --wait`` against a live server, in each
dialect and binding the CLI speaks: both stop once the task waits for the user, and
``get --wait`` shows a state again only when what it shows has changed."""

from __future__ import annotations

import asyncio
import os
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner, Result

from interlingua import Agent, Context
from interlingua.cli.main import main
from tests.cli.test_console_script import ROOT, SCRIPT, interlingua
from tests.live import live_grpc_agent


async def run_turn(ctx: Context) -> None:
    """``input PATH`` / ``auth PATH`` / ``done PATH``: reports working, waits until the
    file PATH exists, then asks for input, for authentication, or completes."""
    command, _, gate = ctx.text.partition(" ")
    await ctx.update("looking")
    while not Path(gate).exists():
        await asyncio.sleep(0.01)
    if command == "input":
        await ctx.require_input("Go on?")
    elif command == "auth":
        await ctx.require_auth("Sign in first")
    else:
        await ctx.complete("found it", artifact="the answer", name="answer")


waiter = Agent("Waiter", "Waits for a file, then asks or answers.", run_turn)

#: how each dialect and binding is reached: (dialect, binding); None: the card's choice
WAYS = [(None, None), ("1.1", "jsonrpc"), ("1.0", "jsonrpc"), ("1.0", "rest"), ("1.0", "grpc"),
        ("0.3", "jsonrpc"), ("0.3", "rest"), ("0.3", "grpc"), ("0.1", "jsonrpc")]
WAY_IDS = ["card" if d is None else f"{d}-{b}" for d, b in WAYS]


@pytest.fixture(scope="module")
def where() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(waiter) as found:
        yield found


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name="interlingua")


def command(*args: str) -> subprocess.CompletedProcess[str]:
    """``interlingua ARGS``: in this process, or as a process of its own for a gRPC
    address (a gRPC client in this process shares grpc's poller with the server's
    loop, which may then be handed an event of the command's loop, closed by then)."""
    if args[1].startswith("grpc://"):
        return interlingua(*args, timeout=25)
    result = run(*args)
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout,
                                       result.stderr)


def moved_on(args: list[str], gate: Path, after: float) -> subprocess.CompletedProcess[str]:
    """``interlingua ARGS`` as a process, the file ``gate`` made ``after`` seconds after
    the command's first line: the task moves on while the command follows it."""
    proc = subprocess.Popen([str(SCRIPT), *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        first = proc.stdout.readline() if ready else ""
        time.sleep(after)
        gate.touch()
        # (a command that does not stop fails here: over gRPC it would wait for ever)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(args, proc.returncode, first + out, err)


def reach(where: tuple[str, str], dialect: str | None, binding: str | None) -> list[str]:
    """The agent's address and the options that speak ``dialect`` over ``binding``."""
    url, target = where
    if dialect is None:
        return [url]
    if binding == "grpc":
        return [f"grpc://{target}", "--dialect", dialect]
    return [url, "--dialect", dialect, "--binding", binding or "jsonrpc"]


def started(where: tuple[str, str], text: str, *options: str) -> str:
    """The id of a task started with ``text`` (as the card says)."""
    sent = run("send", where[0], text, "--json", *options)
    assert sent.exit_code == 0, (sent.output, sent.stderr)
    task_id: str = msgspec.json.decode(sent.stdout)["task"]["id"]
    return task_id


@pytest.mark.parametrize(("dialect", "binding"), WAYS, ids=WAY_IDS)
def test_subscribe_stops_at_a_task_already_waiting_for_input(
        where: tuple[str, str], dialect: str | None, binding: str | None,
        tmp_path: Path) -> None:
    """Before: in v1.0 (whose subscription goes on to the task's end) the command kept
    waiting, and ended only at its --timeout, exit 3."""
    gate = tmp_path / "gate"
    gate.touch()
    task_id = started(where, f"input {gate}")  # (the send returns as the task asks)
    address, *options = reach(where, dialect, binding)
    result = command("subscribe", address, task_id, *options, "--timeout", "2")
    assert result.returncode == 0, (result.stdout, result.stderr)
    out = result.stdout.splitlines()
    assert any("input-required" in line for line in out), out
    assert "Go on?" in result.stdout
    assert out[-1].startswith("The agent waits for an answer: interlingua stream "), out


@pytest.mark.parametrize(("dialect", "binding"), WAYS, ids=WAY_IDS)
def test_subscribe_stops_when_the_task_comes_to_wait_for_authentication(
        where: tuple[str, str], dialect: str | None, binding: str | None,
        tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    task_id = started(where, f"auth {gate}", "--no-wait")
    address, *options = reach(where, dialect, binding)
    result = moved_on(["subscribe", address, task_id, *options, "--timeout", "2"], gate, 0)
    assert result.returncode == 0, (result.stdout, result.stderr)
    out = result.stdout.splitlines()
    # (v0.1 has no auth-required: it is sent as input-required)
    waiting = "input-required" if dialect == "0.1" else "auth-required"
    working = next(i for i, line in enumerate(out) if "working" in line)
    asked = next(i for i, line in enumerate(out) if waiting in line)
    assert working < asked, out
    assert "Sign in first" in result.stdout
    assert out[-1].startswith("The agent waits for an answer: interlingua stream "), out


@pytest.mark.parametrize(("dialect", "binding"), WAYS, ids=WAY_IDS)
def test_get_wait_shows_a_state_once_until_it_changes(
        where: tuple[str, str], dialect: str | None, binding: str | None,
        tmp_path: Path) -> None:
    """The task stays working (with its status message) through a poll or more.
    Before: v0.1 reads the status message with a new id each time, and each poll
    printed the same state again."""
    gate = tmp_path / "gate"
    task_id = started(where, f"done {gate}", "--no-wait")
    address, *options = reach(where, dialect, binding)
    # a poll 0.5 s after the first read finds it as it was
    result = moved_on(["get", address, task_id, "--wait", *options, "--timeout", "20"], gate,
                      1.0)
    assert result.returncode == 0, (result.stdout, result.stderr)
    heads = [line for line in result.stdout.splitlines() if line.startswith("Task ")]
    assert heads == [f"Task {task_id}  working", f"Task {task_id}  completed"], \
        result.stdout
    assert "the answer" in result.stdout
