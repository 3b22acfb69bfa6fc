"""Processes on one store need not share their lease timeout: each lease is judged by
its holder's own, so a process that beats rarely (a long timeout) is not taken for
dead by one that counts a short silence as death, and its tasks are not ended."""

from __future__ import annotations

from interlingua.server.leases import LeaseKeeper
from interlingua.stores import MemoryStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_each_lease_is_judged_by_its_holders_own_timeout() -> None:
    store = MemoryStore("memory://")
    await store.open()
    clock = Clock()
    short = LeaseKeeper(store, interval=0.375, timeout=1.5, clock=clock)
    long = LeaseKeeper(store, interval=2, timeout=10, clock=clock)
    await short.acquire()
    await long.acquire()
    assert long.lease is not None and short.lease is not None
    # the long one beats every 2 s: silent longer than the short one's timeout
    clock.now += 2
    assert long.lease.epoch in await short.revoke_dead()
    assert await long.renew()
    # silent past its own timeout, it is gone
    clock.now += 10.5
    assert await short.renew()
    assert long.lease.epoch not in await short.revoke_dead()
    # and the long one takes the short one for dead after 1.5 s of its silence
    await long.acquire()
    clock.now += 2
    assert short.lease.epoch not in await long.revoke_dead()


async def test_a_lease_of_an_older_version_is_judged_by_the_judges_timeout() -> None:
    store = MemoryStore("memory://")
    await store.open()
    clock = Clock()
    judge = LeaseKeeper(store, interval=2, timeout=10, clock=clock)
    await judge.acquire()
    old = await store.acquire_lease("elsewhere/boot:7", clock.now)  # (no timeout)
    clock.now += 9
    assert await judge.renew()
    assert old.epoch in await judge.revoke_dead()
    clock.now += 2
    assert await judge.renew()
    assert old.epoch not in await judge.revoke_dead()
