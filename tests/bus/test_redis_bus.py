"""The Redis bus: the local bus's promises within a process, and news for
readers in other processes (here: other bus objects), through real Redis."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from interlingua.bus import LocalBus, open_bus
from interlingua.bus.base import Bus, TaskVersion, task_key
from interlingua.bus.redis import RedisBus, parse_redis_url
from interlingua.core.model import StatusUpdate, TaskState, TaskStatus
from interlingua.server.peers import Peers
from interlingua.server.run import Runs
from interlingua.stores import MemoryStore, Scope, Store
from interlingua.stores.base import StoredEvent

from ..services import PrivateRedis
from ..stores.builders import created, status, ts


def versions_in(store: Store) -> TaskVersion:
    """What the engine hands a shared bus: where a task's log has got to in ``store``."""
    async def version_of(scope: Scope, task_id: str) -> int | None:
        rec = await store.get_task(scope, task_id, history_length=0, include_artifacts=False)
        return None if rec is None else rec.version
    return version_of


def event(seq: int) -> StoredEvent:
    return StoredEvent(seq, StatusUpdate(task_id="t", context_id="c",
                                         status=TaskStatus(state=TaskState.WORKING)))


@pytest.fixture(params=["local", "redis"])
async def bus(request: pytest.FixtureRequest) -> AsyncIterator[Bus]:
    b: Bus = LocalBus() if request.param == "local" else \
        RedisBus(request.getfixturevalue("redis_url"))
    if isinstance(b, RedisBus):
        await b.open()
    try:
        yield b
    finally:
        await b.close()


async def pair(url: str) -> tuple[RedisBus, RedisBus]:
    one, two = RedisBus(url), RedisBus(url)
    await one.open()
    await two.open()
    return one, two



async def wait(sub: Any, after: int, timeout: float | None = None) -> int:
    """The latest seq the subscription knows, once the bus wakes it: on news, at a
    tick of its clock (every half ``timeout``), or when the bus closes."""
    woken = sub.wake_on_news(after, timeout)
    if woken is not None:
        await woken
    return int(sub.latest)

async def working_task() -> tuple[MemoryStore, Scope, str]:
    """An open memory store holding task t-1, working (its log at seq 2); its scope, key."""
    store = MemoryStore("memory://")
    await store.open()
    scope = Scope("", "")
    await store.create_task(scope, [created("t-1"), status("t-1", TaskState.WORKING, ts(0))],
                            dialect="1.0", now=ts(0))
    return store, scope, task_key(scope, "t-1")


# ---------------------------------------------------- what every bus promises


async def test_news_ends_a_wait_and_the_publisher_hands_its_events_over(bus: Bus) -> None:
    sub = bus.subscribe("k")
    waiting = asyncio.create_task(wait(sub, 0, timeout=30))
    await asyncio.sleep(0.01)
    await bus.publish("k", [event(1), event(2)])
    assert await asyncio.wait_for(waiting, 5) == 2
    assert [e.seq for e in sub.take(0) or []] == [1, 2]
    sub.close()


async def test_closing_the_bus_ends_waits(bus: Bus) -> None:
    # one wait a subscription: each wake_on_news replaces the one before
    sub, other = bus.subscribe("k"), bus.subscribe("k")
    waits = [asyncio.create_task(wait(sub, 0, timeout=30)), asyncio.create_task(wait(other, 0))]
    await asyncio.sleep(0.01)
    await bus.close()
    assert await asyncio.wait_for(asyncio.gather(*waits), 2) == [0, 0]


async def test_a_wait_with_a_timeout_returns_unchanged(bus: Bus) -> None:
    sub = bus.subscribe("k", seen=3)
    assert await wait(sub, 3, timeout=0.1) == 3
    assert sub.wake_on_news(2) is None  # known to be there already
    sub.close()


# ------------------------------------------------------------ across processes


async def test_news_reaches_readers_of_another_process(redis_url: str) -> None:
    one, two = await pair(redis_url)
    try:
        sub = two.subscribe("k")
        waiting = asyncio.create_task(wait(sub, 0, timeout=30))
        await asyncio.sleep(0.05)
        await one.publish("k", [event(1), event(2), event(3)])
        assert await asyncio.wait_for(waiting, 5) == 3
        # a small write's events come with its news: no need to read the store there
        assert [e.seq for e in sub.take(0) or []] == [1, 2, 3]
        # a reader of the other process that was not listening hears nothing
        assert two._local.latest("other") is None
        sub.close()
    finally:
        await one.close()
        await two.close()


