"""The store: durable tasks and their event logs, scoped by tenant and owner.

Every call takes a ``Scope``: a task id (client-chosen in v0.1) or a repeated
messageId is only ever looked up within its tenant and owner, so two owners
never see or collide with each other's tasks.

A task row is the projection of its log. ``append`` writes the new events and
the projection's new status in one transaction, stating the version (the last
sequence number) it read: a stale write raises ``ConcurrentModification``
instead of overwriting, so a late ``completed`` never overwrites ``canceled``
written by another request or replica. A process that does not run the task's
turn writes at whatever version the task is at instead, checked in the same
transaction against what the task is then (see ``TaskPort.append``).

Push notifications live here too: a task's push configs, and the *outbox* of
deliveries still to make. ``create_task`` and ``append`` queue a delivery for
each event a config wants in the same transaction that writes the events, so
a process that dies right after a commit loses no notification. Deliveries of
one (task, config) go out in sequence order: only the oldest pending one (the
queue's head) can be claimed, and the next waits until it is delivered or
dead. See ``push_mode`` for which events each config wants.

The store is a union of smaller ports, and each consumer takes the narrowest
that serves it: ``TaskPort`` (tasks, their logs, the message ids sends are told
apart by; the engine), ``LeasePort`` (the processes' leases; the lease keeper),
``MigrationPort`` (changes to data written by an older version; recovery at
start-up), ``PushOutbox`` (push configs and deliveries; push, which also reads
logs through ``EventLog``). ``TaskStore`` is the first three with a store's
life (open, close); ``Store`` adds the outbox, and is what memory, SQLite and
PostgreSQL implement.
"""

from __future__ import annotations

import logging
import secrets
import shlex
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import msgspec

from ..core.calls import ListTasks, ListTasksResult
from ..core.dialects import get_codec
from ..core.dialects.base import PushMode
from ..core.model import (
    ArtifactUpdate,
    Event,
    Message,
    PushConfig,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
)
from ..core.task_log import Scope, StoredEvent
from ._shown import shown_url

__all__ = [
    "DEAD",
    "MAX_ROW_ID",
    "PENDING",
    "Delivery",
    "EventLog",
    "Lease",
    "LeaseLost",
    "LeasePort",
    "MessageExists",
    "MessageRecord",
    "MigrationPort",
    "PushConfigRecord",
    "PushMode",
    "PushOutbox",
    "PushPort",
    "SchemaMismatch",
    "Scope",
    "Store",
    "StoreDamaged",
    "StoreUnavailable",
    "StoreUnusable",
    "StoredEvent",
    "TaskExists",
    "TaskPort",
    "TaskRecord",
    "TaskStore",
    "UnfinishedTask",
    "delivery_nonce",
    "other_content",
    "push_mode",
    "wants_delivery",
]


class TaskRecord(msgspec.Struct, gc=False):
    task: Task
    scope: Scope
    #: the dialect the task was created in ("1.0", "0.3", "0.1", "sam", "tutorial")
    dialect: str
    #: the sequence number of the last event in the task's log
    version: int
    created_at: str
    updated_at: str


class UnfinishedTask(msgspec.Struct):
    scope: Scope
    task_id: str
    context_id: str
    state: TaskState
    version: int
    #: the epoch of the lease under which the task was last written (the process
    #: running its turn); None for a task written without one
    lease: int | None = None


class StoreUnavailable(ConnectionError):
    """The store's database cannot be reached (down, restarting, or refusing us):
    the call may succeed if tried again later."""


class StoreDamaged(StoreUnavailable):
    """What the store holds is damaged (a SQLite file's malformed pages, a stored row
    whose bytes do not read back): no call that reads it can succeed until it is
    restored."""


class StoreUnusable(RuntimeError):
    """The store's database answers, but the store cannot be used there as it is (a
    table of another program's where its own would go, a setting the server refuses,
    no right to make its tables); the message says what the database said."""


