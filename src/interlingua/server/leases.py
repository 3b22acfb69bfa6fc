"""Task ownership: each serving process holds a lease in the store.

A process takes a lease when it starts and renews it every ``interval``
seconds. Every write it makes names the lease's epoch, so an unfinished task
records which process runs its turn. A lease whose holder missed its
heartbeats for ``timeout`` seconds (the holder's own, recorded with its lease:
processes of one store need not share the setting), or whose holder is a
process of this machine that no longer exists, is revoked by any live process,
which then ends the tasks it owned by the restart policy. Writes under a revoked lease are
refused by the store (``LeaseLost``): a process that was only paused finds its
turns taken away instead of overwriting what others wrote meanwhile.

Two processes on one store therefore never end each other's running tasks, and
a crashed process's tasks end within ``timeout`` even when it never restarts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from ..hooks import Hooks, notify
from ..stores.base import Lease, LeasePort
from ..stores.holders import holder_name, is_dead_here

__all__ = ["LeaseKeeper", "holder_name", "is_dead_here"]

log = logging.getLogger("interlingua.leases")


class LeaseKeeper:
    """This process's lease on a store, and its view of the others'."""

    def __init__(self, store: LeasePort, *, interval: float, timeout: float,
                 clock: Callable[[], float] = time.time, hooks: Hooks | None = None) -> None:
        if not 0 < interval < timeout:
            raise ValueError("the lease interval must be positive and below its timeout")
        self.store = store
        self.interval = interval
        self.timeout = timeout
        self.clock = clock
        #: told of each heartbeat's result: "ok", "revoked" or "failed"
        self._renewal_hooks = (hooks if hooks is not None else Hooks()).renewals
        self.lease: Lease | None = None
        #: other processes held live leases at the last look
        self.shared = False
        #: the largest epoch at the last look: a larger one is a process started since
        self.newest = 0
        #: when a heartbeat of ours last failed (the store was out of reach)
        self.cut_off_at: float | None = None
        #: when the store last took our lease (taken or renewed), on the monotonic
        #: clock: what ``/healthz`` reads, without a round trip of its own
        self.renewed_at: float | None = None
        #: one renewal at a time: a request whose write found the lease revoked renews
        #: it too (``Recovery.retake_lease``), and two renewals that each found it
        #: revoked would each take a new lease
        self._renewing = asyncio.Lock()

    @property
    def epoch(self) -> int | None:
        return None if self.lease is None else self.lease.epoch

    def current_epoch(self) -> int | None:
        """``epoch``, as a method: what the writer is handed (a bound method is
        one call per write, a lambda reading the property two)."""
        return None if self.lease is None else self.lease.epoch

    @property
    def held(self) -> bool:
        """Whether this process holds its lease as far as it knows: it has one, and
        the store took it within the timeout (past it, the others may revoke it)."""
        return self.lease is not None and self.silent_for() is None

    def silent_for(self) -> float | None:
        """Seconds since the store last took our lease, when that is longer than the
        timeout (the store is out of reach, or refuses the lease's writes); else None."""
        if self.renewed_at is None:
            return None
        silent = time.monotonic() - self.renewed_at
        return silent if silent > self.timeout else None

    async def acquire(self) -> Lease:
        self.lease = await self.store.acquire_lease(holder_name(), self.clock(), self.timeout)
        self.renewed_at = time.monotonic()
        return self.lease

    async def renew(self) -> bool:
        """A heartbeat; False when the lease was revoked (a new one is then held)."""
        async with self._renewing:
            if not self._renewal_hooks:
                return await self._renew()
            try:
                renewed = await self._renew()
            except BaseException:
                notify(self._renewal_hooks, "failed")
                raise
            notify(self._renewal_hooks, "ok" if renewed else "revoked")
            return renewed

    async def _renew(self) -> bool:
        if self.lease is None:
            await self.acquire()
            return True
        try:
            renewed = await self.store.renew_lease(self.lease.epoch, self.clock())
        except ConnectionError:  # the store is out of reach (not merely busy)
            self.cut_off_at = self.clock()
            raise
        if renewed:
            self.renewed_at = time.monotonic()
            return True
        lost = self.lease
        await self.acquire()
        log.warning("lease %d was revoked (this process missed its heartbeats); "
                    "now holding lease %d", lost.epoch, self.epoch)
        return False

    async def revoke_dead(self) -> set[int]:
        """Revoke the leases whose holders are gone; returns the live epochs."""
        now = self.clock()
        live: set[int] = set()
        others = False
        leases = await self.store.live_leases()
        for lease in leases:
            if lease.epoch == self.epoch:
                live.add(lease.epoch)
                continue
            # judged by its holder's own timeout (one of an older version has none)
            timeout = self.timeout if lease.timeout is None else lease.timeout
            if is_dead_here(lease.holder):
                revoked = await self.store.revoke_lease(lease.epoch)
            elif lease.heartbeat < now - timeout and not self._lately_cut_off(now, timeout):
                # only if it did not beat meanwhile
                revoked = await self.store.revoke_lease(
                    lease.epoch, unless_after=now - timeout)
            else:
                revoked = False
            if revoked:
                log.warning("revoked the lease of %s (epoch %d): it stopped", lease.holder,
                            lease.epoch)
            else:
                live.add(lease.epoch)
                others = True
        self.shared = others
        self.newest = max([self.epoch or 0, *(lease.epoch for lease in leases)])
        return live

    def _lately_cut_off(self, now: float, timeout: float) -> bool:
        # After an outage of the store, the others' heartbeats are as old as the
        # outage: they could not beat either. They get a full timeout (their own)
        # to beat again before their silence counts.
        return self.cut_off_at is not None and now - self.cut_off_at < timeout

    async def release(self) -> None:
        lease, self.lease = self.lease, None
        if lease is not None:
            await self.store.release_lease(lease.epoch)
