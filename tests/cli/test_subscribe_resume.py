"""``interlingua subscribe`` of a task that asked for input and has moved on since, in
each dialect and binding: the events it shows end where the task stands, not at the
input-required among them, and the exit code is the task's. A task still waiting
ends the command at its question, with the command that answers it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_follow_turns import WAY_IDS, WAYS, command, reach, run, started, waiter
from tests.live import live_grpc_agent

HINT = "The agent waits for an answer: interlingua stream "


@pytest.fixture(scope="module")
def where() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(waiter) as found:
        yield found


def asked(where: tuple[str, str], tmp_path: Path) -> tuple[str, Path]:
    """A task that asks for input at once, and the gate file it waits for."""
    gate = tmp_path / "gate"
    gate.touch()
    return started(where, f"input {gate}"), gate


def resumed(where: tuple[str, str], task_id: str, dialect: str | None,
            binding: str | None) -> tuple[int, list[str]]:
    """``interlingua subscribe … --last-event-id 1``: its exit code and lines."""
    address, *options = reach(where, dialect, binding)
    result = command("subscribe", address, task_id, "--last-event-id", "1", *options,
                     "--timeout", "5")
    return result.returncode, result.stdout.splitlines()


@pytest.mark.parametrize(("dialect", "binding"), WAYS, ids=WAY_IDS)
def test_resume_of_a_task_answered_and_completed(
        where: tuple[str, str], dialect: str | None, binding: str | None,
        tmp_path: Path) -> None:
    """Before: it stopped at the input-required the task had passed, said the agent
    waits for an answer (an answer it would refuse) and exited 0 on that."""
    task_id, gate = asked(where, tmp_path)
    answer = run("send", where[0], f"done {gate}", "--task-id", task_id, "--json")
    assert answer.exit_code == 0, answer.output
    code, out = resumed(where, task_id, dialect, binding)
    assert code == 0, out
    assert any("input-required" in line for line in out), out
    assert any("completed" in line for line in out), out
    assert "the answer" in "\n".join(out)
    assert not any(line.startswith(HINT) for line in out), out


@pytest.mark.parametrize(("dialect", "binding"), WAYS, ids=WAY_IDS)
def test_resume_of_a_task_canceled_while_it_waited(
        where: tuple[str, str], dialect: str | None, binding: str | None,
        tmp_path: Path) -> None:
    """Before: exit 0 and "waits for an answer", for a canceled task."""
    task_id, _ = asked(where, tmp_path)
    canceled = run("cancel", where[0], task_id)
    assert canceled.exit_code == 0, canceled.output
    code, out = resumed(where, task_id, dialect, binding)
    assert code == 4, out
    assert any("canceled" in line for line in out), out
    assert not any(line.startswith(HINT) for line in out), out


@pytest.mark.parametrize(("dialect", "binding"), WAYS, ids=WAY_IDS)
def test_resume_of_a_task_still_waiting(
        where: tuple[str, str], dialect: str | None, binding: str | None,
        tmp_path: Path) -> None:
    task_id, _ = asked(where, tmp_path)
    code, out = resumed(where, task_id, dialect, binding)
    assert code == 0, out
    assert any("input-required" in line for line in out), out
    assert out[-1].startswith(HINT), out


@pytest.mark.parametrize(("dialect", "binding"), WAYS, ids=WAY_IDS)
def test_resume_of_a_task_that_asked_again(
        where: tuple[str, str], dialect: str | None, binding: str | None,
        tmp_path: Path) -> None:
    """Answered with another question (the same words): the command ends at the
    second, the one the task waits on, after the turn between."""
    task_id, gate = asked(where, tmp_path)
    answer = run("send", where[0], f"input {gate}", "--task-id", task_id, "--json")
    assert answer.exit_code == 0, answer.output
    code, out = resumed(where, task_id, dialect, binding)
    assert code == 0, out
    waits = [i for i, line in enumerate(out) if "input-required" in line]
    assert len(waits) == 2 and any("working" in line for line in out[waits[0]:waits[1]]), out
    assert out[-1].startswith(HINT), out
