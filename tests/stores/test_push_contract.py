"""The Store contract for push configs and the delivery outbox (every store)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from interlingua.core.errors import TaskNotFound
from interlingua.core.model import AuthInfo, Event, PushConfig, TaskState
from interlingua.stores import Scope, SQLiteStore, Store
from interlingua.stores.base import DEAD, PENDING, Delivery

from .builders import agent, chunk, created, said, status, ts

#: these tests need the push outbox (see conftest.py)
NEEDS_PUSH = True

S = TaskState
A = Scope("acme", "alice")
B = Scope("acme", "bob")


def cfg(config_id: str, url: str = "https://hooks.example.com/a2a", **kw: object) -> PushConfig:
    return PushConfig(url=url, id=config_id, **kw)  # type: ignore[arg-type]


async def make(store: Store, task_id: str = "t-1", *, scope: Scope = A, dialect: str = "1.0",
               configs: tuple[PushConfig, ...] = (), working: bool = False) -> int:
    events: list[Event] = [created(task_id, at=ts(0))]
    if working:
        events.append(status(task_id, S.WORKING, ts(1)))
    return await store.create_task(scope, events, dialect=dialect, now=ts(0),
                                   push_configs=configs)


async def claim_all(store: Store, now: float = 100.0, lease: float = 130.0) -> list[Delivery]:
    return await store.claim_deliveries(now, lease, 100)


def seqs(ds: list[Delivery]) -> list[tuple[str, int]]:
    return sorted((d.config_id, d.seq) for d in ds)


# ---------------------------------------------------------------- configs


async def test_configs_put_get_list_delete(store: Store) -> None:
    await make(store)
    auth = AuthInfo(schemes=["Bearer"], credentials="secret")
    rec = await store.put_push_config(A, "t-1", cfg("c-1", token="tok", authentication=auth),
                                      dialect="0.3", now=ts(5))
    assert rec.config == PushConfig(url="https://hooks.example.com/a2a", id="c-1", task_id="t-1",
                                    token="tok", authentication=auth)
    assert (rec.dialect, rec.created_at) == ("0.3", ts(5))
    await store.put_push_config(A, "t-1", cfg("c-2"), dialect="1.0", now=ts(6))
    got = await store.get_push_config(A, "t-1", "c-1")
    assert got is not None and got.config.token == "tok" and got.dialect == "0.3"
    assert await store.get_push_config(A, "t-1", "nope") is None
    listed = await store.list_push_configs(A, "t-1")
    assert [(r.config.id, r.dialect) for r in listed] == [("c-1", "0.3"), ("c-2", "1.0")]
    assert await store.delete_push_config(A, "t-1", "c-1") is True
    assert await store.delete_push_config(A, "t-1", "c-1") is False
    assert [r.config.id for r in await store.list_push_configs(A, "t-1")] == ["c-2"]


async def test_replacing_a_config_keeps_its_place_and_creation_time(store: Store) -> None:
    await make(store)
    await store.put_push_config(A, "t-1", cfg("c-1"), dialect="0.1", now=ts(1))
    await store.put_push_config(A, "t-1", cfg("c-2"), dialect="0.1", now=ts(2))
    await store.put_push_config(A, "t-1", cfg("c-1", url="https://new.example.com/"),
                                dialect="1.0", now=ts(3))
    listed = await store.list_push_configs(A, "t-1")
    assert [(r.config.id, r.config.url, r.dialect, r.created_at) for r in listed] == [
        ("c-1", "https://new.example.com/", "1.0", ts(1)),
        ("c-2", "https://hooks.example.com/a2a", "0.1", ts(2)),
    ]


async def test_configs_of_another_scope_are_task_not_found(store: Store) -> None:
    await make(store, scope=A)
    await store.put_push_config(A, "t-1", cfg("c-1"), dialect="1.0", now=ts(1))
    with pytest.raises(TaskNotFound):
        await store.put_push_config(B, "t-1", cfg("c-2"), dialect="1.0", now=ts(1))
    with pytest.raises(TaskNotFound):
        await store.get_push_config(B, "t-1", "c-1")
    with pytest.raises(TaskNotFound):
        await store.list_push_configs(B, "t-1")
    with pytest.raises(TaskNotFound):
        await store.delete_push_config(B, "t-1", "c-1")
    with pytest.raises(TaskNotFound):
        await store.list_push_configs(A, "no-such-task")
    assert len(await store.list_push_configs(A, "t-1")) == 1


async def test_create_task_registers_configs_in_its_dialect(store: Store) -> None:
    await make(store, dialect="0.1", configs=(cfg("c-1", token="x"),))
    [rec] = await store.list_push_configs(A, "t-1")
    assert (rec.config.id, rec.config.task_id, rec.dialect) == ("c-1", "t-1", "0.1")


async def test_a_config_without_id_is_refused_before_anything_is_written(store: Store) -> None:
    with pytest.raises(ValueError, match="id"):
        await make(store, configs=(PushConfig(url="https://x.example.com/"),))
    assert await store.get_task(A, "t-1") is None


# ------------------------------------------------------------------ queuing


async def test_event_mode_queues_every_stream_event_but_history(store: Store) -> None:
    v = await make(store, dialect="1.0", configs=(cfg("c-1"),), working=True)
    v = await store.append(A, "t-1", v, [chunk("t-1", "a", "x"), said(agent("m-9"))], now=ts(2))
    await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(3))], now=ts(3))
    # created(1) working(2) chunk(3) history(4: none) completed(5); heads only, one at a time
    order = []
    while batch := await claim_all(store):
        assert len(batch) == 1
        order.append(batch[0].seq)
        await store.delivery_done(batch[0].id)
    assert order == [1, 2, 3, 5]
    assert await store.outbox_counts() == {PENDING: 0, DEAD: 0}


async def test_task_mode_queues_status_changes_and_coalesces_untried_ones(store: Store) -> None:
    v = await make(store, dialect="0.3", configs=(cfg("c-1"),), working=True)
    for i in range(50):  # a long stream: chunks never queue a whole-task delivery
        v = await store.append(A, "t-1", v, [chunk("t-1", "a", f"{i}", append=i > 0)], now=ts(2))
    v = await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(3))], now=ts(3))
    [only] = await claim_all(store)
    assert only.seq == v  # the created+working pair and the completion: one delivery, newest
    assert (await store.outbox_counts())[PENDING] == 1


async def test_a_tried_or_claimed_delivery_is_not_coalesced(store: Store) -> None:
    v = await make(store, dialect="0.3", configs=(cfg("c-1"),))
    [first] = await claim_all(store)
    assert first.seq == 1
    # claimed (in flight): a new status queues behind it
    v = await store.append(A, "t-1", v, [status("t-1", S.WORKING, ts(1))], now=ts(1))
    await store.delivery_failed(first.id, error="HTTP 500", attempted_at=100.0, retry_at=101.0)
    # tried once: still not coalesced; the untried tail (seq 2) is moved on instead
    v = await store.append(A, "t-1", v, [status("t-1", S.INPUT_REQUIRED, ts(2))], now=ts(2))
    assert await claim_all(store, now=100.5) == []  # the head waits for its retry time
    [again] = await claim_all(store, now=101.0)
    assert (again.id, again.seq, again.attempts) == (first.id, 1, 1)
    await store.delivery_done(again.id)
    [tail] = await claim_all(store, now=101.0)
    assert tail.seq == v == 3


async def test_configs_have_independent_queues(store: Store) -> None:
    v = await make(store, dialect="1.0", configs=(cfg("c-1"), cfg("c-2")))
    await store.put_push_config(A, "t-1", cfg("c-3"), dialect="0.3", now=ts(1))
    await store.append(A, "t-1", v, [status("t-1", S.WORKING, ts(1))], now=ts(1))
    batch = await claim_all(store)
    assert seqs(batch) == [("c-1", 1), ("c-2", 1), ("c-3", 2)]
    assert all(d.scope == A and d.task_id == "t-1" for d in batch)


async def test_tasks_without_configs_queue_nothing(store: Store) -> None:
    v = await make(store, working=True)
    await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(2))], now=ts(2))
    assert await claim_all(store) == []
    assert await store.next_delivery_at() is None


async def test_on_outbox_is_called_after_writes_that_queue(store: Store) -> None:
    calls: list[int] = []
    store.on_outbox = lambda: calls.append(1)
    try:
        v = await make(store)  # no configs
        assert calls == []
        await store.put_push_config(A, "t-1", cfg("c-1"), dialect="1.0", now=ts(1))
        assert calls == []  # registering queues nothing by itself
        v = await store.append(A, "t-1", v, [said(agent("m-2"))], now=ts(1))
        assert calls == []  # history is not delivered
        await store.append(A, "t-1", v, [status("t-1", S.WORKING, ts(1))], now=ts(1))
        assert calls == [1]
    finally:
        store.on_outbox = None


# ------------------------------------------------------------------ claiming


async def test_only_the_queue_head_is_claimed_and_a_claim_holds_until_its_lease(
    store: Store,
) -> None:
    v = await make(store, configs=(cfg("c-1"),), working=True)
    await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(2))], now=ts(2))
    [head] = await store.claim_deliveries(100.0, 110.0, 10)
    assert head.seq == 1
    assert await store.claim_deliveries(105.0, 115.0, 10) == []  # held; next waits behind it
    assert await store.next_delivery_at() == 110.0
    [again] = await store.claim_deliveries(110.5, 120.0, 10)  # the lease lapsed
    assert again.id == head.id
    await store.delivery_done(head.id)
    [nxt] = await store.claim_deliveries(111.0, 121.0, 10)
    assert nxt.seq == 2


async def test_claims_are_limited_and_oldest_due_first(store: Store) -> None:
    for i in range(5):
        await make(store, f"t-{i}", configs=(cfg("c"),))
    first = await store.claim_deliveries(100.0, 200.0, 2)
    assert len(first) == 2
    rest = await store.claim_deliveries(100.0, 200.0, 10)
    assert len(rest) == 3
    assert {d.task_id for d in first + rest} == {f"t-{i}" for i in range(5)}
    assert await store.claim_deliveries(100.0, 200.0, 0) == []


async def test_release_claims_makes_claimed_deliveries_claimable(store: Store) -> None:
    await make(store, configs=(cfg("c-1"),))
    [d] = await claim_all(store, now=100.0, lease=1000.0)
    assert await claim_all(store, now=101.0) == []
    assert await store.release_claims() == 1
    [again] = await claim_all(store, now=101.0)
    assert again.id == d.id


async def test_retry_then_dead_then_the_queue_moves_on(store: Store) -> None:
    v = await make(store, configs=(cfg("c-1"),), working=True)
    [d] = await claim_all(store)
    await store.delivery_failed(d.id, error="HTTP 503", attempted_at=100.0, retry_at=104.0)
    assert await store.next_delivery_at() == 104.0
    assert await claim_all(store, now=103.9) == []
    [d] = await claim_all(store, now=104.0)
    assert (d.attempts, d.last_error, d.last_attempt_at) == (1, "HTTP 503", 100.0)
    await store.delivery_failed(d.id, error="HTTP 404", attempted_at=104.0, retry_at=None)
    [nxt] = await claim_all(store, now=104.0)
    assert nxt.seq == 2  # the dead one no longer blocks its queue
    [dead] = await store.dead_deliveries()
    assert (dead.id, dead.seq, dead.state, dead.attempts, dead.last_error) == (
        d.id, 1, DEAD, 2, "HTTP 404")
    assert await store.outbox_counts() == {PENDING: 1, DEAD: 1}
    # a failure report for a dead delivery changes nothing
    await store.delivery_failed(d.id, error="late", attempted_at=105.0, retry_at=106.0)
    assert (await store.dead_deliveries())[0].last_error == "HTTP 404"
    del v


async def test_a_delivery_has_a_nonce_of_its_own_kept_through_its_attempts(
        store: Store) -> None:
    """The nonce that makes a notification's id unique: random, one per delivery (two
    scopes' tasks of one id, one config id, are two), and the same on every claim, as
    a dead letter, and once revived."""
    await make(store, "t-1", scope=A, configs=(cfg("c"),), working=True)
    await make(store, "t-1", scope=B, configs=(cfg("c"),), working=True)
    heads = await claim_all(store)
    assert [(d.scope, d.task_id, d.config_id, d.seq) for d in heads] == [
        (A, "t-1", "c", 1), (B, "t-1", "c", 1)]
    nonces = [d.nonce for d in heads]
    assert len(set(nonces)) == 2 and all(len(n) == 32 and int(n, 16) >= 0 for n in nonces)
    d = heads[0]
    await store.delivery_failed(d.id, error="HTTP 503", attempted_at=100.0, retry_at=104.0)
    [again] = [x for x in await claim_all(store, now=104.0) if x.id == d.id]
    assert (again.attempts, again.nonce) == (1, d.nonce)
    await store.delivery_failed(d.id, error="HTTP 404", attempted_at=104.0, retry_at=None)
    [dead] = await store.dead_deliveries(A)
    assert (dead.id, dead.nonce) == (d.id, d.nonce)
    assert await store.revive_delivery(d.id) is True
    [revived] = [x for x in await claim_all(store, now=300.0, lease=330.0) if x.id == d.id]
    assert revived.nonce == d.nonce
    # the next event's delivery has another
    await store.delivery_done(heads[1].id)
    [nxt] = [x for x in await claim_all(store, now=400.0, lease=430.0) if x.scope == B]
    assert nxt.seq == 2 and nxt.nonce not in nonces


async def test_dead_deliveries_by_scope_and_task(store: Store) -> None:
    await make(store, "t-1", scope=A, configs=(cfg("c"),))
    await make(store, "t-2", scope=A, configs=(cfg("c"),))
    await make(store, "t-1", scope=B, configs=(cfg("c"),))
    for d in await claim_all(store):
        await store.delivery_failed(d.id, error="gone", attempted_at=1.0, retry_at=None)
    assert len(await store.dead_deliveries()) == 3
    assert {d.task_id for d in await store.dead_deliveries(A)} == {"t-1", "t-2"}
    assert [(d.scope, d.task_id) for d in await store.dead_deliveries(A, "t-1")] == [(A, "t-1")]
    assert [d.scope for d in await store.dead_deliveries(B)] == [B]
    assert len(await store.dead_deliveries(limit=2)) == 2


async def test_a_revived_delivery_goes_out_in_sequence_order(store: Store) -> None:
    v = await make(store, configs=(cfg("c-1"),), working=True)
    [d1] = await claim_all(store)
    await store.delivery_failed(d1.id, error="x", attempted_at=1.0, retry_at=None)
    [d2] = await claim_all(store)
    assert d2.seq == 2
    await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(2))], now=ts(2))
    await store.delivery_failed(d2.id, error="y", attempted_at=2.0, retry_at=50.0)
    assert await store.revive_delivery(d1.id) is True
    assert await store.revive_delivery(d1.id) is False  # no longer dead
    assert await store.revive_delivery(12345) is False
    # ids no row can have: no such dead delivery, as any other (SQL refused to bind them)
    for beyond in (2**63, 10**23, 0, -1):
        assert await store.revive_delivery(beyond) is False
    [again] = await claim_all(store)
    assert (again.id, again.seq, again.attempts, again.state) == (d1.id, 1, 0, PENDING)
    await store.delivery_done(again.id)
    assert await claim_all(store, now=49.0) == []  # seq 2 waits for its retry time
    assert [d.seq for d in await claim_all(store, now=50.0)] == [2]


async def test_deleting_a_config_drops_its_deliveries(store: Store) -> None:
    await make(store, configs=(cfg("c-1"), cfg("c-2")), working=True)
    [x, _] = sorted(await claim_all(store), key=lambda d: d.config_id)
    await store.delivery_failed(x.id, error="z", attempted_at=1.0, retry_at=None)
    await store.delete_push_config(A, "t-1", "c-1")
    assert await store.dead_deliveries() == []
    left = await store.outbox_counts()
    assert left == {PENDING: 2, DEAD: 0}  # c-2's two deliveries


async def test_purging_a_task_drops_its_configs_and_deliveries(store: Store) -> None:
    v = await make(store, configs=(cfg("c-1"),))
    await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(1))], now=ts(1))
    assert await store.purge_finished(ts(10)) == 1
    assert await store.outbox_counts() == {PENDING: 0, DEAD: 0}
    assert await store.next_delivery_at() is None
    await make(store, configs=(cfg("c-1"),))  # the same ids again: nothing left over
    assert [d.seq for d in await claim_all(store)] == [1]


# -------------------------------------------------------------- durability


async def test_the_outbox_survives_reopening_the_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/push.db"
    store = SQLiteStore(url)
    await store.open()
    v = await make(store, configs=(cfg("c-1", token="tok"),), working=True)
    await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(2))], now=ts(2))
    [d] = await claim_all(store, lease=10_000.0)  # claimed when the process "dies"
    await store.close()

    store = SQLiteStore(url)
    await store.open()
    try:
        assert await claim_all(store) == []  # the old claim still holds ...
        assert await store.release_claims() == 1  # ... until a new dispatcher voids it
        order = []
        while batch := await claim_all(store):
            order.append(batch[0].seq)
            await store.delivery_done(batch[0].id)
        assert order == [1, 2, 3]
        [rec] = await store.list_push_configs(A, "t-1")
        assert rec.config.token == "tok"
    finally:
        await store.close()
    del d


async def test_a_new_task_with_push_configs_under_a_reused_message_id_is_logged(
        store: Store, caplog: pytest.LogCaptureFixture) -> None:
    """The write with push configs takes another way through the SQL stores."""
    caplog.set_level(logging.WARNING, "interlingua.engine")
    await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d1")
    await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d2",
                            push_configs=(cfg("c-1", task_id="t-2"),))
    warned = [r.getMessage() for r in caplog.records if r.name == "interlingua.engine"]
    assert warned == ["messageId 'm-1' was used before for a message with other content "
                      "(task t-1); this one is taken as a new message"]
