"""The test suite's own service helpers (tests/services.py): a private PostgreSQL finds
its server programs where Debian installs them, without a link on PATH made by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.services import pg_server_binary


def _program(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_postgres_programs_off_path_are_found_in_debians_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    lib = tmp_path / "lib"
    _program(lib / "9" / "bin" / "initdb")
    newest = _program(lib / "15" / "bin" / "initdb")
    _program(lib / "common" / "bin" / "initdb")
    assert pg_server_binary("initdb", str(lib)) == str(newest)
    assert pg_server_binary("pg_ctl", str(lib)) is None


def test_postgres_programs_on_path_come_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = _program(tmp_path / "bin" / "initdb")
    monkeypatch.setenv("PATH", str(on_path.parent))
    _program(tmp_path / "lib" / "15" / "bin" / "initdb")
    assert pg_server_binary("initdb", str(tmp_path / "lib")) == str(on_path)