async def test_a_write_that_created_its_task_is_news_for_this_process_only(
        redis_url: str) -> None:
    # Nobody elsewhere can wait for a task that did not exist: such a write
    # costs the other replicas nothing; the task's later writes are news as before.
    one, two = await pair(redis_url)
    try:
        assert one._client is not None
        stream = one._stream
        before = await one._client.xlen(stream)
        here = one.subscribe("k")
        sub = two.subscribe("k")
        await one.publish("k", [event(1), event(2)], created=True)
        assert here.latest == 2  # this process's readers have it at once
        await asyncio.sleep(0.2)  # news the sender would send went out by now
        await one.publish("k", [event(3)])
        while await asyncio.wait_for(wait(sub, sub.latest, timeout=30), 5) < 3:
            pass
        # one entry: the write after the creation; none for the creation
        assert await one._client.xlen(stream) - before == 1
        here.close()
        sub.close()
    finally:
        await one.close()
        await two.close()


async def test_news_a_failing_client_could_not_send_is_kept_and_sent_later(
        redis_url: str) -> None:
    # A client closed under a send (at shutdown) raises errors other than
    # RedisError; the news is kept for the next send, and publish does not fail.
    one, two = await pair(redis_url)
    try:
        sub = two.subscribe("k")
        waiting = asyncio.create_task(wait(sub, 0, timeout=30))
        await asyncio.sleep(0.05)
        working = one._client

        class Broken:
            def pipeline(self, **_: Any) -> Any:
                raise AttributeError("'NoneType' object has no attribute 'send_packed_command'")

        one._client = Broken()  # type: ignore[assignment]
        one._closed = True  # publish sends at once, as during shutdown
        await one.publish("k", [event(1)])
        assert not waiting.done()
        one._client, one._closed = working, False
        await one.publish("k", [event(2)])
        assert await asyncio.wait_for(waiting, 5) == 2
        sub.close()
    finally:
        await one.close()
        await two.close()


