"""An agent that declares no skill: its card lists one made from its name and
description (a card's ``skills`` is never empty: checkers flag an empty list and
skill-based discovery cannot see the agent), and ``serve`` says how to declare one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import msgspec

from interlingua.server.agent import default_skill

ROOT = Path(__file__).resolve().parents[2]

NO_SKILLS = '''
from interlingua import Agent

async def echo(text: str) -> str:
    return text

agent = Agent(name="Plain Echo 2", description="Says back what it is sent.", executor=echo)
'''


def served(spec: str, *args: str) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """(the JSON banner, the card served, the text banner) of ``serve spec``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", spec, "--store", "memory://",
         "--log-level", "warning", "--port", "0", *args],
        # unbuffered: the whole banner is written before the card answers
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        lines.append(proc.stdout.readline().rstrip("\n"))
        info = msgspec.json.decode(lines[0]) if "--json" in args else {}
        if not info:
            lines.append(proc.stdout.readline().rstrip("\n"))
        card_url = info["card"] if info else lines[1].split()[-1]
        card = httpx.get(card_url, timeout=20).json()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    # through the text stream: communicate() would read the pipe itself and miss what
    # readline() above has buffered
    assert proc.stdout is not None and proc.stderr is not None
    rest = proc.stdout.read()
    proc.stdout.close()
    proc.stderr.close()
    return info, card, [*lines, *rest.splitlines()]


def test_an_agent_without_skills_gets_one_made_from_its_name_and_description(
        tmp_path: Path) -> None:
    spec = tmp_path / "plain.py"
    spec.write_text(NO_SKILLS)
    info, card, _ = served(str(spec), "--json")
    assert card["skills"] == [{"id": "Plain Echo 2", "name": "Plain Echo 2",
                               "description": "Says back what it is sent.",
                               "tags": ["plain", "echo", "2"]}]
    assert len(info["warnings"]) == 1
    assert "declares no skills" in info["warnings"][0]
    _, _, lines = served(str(spec))
    said = [line for line in lines if line.lstrip().startswith("warning:")]
    assert len(said) == 1 and "skills=[AgentSkill(" in said[0], lines


def test_declared_skills_are_the_card_s_own_and_draw_no_warning() -> None:
    info, card, _ = served("examples/echo.py", "--json")
    assert [s["id"] for s in card["skills"]] == ["echo"]
    assert "warnings" not in info
    _, _, lines = served("examples/echo.py")
    assert not [line for line in lines if "warning:" in line], lines


def test_a_default_skill_always_has_an_id_and_tags() -> None:
    odd = default_skill("!!!", "Does things.")
    assert (odd.id, odd.name, odd.tags) == ("!!!", "!!!", ["agent"])
    assert default_skill("  ", "x").id == "agent"
    repeated = default_skill("Echo echo ECHO", "x")
    assert (repeated.id, repeated.tags) == ("Echo echo ECHO", ["echo"])


def test_a_push_claim_shorter_than_the_webhook_timeout_is_warned_of() -> None:
    """(A delivery still in flight when its claim lapses is sent again by another
    replica: serve took such a claim without a word.)"""
    info, _, _ = served("examples/echo.py", "--json", "--push-claim-seconds", "4")
    [warning] = info["warnings"]
    assert "--push-claim-seconds 4 is not above the webhook timeout (10 s)" in warning
    _, _, lines = served("examples/echo.py", "--push-claim-seconds", "4")
    assert [line for line in lines if "warning:" in line and "claim" in line], lines
    info, _, _ = served("examples/echo.py", "--json", "--push-claim-seconds", "30")
    assert "warnings" not in info


def test_several_agents_are_warned_of_a_short_push_claim_too() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "examples/report_agent.py", "--store", "memory://", "--log-level", "warning",
         "--port", "0", "--json", "--push-claim-seconds", "4"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        info = msgspec.json.decode(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        assert proc.stdout is not None
        proc.stdout.close()
    [warning] = info["warnings"]
    assert "--push-claim-seconds 4 is not above the webhook timeout" in warning
