"""After the store was out of reach, a process does not take the others' silence
(which the outage caused) for their death until they had a timeout to beat again."""

from __future__ import annotations

import pytest

from interlingua.server.leases import LeaseKeeper
from interlingua.stores import MemoryStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_silence_during_an_outage_of_the_store_is_not_death(
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore("memory://")
    await store.open()
    clock = Clock()
    mine = LeaseKeeper(store, interval=2, timeout=10, clock=clock)
    other = LeaseKeeper(store, interval=2, timeout=10, clock=clock)
    await mine.acquire()
    await other.acquire()
    assert other.lease is not None
    # the store goes away for 15 s: nobody can beat
    clock.now += 15

    async def unreachable(epoch: int, now: float) -> bool:
        raise ConnectionError("the store is away")

    with monkeypatch.context() as m:
        m.setattr(store, "renew_lease", unreachable)
        with pytest.raises(ConnectionError):
            await mine.renew()
    clock.now += 1  # back: this process beats first
    assert await mine.renew()
    assert other.lease.epoch in await mine.revoke_dead()
    # the other one gets its timeout to beat again; silent after it, it is revoked
    clock.now += 10
    assert await mine.renew()
    assert other.lease.epoch not in await mine.revoke_dead()
