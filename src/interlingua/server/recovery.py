"""Keeping this process's lease, and ending the turns of processes that are gone.

At start-up and at every heartbeat, the leases of processes that stopped are
revoked and their unfinished tasks ended by the restart policy (docs/
architecture.md, "Ownership"). A store written before task owners were keyed
by scheme is re-keyed once, at start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from ..core.errors import ConcurrentModification, LifecycleError
from ..core.lifecycle import UNFINISHED_STATES
from ..core.model import Message, Role, TaskState
from ..stores.base import MigrationPort, StoreUnavailable, TaskPort
from .context import RequestInfo, TaskCanceled
from .leases import LeaseKeeper
from .run import OneOffRun, Run, Runs, Writer

__all__ = ["RESTART_POLICIES", "OrphanListener", "Recovery"]

log = logging.getLogger("interlingua.engine")

#: what happens to the tasks a stopped process left unfinished: ended failed, or run again
RESTART_POLICIES = ("fail", "rerun")

# the status texts of the tasks the recovery ends
_RESTARTED = "The server restarted while the task was running."
_GONE = "The server that was running the task stopped."
_STRANDED = ("The task store failed a write of the task's turn; the task was ended once the "
             "store took writes again.")

#: ``start_turn(run, message)``: run a turn of the executor
TurnStarter = Callable[[Run, Message], None]
#: ``listener(run)``: a task of a process gone was ended here (``run.task`` as it ended)
OrphanListener = Callable[[Run], None]


class Recovery:
    def __init__(self, store: TaskPort, migrations: MigrationPort, leases: LeaseKeeper,
                 runs: Runs, writer: Writer, start_turn: TurnStarter, *,
                 restart_policy: str) -> None:
        self.store = store
        self.migrations = migrations
        self.leases = leases
        self.runs = runs
        self.writer = writer
        self.start_turn = start_turn
        self.restart_policy = restart_policy
        #: told of each task this process ends for a process gone (bindings whose
        #: callers wait elsewhere than on this process's streams, such as the mesh)
        self.on_ended: list[OrphanListener] = []
        #: awaited at each heartbeat (the engine's look in the store for writes of
        #: other processes that no bus tells of)
        self.on_heartbeat: list[Callable[[], Awaitable[None]]] = []

    async def key_owners_by_scheme(
            self, legacy_owner_of: Callable[[], Callable[[str], str]] | None) -> None:
        """Re-key the owners of a store written before owners were namespaced by
        scheme, once (``legacy_owner_of`` says with what; it raises when unsure)."""
        if legacy_owner_of is None or await self.migrations.owners_namespaced():
            return
        n = await self.migrations.namespace_owners(legacy_owner_of())
        log.warning("task owners keyed by scheme: %d task(s) re-keyed", n)

    async def keep_lease(self) -> None:
        """Heartbeats on this process's lease; ends the tasks of processes gone."""
        while True:
            await asyncio.sleep(self.leases.interval)
            try:
                if not await self.leases.renew():
                    await self.lease_lost()
                await self.end_orphans(restarted=False)
                if self.runs.stranded:
                    await self.end_stranded()
                for listener in self.on_heartbeat:
                    await listener()
            except StoreUnavailable as exc:  # out of reach: said in one line, tried again
                log.warning("lease heartbeat failed: %s", exc)
            except Exception:  # a store that is briefly unavailable: try again next time
                log.exception("lease heartbeat failed")

    async def retake_lease(self) -> None:
        """A request's write was refused for this process's lease (``LeaseLost``: it
        was paused, and another process revoked it): the new lease taken now, as the
        next heartbeat would take it, so that the request is written under it."""
        if not await self.leases.renew():
            await self.lease_lost()

    async def lease_lost(self) -> None:
        """Another process revoked our lease and ends our turns: stop them here."""
        epoch = self.leases.current_epoch()
        for run in self.runs.all():
            if run.lease is None or run.lease == epoch:
                # no turn of the lease lost: a request's write in flight, which is
                # written under the new lease, or a turn begun under it
                continue
            seen = run.version
            # the task as the store has it, before the turn ends: its callers here
            # are answered with that (the other process ended it), not this turn's
            await self.writer.taken_away(run)
            run.cancel()
            if run.persisted:
                # the readers here learn how the task ended from the store
                with contextlib.suppress(Exception):
                    events = await self.store.read_events(run.scope, run.task.id, seen)
                    if events:
                        await self.writer.bus.publish(run.key, events)

    async def end_stranded(self) -> None:
        """End failed the tasks whose turn here ended when the store failed its
        writes, which left them working: once the store takes writes again, unless
        their task moved on meanwhile (written by another process, or run again)."""
        stranded = self.runs.stranded
        for key, left in list(stranded.items()):
            rec = None if key in self.runs.by_key else await self.store.get_task(
                left.scope, left.task.id)
            if rec is None or rec.task.status.state not in UNFINISHED_STATES or (
                    rec.version != left.version and not await self._last_written_here(left)):
                del stranded[key]
                continue
            run = OneOffRun(self.writer, left.scope, rec.task, version=rec.version,
                            persisted=True, dialect=rec.dialect, request=left.request)
            try:
                ended = await self._end_failed(run, _STRANDED)
            except StoreUnavailable:
                continue  # still unavailable: at the next heartbeat
            if ended:
                log.warning("task %s ended failed: the store had failed its turn's writes",
                            left.task.id)
            del stranded[key]

    async def _last_written_here(self, left: Run) -> bool:
        """Whether the task of ``left`` was last written under this process's lease: its
        log moved past ``left.version`` by a write of ours whose commit was not
        answered (the connection lost with it), not by another process's."""
        epoch = self.leases.current_epoch()
        return epoch is not None and any(
            item.lease == epoch and item.task_id == left.task.id and item.scope == left.scope
            for item in await self.store.unfinished_tasks())

    async def end_orphans(self, *, restarted: bool) -> None:
        """End, by the restart policy, the unfinished tasks no live process owns."""
        live = await self.leases.revoke_dead()
        newest = self.leases.newest
        for item in await self.store.unfinished_tasks():
            # an epoch beyond the newest seen is a process that started since: live
            if item.lease is not None and (item.lease in live or item.lease > newest):
                continue
            if self.runs.get(item.scope, item.task_id) is not None:
                continue
            rec = await self.store.get_task(item.scope, item.task_id)
            if rec is None or rec.task.status.state not in UNFINISHED_STATES:
                continue
            request = RequestInfo(principal=item.scope.owner.rpartition(":")[2],
                                  owner=item.scope.owner, tenant=item.scope.tenant)
            # (a turn run again rides out the store's outages; an end written is one write)
            kind = Run if self.restart_policy == "rerun" else OneOffRun
            run = kind(self.writer, item.scope, rec.task, version=rec.version, persisted=True,
                       dialect=rec.dialect, request=request)
            if self.restart_policy == "rerun":
                message = next((m for m in reversed(rec.task.history)
                                if m.role is Role.USER), None)
                if message is not None:
                    self.runs.track(run)
                    self.start_turn(run, message)
                    continue
            if not await self._end_failed(run, _RESTARTED if restarted else _GONE):
                log.info("task %s changed while it was being recovered", item.task_id)
                continue
            log.warning("task %s ended failed: the process running it is gone",
                        item.task_id)
            for listener in self.on_ended:
                try:
                    listener(run)
                except Exception:  # a listener's fault is not the recovery's
                    log.exception("a listener of ended orphans failed")

    async def _end_failed(self, run: Run, text: str) -> bool:
        """Write ``run``'s task ended failed with ``text``; False when the task moved on
        meanwhile (another write, a cancel), which is left as it is."""
        try:
            await self.writer.emit(run, [self.writer.status(run.task, TaskState.FAILED, text)])
        except (ConcurrentModification, LifecycleError, TaskCanceled):
            return False
        return True
