"""Fixtures the server's tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def shared_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store that processes share: a SQLite file, or a PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/tasks.db"
    pg: str = request.getfixturevalue("pg_clean_url")
    return pg
