"""The ``store`` fixture: every contract test runs against each store; ``db``: one
SQLite store in a file, for the tests of that store alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from interlingua.stores import SQLiteStore, Store, open_store

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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # Every task contract test also runs on a store without push notifications;
    # modules about the outbox say NEEDS_PUSH = True.
    if "store" in metafunc.fixturenames:
        kinds = list(STORE_KINDS)
        if not getattr(metafunc.module, "NEEDS_PUSH", False):
            kinds.append("tasks-only")
        metafunc.parametrize("store_kind", kinds)


@pytest.fixture
async def store(store_kind: str, tmp_path: Path,
                request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    if store_kind == "tasks-only":
        from .task_only import TaskOnlyStore

        only: Any = TaskOnlyStore()
        yield only
        return
    s = open_store(store_url(store_kind, tmp_path, request))
    await s.open()
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    """An open SQLite store in a file of its own (a module may define its own ``db``)."""
    store = SQLiteStore(f"sqlite:///{tmp_path}/tasks.db")
    await store.open()
    try:
        yield store
    finally:
        await store.close()
