"""The task engine: carries out the A2A calls on tasks, against a store and a bus.

Every change to a task is a batch of events, checked against the lifecycle,
committed to the store in one transaction, then announced (``server/run.py``).
Executors run as asyncio tasks that outlive the request that started them
(``server/turns.py``). A blocking send is answered by the process that runs
the turn, so it waits on the run itself; readers that may be elsewhere
(streams, resubscribe, push) read the log and wait on the bus
(``server/streams.py``).

The engine declares what it needs from authorization, limits and push
notifications (``server/ports.py``) and receives them as arguments; it imports
none of their implementations.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from datetime import datetime, timedelta
from typing import Any

import msgspec

from ..bus.base import Bus, shared
from ..core import lifecycle
from ..core.calls import (
    Call,
    CancelTask,
    DeletePushConfig,
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    ListTasks,
    ListTasksResult,
    Result,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from ..core.dialects._common import format_timestamp
from ..core.errors import (
    AuthorizationFailed,
    ConcurrentModification,
    ExtendedCardNotConfigured,
    ExtendedCardNotSupported,
    InvalidParams,
    LifecycleError,
    TaskNotCancelable,
    UnsupportedOperation,
    task_not_found,
)
from ..core.model import (
    TERMINAL_STATES,
    AgentCard,
    Message,
    Task,
    TaskState,
)
from ..core.nesting import CARRIED
from ..hooks import Hooks, notify
from ..signals import DONE
from ..stores.base import Scope, TaskStore
from .agent import Agent
from .context import RequestInfo, TaskCanceled
from .idempotency import MessageIds, message_id_mode
from .leases import LeaseKeeper
from .long_poll import LongPolls
from .peers import Peers
from .ports import NO_ADMISSION, NO_PUSH, OPEN, Admission, Authorizer, PushHooks, TurnGate
from .recovery import RESTART_POLICIES, OrphanListener, Recovery
from .run import CommitListener, OneOffRun, Run, Runs, Writer, utcnow
from .sends import Sends
from .streams import Stream, Streams
from .turns import TurnRunner

__all__ = ["Engine", "EngineConfig"]

log = logging.getLogger("interlingua.engine")

_PUSH_CALLS = (SetPushConfig, GetPushConfig, ListPushConfigs, DeletePushConfig)


class EngineConfig(msgspec.Struct, kw_only=True):
    #: what happens to tasks a stopped process left submitted/working:
    #: "fail" (end them failed) or "rerun" (run the turn again)
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
    #: seconds a new task's executor has to say something before the task is
    #: written as ``submitted`` (and streamed) without it; once written, a bare
    #: message from the executor completes the task instead of replacing it.
    #: 0: written before the executor runs; None: only when the executor first
    #: speaks (as for an agent created with ``replies_with_messages=True``)
    submit_grace: float | None = 0.05
    #: what a message id names (server/idempotency.py): "content", a message by its
    #: id and content, so a known id with other content is a new message; "strict",
    #: one message per id, other content under a known id refused (InvalidParams).
    #: Every process on one store should use the same.
    message_ids: MessageIds = "content"
    #: seconds ``stop`` waits for canceled turns to end; a turn still running then (its
    #: executor swallowed the cancellation) is left behind and its task ends failed
    stop_timeout: float = 10.0
    #: seconds a GetTask with ``currentGeneration`` (A2A 1.1, draft) is held at most
    #: before it is answered with the task as it is (server/long_poll.py); 0: never held
    long_poll_max_wait: float = 30.0

    def __post_init__(self) -> None:
        # Checked here, where a value is given, not where it is first used: a mistyped
        # policy or a lease that times out before its next heartbeat would otherwise
        # only show as tasks ended wrongly, on one process or on all of them.
        if self.restart_policy not in RESTART_POLICIES:
            raise ValueError(f"restart_policy={self.restart_policy!r}: use one of "
                             f"{', '.join(RESTART_POLICIES)}")
        message_id_mode(self.message_ids)
        for name in ("retention_interval", "heartbeat_interval", "lease_interval"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be above 0 seconds, got {getattr(self, name)!r}")
        for name in ("stop_timeout", "long_poll_max_wait"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)!r}")
        if self.retention is not None and not self.retention > 0:
            raise ValueError(f"retention must be above 0 seconds (or None: forever), "
                             f"got {self.retention!r}")
        if self.submit_grace is not None and not self.submit_grace >= 0:
            raise ValueError(f"submit_grace must not be negative (or None), "
                             f"got {self.submit_grace!r}")
        if self.default_history_length is not None and self.default_history_length < 0:
            raise ValueError("default_history_length must not be negative (or None: all),"
                             f" got {self.default_history_length!r}")
        if self.max_lag < 1:
            raise ValueError(f"max_lag must be at least 1 event, got {self.max_lag!r}")
        if not self.lease_timeout > self.lease_interval:
            # a lease silent for lease_timeout is revoked: one not beaten again by then
            # would be revoked while its process lives
            raise ValueError(f"lease_timeout ({self.lease_timeout!r} s) must be longer "
                             f"than lease_interval ({self.lease_interval!r} s)")


class Engine:
    """Runs an agent's tasks against a store and a bus.

    ``authorizer``, ``admission``, ``gate`` and ``push``: the ports of
    ``server/ports.py`` (default: everything allowed, no limits, no push).
    ``legacy_owner_of``: how to re-key a store whose owners predate keys
    by scheme (``AuthConfig.legacy_owner_of``).
    ``output_nesting``: the levels the agent's statuses and artifacts may nest
    (``Limits.max_nesting``; core/nesting.py).
    """

    def __init__(
        self,
        agent: Agent,
        store: TaskStore,
        bus: Bus,
        *,
        config: EngineConfig | None = None,
        clock: Callable[[], datetime] = utcnow,
        card: Callable[[], AgentCard] | None = None,
        authorizer: Authorizer = OPEN,
        admission: Admission = NO_ADMISSION,
        gate: TurnGate | None = None,
        push: PushHooks = NO_PUSH,
        legacy_owner_of: Callable[[], Callable[[str], str]] | None = None,
        hooks: Hooks | None = None,
        output_nesting: int = CARRIED,
    ) -> None:
        self.agent = agent
        self.store = store
        self.bus = bus
        self.config = config = config or EngineConfig()
        self._clock = clock
        self._card = card
        self.authorizer = authorizer
        self.admission = admission
        self.push = push
        self._legacy_owner_of = legacy_owner_of
        #: where observers hook in (``interlingua.hooks``): empty unless one registers
        self.hooks = hooks = hooks if hooks is not None else Hooks()
        self._stream_hooks = hooks.streams
        #: asked before the cancel of a task not ended (running, or waiting for its
        #: caller) is written and its turn stopped; one raises the refusal. A host adds
        #: its own: the mesh's gateway has the agent cancel it first
        self.before_cancel: list[Callable[[Task], Awaitable[None]]] = []
        self.leases = LeaseKeeper(store, interval=config.lease_interval,
                                  timeout=config.lease_timeout, hooks=hooks)
        self.runs = Runs()
        self.writer = Writer(store, bus, lease=self.leases.current_epoch, clock=clock,
                             strict_ids=config.message_ids == "strict", hooks=hooks,
                             max_nesting=output_nesting, outage_grace=config.lease_timeout)
        self.turns = TurnRunner(agent, self.writer, self.runs, gate, hooks)
        self.recovery = Recovery(store, store, self.leases, self.runs, self.writer,
                                 self.turns.start,
                                 restart_policy=config.restart_policy)
        self.writer.retake_lease = self.recovery.retake_lease
        self.sends = Sends(store, self.runs, self.writer, self.turns, push, admission,
                           default_history_length=config.default_history_length,
                           submit_grace=None if agent.replies_with_messages
                           else config.submit_grace,
                           leases=self.leases,
                           message_ids=config.message_ids)
        self.streams = Streams(store, bus, self.runs, self.sends.begin,
                               heartbeat_interval=config.heartbeat_interval,
                               max_lag=config.max_lag, leases=self.leases,
                               default_history_length=config.default_history_length,
                               view=self.sends.view)
        self.peers = Peers(store, bus, self.runs, self.writer)
        #: a bus shared with other processes (Redis) says that they serve the store too,
        #: from the start (``leases.shared`` says so from the next look at the leases)
        self._shared_bus = shared(bus)
        self.long_polls = LongPolls(bus, config.long_poll_max_wait, unheard=self.streams.unheard)
        self.recovery.on_heartbeat.append(self._look_for_unheard_writes)
        self._sweeper: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        #: a plain attribute, not a property: the front door reads it on every request
        self.started = False
        self._start_lock = asyncio.Lock()
        self.closing = False
        #: set from the moment the drain begins (``draining``): what waits on it,
        #: gRPC health checking, says so then, as ``/healthz`` does
        self.drain_begun = asyncio.Event()
        #: set to end the drain's wait at once (``cut_drain``)
        self._drain_cut = asyncio.Event()
        #: when (the loop's time) the drain under way ends its turns (``drain_left``)
        self._drain_deadline: float | None = None

    async def _look_for_unheard_writes(self) -> None:
        """Other processes write this store and no bus tells of it: their writes to the
        tasks run here (a cancel) are looked for in the store at each heartbeat."""
        if self.streams.unheard():
            await self.peers.look_in_store()

    @property
    def closing(self) -> bool:
        """Set when the server is shutting down: open streams end cleanly, and long
        polls are answered at once (not cut as the listeners close)."""
        return self.streams.closing

    @closing.setter
    def closing(self, value: bool) -> None:
        self.streams.closing = value
        if value:
            self.long_polls.close()
        else:
            self.long_polls.open()

    def now(self) -> str:
        return self.writer.now()

    def on_commit(self, listener: CommitListener) -> None:
        """Have ``listener(run, stored_events)`` called after every commit."""
        self.writer.on_commit.append(listener)

    def on_orphan_ended(self, listener: OrphanListener) -> None:
        """Have ``listener(run)`` called for each task this process ends because the
        process that ran it is gone (the restart policy ``fail``)."""
        self.recovery.on_ended.append(listener)

    # ---------------------------------------------------------------- lifetime

    async def start(self) -> None:
        async with self._start_lock:
            if self.started:
                return
            await self.store.open()
            await self.peers.join()
            try:
                await self.recovery.key_owners_by_scheme(self._legacy_owner_of)
            except BaseException:
                await self.store.close()
                raise
            self.started = True
            self.closing = False
            self._drain_cut.clear()
            await self.leases.acquire()
            await self.recovery.end_orphans(restarted=True)
            await self.push.start()
            loop = asyncio.get_running_loop()
            self._keeper = loop.create_task(self.recovery.keep_lease())
            if self.config.retention is not None:
                self._sweeper = loop.create_task(self._sweep())

    @property
    def draining(self) -> bool:
        """Set while the server drains before it stops: no new sends are taken
        (the flag is the sends', read there on every send)."""
        return self.sends.draining

    @draining.setter
    def draining(self, value: bool) -> None:
        self.sends.draining = value
        if value:
            self.drain_begun.set()
        else:
            self.drain_begun.clear()

    def health(self) -> tuple[str, str | None]:
        """What ``/healthz`` says of this engine, from what it knows (no call to the
        store): ``"draining"``; ``"store_unreachable"`` once the store has not taken
        its lease for the lease timeout (and why, without the store's address);
        else ``"ok"``."""
        if self.draining:
            return "draining", None
        silent = self.leases.silent_for()
        if silent is not None:
            return "store_unreachable", (
                f"the task store has not taken this server's lease for {silent:.1f} s "
                f"(lease timeout {self.config.lease_timeout:g} s)")
        return "ok", None

    async def ensure_started(self) -> None:
        if not self.started:
            await self.start()

    @property
    def running_turns(self) -> int:
        return len(self.turns.turns)

    @property
    def open_streams(self) -> int:
        return self.streams.open_count

    async def drain(self, seconds: float) -> int:
        """Stop taking new sends and let the turns running here finish, for up
        to ``seconds``; then end those still running ("failed", unless the restart
        policy reruns them) and give their streams a moment to hand out their last
        events. Returns how many turns were still running at the deadline."""
        loop = asyncio.get_running_loop()
        deadline = self._drain_deadline = loop.time() + seconds
        self.draining = True
        cut = asyncio.ensure_future(self._drain_cut.wait())
        try:
            while self.turns.turns and loop.time() < deadline and not cut.done():
                await asyncio.wait([*self.turns.turns, cut], timeout=deadline - loop.time(),
                                   return_when=asyncio.FIRST_COMPLETED)
        finally:
            cut.cancel()
        left = len(self.turns.turns)
        grace = min(1.0, max(deadline - loop.time(), 0.0))
        if left and self.config.restart_policy != "rerun":
            # ended now, while their callers are still there: a blocking caller is
            # answered with the failed task and a stream hands out its end (cut by
            # the server's shutdown instead, they got a 500 and lost their ends)
            await self.end_turns()
            grace = 1.0
        until = loop.time() + grace
        while self.streams.open_count and loop.time() < until:
            await asyncio.sleep(0.02)
        return left

    def drain_left(self) -> float:
        """Seconds until the drain under way ends the turns still running (0: none is
        under way, or its window is over)."""
        if self._drain_deadline is None or not self.draining:
            return 0.0
        return max(0.0, self._drain_deadline - asyncio.get_running_loop().time())

    def cut_drain(self) -> None:
        """End the drain's wait now (the server is told to stop at once): the turns
        still running end as at the window's close, their callers answered."""
        self._drain_cut.set()

    async def end_turns(self) -> None:
        """End the turns still running: "failed", as the process that runs them goes
        away; with the restart policy "rerun" left as they are, for the next start (or
        another process, once this one's lease lapses) to run again."""
        runs = self.runs.all()
        self.writer.rides_outages = False  # (a stop is not held for the store's outage)
        if self.sends.grace is not None:
            self.sends.grace.close()
        # written before the turns are canceled: a blocking caller is answered with
        # the task failed, not with it as it was when its turn was cut
        for run in runs if self.config.restart_policy != "rerun" else ():
            if run.persisted and run.task.status.state not in lifecycle.RETURN_STATES:
                with contextlib.suppress(Exception):
                    await self.writer.emit(run, [self.writer.status(
                        run.task, TaskState.FAILED,
                        "The server stopped while the task was running.")])
        left = await self.turns.stop(self.config.stop_timeout)
        if left:
            log.warning("%d turns did not end within %g s of being canceled (their"
                        " executors caught the cancellation); stopping without them",
                        len(left), self.config.stop_timeout)

    async def begin_shutdown(self) -> None:
        """Tell open streams to end and answer held long polls (the server is about
        to stop)."""
        self.closing = True
        await self.bus.close()

    async def stop(self) -> None:
        self.closing = True
        if not self.started:
            return
        for task in (self._sweeper, self._keeper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._sweeper = self._keeper = None
        await self.end_turns()
        await self.push.stop()
        await self.bus.close()
        with contextlib.suppress(Exception):  # it lapses by itself otherwise
            await self.leases.release()
        await self.store.close()
        self.started = False

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

    def handle(self, call: Call, request: RequestInfo) -> Awaitable[Result]:
        """Carry out one non-streaming call (await the result)."""
        asked = self.authorizer.authorize(call, request, self._lookup)
        if asked is DONE and type(call) is SendMessage:
            # Nothing to ask (no policy): the send's own coroutine, not one awaiting
            # it, and not through self.send: a frame fewer for every send.
            return self.sends.send(call, request)
        return self._handle(asked, call, request)

    async def _handle(self, asked: Awaitable[None], call: Call, request: RequestInfo) -> Result:
        if type(call) is GetExtendedCard:
            return await self._card_of(asked, call, request)
        await asked
        if isinstance(call, SendMessage):
            return await self.sends.send(call, request)
        if isinstance(call, GetTask):
            return await self.get_task(call, request)
        if isinstance(call, ListTasks):
            return await self.list_tasks(call, request)
        if isinstance(call, CancelTask):
            return await self.cancel_task(call, request)
        if isinstance(call, _PUSH_CALLS):
            result: Result = await self.push.handle(call, request)
            return result
        raise UnsupportedOperation(f"{type(call).__name__} is not supported by this agent")

    async def _card_of(self, asked: Awaitable[None], call: GetExtendedCard,
                       request: RequestInfo) -> AgentCard | None:
        """The caller's extended card once the policy allows it. A call that is the
        caller's card (v0.3's ``GET /v1/card``, gRPC ``GetAgentCard``:
        ``public_if_none``) gets None, the public card, when there is no extended card
        for it: none configured, or the policy refuses it (it is shown the public card
        as a caller with no credentials is)."""
        try:
            await asked
            return self.extended_card(request)
        except (ExtendedCardNotConfigured, ExtendedCardNotSupported, AuthorizationFailed):
            if call.public_if_none:
                return None
            raise

    # -------------------------------------------------------------------- send

    def send(self, call: SendMessage,
             request: RequestInfo) -> Coroutine[Any, Any, Task | Message]:
        # Sends' own coroutine, not one awaiting it: a frame fewer per send.
        return self.sends.send(call, request)

    # ---------------------------------------------------------------- reading

    async def get_task(self, call: GetTask, request: RequestInfo) -> Task:
        scope = request.scope
        if call.history_length is not None and call.history_length < 0:
            raise InvalidParams("Invalid params: historyLength must not be negative")
        if call.current_generation is not None:
            return await self.long_polls.hold(call, scope, lambda: self._read(call, scope))
        run = self._local_run(scope, call.id)
        if run is not None:
            return self.sends.view(run.task, call.history_length)
        history_length = self.sends.history_length_or_default(call.history_length)
        rec = await self.store.get_task(scope, call.id, history_length=history_length)
        if rec is None:
            raise task_not_found(call.id)
        return rec.task

    def _local_run(self, scope: Scope, task_id: str) -> Run | None:
        """The turn this process runs for the task, when a read may be answered from it:
        its task is as new as the store's while no other process serves the store. With
        others, one of them may have written since (a cancel), and the store answers."""
        run = self.runs.get(scope, task_id)
        if run is None or not run.persisted or self._shared_bus or self.leases.shared:
            return None
        return run

    async def _read(self, call: GetTask, scope: Scope) -> tuple[Task, int]:
        """``get_task``'s answer, and the version (seq) of the log it is read at."""
        run = self._local_run(scope, call.id)
        if run is not None:
            return self.sends.view(run.task, call.history_length), run.version
        history_length = self.sends.history_length_or_default(call.history_length)
        rec = await self.store.get_task(scope, call.id, history_length=history_length)
        if rec is None:
            raise task_not_found(call.id)
        return rec.task, rec.version

    async def list_tasks(self, call: ListTasks, request: RequestInfo) -> ListTasksResult:
        if not 1 <= call.page_size <= 100:
            raise InvalidParams("Invalid params: pageSize must be between 1 and 100")
        if call.history_length is not None and call.history_length < 0:
            raise InvalidParams("Invalid params: historyLength must not be negative")
        if call.history_length is None and self.config.default_history_length is not None:
            call = msgspec.structs.replace(call, history_length=self.config.default_history_length)
        return await self.store.list_tasks(request.scope, call)

    async def cancel_task(self, call: CancelTask, request: RequestInfo) -> Task:
        scope = request.scope
        run = self.runs.get(scope, call.id)
        if run is not None and not run.persisted and self.sends.submit_grace is not None:
            # A new task still in its grace (only a v0.1 caller, who chose its
            # id, can name it): written now, so that it can be canceled.
            await self.writer.persist_created(run)
        elsewhere = run is None or not run.persisted
        if elsewhere:
            rec = await self.store.get_task(scope, call.id)
            if rec is None:
                raise task_not_found(call.id)
            run = OneOffRun(self.writer, scope, rec.task, version=rec.version,
                            persisted=True, dialect=rec.dialect, request=request)
        assert run is not None
        state = run.task.status.state
        if state in TERMINAL_STATES:
            raise TaskNotCancelable(
                f"Task {call.id} is {state.value} and can no longer be canceled")
        for check in self.before_cancel:
            await check(run.task)
        if elsewhere:
            return await self._cancel_as_stored(run)
        # Cancels have the same effect: one that races the winning one answers
        # with the task canceled, never with the state it read before.
        for _ in range(8):
            try:
                await self.writer.emit(run, [self.writer.status(run.task, TaskState.CANCELED)])
                break
            except TaskCanceled:
                break  # another cancel won (seen on reloading after a lost race)
            except ConcurrentModification:
                # the task moved on twice while this cancel was written (another
                # process's turn writing it): the run has caught up, try again
                await asyncio.sleep(0)
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
        run.cancel()
        return run.task

    async def _cancel_as_stored(self, run: Run) -> Task:
        """The cancel of a task no turn of which runs here (one may run in another
        process, writing all the while): written at whatever version the task is at,
        then answered with the task as stored. Found canceled meanwhile, it is answered
        so; found ended otherwise, refused."""
        try:
            await self.writer.write_as_stored(
                run, [self.writer.status(run.task, TaskState.CANCELED)])
        except LifecycleError as exc:
            if exc.state is not TaskState.CANCELED:
                state = exc.state.value if isinstance(exc.state, TaskState) else exc.state
                raise TaskNotCancelable(
                    f"Task {run.task.id} is {state} and can no longer be canceled") from None
            rec = await self.store.get_task(run.scope, run.task.id)
            if rec is None:
                raise task_not_found(run.task.id) from None
            return rec.task
        return run.task

    async def open_stream(
        self,
        call: SendMessage | SubscribeToTask,
        request: RequestInfo,
        *,
        last_event_id: int | None = None,
    ) -> Stream:
        """A streaming send or a subscription: checked now, then streamed."""
        await self.authorizer.authorize(call, request, self._lookup)
        stream = await self.streams.open(call, request, last_event_id=last_event_id)
        if self._stream_hooks:
            notify(self._stream_hooks, stream)
        return stream

    def extended_card(self, request: RequestInfo) -> AgentCard:
        """The caller's extended card (the agent's hook gets the principal when it takes two).
        An agent whose card offers none: ``ExtendedCardNotSupported`` (spec §3.3.4);
        one whose card offers one it does not have: ``ExtendedCardNotConfigured``."""
        ext = self.agent.extended_card
        card = self._card() if self._card is not None else None
        if not (card.capabilities.extended_card if card is not None else ext is not None):
            raise ExtendedCardNotSupported()
        if ext is None or card is None:
            raise ExtendedCardNotConfigured()
        return self.authorizer.extended_card(ext, card, request)

    async def dialect_of(self, request: RequestInfo, task_id: str) -> str | None:
        """The dialect the caller's task was created in (None: the caller has no such task)."""
        rec = await self.store.get_task(request.scope, task_id, history_length=0,
                                        include_artifacts=False)
        return rec.dialect if rec is not None else None

    async def _lookup(self, request: RequestInfo, task_id: str) -> Task | None:
        """The caller's task, as a policy sees it (no history, no artifacts)."""
        rec = await self.store.get_task(request.scope, task_id, history_length=0,
                                        include_artifacts=False)
        return rec.task if rec is not None else None
