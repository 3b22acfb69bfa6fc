"""The store's part in task ownership and idempotent sends, for every store:
leases with growing epochs, writes fenced by them, one task per message (its id
and digest, or in strict mode its id alone)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from interlingua.core.errors import ConcurrentModification
from interlingua.core.model import TaskState as S
from interlingua.stores import LeaseLost, MessageExists, MessageRecord, Scope, Store

from .builders import agent, created, said, status, ts, user

A = Scope("acme", "alice")


async def test_every_lease_gets_a_larger_epoch_even_after_release(store: Store) -> None:
    first = await store.acquire_lease("h:1", 100.0)
    second = await store.acquire_lease("h:2", 101.0)
    assert second.epoch > first.epoch
    await store.release_lease(second.epoch)
    third = await store.acquire_lease("h:3", 102.0)
    assert third.epoch > second.epoch
    assert [lease.epoch for lease in await store.live_leases()] == [first.epoch, third.epoch]
    assert (await store.live_leases())[0].holder == "h:1"


async def test_a_lease_keeps_its_holders_own_timeout(store: Store) -> None:
    mine = await store.acquire_lease("h:1", 100.0, 1.5)
    other = await store.acquire_lease("h:2", 100.0)
    assert (mine.timeout, other.timeout) == (1.5, None)
    assert await store.renew_lease(mine.epoch, 101.0)
    assert [lease.timeout for lease in await store.live_leases()] == [1.5, None]


async def test_renew_moves_the_heartbeat_until_the_lease_is_revoked(store: Store) -> None:
    lease = await store.acquire_lease("h:1", 100.0)
    assert await store.renew_lease(lease.epoch, 105.0)
    assert (await store.live_leases())[0].heartbeat == 105.0
    # a revocation that only takes leases silent since 104 leaves this one
    assert not await store.revoke_lease(lease.epoch, unless_after=104.0)
    assert await store.revoke_lease(lease.epoch, unless_after=106.0)
    assert not await store.revoke_lease(lease.epoch)
    assert not await store.renew_lease(lease.epoch, 107.0)
    assert await store.live_leases() == []


async def test_writes_under_a_revoked_lease_are_refused(store: Store) -> None:
    mine = await store.acquire_lease("h:1", 100.0)
    other = await store.acquire_lease("h:2", 100.0)
    v = await store.create_task(A, [created("t-1"), status("t-1", S.WORKING, ts(0))],
                                dialect="1.0", now=ts(0), lease=mine.epoch)
    (unfinished,) = await store.unfinished_tasks()
    assert unfinished.lease == mine.epoch
    await store.revoke_lease(mine.epoch)
    with pytest.raises(LeaseLost):
        await store.append(A, "t-1", v, [status("t-1", S.COMPLETED, ts(1))], now=ts(1),
                           lease=mine.epoch)
    with pytest.raises(LeaseLost):
        await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(0),
                                lease=mine.epoch)
    assert await store.get_task(A, "t-2") is None
    # the task is as it was, and a live lease's write goes through and owns it
    rec = await store.get_task(A, "t-1")
    assert rec is not None and rec.version == v and rec.task.status.state is S.WORKING
    await store.append(A, "t-1", v, [status("t-1", S.FAILED, ts(2))], now=ts(2),
                       lease=other.epoch)
    assert await store.unfinished_tasks() == []


async def test_the_last_writer_owns_an_unfinished_task(store: Store) -> None:
    one = await store.acquire_lease("h:1", 100.0)
    two = await store.acquire_lease("h:2", 100.0)
    v = await store.create_task(A, [created("t-1"), status("t-1", S.INPUT_REQUIRED, ts(0))],
                                dialect="1.0", now=ts(0), lease=one.epoch)
    await store.append(A, "t-1", v, [said(user("m-2", "t-1")), status("t-1", S.WORKING, ts(1))],
                       now=ts(1), lease=two.epoch)
    (unfinished,) = await store.unfinished_tasks()
    assert unfinished.lease == two.epoch


async def test_a_strict_message_id_makes_one_task_and_keeps_its_digest(store: Store) -> None:
    await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d1", strict=True)
    assert await store.find_message(A, "m-1") == MessageRecord("t-1", b"d1")
    with pytest.raises(MessageExists) as caught:
        await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(0),
                                message_id="m-1", digest=b"d2", strict=True)
    assert caught.value.record == MessageRecord("t-1", b"d1")
    assert await store.get_task(A, "t-2") is None
    # looked up with another digest: the task it has, and its digest to compare
    assert await store.find_message(A, "m-1", b"d2") == MessageRecord("t-1", b"d1")
    # another scope has its own message ids
    other = Scope("acme", "bob")
    await store.create_task(other, [created("t-1")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d3", strict=True)
    assert await store.find_message(other, "m-1") == MessageRecord("t-1", b"d3")


WARNED = ("messageId 'm-1' was used before for a message with other content (task t-1); "
          "this one is taken as a new message")


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "interlingua.engine" and r.levelno == logging.WARNING]


async def test_a_new_task_under_a_message_id_with_other_content_is_logged(
        store: Store, caplog: pytest.LogCaptureFixture) -> None:
    """Said when the key is written: a send that did not look the id up first
    is told too. Not for a retry (refused), another scope, or strict ids."""
    caplog.set_level(logging.WARNING, "interlingua.engine")
    await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d1")
    await store.create_task(Scope("acme", "bob"), [created("t-1")], dialect="1.0",
                            now=ts(0), message_id="m-1", digest=b"d2")
    await store.create_task(A, [created("t-0")], dialect="1.0", now=ts(0),
                            message_id="m-0", digest=b"d0", strict=True)
    await store.create_task(A, [created("t-9")], dialect="1.0", now=ts(0),
                            message_id="m-9", digest=b"d9")
    assert warnings(caplog) == []
    await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d2")
    assert warnings(caplog) == [WARNED]
    with pytest.raises(MessageExists):
        await store.create_task(A, [created("t-3")], dialect="1.0", now=ts(0),
                                message_id="m-1", digest=b"d2")
    assert warnings(caplog) == [WARNED]


async def test_a_store_handed_the_look_up_logs_what_it_found(
        store: Store, caplog: pytest.LogCaptureFixture) -> None:
    """A send that looked the message id up hands the store what it found: other
    content under the id is logged once all the same, and nothing found is nothing
    to log."""
    caplog.set_level(logging.WARNING, "interlingua.engine")
    await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d1")
    await store.create_task(A, [created("t-5")], dialect="1.0", now=ts(0),
                            message_id="m-5", digest=b"d5", looked_up=True)
    assert warnings(caplog) == []
    await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d2", looked_up=True,
                            other_found=MessageRecord("t-1", b"d1"))
    assert warnings(caplog) == [WARNED]
    assert (await store.find_message(A, "m-1", b"d2")) == MessageRecord("t-2", b"d2")


async def test_a_message_id_with_other_content_is_another_message(store: Store) -> None:
    await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d1")
    await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(0),
                            message_id="m-1", digest=b"d2")
    with pytest.raises(MessageExists) as caught:  # the same content again
        await store.create_task(A, [created("t-3")], dialect="1.0", now=ts(0),
                                message_id="m-1", digest=b"d2")
    assert caught.value.record == MessageRecord("t-2", b"d2")
    assert await store.get_task(A, "t-3") is None
    assert await store.find_message(A, "m-1", b"d1") == MessageRecord("t-1", b"d1")
    assert await store.find_message(A, "m-1", b"d2") == MessageRecord("t-2", b"d2")
    # content never sent under the id: one of its messages, to compare with
    assert await store.find_message(A, "m-1", b"d9") in (MessageRecord("t-1", b"d1"),
                                                         MessageRecord("t-2", b"d2"))
    assert await store.task_for_message(A, "m-1") in ("t-1", "t-2")


@pytest.mark.parametrize("strict", [False, True])
async def test_follow_ups_of_one_id_with_other_content(store: Store, strict: bool) -> None:
    v = await store.create_task(A, [created("t-1"), status("t-1", S.INPUT_REQUIRED, ts(0))],
                                dialect="1.0", now=ts(0), message_id="m-1", digest=b"d1",
                                strict=strict)

    async def answer(message_id: str, digest: bytes, at: int) -> int:
        version = await store.append(A, "t-1", v, [said(user(message_id, digest.decode())),
                                                   status("t-1", S.WORKING, ts(at))],
                                     now=ts(at), message=(message_id, digest), strict=strict)
        return await store.append(A, "t-1", version, [status("t-1", S.INPUT_REQUIRED,
                                                             ts(at))], now=ts(at))

    v = await answer("m-2", b"d2", 1)
    if strict:  # the id is taken, whatever the content
        with pytest.raises(MessageExists) as caught:
            await answer("m-2", b"d3", 2)
        assert caught.value.record == MessageRecord("t-1", b"d2")
        with pytest.raises(MessageExists):
            await answer("m-1", b"d4", 2)  # the creating message's id too
        return
    v = await answer("m-2", b"d3", 2)
    assert await store.find_message(A, "m-2", b"d2") == MessageRecord("t-1", b"d2")
    assert await store.find_message(A, "m-2", b"d3") == MessageRecord("t-1", b"d3")
    with pytest.raises(MessageExists) as caught:
        await answer("m-2", b"d3", 3)
    assert caught.value.record == MessageRecord("t-1", b"d3")
    v = await answer("m-1", b"d4", 3)
    assert await store.find_message(A, "m-1", b"d4") == MessageRecord("t-1", b"d4")
    assert await store.find_message(A, "m-1", b"d1") == MessageRecord("t-1", b"d1")
    # a message recorded without a digest (an answer to auth-required) is keyed by
    # its id alone: a message of its own beside those with digests, and only once
    v = await answer("m-1", b"", 4)
    with pytest.raises(MessageExists):
        await answer("m-1", b"", 5)


async def test_concurrent_creates_of_one_message_make_one_task(store: Store) -> None:
    results = await asyncio.gather(*(
        store.create_task(A, [created(f"t-{n}")], dialect="1.0", now=ts(0),
                          message_id="m-1", digest=b"d")
        for n in range(8)), return_exceptions=True)
    made = [r for r in results if isinstance(r, int)]
    refused = [r for r in results if isinstance(r, MessageExists)]
    assert len(made) == 1 and len(refused) == 7, results
    winner = await store.task_for_message(A, "m-1")
    assert all(r.record.task_id == winner for r in refused)


async def test_a_follow_up_message_id_finds_its_task(store: Store) -> None:
    v = await store.create_task(A, [created("t-1"), status("t-1", S.INPUT_REQUIRED, ts(0))],
                                dialect="1.0", now=ts(0), message_id="m-1", digest=b"d1")
    v = await store.append(A, "t-1", v, [said(user("m-2", "t-1")),
                                         status("t-1", S.WORKING, ts(1))],
                           now=ts(1), message=("m-2", b"d2"))
    assert await store.find_message(A, "m-2") == MessageRecord("t-1", b"d2")
    assert await store.task_for_message(A, "m-2") == "t-1"
    # used again, by a second follow-up or a new task: refused, nothing written
    await store.append(A, "t-1", v, [status("t-1", S.INPUT_REQUIRED, ts(2))], now=ts(2))
    with pytest.raises(MessageExists):
        await store.append(A, "t-1", v + 1, [said(user("m-2", "t-1")),
                                             status("t-1", S.WORKING, ts(3))],
                           now=ts(3), message=("m-2", b"d2"))
    rec = await store.get_task(A, "t-1")
    assert rec is not None and rec.version == v + 1
    with pytest.raises(MessageExists):
        await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(0),
                                message_id="m-1", digest=b"d1")
    with pytest.raises(ConcurrentModification):
        await store.append(A, "t-1", v, [status("t-1", S.WORKING, ts(4))], now=ts(4))


async def test_a_purged_message_leaves_the_other_contents_of_its_id(store: Store) -> None:
    await store.create_task(A, [created("t-1"), status("t-1", S.COMPLETED, ts(0))],
                            dialect="1.0", now=ts(0), message_id="m-1", digest=b"d1")
    await store.create_task(A, [created("t-2"), status("t-2", S.WORKING, ts(0))],
                            dialect="1.0", now=ts(0), message_id="m-1", digest=b"d2")
    assert await store.purge_finished(ts(5)) == 1
    assert await store.find_message(A, "m-1", b"d1") == MessageRecord("t-2", b"d2")
    assert await store.find_message(A, "m-1", b"d2") == MessageRecord("t-2", b"d2")
    assert await store.task_for_message(A, "m-1") == "t-2"
    with pytest.raises(MessageExists):
        await store.create_task(A, [created("t-3")], dialect="1.0", now=ts(6),
                                message_id="m-1", digest=b"d2")
    # the purged content is a new message again
    await store.create_task(A, [created("t-4")], dialect="1.0", now=ts(6),
                            message_id="m-1", digest=b"d1")


@pytest.mark.parametrize("strict", [False, True], ids=["content", "strict"])
async def test_a_message_answered_with_a_message_keeps_its_key_and_answer(
        store: Store, strict: bool) -> None:
    """A message answered with a bare message (no task) is found with that answer,
    and its key is refused to a task's creation and to another reply, as a creating
    message's is; purged with the finished tasks."""
    answer = agent("r-1")
    await store.record_reply(A, "m-1", b"d1", answer, now=ts(1), strict=strict)
    found = await store.find_message(A, "m-1", b"d1")
    assert found == MessageRecord("", b"d1", answer)
    assert await store.find_message(Scope("acme", "bob"), "m-1", b"d1") is None
    # (a creation the send looked the id up for is written after it found nothing)
    with pytest.raises(MessageExists) as caught:
        await store.create_task(A, [created("t-1")], dialect="1.0", now=ts(2),
                                message_id="m-1", digest=b"d1", strict=strict)
    assert caught.value.record == found
    assert await store.get_task(A, "t-1") is None
    with pytest.raises(MessageExists):
        await store.record_reply(A, "m-1", b"d1", agent("r-2"), now=ts(2), strict=strict)
    # other content under the id: another message (content), else the same key
    if strict:
        with pytest.raises(MessageExists):
            await store.record_reply(A, "m-1", b"d2", agent("r-2"), now=ts(2), strict=True)
    else:
        await store.record_reply(A, "m-1", b"d2", agent("r-2"), now=ts(2))
        assert await store.find_message(A, "m-1", b"d1") == found
    # a message with a task first: a reply under its key is refused
    await store.create_task(A, [created("t-2")], dialect="1.0", now=ts(2),
                            message_id="m-2", digest=b"d1", strict=strict)
    with pytest.raises(MessageExists) as taken:
        await store.record_reply(A, "m-2", b"d1", answer, now=ts(2), strict=strict)
    assert taken.value.record.task_id == "t-2"
    await store.purge_finished(ts(5))
    assert await store.find_message(A, "m-1", b"d1") is None
