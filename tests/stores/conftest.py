"""The ``store`` fixture: every contract test runs against each store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlingua.stores import Store, open_store

STORE_KINDS = ["memory", "sqlite-file", "sqlite-thread", "sqlite-memory", "postgres"]


def store_url(kind: str, tmp_path: Path, request: pytest.FixtureRequest | None = None) -> str:
    if kind == "postgres":
        assert request is not None
        url: str = request.getfixturevalue("pg_clean_url")
        return url
    if kind == "memory":
        return "memory://"
    if kind == "sqlite-file":
        return f"sqlite:///{tmp_path}/stores/tasks.db"  # tmp_path is absolute: sqlite:////…
    if kind == "sqlite-thread":  # calls on the worker thread instead of the loop's
        return f"sqlite:///{tmp_path}/stores/tasks.db?thread=1"
    return "sqlite:///:memory:"


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    s = open_store(store_url(request.param, tmp_path, request))
    await s.open()
    try:
        yield s
    finally:
        await s.close()
