"""Timeouts in ``src/interlingua`` are ``asyncio.timeout`` blocks, never ``asyncio.wait_for``.

On Python 3.11 ``wait_for`` loses a cancellation that arrives in the same loop
turn as its awaitable's result: it returns the result and the task goes on as if
never cancelled. A loop around it then never stops (a mesh instance told to stop
just as its card fell due waited for SIGKILL), and a turn canceled just as a
message came kept running. ``asyncio.timeout`` keeps the cancellation.

An AST check, also run on planted snippets so that a check that could never fail
would show.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "interlingua"


def wait_for_calls(source: str) -> list[int]:
    """Lines that call ``asyncio.wait_for`` or import ``wait_for`` from asyncio."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "wait_for" \
                and isinstance(node.value, ast.Name) and node.value.id == "asyncio":
            found.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "asyncio" \
                and any(alias.name == "wait_for" for alias in node.names):
            found.append(node.lineno)
    return found


def test_the_check_finds_a_planted_wait_for() -> None:
    assert wait_for_calls("import asyncio\nasync def f(e):\n"
                          "    await asyncio.wait_for(e.wait(), 1)\n") == [3]
    assert wait_for_calls("from asyncio import sleep, wait_for\n") == [1]
    # a method of our own of that name is not asyncio's
    assert wait_for_calls("async def f(r):\n    await r.wait_for(lambda e: True)\n") == []


def test_no_module_times_out_with_wait_for() -> None:
    found = {str(path.relative_to(PACKAGE)): lines
             for path in sorted(PACKAGE.rglob("*.py"))
             if (lines := wait_for_calls(path.read_text(encoding="utf-8")))}
    assert found == {}, f"use `async with asyncio.timeout(...)` instead: {found}"
