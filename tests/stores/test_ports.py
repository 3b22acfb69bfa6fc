"""The store is a union of small ports, each consumer taking the one it needs,
and every store implements them all."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from interlingua.server.leases import LeaseKeeper
from interlingua.server.push.dispatcher import Dispatcher
from interlingua.server.push.service import PushService
from interlingua.server.recovery import Recovery
from interlingua.server.run import Writer
from interlingua.stores import MemoryStore, SQLiteStore, data_file
from interlingua.stores.base import (
    LeasePort,
    MigrationPort,
    PushOutbox,
    PushPort,
    Store,
    TaskPort,
    TaskStore,
)
from interlingua.stores.postgres import PostgresStore

PORTS = (TaskPort, LeasePort, MigrationPort, PushOutbox)


def _members(port: type) -> set[str]:
    return {name for cls in port.__mro__ if cls.__module__ == port.__module__
            for name in [*vars(cls), *vars(cls).get("__annotations__", {})]
            if not name.startswith("_")}


def test_the_ports_share_no_member_and_make_up_the_store() -> None:
    seen: set[str] = set()
    for port in PORTS:
        assert not _members(port) & seen, port
        seen |= _members(port)
    assert _members(Store) - seen == {"url", "open", "close", "describe"}
    assert "file_path" not in _members(Store)


@pytest.mark.parametrize("impl", [MemoryStore, SQLiteStore, PostgresStore])
def test_every_store_implements_every_port(impl: type) -> None:
    for port in PORTS:
        assert all(hasattr(impl, name) for name in _members(port) - {"on_outbox"}), port


def test_consumers_take_the_narrowest_port() -> None:
    def takes(call: object) -> str:
        return str(inspect.signature(call).parameters["store"].annotation)

    assert takes(LeaseKeeper) == "LeasePort"
    assert takes(Writer) == "TaskPort"
    assert takes(Recovery) == "TaskPort"
    assert str(inspect.signature(Recovery).parameters["migrations"].annotation) == \
        "MigrationPort"
    assert takes(PushService) == takes(Dispatcher) == "PushPort"
    assert {"TaskStore", "Store"}.isdisjoint({takes(LeaseKeeper), takes(PushService)})
    assert TaskPort in TaskStore.__mro__ and PushOutbox in PushPort.__mro__


def test_a_store_url_names_its_data_file() -> None:
    assert data_file("sqlite:////tmp/x/tasks.db?synchronous=full") == Path("/tmp/x/tasks.db")
    assert data_file("sqlite:///rel.db") == Path("rel.db")
    assert data_file("sqlite:///:memory:") is None
    assert data_file("memory://") is None
    assert data_file("postgresql://u@h/db") is None