async def test_a_large_write_or_one_after_a_gap_is_read_from_the_store(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = await pair(redis_url)
    try:
        sub = two.subscribe("k")
        monkeypatch.setattr("interlingua.bus.redis.CARRY_BYTES", 10)
        waiting = asyncio.create_task(wait(sub, 0, timeout=30))
        await asyncio.sleep(0.05)
        await one.publish("k", [event(1), event(2)])
        assert await asyncio.wait_for(waiting, 5) == 2
        assert sub.take(0) is None  # only the news came: read the store
        monkeypatch.undo()
        # carried events that do not follow what is known here: news only
        assert two._local.deliver("k", [event(4)]) and sub.latest == 4
        assert sub.take(2) is None
        # ones that do are handed over
        waiting = asyncio.create_task(wait(sub, 4, timeout=30))
        await asyncio.sleep(0.05)
        await one.publish("k", [event(5)])
        assert await asyncio.wait_for(waiting, 5) == 5
        assert [e.seq for e in sub.take(4) or []] == [5]
        sub.close()
    finally:
        await one.close()
        await two.close()


async def test_news_the_publisher_already_has_is_not_announced_again(redis_url: str) -> None:
    one, two = await pair(redis_url)
    try:
        heard: dict[str, list[tuple[str, int]]] = {"one": [], "two": []}
        one.on_remote = lambda key, seq: heard["one"].append((key, seq))
        two.on_remote = lambda key, seq: heard["two"].append((key, seq))
        mine = one.subscribe("k")
        await one.publish("k", [event(1)])
        await two.publish("j", [event(7)])
        await asyncio.sleep(0.3)
        # each hears the other's news, never its own
        assert heard == {"one": [("j", 7)], "two": [("k", 1)]}
        assert [e.seq for e in mine.take(0) or []] == [1]
        mine.close()
    finally:
        await one.close()
        await two.close()


async def test_a_reader_far_behind_is_sent_to_the_store() -> None:
    bus = LocalBus()
    sub = bus.subscribe("k")
    await bus.publish("k", [event(1)])
    # news of more than the events held: take() must not claim it has them all
    assert bus.announce("k", 5)
    assert sub.latest == 5 and sub.take(1) is None
    assert not bus.announce("nobody-listens", 3)
    await bus.close()


def test_urls() -> None:
    assert parse_redis_url("redis://h:1/2?prefix=a2a&socket_timeout=3") == \
        ("redis://h:1/2?socket_timeout=3", "a2a")
    assert isinstance(open_bus("redis://127.0.0.1:6379/0"), RedisBus)
    with pytest.raises(ValueError, match="local:// or redis://"):
        open_bus("kafka://x")
    with pytest.raises(ValueError, match="prefix"):
        parse_redis_url("redis://h/0?prefix=")
    for port in ("99999", "x", "\u00b2"):
        with pytest.raises(ValueError, match="port is not a number from 0 to 65535") as caught:
            parse_redis_url(f"redis://:s3cret@h:{port}/0")
        assert "s3cret" not in str(caught.value)


# -------------------------------------------------------- Redis goes away


async def test_news_sent_while_redis_is_down_arrives_when_it_is_back() -> None:
    server = PrivateRedis().start()
    one, two = await pair(server.url)
    try:
        sub = two.subscribe("k")
        server.stop()
        await one.publish("k", [event(1), event(2)])  # a write never waits for Redis
        await asyncio.sleep(0.3)
        assert sub.latest == 0
        server.start()
        assert await asyncio.wait_for(wait(sub, 0, timeout=30), 10) == 2
        sub.close()
    finally:
        await one.close()
        await two.close()
        server.stop()


async def test_news_lost_with_a_restarted_redis_is_found_in_the_store() -> None:
    server = PrivateRedis().start()
    store, scope, key = await working_task()
    two = RedisBus(server.url)
    two.attach_versions(versions_in(store))
    await two.open()
    try:
        sub = two.subscribe(key, seen=2)
        server.stop()
        # written by a process whose news died with Redis
        await store.append(scope, "t-1", 2, [status("t-1", TaskState.COMPLETED, ts(1))],
                           now=ts(1))
        server.start()
        assert await asyncio.wait_for(wait(sub, 2, timeout=30), 10) == 3
        sub.close()
    finally:
        await two.close()
        server.stop()
        await store.close()


async def test_opening_a_bus_whose_redis_is_away_says_so() -> None:
    bus = RedisBus("redis://127.0.0.1:1/0")
    with pytest.raises(ConnectionError, match=r"cannot reach Redis at 127\.0\.0\.1:1"):
        await bus.open()


# ------------------------------------------- news only where someone reads


async def test_a_turns_writes_are_news_only_for_processes_that_read_its_task(
        redis_url: str) -> None:
    # The process running a task's turn sends its writes' news only when another
    # process has readers of that task: a replica's cost per request stays flat
    # however many replicas there are.
    one, two = await pair(redis_url)
    try:
        one.runs_here = lambda key: True
        heard: list[tuple[str, int]] = []
        two.on_remote = lambda key, seq: heard.append((key, seq))
        assert one._client is not None
        before = await one._client.xlen(one._stream)
        await one.publish("unread", [event(1), event(2)])
        await asyncio.sleep(0.3)
        assert heard == []
        assert await one._client.xlen(one._stream) == before
        # a reader there: recorded in Redis, then the news reaches it
        sub = two.subscribe("read")
        while not await one._client.sismember(f"{two.prefix}:readers:read", two._origin):
            await asyncio.sleep(0.01)
        await one.publish("read", [event(1)])
        assert await asyncio.wait_for(wait(sub, 0, timeout=30), 5) == 1
        assert heard == [("read", 1)]
        # readers of the task in its own process only: no news again
        sub.close()
        mine = one.subscribe("read")
        while await one._client.sismember(f"{two.prefix}:readers:read", two._origin):
            await asyncio.sleep(0.01)
        await one.publish("read", [event(2)])
        await asyncio.sleep(0.3)
        assert heard == [("read", 1)]
        mine.close()
    finally:
        await one.close()
        await two.close()


async def test_other_writes_are_news_for_every_process(redis_url: str) -> None:
    # a cancel served by a replica that does not run the turn must reach the one
    # that does, which has no reader of the task
    one, two = await pair(redis_url)
    try:
        one.runs_here = lambda key: False
        heard: list[tuple[str, int]] = []
        two.on_remote = lambda key, seq: heard.append((key, seq))
        await one.publish("canceled-here", [event(3)])
        for _ in range(100):
            if heard:
                break
            await asyncio.sleep(0.02)
        assert heard == [("canceled-here", 3)]
    finally:
        await one.close()
        await two.close()


@pytest.mark.parametrize("handed_by", ["test", "engine"])
async def test_a_write_before_a_reader_was_recorded_is_found_in_the_store(
        redis_url: str, handed_by: str) -> None:
    # A reader reads the store, then waits; a write committed before Redis has
    # recorded it as a reader sends no news there. Once recorded, the process
    # looks the task up and wakes it: through the look-up the engine hands the
    # bus when it joins (``Peers``), or one made here.
    store, scope, key = await working_task()
    one, two = await pair(redis_url)
    if handed_by == "engine":
        await Peers(store, two, Runs(), writer=None).join()  # type: ignore[arg-type]
    else:
        two.attach_versions(versions_in(store))
    try:
        one.runs_here = lambda key: True
        # the write, and its news, before anyone elsewhere reads the task
        await _complete(store, scope, key, one)
        await asyncio.sleep(0.2)
        sub = two.subscribe(key, seen=2)  # what its reader read before that write
        assert await asyncio.wait_for(wait(sub, 2, timeout=30), 5) == 3
        sub.close()
    finally:
        await one.close()
        await two.close()
        await store.close()


async def test_a_closed_bus_takes_back_its_records_of_readers(redis_url: str) -> None:
    one = RedisBus(redis_url)
    await one.open()
    sub = one.subscribe("k")
    assert one._client is not None
    client = one._client
    name = f"{one.prefix}:readers:k"
    while not await client.sismember(name, one._origin):
        await asyncio.sleep(0.01)
    assert 0 < await client.ttl(name) <= 60  # a killed process's record expires
    sub.close()
    await one.close()
    probe = RedisBus(redis_url)
    await probe.open()
    try:
        assert probe._client is not None
        assert not await probe._client.sismember(name, one._origin)
    finally:
        await probe.close()


async def test_the_records_of_readers_are_renewed_before_they_expire(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("interlingua.bus.redis.FOLLOW_TTL", 1)
    monkeypatch.setattr("interlingua.bus.redis._FOLLOW_RENEW", 0.3)
    one = RedisBus(redis_url)
    await one.open()
    try:
        sub = one.subscribe("k")
        assert one._client is not None
        await asyncio.sleep(1.6)  # past the TTL of the first record
        assert await one._client.sismember(f"{one.prefix}:readers:k", one._origin)
        sub.close()
    finally:
        await one.close()


async def test_a_record_of_readers_lost_with_the_connection_up_is_made_good_at_renewal(
        redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Redis emptied (FLUSHDB, an eviction) while the connection stays up: writes made
    # meanwhile send no news to a reader whose record is gone, and no reconnection
    # resynchronises it. The renewal that finds the record gone looks the task up in
    # the store, as for a new record. (The reader waited for ever.)
    monkeypatch.setattr("interlingua.bus.redis._FOLLOW_RENEW", 0.3)
    store, scope, key = await working_task()
    one, two = await pair(redis_url)
    two.attach_versions(versions_in(store))
    try:
        one.runs_here = lambda key: True
        sub = two.subscribe(key, seen=2)
        assert one._client is not None
        name = f"{two.prefix}:readers:{key}"
        while not await one._client.sismember(name, two._origin):
            await asyncio.sleep(0.01)
        await one._client.delete(name)  # lost, the connection up
        await _complete(store, scope, key, one)  # no reader recorded: no news
        assert await asyncio.wait_for(wait(sub, 2, timeout=30), 5) == 3
        sub.close()
    finally:
        await one.close()
        await two.close()
        await store.close()


async def _complete(store: Any, scope: Scope, key: str, bus: RedisBus) -> None:
    """Task t-1 completed in ``store`` (its third event), the news published on ``bus``."""
    done = status("t-1", TaskState.COMPLETED, ts(1))
    assert await store.append(scope, "t-1", 2, [done], now=ts(1)) == 3
    await bus.publish(key, [StoredEvent(3, done)])
