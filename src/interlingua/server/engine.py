"""The task engine: runs executors, enforces the lifecycle, appends events.

Theory of operation
-------------------
Every change to a task is a batch of events, checked against the lifecycle,
committed to the store in one transaction (stating the version it read), then
folded into the live projection and announced on the bus. Nobody — caller,
stream, webhook — sees an event before it is durable.

A *run* is one task's live state in this process while a turn of its executor
is under way (or while a request changes it). Executors run as asyncio tasks
that outlive the HTTP request that started them.

A new task is written together with the executor's first event (one
transaction for "created + first status", and for a quick agent "created +
artifact + completed"); a non-blocking send writes it at once, since its
caller is answered with it.

A blocking send is answered by the process that runs the turn, so it waits on
the run itself; readers that may be elsewhere (streams, resubscribe, push)
read the log and wait on the bus.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import msgspec

from ..bus.base import Bus, task_key
from ..core import lifecycle
from ..core.calls import (
    Call,
    CancelTask,
    GetExtendedCard,
    GetTask,
    ListTasks,
    ListTasksResult,
    Result,
    SendMessage,
    SubscribeToTask,
)
from ..core.dialects._common import format_timestamp
from ..core.errors import (
    ConcurrentModification,
    ExtendedCardNotConfigured,
    InvalidParams,
    InvalidTaskState,
    LifecycleError,
    ResourceUnavailable,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)
from ..core.lazy_event import LazyEvent, Signal
from ..core.model import (
    TERMINAL_STATES,
    AgentCard,
    Event,
    HistoryAppended,
    Message,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
    TextPart,
)
from ..core.parts import new_id
from ..stores.base import (
    LeaseLost,
    MessageExists,
    MessageRecord,
    Scope,
    Store,
    StoredEvent,
    TaskExists,
)
from .agent import Agent
from .auth.limits import ExecutorTimeout, Ticket
from .auth.runtime import Security
from .context import Context, RequestInfo, TaskCanceled
from .idempotency import message_digest
from .leases import LeaseKeeper
from .push.service import PushCall, PushService
from .push.settings import PushSettings
from .streams import Stream, open_stream

__all__ = ["Engine", "EngineConfig"]

log = logging.getLogger("interlingua.engine")

#: the scope of every call from no tenant by no authenticated principal
_ANONYMOUS = Scope()

#: events an executor may queue before its emit writes them (and lets readers run).
#: Only an executor that emits without ever awaiting reaches it (one that awaits
#: anything is flushed then); one commit per 256 chunks instead of per 64 gives
#: the SQLite store a fifth more events/s, and readers still get a batch per write.
FLUSH_EVERY = 256


class EngineConfig(msgspec.Struct, kw_only=True):
    #: what happens on start-up to tasks a stopped process left submitted/working:
    #: "fail" (end them failed, "server restarted") or "rerun" (run the turn again)
    restart_policy: str = "fail"
    #: history returned when a caller does not say (None = all)
    default_history_length: int | None = None
    #: seconds finished tasks and their logs are kept (None = forever)
    retention: float | None = None
    #: how often the retention sweep runs, in seconds
    retention_interval: float = 3600.0
    #: seconds of silence after which a stream sends a heartbeat comment (it comes
    #: within one and a half times that: waiting streams share one clock)
    heartbeat_interval: float = 15.0
    #: a stream reader this many events behind the live end is told to reconnect
    max_lag: int = 10_000
    #: seconds between this process's heartbeats on its lease (see server/leases.py)
    lease_interval: float = 2.0
    #: seconds without a heartbeat after which another process ends this one's
    #: running tasks by the restart policy
    lease_timeout: float = 10.0


class Draining(ResourceUnavailable):
    """A send to a server that is draining (answered 503 with ``Retry-After``)."""

    retry_after = 1


class _Run:
    """One task's live state in this process."""

    __slots__ = (
        "cancelled",
        "dialect",
        "digest",
        "duplicate",
        "engine",
        "error",
        "flushed",
        "flusher",
        "followup",
        "initial",
        "key",
        "lock",
        "message_id",
        "message_key",
        "pending",
        "pending_state",
        "persisted",
        "push_configs",
        "reply_message",
        "request",
        "scope",
        "settled",
        "task",
        "turn",
        "version",
    )

    def __init__(
        self,
        engine: Engine,
        scope: Scope,
        task: Task,
        *,
        version: int,
        persisted: bool,
        dialect: str,
        request: RequestInfo,
        initial: Task | None = None,
        message_id: str | None = None,
    ) -> None:
        self.engine = engine
        self.scope = scope
        self.key = task_key(scope, task.id)
        self.task = task
        self.version = version
        self.persisted = persisted
        self.dialect = dialect
        self.request = request
        self.initial = initial
        self.message_id = message_id
        self.lock = asyncio.Lock()
        self.settled = Signal()
        # set once the task is in the store (or answered with a bare message)
        self.flushed = Signal()
        if persisted:
            self.flushed.set()
        self.cancelled = LazyEvent()
        self.reply_message: Message | None = None
        self.turn: asyncio.Task[None] | None = None
        # events checked but not yet written, and the state they lead to
        self.pending: list[Event] = []
        self.pending_state = task.status.state
        self.flusher: asyncio.Task[None] | None = None
        #: a background write that failed, raised at the executor's next emit
        self.error: BaseException | None = None
        # push configs a send carried, registered with the task's creation
        self.push_configs: list[PushConfig] = []
        #: the digest of the message that started the current turn
        self.digest = b""
        #: (scope, message id) of that message, while the turn runs
        self.message_key: tuple[Scope, str] | None = None
        #: a follow-up message's id and digest, recorded with its first write
        self.followup: tuple[str, bytes] | None = None
        #: the task another process made for this run's message first
        self.duplicate: str | None = None

    # The executor's context talks to these (context._Sink).

    async def emit(self, events: Sequence[Event], *, wait: bool = True) -> None:
        await self.engine._emit(self, events, wait=wait)

    async def reply(self, message: Message) -> None:
        await self.engine._reply(self, message)

    async def context_tasks(self) -> list[Task]:
        return await self.engine._context_tasks(self)

    def now(self) -> str:
        return self.engine.now()

    def activity(self) -> int:
        """How far the task has moved (the inactivity limit watches it)."""
        return self.version


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Engine:
    """Runs an agent's tasks against a store and a bus."""

    def __init__(
        self,
        agent: Agent,
        store: Store,
        bus: Bus,
        *,
        config: EngineConfig | None = None,
        clock: Callable[[], datetime] = _utcnow,
        card: Callable[[], AgentCard] | None = None,
        push: PushSettings | None = None,
    ) -> None:
        self.agent = agent
        self.store = store
        self.bus = bus
        self.config = config or EngineConfig()
        self._clock = clock
        self._card = card
        self.push = PushService(self, push)
        #: authorization, limits and executor cap (create_app sets the configured one)
        self.security = Security()
        self._runs: dict[str, _Run] = {}
        #: runs by the (scope, message id) that started their current turn
        self._message_runs: dict[tuple[Scope, str], _Run] = {}
        #: sends being begun, by (scope, message id): a repeat waits for the first
        self._sending: dict[tuple[Scope, str], asyncio.Future[None]] = {}
        self.leases = LeaseKeeper(store, interval=self.config.lease_interval,
                                  timeout=self.config.lease_timeout)
        self._keeper: asyncio.Task[None] | None = None
        #: running turns, with their executor places
        self._turns: dict[asyncio.Task[None], Ticket] = {}
        self._sweeper: asyncio.Task[None] | None = None
        #: looks at tasks other processes wrote to (see _remote_write)
        self._checks: set[asyncio.Task[None]] = set()
        self._started = False
        self._start_lock = asyncio.Lock()
        #: set when the server is shutting down: open streams end cleanly
        self.closing = False
        #: set while the server drains before it stops: no new sends are taken
        self.draining = False
        #: streams open in this process (a drain lets them deliver their ends)
        self.open_streams = 0
        self._now_key: int | None = None
        self._now_text = ""

    def now(self) -> str:
        if self._clock is _utcnow:
            # Formatting costs more than the rest of a small event; within one
            # millisecond the text is the same, so reuse it.
            key = time.time_ns() // 1_000_000
            if key != self._now_key:
                self._now_key = key
                self._now_text = format_timestamp(
                    datetime.fromtimestamp(key / 1000, UTC))
            return self._now_text
        return format_timestamp(self._clock())

    # ---------------------------------------------------------------- lifetime

    async def start(self) -> None:
        async with self._start_lock:
            if self._started:
                return
            await self.store.open()
            await self._join_bus()
            self._started = True
            self.closing = False
            await self.leases.acquire()
            await self._end_orphans(restarted=True)
            await self.push.start()
            self._keeper = asyncio.get_running_loop().create_task(self._keep_lease())
            if self.config.retention is not None:
                self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def ensure_started(self) -> None:
        if not self._started:
            await self.start()

    @property
    def running_turns(self) -> int:
        return len(self._turns)

    async def drain(self, seconds: float) -> int:
        """Stop taking new sends and let the turns running here finish, for up
        to ``seconds``; then give their streams a moment to hand out their last
        events. Returns how many turns were still running at the deadline (the
        shutdown that follows ends them by the restart policy)."""
        self.draining = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while self._turns and loop.time() < deadline:
            await asyncio.wait(list(self._turns), timeout=deadline - loop.time())
        left = len(self._turns)
        grace = min(1.0, max(deadline - loop.time(), 0.0))
        until = loop.time() + grace
        while self.open_streams and loop.time() < until:
            await asyncio.sleep(0.02)
        return left

    async def begin_shutdown(self) -> None:
        """Tell open streams to end (the server is about to stop)."""
        self.closing = True
        await self.bus.close()

    async def stop(self) -> None:
        self.closing = True
        if not self._started:
            return
        for task in (self._sweeper, self._keeper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._sweeper = self._keeper = None
        # Turns still running end as "failed": the process that ran them is going away.
        runs = list(self._runs.values())
        for run in runs:
            if run.turn is not None and not run.turn.done():
                run.turn.cancel()
        if self._turns:
            await asyncio.gather(*self._turns, return_exceptions=True)
        for run in runs:
            if run.persisted and run.task.status.state not in lifecycle.RETURN_STATES:
                with contextlib.suppress(Exception):
                    await self._emit(run, [self._status(
                        run.task, TaskState.FAILED,
                        "The server stopped while the task was running.")])
        await self.push.stop()
        await self.bus.close()
        with contextlib.suppress(Exception):  # it lapses by itself otherwise
            await self.leases.release()
        await self.store.close()
        self._started = False

    # ------------------------------------------------------- other processes

    async def _join_bus(self) -> None:
        """A bus shared with other processes (Redis) looks tasks up in the store
        after it reconnects, and tells this engine of their writes; the
        in-process bus has nothing of the sort."""
        attach = getattr(self.bus, "attach_store", None)
        if attach is not None:
            attach(self.store)
        if hasattr(self.bus, "on_remote"):
            self.bus.on_remote = self._remote_write
        opener = getattr(self.bus, "open", None)
        if opener is not None:
            await opener()

    def _remote_write(self, key: str, seq: int) -> None:
        """Another process wrote to a task: if its turn runs here, that write may
        be a cancel (CancelTask served elsewhere); look, and stop the turn if so."""
        run = self._runs.get(key)
        if run is None or seq <= run.version or run.turn is None or run.turn.done():
            return
        check = asyncio.get_running_loop().create_task(self._check_remote_cancel(run))
        self._checks.add(check)
        check.add_done_callback(self._checks.discard)

    async def _check_remote_cancel(self, run: _Run) -> None:
        try:
            rec = await self.store.get_task(run.scope, run.task.id)
        except Exception:  # the executor's next write finds out anyway
            log.warning("task %s: could not read it after news of another process's write",
                        run.task.id)
            return
        if rec is None or rec.task.status.state is not TaskState.CANCELED:
            return
        async with run.lock:  # after a write in flight, which then finds it canceled
            if rec.version > run.version:
                run.task, run.version = rec.task, rec.version
                run.pending, run.pending_state = [], TaskState.CANCELED
        run.cancelled.set()
        if run.turn is not None and not run.turn.done():
            run.turn.cancel()

    # -------------------------------------------------------------- ownership

    async def _keep_lease(self) -> None:
        """Heartbeats on this process's lease; ends the tasks of processes gone."""
        while True:
            await asyncio.sleep(self.leases.interval)
            try:
                if not await self.leases.renew():
                    await self._lease_lost()
                await self._end_orphans(restarted=False)
            except Exception:  # a store that is briefly unavailable: try again next time
                log.exception("lease heartbeat failed")

    async def _lease_lost(self) -> None:
        """Another process revoked our lease and ends our turns: stop them here."""
        for run in list(self._runs.values()):
            run.cancelled.set()
            if run.turn is not None and not run.turn.done():
                run.turn.cancel()
            if run.persisted:
                # the readers here learn how the task ended from the store
                with contextlib.suppress(Exception):
                    events = await self.store.read_events(run.scope, run.task.id, run.version)
                    if events:
                        await self.bus.publish(run.key, events)

    async def _end_orphans(self, *, restarted: bool) -> None:
        """End, by the restart policy, the unfinished tasks no live process owns."""
        live = await self.leases.revoke_dead()
        newest = self.leases.newest
        for item in await self.store.unfinished_tasks():
            # an epoch beyond the newest seen is a process that started since: live
            if item.lease is not None and (item.lease in live or item.lease > newest):
                continue
            if task_key(item.scope, item.task_id) in self._runs:
                continue
            rec = await self.store.get_task(item.scope, item.task_id)
            if rec is None or rec.task.status.state not in (TaskState.SUBMITTED,
                                                            TaskState.WORKING):
                continue
            run = _Run(self, item.scope, rec.task, version=rec.version, persisted=True,
                       dialect=rec.dialect, request=RequestInfo(principal=item.scope.owner,
                                                                tenant=item.scope.tenant))
            try:
                if self.config.restart_policy == "rerun":
                    message = next((m for m in reversed(rec.task.history) if m.role is Role.USER), None)
                    if message is not None:
                        self._runs[run.key] = run
                        self._start_turn(run, message)
                        continue
                text = ("The server restarted while the task was running." if restarted else
                        "The server that was running the task stopped.")
                await self._emit(run, [self._status(rec.task, TaskState.FAILED, text)])
                log.warning("task %s ended failed: the process running it is gone",
                            item.task_id)
            except (ConcurrentModification, LifecycleError, TaskCanceled):
                log.info("task %s changed while it was being recovered", item.task_id)

    async def _sweep(self) -> None:
        assert self.config.retention is not None
        while True:
            before = format_timestamp(self._clock() - timedelta(seconds=self.config.retention))
            try:
                n = await self.store.purge_finished(before)
                if n:
                    log.info("retention: removed %d finished tasks", n)
            except Exception:  # the sweep must outlive a transient store failure
                log.exception("retention sweep failed")
            await asyncio.sleep(self.config.retention_interval)

    # ---------------------------------------------------------------- dispatch

    async def handle(self, call: Call, request: RequestInfo) -> Result:
        """Carry out one non-streaming call."""
        await self.security.authorize(self, call, request)
        if isinstance(call, SendMessage):
            return await self.send(call, request)
        if isinstance(call, GetTask):
            return await self.get_task(call, request)
        if isinstance(call, ListTasks):
            return await self.list_tasks(call, request)
        if isinstance(call, CancelTask):
            return await self.cancel_task(call, request)
        if isinstance(call, GetExtendedCard):
            return self.extended_card(request)
        if isinstance(call, PushCall):
            return await self.push.handle(call, request)
        raise UnsupportedOperation(f"{type(call).__name__} is not supported by this agent")

    @staticmethod
    def scope_of(request: RequestInfo) -> Scope:
        if not request.tenant and not request.principal:
            return _ANONYMOUS  # shared: every running task holds its scope
        return Scope(tenant=request.tenant, owner=request.principal)

    # -------------------------------------------------------------------- send

    async def send(self, call: SendMessage, request: RequestInfo) -> Task | Message:
        begun = await self._begin(call, request)
        if isinstance(begun, Task):
            return begun
        if not call.config.blocking:
            return self._view(begun.task, call.config.history_length)
        return await self._settle(begun, call.config.history_length)

    async def _begin(self, call: SendMessage, request: RequestInfo) -> _Run | Task:
        """Start the turn a message asks for; a repeated message gets its task instead."""
        if self.draining:
            raise Draining("This server is shutting down and takes no new messages; "
                           "send to another replica, or again shortly")
        # Refused here (size limits, no room for another executor), no task is made.
        with self.security.admission(call.message):
            return await self._begin_turn(call, request)

    async def _begin_turn(self, call: SendMessage, request: RequestInfo) -> _Run | Task:
        scope = self.scope_of(request)
        message = call.message
        digest = message_digest(message, call.client_task_id)
        key = (scope, message.message_id)
        # One send of a message id at a time in this process (single flight): a
        # repeat that arrives meanwhile waits, then finds the first's run or task.
        while True:
            live = self._message_runs.get(key)
            if live is not None:
                return await self._join(live, digest, call)
            pending = self._sending.get(key)
            if pending is None:
                break
            await asyncio.shield(pending)
        done = asyncio.get_running_loop().create_future()
        self._sending[key] = done
        try:
            return await self._begin_new(scope, call, request, digest)
        finally:
            del self._sending[key]
            done.set_result(None)

    async def _join(self, run: _Run, digest: bytes, call: SendMessage) -> _Run | Task:
        """A repeated message while its turn runs here: the caller follows that run."""
        self._same_message(call.message.message_id, run.digest, digest)
        if not call.config.blocking and not call.streaming:
            await run.flushed.wait()  # answered with the task, which must exist
            if run.duplicate is not None:
                return await self._answer(run.scope, run.duplicate, call.config.history_length,
                                          False)
        return run

    @staticmethod
    def _same_message(message_id: str, stored: bytes, digest: bytes) -> None:
        # b"": recorded before digests were kept; nothing to compare
        if stored and stored != digest:
            raise InvalidParams(
                f"Invalid params: messageId {message_id!r} was already used for a different "
                "message (another role, other parts, or another taskId or contextId); "
                "a new message needs a new messageId"
            )

    async def _repeated(self, scope: Scope, call: SendMessage, found: MessageRecord,
                        digest: bytes) -> Task:
        """The same message sent again (a retry): its task, and nothing run."""
        self._same_message(call.message.message_id, found.digest, digest)
        return await self._answer(scope, found.task_id, call.config.history_length,
                                  call.config.blocking and not call.streaming)

    async def _begin_new(self, scope: Scope, call: SendMessage, request: RequestInfo,
                         digest: bytes) -> _Run | Task:
        message = call.message
        existing = await self.store.find_message(scope, message.message_id)
        if existing is not None:
            return await self._repeated(scope, call, existing, digest)

        target = message.task_id or call.client_task_id
        if target:
            run = self._runs.get(task_key(scope, target))
            if run is None:
                rec = await self.store.get_task(scope, target)
                if rec is not None:
                    run = _Run(self, scope, rec.task, version=rec.version, persisted=True,
                               dialect=rec.dialect, request=request)
            if run is not None:
                return await self._continue(run, call, request, digest)
            if message.task_id:
                raise TaskNotFound(f"Task not found: {message.task_id}")
        return await self._create(scope, call, request, target, digest)

    async def _create(self, scope: Scope, call: SendMessage, request: RequestInfo,
                      task_id: str | None, digest: bytes) -> _Run | Task:
        now = self.now()
        tid = task_id or new_id()
        cid = call.message.context_id or new_id()
        message = msgspec.structs.replace(call.message, task_id=tid, context_id=cid)
        status = TaskStatus(state=TaskState.SUBMITTED, timestamp=now)
        metadata = call.metadata
        initial = Task(id=tid, context_id=cid, status=status, history=[message], metadata=metadata)
        live = Task(id=tid, context_id=cid, status=status, history=[message], metadata=metadata)
        run = _Run(self, scope, live, version=0, persisted=False, dialect=request.dialect,
                   request=request, initial=initial, message_id=message.message_id)
        run.push_configs = await self.push.send_configs(call, request, tid)
        if run.key in self._runs:
            raise InvalidTaskState(f"task {tid} is already running")
        run.digest = digest
        self._track(run, scope, call.message.message_id)
        # A non-blocking caller is answered with the task, so it must exist first.
        # With other processes on the store, it is written before the executor
        # runs: another process that gets the same message id then finds it
        # instead of running the executor a second time.
        if (not call.config.blocking and not call.streaming) or self.leases.shared:
            try:
                await self._persist_created(run)
            except MessageExists as exc:
                self._untrack(run)
                return await self._repeated(scope, call, exc.record, digest)
            except BaseException:
                self._untrack(run)
                raise
        self._start_turn(run, message)
        return run

    def _track(self, run: _Run, scope: Scope, message_id: str) -> None:
        self._runs[run.key] = run
        run.message_key = (scope, message_id)
        self._message_runs[run.message_key] = run

    def _untrack(self, run: _Run) -> None:
        if self._runs.get(run.key) is run:
            del self._runs[run.key]
        if run.message_key is not None and self._message_runs.get(run.message_key) is run:
            del self._message_runs[run.message_key]
        run.message_key = None

    async def _continue(self, run: _Run, call: SendMessage, request: RequestInfo,
                        digest: bytes) -> _Run | Task:
        task = run.task
        message = call.message
        if message.context_id and message.context_id != task.context_id:
            raise InvalidParams(
                f"Invalid params: message.contextId {message.context_id!r} does not match "
                f"the context {task.context_id!r} of task {task.id!r}"
            )
        state = task.status.state
        if state not in lifecycle.INTERRUPTED_STATES:
            if state in TERMINAL_STATES:
                raise InvalidTaskState(
                    f"Task {task.id} is {state.value}; a finished task takes no more messages"
                )
            raise InvalidTaskState(
                f"Task {task.id} is {state.value}; it takes a message only while it waits for input"
            )
        if run.key in self._runs and self._runs[run.key] is not run:
            raise InvalidTaskState(f"Task {task.id} is already being continued")
        message_id = message.message_id
        message = msgspec.structs.replace(message, task_id=task.id, context_id=task.context_id)
        run.request = request
        run.settled = Signal()
        run.digest = digest
        run.followup = (message_id, digest)
        self._track(run, run.scope, message_id)
        try:
            await self.push.add_send_configs(run.scope, task.id, call, request)
            await self._emit(run, [HistoryAppended(message=message),
                                   self._status(task, TaskState.WORKING)])
        except MessageExists as exc:  # the same follow-up, taken by another process
            self._untrack(run)
            return await self._repeated(run.scope, call, exc.record, digest)
        except BaseException:
            self._untrack(run)
            raise
        finally:
            run.followup = None
        self._start_turn(run, message)
        return run

    async def _answer(self, scope: Scope, task_id: str, history_length: int | None,
                      blocking: bool) -> Task:
        run = self._runs.get(task_key(scope, task_id))
        if run is not None:
            if blocking:
                result = await self._settle(run, history_length)
                if isinstance(result, Task):
                    return result
            return self._view(run.task, history_length)
        rec = await self.store.get_task(scope, task_id, history_length=self._hl(history_length))
        if rec is None:
            raise TaskNotFound(f"Task not found: {task_id}")
        return rec.task

    async def _settle(self, run: _Run, history_length: int | None) -> Task | Message:
        await run.settled.wait()
        if run.reply_message is not None:
            return run.reply_message
        if run.duplicate is not None:
            return await self._answer(run.scope, run.duplicate, history_length, True)
        return self._view(run.task, history_length)

    def _hl(self, history_length: int | None) -> int | None:
        return self.config.default_history_length if history_length is None else history_length

    def _view(self, task: Task, history_length: int | None) -> Task:
        """The task as answered: history trimmed, without copying the rest."""
        n = self._hl(history_length)
        if n is None or len(task.history) <= n:
            return task
        return msgspec.structs.replace(task, history=task.history[-n:] if n else [])

    # --------------------------------------------------------------- the turn

    def _start_turn(self, run: _Run, message: Message) -> None:
        ctx = Context(run, message, run.request, cancelled=run.cancelled)
        ticket = self.security.executors.take()
        turn = asyncio.get_running_loop().create_task(self._turn(run, ctx, ticket))
        run.turn = turn
        self._turns[turn] = ticket
        turn.add_done_callback(self._turn_done)

    def _turn_done(self, turn: asyncio.Task[None]) -> None:
        # The turn's place is given back also when it was cancelled before it ever ran.
        ticket = self._turns.pop(turn, None)
        if ticket is not None:
            ticket.release()

    async def _turn(self, run: _Run, ctx: Context, ticket: Ticket | None = None) -> None:
        try:
            gate = self.security.executors
            if gate.unbounded(ticket):
                # Awaited here, not in the gate: a waiting turn holds one frame
                # (and a closure) less.
                await self.agent.run(ctx)
            else:
                # in the executor cap's slot, within the run-time and inactivity limits
                await gate.run(ticket, self.agent.run, ctx, run.activity)
            if not ctx.finished and run.pending_state not in lifecycle.RETURN_STATES:
                # An executor that returns without a final word has finished its work.
                await self._emit(run, [self._status(run.task, TaskState.COMPLETED)])
            elif run.pending:
                await self._flush(run)
        except TaskCanceled:
            pass
        except MessageExists as exc:
            # Another process made the task for this message first: its callers
            # here are answered with that task, and this turn's work is dropped.
            run.duplicate = exc.record.task_id
            log.warning("task %s: message %s already has task %s (made by another "
                        "process); this turn's work is dropped", run.task.id,
                        exc.message_id, exc.record.task_id)
        except LeaseLost:
            log.warning("task %s: this process lost its lease; the task is left to the "
                        "process that revoked it", run.task.id)
        except asyncio.CancelledError:
            if not run.cancelled.is_set():
                raise
        except ExecutorTimeout as exc:
            await self._fail(run, str(exc))
        except LifecycleError as exc:
            if run.task.status.state not in TERMINAL_STATES:
                await self._fail(run, f"The agent made an invalid state change: {exc}")
        except Exception as exc:
            log.exception("executor of task %s failed", run.task.id)
            await self._fail(run, f"The agent failed: {type(exc).__name__}: {exc}")
        finally:
            self._untrack(run)
            run.flushed.set()
            run.settled.set()

    async def _fail(self, run: _Run, text: str) -> None:
        with contextlib.suppress(LifecycleError, TaskCanceled, ConcurrentModification,
                                 LeaseLost, MessageExists):
            await self._emit(run, [self._status(run.task, TaskState.FAILED, text)])

    def _status(self, task: Task, state: TaskState, text: str | None = None) -> StatusUpdate:
        message = None
        if text is not None:
            message = Message(message_id=new_id(), role=Role.AGENT, parts=[TextPart(text=text)],
                              task_id=task.id, context_id=task.context_id)
        return StatusUpdate(task_id=task.id, context_id=task.context_id,
                            status=TaskStatus(state=state, message=message, timestamp=self.now()))

    # ------------------------------------------------------------ writing events

    async def _persist_created(self, run: _Run) -> None:
        async with run.lock:
            if not run.persisted:
                await self._write(run, [])

    async def _emit(self, run: _Run, events: Sequence[Event], *, wait: bool = True) -> None:
        """Check ``events`` and have them written.

        ``wait=False`` (artifact chunks, progress updates) queues them and
        returns: a fast executor then gets many events into one transaction,
        and readers still see nothing before it commits. Queued events are
        written when the executor next yields, when the queue is full, or with
        the next waiting emit, whichever comes first.
        """
        if run.error is not None:
            error, run.error = run.error, None
            raise error
        if run.task.status.state is TaskState.CANCELED:
            raise TaskCanceled(f"task {run.task.id} was canceled")
        run.pending_state = lifecycle.check_from(run.pending_state, run.task.id, events)
        run.pending.extend(events)
        if wait:
            await self._flush(run)
        elif not run.persisted or len(run.pending) >= FLUSH_EVERY:
            await self._flush(run)
            # An executor that never awaits anything else would keep the loop
            # to itself: let the streams send what was just committed.
            await asyncio.sleep(0)
        elif run.flusher is None:
            run.flusher = asyncio.get_running_loop().create_task(self._flush_soon(run))

    async def _flush_soon(self, run: _Run) -> None:
        try:
            await self._flush(run)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # handed to the executor at its next emit
            run.error = exc
        finally:
            run.flusher = None

    async def _flush(self, run: _Run) -> None:
        async with run.lock:
            if not run.pending and run.persisted:
                return
            events, run.pending = run.pending, []
            try:
                await self._write(run, events)
            except ConcurrentModification:
                # Someone else (another request or replica) wrote first: reload and re-check.
                rec = await self.store.get_task(run.scope, run.task.id)
                if rec is None:
                    raise TaskNotFound(f"Task not found: {run.task.id}") from None
                run.task, run.version = rec.task, rec.version
                run.pending_state = rec.task.status.state
                if rec.task.status.state is TaskState.CANCELED:
                    raise TaskCanceled(f"task {run.task.id} was canceled") from None
                run.pending_state = lifecycle.check_all(run.task, events)
                await self._write(run, events)
            except BaseException:
                # The batch is lost; what follows is checked against what was stored.
                run.pending = []
                run.pending_state = run.task.status.state
                raise

    async def _write(self, run: _Run, events: Sequence[Event]) -> None:
        now = self.now()
        if not run.persisted:
            assert run.initial is not None
            batch: list[Event] = [TaskCreated(task=run.initial), *events]
            try:
                version = await self.store.create_task(
                    run.scope, batch, dialect=run.dialect, now=now, message_id=run.message_id,
                    push_configs=run.push_configs, digest=run.digest, lease=self.leases.epoch,
                )
            except TaskExists:
                raise InvalidTaskState(f"Task {run.task.id} already exists") from None
            run.persisted = True
            run.initial = None  # the created event holds it now, as long as it is needed
            run.flushed.set()
            base = 0
        else:
            batch = list(events)
            version = await self.store.append(run.scope, run.task.id, run.version, batch,
                                              now=now, lease=self.leases.epoch,
                                              message=run.followup)
            run.followup = None
            base = run.version
        for event in events:  # checked in _emit
            lifecycle.apply(run.task, event, checked=True)
        run.version = version
        await self.bus.publish(run.key, [StoredEvent(seq=base + i + 1, event=e)
                                         for i, e in enumerate(batch)])
        if run.task.status.state in lifecycle.RETURN_STATES:
            run.settled.set()

    async def _reply(self, run: _Run, message: Message) -> None:
        if (not run.persisted and run.initial is not None and len(run.task.history) == 1
                and run.dialect != "0.1"):
            # A first answer with no task: the caller gets the bare message.
            # (v0.1 has no bare answers: its callers named the task, and they
            # get it completed with the message as its status message.)
            run.reply_message = message
            run.flushed.set()
            run.settled.set()
            return
        message = msgspec.structs.replace(message, task_id=run.task.id)
        await self._emit(run, [StatusUpdate(
            task_id=run.task.id, context_id=run.task.context_id,
            status=TaskStatus(state=TaskState.COMPLETED, message=message, timestamp=self.now()))])

    async def _context_tasks(self, run: _Run) -> list[Task]:
        out: list[Task] = []
        token: str | None = None
        while True:
            page = await self.store.list_tasks(run.scope, ListTasks(
                context_id=run.task.context_id, page_size=100, page_token=token,
                include_artifacts=True))
            out.extend(t for t in page.tasks if t.id != run.task.id)
            token = page.next_page_token
            if not token:
                break
        out.reverse()
        return out

    # ---------------------------------------------------------------- reading

    async def get_task(self, call: GetTask, request: RequestInfo) -> Task:
        scope = self.scope_of(request)
        if call.history_length is not None and call.history_length < 0:
            raise InvalidParams("Invalid params: historyLength must not be negative")
        run = self._runs.get(task_key(scope, call.id))
        if run is not None and run.persisted:
            return self._view(run.task, call.history_length)
        rec = await self.store.get_task(scope, call.id, history_length=self._hl(call.history_length))
        if rec is None:
            raise TaskNotFound(f"Task not found: {call.id}")
        return rec.task

    async def list_tasks(self, call: ListTasks, request: RequestInfo) -> ListTasksResult:
        if not 1 <= call.page_size <= 100:
            raise InvalidParams("Invalid params: pageSize must be between 1 and 100")
        if call.history_length is not None and call.history_length < 0:
            raise InvalidParams("Invalid params: historyLength must not be negative")
        if call.history_length is None and self.config.default_history_length is not None:
            call = msgspec.structs.replace(call, history_length=self.config.default_history_length)
        return await self.store.list_tasks(self.scope_of(request), call)

    async def cancel_task(self, call: CancelTask, request: RequestInfo) -> Task:
        scope = self.scope_of(request)
        run = self._runs.get(task_key(scope, call.id))
        if run is None or not run.persisted:
            rec = await self.store.get_task(scope, call.id)
            if rec is None:
                raise TaskNotFound(f"Task not found: {call.id}")
            run = _Run(self, scope, rec.task, version=rec.version, persisted=True,
                       dialect=rec.dialect, request=request)
        state = run.task.status.state
        if state in TERMINAL_STATES:
            raise TaskNotCancelable(
                f"Task {call.id} is {state.value} and can no longer be canceled")
        # Cancels have the same effect: one that races the winning one answers
        # with the task canceled, never with the state it read before.
        for _ in range(8):
            try:
                await self._emit(run, [self._status(run.task, TaskState.CANCELED)])
                break
            except TaskCanceled:
                break  # another cancel won (seen on reloading after a lost race)
            except LifecycleError:
                # A write is in flight (another cancel, or the executor's last
                # event): wait until it is stored, then look again.
                async with run.lock:
                    pass
                state = run.task.status.state
                if state is TaskState.CANCELED:
                    break
                if state in TERMINAL_STATES:
                    raise TaskNotCancelable(
                        f"Task {call.id} is {state.value} and can no longer be canceled"
                    ) from None
                await asyncio.sleep(0)
        else:
            raise TaskNotCancelable(f"Task {call.id} could not be canceled; try again")
        run.cancelled.set()
        if run.turn is not None and not run.turn.done():
            run.turn.cancel()
        return run.task

    async def open_stream(
        self,
        call: SendMessage | SubscribeToTask,
        request: RequestInfo,
        *,
        last_event_id: int | None = None,
    ) -> Stream:
        """A streaming send or a subscription: checked now, then streamed."""
        await self.security.authorize(self, call, request)
        return await open_stream(self, call, request, last_event_id=last_event_id)

    def extended_card(self, request: RequestInfo) -> AgentCard:
        """The caller's extended card (the agent's hook gets the principal when it takes two)."""
        ext = self.agent.extended_card
        if ext is None or self._card is None:
            raise ExtendedCardNotConfigured()
        return self.security.extended_card(ext, self._card(), request)
