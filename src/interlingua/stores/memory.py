"""The in-process store (``memory://``): tests, demos, single short-lived processes.

Each task keeps its log and a live projection that every append folds into,
so reads cost a copy of the lists, not a replay. A finished task, which can no
longer change, is packed into bytes instead (see ``_Entry.pack``). Readers get
copies: a task a caller holds never changes under it. Nothing awaits inside a
method, so each call is atomic with respect to the event loop.

The push outbox is a queue per (task, config) of delivery ids in sequence
order; its head is the only delivery of that queue that may be claimed.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from ..core.calls import ListTasks, ListTasksResult
from ..core.errors import ConcurrentModification, task_not_found
from ..core.generation import last_of
from ..core.lifecycle import TERMINAL_STATES, UNFINISHED_STATES, check_from
from ..core.model import (
    Event,
    Message,
    PushConfig,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
)
from . import _packed_log, _paging, _projection
from .base import (
    Lease,
    LeaseLost,
    MessageExists,
    MessageRecord,
    PushConfigRecord,
    Scope,
    StoredEvent,
    TaskExists,
    TaskRecord,
    TooManyPushConfigs,
    UnfinishedTask,
    other_content,
)
from .memory_outbox import MemoryOutbox

__all__ = ["MemoryStore"]


# a finished task's projection, kept once read (see _Entry.view); JSON, not
# MessagePack, because metadata may hold integers beyond 64 bits
_pack_task = msgspec.json.Encoder().encode
_unpack_task = msgspec.json.Decoder(Task).decode


class _Open(msgspec.Struct, gc=False):
    """What only a task that can still change needs: its log as objects and the
    projection folded from it (on demand: a write costs its own events, not a
    fold, and each event is folded at most once)."""

    #: the log: event seq n at index n - 1 (wrapped as StoredEvent only when read)
    events: list[Event]
    live: Task | None = None
    folded: int = 0


class _Entry(msgspec.Struct, gc=False):
    # gc=False: a store holds one per task, and nothing an entry refers to
    # refers back to it, so the cycle collector has no reason to walk them.
    # A store holds one per task for as long as it lives: every field is a
    # pointer's worth, and what most tasks never have is None or shared.
    task_id: str
    context_id: str
    #: the state of its latest status (the status itself is in the log)
    state: TaskState
    version: int
    dialect: str
    #: the creating message's key in ``MemoryStore._by_message`` (see _message_key)
    message_id: str | None
    #: the listing key, see _projection.sort_stamp
    stamp: str
    created_at: str
    updated_at: str
    #: None once finished: the log is then packed_log
    open: _Open | None
    packed_log: bytes = b""
    #: the finished task, packed at its first read (see view)
    packed_task: bytes = b""
    #: the digest of the creating message (see server/idempotency.py)
    digest: bytes = b""
    #: the epoch of the lease it was last written under
    lease: int | None = None
    #: push configs by id, in registration order
    push: dict[str, PushConfigRecord] | None = None
    #: messages that continued the task (by key, see _message_key), with their digests
    followups: dict[str, bytes] | None = None

    @property
    def task(self) -> Task:
        """The live projection, brought up to date: never handed out as is."""
        assert self.open is not None, "a packed task has no live projection"
        events, live = self.open.events, self.open.live
        if live is None:
            first = events[0]
            assert isinstance(first, TaskCreated)
            live = self.open.live = _projection.start(first.task)
            self.open.folded = 1
        if self.open.folded < len(events):
            _projection.advance(live, events[self.open.folded:])
            self.open.folded = len(events)
        return live

    def pack(self, buffer: bytearray) -> None:
        """Keep a finished task as bytes instead of its objects.

        A finished task never changes again (the lifecycle refuses every event
        after a terminal state). Held as objects, each would keep several lists
        in the cycle collector's view, and a store of many tasks then spends a
        fifth of a busy server's CPU in full collections (with pauses of
        hundreds of milliseconds); bytes are not tracked, and take a fraction
        of the room (see ``_packed_log``). Only the log is packed here; the
        task is packed at its first read (see ``view``), so a write does not
        pay for a fold nobody may need.
        """
        assert self.open is not None
        self.packed_log = _packed_log.pack(self.open.events, self.task_id, self.context_id,
                                           buffer)
        self.open = None

    def events(self) -> list[Event]:
        """The log's events, as objects the caller owns (a packed task only)."""
        return _packed_log.unpack(self.packed_log, self.task_id, self.context_id)

    def log(self, start: int, stop: int | None) -> list[StoredEvent]:
        """The events with seqs from ``start + 1`` up to ``stop`` (all after start: None)."""
        events = self.open.events if self.open is not None else self.events()
        events = events[start:stop]
        return list(map(StoredEvent, range(start + 1, start + 1 + len(events)), events))

    def view(self, history_length: int | None, include_artifacts: bool) -> Task:
        """The task for a reader, who may keep it: later writes do not change it."""
        if self.open is not None:
            return _projection.view(self.task, history_length, include_artifacts)
        if self.packed_task:
            task = _unpack_task(self.packed_task)  # the reader's own copy
        else:
            # Folded once: a long log (a streamed task's chunks) costs several
            # times more to fold than its task costs to decode, and it never changes.
            task = _projection.fold(self.events())
            self.packed_task = _pack_task(task)
        task.history = _projection.trim_history(task.history, history_length)
        if not include_artifacts:
            task.artifacts = []
        return task


