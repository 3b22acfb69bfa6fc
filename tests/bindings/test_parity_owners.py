"""ListTasks is scoped to the caller on every binding that lists (JSON-RPC, HTTP+JSON and
gRPC, v1.0): two authenticated owners each see exactly their own tasks, however they
filter, and never the other's."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from interlingua.core import calls as c
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.live import live_grpc_agent

from .drivers import DRIVERS, Driver
from .test_parity import AGENT, ALICE, BOB, send_task


@pytest.fixture
def secured() -> Iterator[str]:
    """A server of its own: every task in it is made by the test."""
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"],
                                                  "bob": BOB["X-API-Key"]})})
    with live_grpc_agent(AGENT, auth=auth) as (url, _):
        yield url


def listed(d: Driver, context_id: str | None = None) -> set[str]:
    page = d.call(c.ListTasks(page_size=50, context_id=context_id))
    assert isinstance(page, c.ListTasksResult)
    assert page.total_size == len(page.tasks)
    return {t.id for t in page.tasks}


@pytest.mark.parametrize("kind", [n for n, d in DRIVERS.items() if d.lists_tasks])
def test_each_owner_lists_exactly_their_own_tasks(kind: str, secured: str) -> None:
    with httpx.Client(timeout=30) as client:
        alice = DRIVERS[kind](client, secured, headers=ALICE)
        bob = DRIVERS[kind](client, secured, headers=BOB)
        first, second = send_task(alice, "1"), send_task(alice, "1")
        bobs = send_task(bob, "1")
        assert listed(alice) == {first.id, second.id}
        assert listed(bob) == {bobs.id}
        assert listed(alice, context_id=first.context_id) == {first.id}
        assert listed(bob, context_id=first.context_id) == set()
        # what another binding lists for them is the same
        for other in (n for n, d in DRIVERS.items() if d.lists_tasks and n != kind):
            assert listed(DRIVERS[other](client, secured, headers=ALICE)) == {first.id,
                                                                              second.id}
            assert listed(DRIVERS[other](client, secured, headers=BOB)) == {bobs.id}