class SchemaMismatch(RuntimeError):
    """The store's schema is not one this version reads: newer (written by a later
    version), or behind with migrations turned off; the message says which."""


def schema_behind(version: int, needed: int, url: str, *, hint: str = "") -> SchemaMismatch:
    """A store whose schema is behind, opened without migrating: the refusal names
    the command that brings it up, with the store's own URL (its password masked), so
    that it upgrades this store (one of several agents', say), not another."""
    return SchemaMismatch(
        f"the database's schema is at version {version}, this version of interlingua "
        f"needs {needed}: run interlingua db upgrade --store {shlex.quote(shown_url(url))}"
        f"{hint}")


class TaskExists(Exception):
    """``create_task`` for an id that the scope already has."""


class TooManyPushConfigs(Exception):
    """``put_push_config`` of a new config for a task that has ``at_most`` already
    (counted in the write's own transaction: concurrent puts cannot pass it)."""

    def __init__(self, task_id: str, count: int) -> None:
        super().__init__(f"task {task_id} already has {count} push notification configs "
                         "(the limit)")
        self.count = count


class MessageRecord(msgspec.Struct, frozen=True):
    """A message id's task in a scope, and the digest of the message it named."""

    task_id: str
    #: what ``message_digest`` gave for the message (b"" when not recorded)
    digest: bytes = b""
    #: the message the send was answered with instead of a task (``task_id`` is
    #: then ""; see ``TaskPort.record_reply``)
    reply: Message | None = None


_decode_reply = msgspec.json.Decoder(Message).decode


def stored_message_record(task_id: str, digest: object, reply: bytes | None) -> MessageRecord:
    """A ``MessageRecord`` from a SQL store's row: the task's id ("" for a reply), the
    digest (bytes, or none recorded) and the reply as stored (JSON, or none)."""
    return MessageRecord(task_id, bytes(digest) if isinstance(digest, bytes) else b"",
                         None if reply is None else _decode_reply(reply))


class MessageExists(Exception):
    """A write named a message id that the scope already has (for another write)."""

    def __init__(self, message_id: str, record: MessageRecord) -> None:
        super().__init__(f"message {message_id} already has task {record.task_id}")
        self.message_id = message_id
        self.record = record


_log = logging.getLogger("interlingua.engine")


def other_content(message_id: str, task_id: str) -> None:
    """Log that a message under a known id, with other content than the message
    of ``task_id``, is taken as a new message (``content`` message ids).

    Said by the store when it writes the new message's key, which it does on
    every path (a send that looked the id up first, or one that did not)."""
    _log.warning("messageId %r was used before for a message with other content "
                 "(task %s); this one is taken as a new message", message_id, task_id)


# ------------------------------------------------------------------ ownership


class Lease(msgspec.Struct, frozen=True):
    """A serving process's claim to run turns, renewed by its heartbeats.

    ``epoch`` only grows: every lease taken gets a larger one than any before,
    in this store. A write made under a lease names its epoch; once the lease
    is revoked (its holder missed its heartbeats, or is known to be dead) such
    a write is refused with ``LeaseLost``.
    """

    epoch: int
    #: who holds it: ``host/boot-id:pid`` (see server/leases.py)
    holder: str
    #: seconds since the epoch (wall clock), when taken and when last renewed
    started: float
    heartbeat: float
    #: seconds without a heartbeat after which its holder counts as gone: its own
    #: setting, by which every other process judges it (None: a lease taken by an
    #: older version, judged by each judge's own)
    timeout: float | None = None


class LeaseLost(Exception):
    """A write under a lease that was revoked: its turns belong to nobody now."""


# ------------------------------------------------------------- push notifications


#: a delivery waiting for its turn or for its next try
PENDING = "pending"
#: a delivery given up on (attempts used up, or a final refusal); kept for inspection
DEAD = "dead"
#: the largest row id a SQL store keeps (a signed 64-bit integer)
MAX_ROW_ID = 2**63 - 1


