"""The other frameworks' processes get this process's environment but for the bytecode
folder of our own processes, under which they would compile every module at each start."""

from __future__ import annotations

import pytest

from .harness import peer_env


def test_a_peer_reads_its_own_bytecode_and_writes_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "/somewhere/pycache")
    monkeypatch.setenv("SOME_SETTING", "kept")
    env = peer_env(EXTRA="1")
    assert "PYTHONPYCACHEPREFIX" not in env
    assert env["SOME_SETTING"] == "kept" and env["EXTRA"] == "1"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["PYTHONUNBUFFERED"] == "1"