class MemoryStore(MemoryOutbox):
    """Tasks and logs in dictionaries keyed by scope; gone when the process ends."""

    def __init__(self, url: str = "memory://") -> None:
        super().__init__()
        self.url = url
        self._tasks: dict[Scope, dict[str, _Entry]] = {}
        # Keyed by scope, then by plain strings: a dict holding only strings and
        # untracked entries stays out of the cycle collector, which would
        # otherwise walk every stored task on each full collection (tuple keys
        # are tracked, and so is a dict holding them).
        self._by_message: dict[Scope, dict[str, str]] = {}
        # Messages answered with a bare message (record_reply), by scope and key
        # (and by the id alone, as _remember keeps it), with when they were: few,
        # since most agents answer with tasks.
        self._replies: dict[Scope, dict[str, tuple[MessageRecord, str]]] = {}
        self._leases: dict[int, Lease] = {}
        self._epochs = itertools.count(1)
        # The submitted and working tasks, which every lease heartbeat looks through:
        # scanning all stored tasks instead would grow with the store.
        self._unfinished: dict[Scope, set[str]] = {}
        # scratch space for packing finished logs (see _packed_log.pack)
        self._buffer = bytearray()

    async def open(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {}

    async def close(self) -> None:
        pass

    async def __aenter__(self) -> MemoryStore:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ writes

    async def create_task(
        self,
        scope: Scope,
        events: Sequence[Event],
        *,
        dialect: str,
        now: str,
        message_id: str | None = None,
        push_configs: Sequence[PushConfig] = (),
        push_dialect: str | None = None,
        digest: bytes = b"",
        lease: int | None = None,
        strict: bool = False,
        looked_up: bool = False,
        other_found: MessageRecord | None = None,
    ) -> int:
        created = _projection.created_task(events)
        # _check_lease and _entry, written out: every new task comes this way
        if lease is not None and lease not in self._leases:
            raise LeaseLost(f"the lease of epoch {lease} was revoked")
        tasks = self._tasks.get(scope)
        if tasks is not None and created.id in tasks:
            raise TaskExists(f"task {created.id} already exists")
        key = by_message = other = None
        if message_id is not None:
            # (written out: every new task of a send comes this way)
            key = f"\x00{digest.hex()}\x00{message_id}" if digest and not strict else message_id
            by_message = self._by_message.get(scope)
            if by_message is not None:
                if key in by_message:
                    self._check_message(scope, message_id, key)
                elif key != message_id:
                    # the id alone leads to its first message (see _remember)
                    other = by_message.get(message_id)
            if self._replies:
                self._check_reply(scope, message_id, key)
        # raises before storing
        status = _status_after(created.id, created.status.state, events[1:]) or created.status
        records = [_record_of(c, created.id, push_dialect or dialect, now)
                   for c in push_configs] \
            if push_configs else None
        state = status.state
        entry = _Entry(created.id, created.context_id, state, len(events), dialect, key,
                       status.timestamp or now, now, now, None,  # sort_stamp's rule
                       digest=digest, lease=lease)
        if state in TERMINAL_STATES:
            # A task finished at its creation goes straight into bytes (see _Entry.pack).
            entry.packed_log = _packed_log.pack(events, entry.task_id, entry.context_id,
                                                self._buffer)
        else:
            entry.open = _Open(list(events))
            if state in UNFINISHED_STATES:
                self._unfinished.setdefault(scope, set()).add(created.id)
        self._tasks.setdefault(scope, {})[created.id] = entry
        if message_id is not None and key is not None:
            if by_message is None:
                by_message = self._by_message[scope] = {}
            by_message[key] = created.id
            by_message.setdefault(message_id, created.id)  # see _remember
            if other is not None:
                other_content(message_id, other)
        if records:
            entry.push = {record.config.id or "": record for record in records}
            self._queue(scope, created.id, entry.push, 1, events)
        return len(events)

    async def append(
        self,
        scope: Scope,
        task_id: str,
        expected_version: int | None,
        events: Sequence[Event],
        *,
        now: str,
        lease: int | None = None,
        message: tuple[str, bytes] | None = None,
        strict: bool = False,
        if_generation: int | None = None,
    ) -> int:
        self._check_lease(lease)
        entry = self._entry(scope, task_id)
        if entry is None:
            raise task_not_found(task_id)
        if entry.version != expected_version:
            if expected_version is not None:
                raise ConcurrentModification(
                    f"task {task_id} is at version {entry.version}, not {expected_version}"
                )
            # at the version it is at (nothing awaited from here on): a finished
            # task, whose log is packed, refuses every event
            _projection.as_stored(task_id, entry.state, 0 if entry.open is None
                                  else last_of(entry.open.events) or 0, events, if_generation)
        if not events:
            return entry.version
        key = None
        if message is not None:
            key = _message_key(message[0], b"" if strict else message[1])
            self._check_message(scope, message[0], key)
        # The whole batch is checked before any of it is stored.
        status = _status_after(task_id, entry.state, events)
        if message is not None and key is not None:
            if entry.followups is None:
                entry.followups = {}
            entry.followups[key] = message[1]
            self._remember(scope, message[0], key, task_id)
        if lease is not None:
            entry.lease = lease
        if status is not None:
            entry.state = status.state
            entry.stamp = _projection.sort_stamp(status, now)
            self._track_unfinished(scope, task_id, status.state)
        base = entry.version
        assert entry.open is not None  # only a finished task is packed
        log = entry.open.events
        log.extend(events)
        entry.version = len(log)
        entry.updated_at = now
        if entry.push:
            self._queue(scope, task_id, entry.push, base + 1, events)
        if entry.state in TERMINAL_STATES:
            entry.pack(self._buffer)
        return entry.version

    # ------------------------------------------------------------------- reads

    async def get_task(
        self,
        scope: Scope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> TaskRecord | None:
        entry = self._entry(scope, task_id)
        if entry is None:
            return None
        return self._record(scope, entry, history_length, include_artifacts)

    async def list_tasks(self, scope: Scope, query: ListTasks) -> ListTasksResult:
        _paging.check_query(query)
        fingerprint = _paging.filter_fingerprint(scope, query)
        cursor = _paging.decode_token(query.page_token, fingerprint) if query.page_token else None
        after = query.status_timestamp_after
        matches = [
            e
            for e in self._tasks.get(scope, {}).values()
            if (query.context_id is None or e.context_id == query.context_id)
            and (query.status is None or e.state is query.status)
            and (after is None or e.stamp >= after)
        ]
        rest = matches if cursor is None else [e for e in matches if (e.stamp, e.task_id) < cursor]
        page = heapq.nlargest(query.page_size + 1, rest, key=lambda e: (e.stamp, e.task_id))
        token = ""
        if len(page) > query.page_size:
            del page[query.page_size :]
            last = page[-1]
            token = _paging.encode_token(fingerprint, _paging.Cursor(last.stamp, last.task_id))
        tasks = [
            e.view(query.history_length, query.include_artifacts) for e in page
        ]
        return ListTasksResult(
            tasks=tasks, next_page_token=token, page_size=query.page_size,
            total_size=len(matches),
        )

    async def read_events(
        self, scope: Scope, task_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        entry = self._entry(scope, task_id)
        if entry is None:
            raise task_not_found(task_id)
        start = max(after, 0)  # seq n sits at index n - 1
        stop = None if limit is None else start + max(limit, 0)
        return entry.log(start, stop)

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        found = self._message(scope, message_id, b"")
        return None if found is None else found.task_id

    async def find_message(self, scope: Scope, message_id: str,
                           digest: bytes = b"") -> MessageRecord | None:
        by_message = self._by_message.get(scope)
        # a send's look-up of a new message (nearly all) ends here: the id alone
        # leads to a message of it whenever it has one (see _remember)
        if by_message is None or message_id not in by_message:
            return self._reply(scope, message_id, digest) if self._replies else None
        found = self._message(scope, message_id, digest)
        if self._replies and (found is None or (digest and found.digest != digest)):
            return self._reply(scope, message_id, digest) or found
        return found

    async def record_reply(self, scope: Scope, message_id: str, digest: bytes,
                           reply: Message, *, now: str, strict: bool = False) -> None:
        key = _message_key(message_id, b"" if strict else digest)
        self._check_message(scope, message_id, key)
        self._check_reply(scope, message_id, key)
        replies = self._replies.setdefault(scope, {})
        replies[key] = (MessageRecord("", digest, reply), now)
        replies.setdefault(message_id, replies[key])  # as _remember

    def _check_reply(self, scope: Scope, message_id: str, key: str) -> None:
        replies = self._replies.get(scope)
        found = None if replies is None else replies.get(key)
        if found is not None:
            raise MessageExists(message_id, found[0])

    def _reply(self, scope: Scope, message_id: str, digest: bytes) -> MessageRecord | None:
        """The reply recorded for the message of ``digest``, else any of the id."""
        replies = self._replies.get(scope)
        if replies is None:
            return None
        found = replies.get(_message_key(message_id, digest)) if digest else None
        if found is None:
            found = replies.get(message_id)
        return None if found is None else found[0]

    def _purge_replies(self, before: str) -> None:
        for scope, replies in list(self._replies.items()):
            kept = {key: got for key, got in replies.items() if got[1] >= before}
            for key, got in list(kept.items()):
                kept.setdefault(_message_id_of(key), got)
            if kept:
                self._replies[scope] = kept
            else:
                del self._replies[scope]

    def _remember(self, scope: Scope, message_id: str, key: str, task_id: str) -> None:
        by_message = self._by_message.setdefault(scope, {})
        by_message[key] = task_id
        # the id alone leads to a message of it too (for look-ups by id alone;
        # a message keyed by its id alone takes that place)
        by_message.setdefault(message_id, task_id)

    def _message(self, scope: Scope, message_id: str, digest: bytes) -> MessageRecord | None:
        by_message = self._by_message.get(scope)
        if by_message is None:
            return None
        # recorded with this digest, else the id's first message
        if digest:
            found = self._recorded(scope, by_message, message_id, _message_key(message_id, digest))
            if found is not None:
                return found
        return self._recorded(scope, by_message, message_id, message_id)

    def _recorded(self, scope: Scope, by_message: dict[str, str], message_id: str,
                  key: str, *, exact: bool = False) -> MessageRecord | None:
        task_id = by_message.get(key)
        if task_id is None:
            return None
        entry = self._entry(scope, task_id)
        if entry is None:
            return None
        # by the id alone: the first message of the id, whichever its key (unless
        # ``exact``: the message recorded under that very key, as the SQL stores'
        # unique keys see it)
        alone = key == message_id and not exact
        if entry.message_id == key or (alone and entry.message_id == _message_key(
                message_id, entry.digest)):
            return MessageRecord(task_id, entry.digest)
        for recorded, digest in (entry.followups or {}).items():
            if recorded == key or (alone and recorded == _message_key(message_id, digest)):
                return MessageRecord(task_id, digest)
        return None if exact else MessageRecord(task_id, b"")

    def _check_message(self, scope: Scope, message_id: str, key: str) -> None:
        by_message = self._by_message.get(scope)
        found = None if by_message is None else self._recorded(scope, by_message, message_id,
                                                               key, exact=True)
        if found is not None:
            raise MessageExists(message_id, found)

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        found = []
        for scope, ids in self._unfinished.items():
            tasks = self._tasks[scope]
            for tid in ids:
                e = tasks[tid]
                found.append(
                    UnfinishedTask(scope, tid, e.context_id, e.state, e.version, e.lease)
                )
        return found

    def _track_unfinished(self, scope: Scope, task_id: str, state: TaskState) -> None:
        if state in UNFINISHED_STATES:
            self._unfinished.setdefault(scope, set()).add(task_id)
            return
        ids = self._unfinished.get(scope)
        if ids is not None:
            ids.discard(task_id)
            if not ids:
                del self._unfinished[scope]

    async def purge_finished(self, before: str) -> int:
        if self._replies:
            self._purge_replies(before)
        count = 0
        for scope, tasks in list(self._tasks.items()):
            doomed = [
                tid
                for tid, e in tasks.items()
                # (both, as the SQL stores ask: a status stamped by a clock ahead of
                # the writer's keeps its task longer there, and so here)
                if e.state in TERMINAL_STATES and e.updated_at < before and e.stamp < before
            ]
            by_message = self._by_message.get(scope, {})
            # ids whose message the id alone led to is gone: it must lead to another
            orphans: set[str] = set()
            for tid in doomed:
                entry = tasks.pop(tid)
                for config_id in entry.push or ():
                    self._drop_queue(scope, tid, config_id)
                for key in [entry.message_id, *(entry.followups or ())]:
                    if key is None:
                        continue
                    if by_message.get(key) == tid:
                        del by_message[key]
                    message_id = _message_id_of(key)
                    if by_message.get(message_id) == tid:
                        del by_message[message_id]
                        orphans.add(message_id)
            if orphans:
                for key, tid in list(by_message.items()):
                    message_id = _message_id_of(key)
                    if message_id in orphans:
                        by_message.setdefault(message_id, tid)
            count += len(doomed)
            if not tasks:
                del self._tasks[scope]
            if not by_message:
                self._by_message.pop(scope, None)
        return count

    # ------------------------------------------------------------------ leases

    async def acquire_lease(self, holder: str, now: float,
                            timeout: float | None = None) -> Lease:
        lease = Lease(next(self._epochs), holder, now, now, timeout)
        self._leases[lease.epoch] = lease
        return lease

    async def renew_lease(self, epoch: int, now: float) -> bool:
        lease = self._leases.get(epoch)
        if lease is None:
            return False
        self._leases[epoch] = msgspec.structs.replace(lease, heartbeat=now)
        return True

    async def release_lease(self, epoch: int) -> None:
        self._leases.pop(epoch, None)

    async def live_leases(self) -> list[Lease]:
        return sorted(self._leases.values(), key=lambda lease: lease.epoch)

    async def revoke_lease(self, epoch: int, *, unless_after: float | None = None) -> bool:
        lease = self._leases.get(epoch)
        if lease is None or (unless_after is not None and lease.heartbeat > unless_after):
            return False
        del self._leases[epoch]
        return True

    async def owners_namespaced(self) -> bool:
        return True  # nothing outlives the process: every owner was keyed as it is now

    async def namespace_owners(self, owner_of: Callable[[str], str]) -> int:
        return 0

    def _check_lease(self, lease: int | None) -> None:
        if lease is not None and lease not in self._leases:
            raise LeaseLost(f"the lease of epoch {lease} was revoked")

    # ------------------------------------------------------------ push configs

    async def put_push_config(
        self, scope: Scope, task_id: str, config: PushConfig, *, dialect: str, now: str,
        at_most: int | None = None,
    ) -> PushConfigRecord:
        entry = self._need(scope, task_id)
        record = _record_of(config, task_id, dialect, now)
        if entry.push is None:
            entry.push = {}
        old = entry.push.get(record.config.id or "")
        if old is None and at_most is not None and len(entry.push) >= at_most:
            raise TooManyPushConfigs(task_id, len(entry.push))
        if old is not None:
            record.created_at = old.created_at
        entry.push[record.config.id or ""] = record
        return _copy_record(record)

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> PushConfigRecord | None:
        record = (self._need(scope, task_id).push or {}).get(config_id)
        return None if record is None else _copy_record(record)

    async def list_push_configs(self, scope: Scope, task_id: str) -> list[PushConfigRecord]:
        return [_copy_record(r) for r in (self._need(scope, task_id).push or {}).values()]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> bool:
        entry = self._need(scope, task_id)
        if entry.push is None or entry.push.pop(config_id, None) is None:
            return False
        self._drop_queue(scope, task_id, config_id)
        return True

    # ----------------------------------------------------------------- helpers

    def _need(self, scope: Scope, task_id: str) -> _Entry:
        entry = self._entry(scope, task_id)
        if entry is None:
            raise task_not_found(task_id)
        return entry

    def _entry(self, scope: Scope, task_id: str) -> _Entry | None:
        tasks = self._tasks.get(scope)
        return None if tasks is None else tasks.get(task_id)

    @staticmethod
    def _record(
        scope: Scope, entry: _Entry, history_length: int | None, include_artifacts: bool
    ) -> TaskRecord:
        return TaskRecord(
            task=entry.view(history_length, include_artifacts),
            scope=scope,
            dialect=entry.dialect,
            version=entry.version,
            created_at=entry.created_at,
            updated_at=entry.updated_at,
        )


def _status_after(task_id: str, state: TaskState, events: Sequence[Event]) -> TaskStatus | None:
    """The latest status ``events`` set, None if they set none; raises
    ``LifecycleError`` for an event that ``state`` (or a state they reach) refuses."""
    check_from(state, task_id, events)
    for event in reversed(events):
        if type(event) is StatusUpdate:
            return event.status
    return None


def _record_of(config: PushConfig, task_id: str, dialect: str, now: str) -> PushConfigRecord:
    if not config.id:
        raise ValueError("a stored push config needs its id")
    return PushConfigRecord(
        config=msgspec.structs.replace(config, task_id=task_id), dialect=dialect, created_at=now
    )


def _copy_record(record: PushConfigRecord) -> PushConfigRecord:
    # Configs hold only immutable values but an AuthInfo's list of schemes.
    config = record.config
    if config.authentication is not None:
        auth = msgspec.structs.replace(
            config.authentication, schemes=list(config.authentication.schemes)
        )
        config = msgspec.structs.replace(config, authentication=auth)
    return PushConfigRecord(config=config, dialect=record.dialect, created_at=record.created_at)


def _message_key(message_id: str, claim: bytes) -> str:
    """A message's key among a scope's message ids: the id alone where the id alone
    names the message (strict, or no digest), else the digest in hex and the id,
    each after a NUL: a string, which keeps the dict out of the cycle collector's
    view (see MemoryStore.__init__)."""
    return message_id if not claim else f"\x00{claim.hex()}\x00{message_id}"


def _message_id_of(key: str) -> str:
    """The message id of a key of _message_key."""
    return key[1:].partition("\x00")[2] if key.startswith("\x00") else key