def push_mode(dialect: str) -> PushMode:
    """How a config registered in ``dialect`` is fed.

    ``"event"`` (v1.0): every event a stream would carry is delivered, each as
    its own ``StreamResponse``. ``"task"`` (v0.1, v0.2/v0.3 and their
    variants): the whole task is delivered when its status changes, and a
    delivery still queued is moved on to the newest status instead of queuing
    another (so a long stream does not send the whole task over and over).
    """
    return get_codec(dialect).push_mode


def wants_delivery(mode: PushMode, event: Event) -> bool:
    """Whether a config fed in ``mode`` gets a delivery for ``event``."""
    if isinstance(event, StatusUpdate | TaskCreated):
        return True
    # history additions are not stream items (see server/streams.py)
    return mode == "event" and isinstance(event, ArtifactUpdate)


class PushConfigRecord(msgspec.Struct):
    """A stored push config: ``config.id`` and ``config.task_id`` are always set."""

    config: PushConfig
    #: the dialect the config was registered in: it decides the webhook body
    dialect: str
    created_at: str


class Delivery(msgspec.Struct):
    """One outbox entry: the event ``seq`` of a task, owed to one of its configs.

    Times (``next_at``, ``last_attempt_at``) are seconds on the dispatcher's
    clock; a delivery queued by a write has ``next_at`` 0 (due at once).
    """

    id: int
    scope: Scope
    task_id: str
    config_id: str
    seq: int
    state: str = PENDING
    #: failed attempts so far
    attempts: int = 0
    next_at: float = 0.0
    last_error: str | None = None
    last_attempt_at: float | None = None
    #: random, fixed when the delivery is queued (``delivery_nonce``): it makes the
    #: notification's id unique across agents, scopes and servers, the same on
    #: every attempt
    nonce: str = ""


def delivery_nonce() -> str:
    """A new delivery's ``nonce``: 128 random bits, in hex."""
    return secrets.token_hex(16)


class EventLog(Protocol):
    """Reading a task's log."""

    async def read_events(
        self, scope: Scope, task_id: str, after: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """Events with ``seq > after``, in order; ``TaskNotFound`` if the
        scope has no such task."""
        ...


class TaskPort(EventLog, Protocol):
    """Tasks and their logs, and the message ids that made or continued them.

    A store that keeps no push notifications refuses ``push_configs`` in
    ``create_task`` (and queues no deliveries); the engine serves it with
    push notifications off.
    """

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
        """Create a task from its first events (``events[0]`` is ``TaskCreated``).

        The events get sequence numbers 1..n; returns n, the task's version.
        ``message_id`` (the message that created it, with its ``digest``) is
        remembered for idempotent sends: a second task for the same id and digest
        in the scope raises ``MessageExists`` naming the first; with ``strict``, a
        second task for the same id, whatever its digest. ``push_configs`` (each
        with its ``id`` set) are registered in ``push_dialect`` (None: the task's
        ``dialect``) in the same transaction, and their first deliveries queued. Raises ``TaskExists``
        if the scope has the id. ``lease``: the epoch of the writer's lease,
        recorded as the task's owner; ``LeaseLost`` if it was revoked.
        ``looked_up``: the caller looked ``message_id`` up just before
        (``find_message``), and found ``other_found``, the record of another message under
        the id (with other content), or none: a store that would look the id up to
        log that (``other_content``) may take this answer instead.
        """
        ...

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
        """Append events in one transaction; returns the new version.

        Raises ``ConcurrentModification`` if the task's version is not
        ``expected_version``, ``TaskNotFound`` if the scope has no such task,
        ``LeaseLost`` if ``lease`` (recorded as the task's owner) was revoked.
        With no ``lease`` the task keeps the owner it has (a write for a turn
        that runs in another process).
        ``message`` (a message id and digest) is remembered for this task like
        a creating message (``strict`` as there); ``MessageExists`` if the scope
        has it already.

        ``expected_version`` None: written at whatever version the task is at, read
        in the write's own transaction (a write for a turn that runs in another
        process, a cancel or a message, which must not race that turn's writes for a
        version): the events are checked against the task's state then
        (``LifecycleError``, whose ``state`` is that state; a message is refused too
        when the task asks for input or auth, as no turn would read it: see
        ``_projection.as_stored``), refused unless the task
        is at generation ``if_generation`` (when given: ``TaskGenerationMismatch``),
        and numbered (their generations, in place) on from the task's generation
        then; they are the last ``len(events)`` of the log at the version returned.
        """
        ...

    async def record_reply(self, scope: Scope, message_id: str, digest: bytes,
                           reply: Message, *, now: str, strict: bool = False) -> None:
        """Remember a message that was answered with ``reply``, a bare message, and
        made no task: ``find_message`` finds it (a record with ``reply`` and no task),
        so a retry gets that answer. Keyed as a creating message is (``strict`` as
        there): ``MessageExists`` if the scope has the key already; a task's
        creation for it refuses it the same way (one the caller did not look up
        first: ``looked_up``). Purged with the finished tasks, by ``now``.
        """
        ...

    async def get_task(
        self,
        scope: Scope,
        task_id: str,
        *,
        history_length: int | None = None,
        include_artifacts: bool = True,
    ) -> TaskRecord | None:
        """The task's projection; ``history_length`` keeps the last N messages
        (0 = none, None = all)."""
        ...

    async def list_tasks(self, scope: Scope, query: ListTasks) -> ListTasksResult:
        """Tasks of the scope, most recently updated first (status timestamp,
        then id), with an opaque keyset ``page_token``. Raises ``InvalidParams``
        for a page token it did not make or made for another filter.
        ``status_timestamp_after`` is inclusive and in canonical form."""
        ...

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        """The id of the task that ``message_id`` created or continued in this scope."""
        ...

    async def find_message(self, scope: Scope, message_id: str,
                           digest: bytes = b"") -> MessageRecord | None:
        """A task ``message_id`` made or continued in this scope, with the digest
        recorded for it: the one recorded with ``digest`` if there is one, else one
        recorded without a digest, else any (the caller compares digests)."""
        ...

    async def unfinished_tasks(self) -> list[UnfinishedTask]:
        """Tasks of every scope in ``submitted`` or ``working`` (for recovery)."""
        ...

    async def purge_finished(self, before: str) -> int:
        """Delete tasks in a terminal state last updated before ``before``
        (with their logs, push configs and deliveries), and the replies recorded
        before it (``record_reply``); returns how many tasks."""
        ...


class LeasePort(Protocol):
    """The leases processes serving one store hold (``server/leases.py``): every
    write names its writer's, and a revoked one's writes are refused."""

    async def acquire_lease(self, holder: str, now: float,
                            timeout: float | None = None) -> Lease:
        """Take a new lease, with an epoch larger than any taken before; ``timeout``:
        the holder's own (``Lease.timeout``)."""
        ...

    async def renew_lease(self, epoch: int, now: float) -> bool:
        """Record a heartbeat; False when the lease was revoked or released."""
        ...

    async def release_lease(self, epoch: int) -> None:
        """Give the lease up (a clean shutdown); writes under it are refused after."""
        ...

    async def live_leases(self) -> list[Lease]:
        """The leases neither revoked nor released, oldest first."""
        ...

    async def revoke_lease(self, epoch: int, *, unless_after: float | None = None) -> bool:
        """Revoke a lease (its holder is gone); False if it was not live. With
        ``unless_after``, only if its last heartbeat is older than that."""
        ...


class MigrationPort(Protocol):
    """Changes to data an older version wrote, made once, at start-up."""

    async def owners_namespaced(self) -> bool:
        """Whether task owners are keyed by scheme (``scheme:id``), as they are now."""
        ...

    async def namespace_owners(self, owner_of: Callable[[str], str]) -> int:
        """Re-key every owner id of a store from before owners were keyed by scheme
        as ``owner_of`` says, and mark it keyed; returns how many tasks changed."""
        ...


class TaskStore(TaskPort, LeasePort, MigrationPort, Protocol):
    """A store of tasks, as opened and closed. Implementations: memory, SQLite,
    PostgreSQL (each a ``Store``: with the push outbox too)."""

    url: str

    async def open(self) -> None: ...

    def describe(self) -> dict[str, Any]:
        """What the store reports about itself for ``/healthz`` (settings in effect)."""
        ...

    async def close(self) -> None: ...


class PushOutbox(Protocol):
    """Push configs of tasks, and the outbox of deliveries still owed.

    Deliveries are queued by the task store's own writes, in the transaction
    that stores their events (``create_task``, ``append``): a store that keeps
    both implements ``Store``.
    """

    # ------------------------------------------------------------ push configs

    #: called (with no arguments, on the event loop) after a write that queued
    #: deliveries: the push dispatcher sets it to wake up at once
    on_outbox: Callable[[], None] | None

    async def put_push_config(
        self, scope: Scope, task_id: str, config: PushConfig, *, dialect: str, now: str,
        at_most: int | None = None,
    ) -> PushConfigRecord:
        """Register ``config`` (its ``id`` set) for the task, or replace the
        config with that id (keeping its queued deliveries and its place in
        the listing). ``TaskNotFound`` if the scope has no such task;
        ``TooManyPushConfigs`` if the config is new and the task has ``at_most``."""
        ...

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> PushConfigRecord | None:
        """The config, or None; ``TaskNotFound`` if the scope has no such task."""
        ...

    async def list_push_configs(self, scope: Scope, task_id: str) -> list[PushConfigRecord]:
        """The task's configs in registration order; ``TaskNotFound`` if none such task."""
        ...

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> bool:
        """Remove the config and its queued deliveries; False if it did not
        exist. ``TaskNotFound`` if the scope has no such task."""
        ...

    # ------------------------------------------------------------------ outbox

    async def claim_deliveries(self, now: float, lease_until: float, limit: int) -> list[Delivery]:
        """Up to ``limit`` pending queue heads due by ``now`` and not claimed
        (or whose claim lapsed), oldest due first; each is claimed until
        ``lease_until``. At most one delivery per (task, config) is ever out."""
        ...

    async def next_delivery_at(self) -> float | None:
        """When the earliest pending queue head is due (or its claim lapses);
        None when nothing is pending."""
        ...

    async def delivery_done(self, delivery_id: int) -> None:
        """The delivery arrived (or is moot): remove it; the next in its queue may go."""
        ...

    async def delivery_failed(
        self, delivery_id: int, *, error: str, attempted_at: float, retry_at: float | None
    ) -> None:
        """Count a failed attempt and release the claim: due again at
        ``retry_at``, or dead when ``retry_at`` is None (the queue moves on)."""
        ...

    async def dead_deliveries(
        self, scope: Scope | None = None, task_id: str | None = None, limit: int = 100
    ) -> list[Delivery]:
        """Dead deliveries, oldest first, of every scope or of one (and one task)."""
        ...

    async def revive_delivery(self, delivery_id: int) -> bool:
        """Queue a dead delivery again with its attempts reset; False if no such
        dead delivery. It goes out in its place in the sequence order."""
        ...

    async def release_claims(self) -> int:
        """Drop every claim (at start-up of the only dispatcher of a store,
        for deliveries a killed process had claimed); returns how many."""
        ...

    async def outbox_counts(self) -> dict[str, int]:
        """How many deliveries are ``pending`` and ``dead``."""
        ...


class PushPort(PushOutbox, EventLog, Protocol):
    """What push notifications take of a store: the outbox, the logs their
    payloads are read from, and its URL (a file store keeps the signing keys
    beside its data: ``stores.data_file``)."""

    url: str


class Store(TaskStore, PushOutbox, Protocol):
    """A task store that also keeps push configs and their outbox."""
