"""Running executors: each turn as an asyncio task, in its place, within its time.

A send reserves a place (``ExecutorGate.admission``) before it starts a turn,
so a busy agent refuses the send instead of queueing it without bound; the
turn then runs in its place, within the run-time and inactivity limits of
``Limits`` (``TurnRunner``). Executors run as asyncio tasks that outlive the
request that started them; how a turn ends (returned, raised, timed out,
canceled) becomes the task's last status of that turn.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar, Token
from typing import Any, Protocol

from ..core import lifecycle
from ..core.errors import LifecycleError, ResourceUnavailable
from ..core.model import TERMINAL_STATES, Message, TaskState
from ..hooks import Hooks, ended, started
from ..stores.base import LeaseLost, MessageExists, StoreUnavailable
from .agent import Agent, answer
from .context import Context, TaskCanceled
from .ports import TurnGate
from .run import Run, Runs, Writer

__all__ = ["NO_LIMITS", "ExecutorGate", "ExecutorTimeout", "Ticket", "TurnLimits", "TurnRunner"]

log = logging.getLogger("interlingua.engine")


class TurnLimits(Protocol):
    """What the gate reads of the limits (``server/auth``'s ``Limits`` has them all)."""

    @property
    def max_running(self) -> int | None:
        """Turns running at once (None: no cap)."""

    @property
    def when_busy(self) -> str:
        """"queue": wait for a free place (up to ``max_queued``); "reject": refuse."""

    @property
    def max_queued(self) -> int: ...

    @property
    def run_timeout(self) -> float | None:
        """Seconds one turn may run."""

    @property
    def idle_timeout(self) -> float | None:
        """Seconds a turn may go without writing an event."""


class _NoLimits:
    __slots__ = ()
    max_running = None
    when_busy = "queue"
    max_queued = 0
    run_timeout = None
    idle_timeout = None


#: no cap on turns, no clock on them
NO_LIMITS: TurnLimits = _NoLimits()


class ExecutorTimeout(Exception):
    """A turn ran too long or went quiet; the message is the task's failure reason."""


class Ticket:
    """A turn's place: counted from the send that asked for it until the turn ends."""

    __slots__ = ("_gate", "_held", "_released", "taken")

    def __init__(self, gate: ExecutorGate | None) -> None:
        self._gate = gate
        self._released = False
        self._held = False
        #: a turn owns it (else the send that reserved it releases it)
        self.taken = False

    def release(self) -> None:
        if self._released or self._gate is None:
            return
        self._released = True
        self._gate._reserved -= 1
        if self._held:
            self._held = False
            self._gate._slots.release()

    async def acquire(self) -> None:
        """Wait for a free executor slot (queue mode)."""
        if self._gate is None or self._held:
            return
        await self._gate._slots.acquire()
        self._held = True


#: the place of every turn when their number has no cap: nothing to count or release
_FREE = Ticket(None)
_FREE.taken = True

# The ticket a send reserved, for the turn it starts (the send's own asyncio task).
_ADMITTED: ContextVar[Ticket | None] = ContextVar("interlingua_admitted_turn", default=None)


class _Admission:
    # A class, not @contextmanager: it is entered on every send, and the
    # generator machinery cost more than what it guards.
    __slots__ = ("ticket", "token")

    def __init__(self, ticket: Ticket) -> None:
        self.ticket = ticket
        self.token: Token[Ticket | None] | None = None

    def __enter__(self) -> None:
        self.token = _ADMITTED.set(self.ticket)

    def __exit__(self, *exc: object) -> None:
        if self.token is not None:
            _ADMITTED.reset(self.token)
        if not self.ticket.taken:
            self.ticket.release()


class ExecutorGate:
    """How many turns may run at once, and how many may wait."""

    def __init__(self, limits: TurnLimits) -> None:
        self.limits = limits
        self._reserved = 0
        self._slots = asyncio.Semaphore(limits.max_running or 1)

    @property
    def reserved(self) -> int:
        """Turns running or waiting to run."""
        return self._reserved

    def reserve(self, *, force: bool = False) -> Ticket:
        """A place for one more turn; ``ResourceUnavailable`` when there is none."""
        cap = self.limits.max_running
        if cap is None:
            return _FREE
        room = cap if self.limits.when_busy == "reject" else cap + self.limits.max_queued
        if self._reserved >= room and not force:
            waiting = "" if self.limits.when_busy == "reject" else \
                f" and {self.limits.max_queued} waiting"
            raise ResourceUnavailable(
                f"The agent is busy ({cap} tasks running{waiting}); try again later")
        self._reserved += 1
        return Ticket(self)

    def admission(self) -> AbstractContextManager[None] | None:
        """Around a send: a place is reserved (or ``ResourceUnavailable`` raised)
        for the turn the send starts; released if it starts none. None: no cap,
        nothing reserved and nothing to enter."""
        if self.limits.max_running is None:
            # No cap: every turn has the one free place, and the send has nothing
            # to hand its turn (a context variable set per send would stay in the
            # context of every running turn, with its ticket).
            return None
        return _Admission(self.reserve())

    def take(self) -> Ticket:
        """The place for a turn being started: the admitted send's, or a new one."""
        ticket = _ADMITTED.get()
        if ticket is None or ticket.taken:
            if self.limits.max_running is None:
                return _FREE  # no cap: what reserve gives, without the call
            ticket = self.reserve(force=True)
        ticket.taken = True
        return ticket

    def unbounded(self, ticket: Any) -> bool:
        """A turn in ``ticket`` needs no slot and no clock: it can be awaited directly."""
        limits = self.limits
        return (ticket is None or ticket._gate is None) and \
            limits.run_timeout is None and limits.idle_timeout is None

    async def run(self, ticket: Any, executor: Callable[[Context], Awaitable[Any]],
                  ctx: Context, activity: Callable[[], int]) -> Any:
        """Run one turn in ``ticket``'s slot, within the time limits: what the
        executor returns."""
        limits = self.limits
        try:
            if ticket is not None:
                await ticket.acquire()
            if limits.run_timeout is None and limits.idle_timeout is None:
                # Awaited here, not in _timed: one coroutine (and its frame) less
                # held by every waiting turn.
                return await executor(ctx)
            return await _timed(limits, executor, ctx, activity)
        finally:
            if ticket is not None:
                ticket.release()


async def _timed(limits: TurnLimits, executor: Callable[[Context], Awaitable[Any]], ctx: Context,
                 activity: Callable[[], int]) -> Any:
    """The executor within ``limits``' run time and inactivity limits (at least one set)."""
    run_timeout, idle_timeout = limits.run_timeout, limits.idle_timeout
    loop = asyncio.get_running_loop()
    start = loop.time()
    hard = start + run_timeout if run_timeout is not None else math.inf
    if run_timeout is not None and ctx.deadline is None:
        ctx.deadline = hard
    last_seen, last_at = activity(), start

    def deadline() -> float:
        return min(hard, last_at + idle_timeout) if idle_timeout is not None else hard

    handle: asyncio.TimerHandle | None = None
    try:
        async with asyncio.timeout_at(deadline()) as cm:
            if idle_timeout is not None:
                interval = min(idle_timeout / 4, 1.0)

                def check() -> None:
                    nonlocal last_seen, last_at, handle
                    if cm.expired():
                        # The limit fired and the executor is being cancelled: a
                        # reschedule now raises, and a late report cannot undo it.
                        handle = None
                        return
                    seen = activity()
                    if seen != last_seen:
                        last_seen, last_at = seen, loop.time()
                        cm.reschedule(deadline())
                    handle = loop.call_later(interval, check)

                handle = loop.call_later(interval, check)
            return await executor(ctx)
    except TimeoutError:
        if not cm.expired():
            raise  # the executor's own timeout, not ours
        if loop.time() >= hard - 1e-3:
            raise ExecutorTimeout(
                f"The agent did not finish within {run_timeout:g} s (run timeout)") from None
        raise ExecutorTimeout(
            f"The agent reported nothing for {idle_timeout:g} s (inactivity timeout)") from None
    finally:
        if handle is not None:
            handle.cancel()


class TurnRunner:
    """Starts turns of ``agent`` and ends each one in a state of its task."""

    def __init__(self, agent: Agent, writer: Writer, runs: Runs,
                 gate: TurnGate | None = None, hooks: Hooks | None = None) -> None:
        self.agent = agent
        self.writer = writer
        self.runs = runs
        #: around each turn, in its own asyncio task
        self._turn_hooks = (hooks if hooks is not None else Hooks()).turns
        self.gate: TurnGate = gate if gate is not None else ExecutorGate(NO_LIMITS)
        #: running turns, with their places
        self.turns: dict[asyncio.Task[None], Any] = {}

    def start(self, run: Run, message: Message) -> None:
        inbox = run.inbox
        if inbox is None and self.agent.accepts_messages_while_working:
            inbox = asyncio.Queue()
        # by position: a class called with keywords makes a dict of them first
        ctx = Context(run, message, run.request, None, run.cancelled, inbox)
        place = self.gate.take()
        work = self._hooked_turn(run, ctx, place) if self._turn_hooks \
            else self._turn(run, ctx, place)
        turn = asyncio.get_running_loop().create_task(work)
        run.begin_turn(turn, self.writer.lease(), inbox)
        self.turns[turn] = place
        turn.add_done_callback(functools.partial(self._done, run))

    def _done(self, run: Run, turn: asyncio.Task[None]) -> None:
        # The turn's place is given back also when it was cancelled before it ever ran.
        place = self.turns.pop(turn, None)
        if place is not None and place is not _FREE:  # the free place has nothing to give
            place.release()
        if turn.cancelled() and run.turn is turn and self.runs.by_key.get(run.key) is run:
            # cancelled before it began: ``_turn`` never ran, nor its ``finally``, and the
            # run would stay tracked (a turn the run moved on from is no longer its own)
            if not run.persisted:
                _unwritten(run, None)
            self.runs.finish(run)

    async def stop(self, timeout: float | None = None) -> list[asyncio.Task[None]]:
        """Cancel every running turn and wait for them, ``timeout`` seconds at most;
        the turns still running then (an executor that swallows its cancellation, or
        blocks the loop's thread elsewhere) are left behind and returned."""
        for run in self.runs.all():
            if run.turn is not None and not run.turn.done():
                run.turn.cancel()
        if not self.turns:
            return []
        _, pending = await asyncio.wait(list(self.turns), timeout=timeout)
        return list(pending)

    async def _hooked_turn(self, run: Run, ctx: Context, place: Any) -> None:
        ends = started(self._turn_hooks, run)
        try:
            await self._turn(run, ctx, place)
        except BaseException as exc:
            ended(ends, exc)
            raise
        ended(ends, None)

    async def _turn(self, run: Run, ctx: Context, place: Any = None) -> None:
        writer = self.writer
        resumed = False
        try:
            gate = self.gate
            if gate.unbounded(place):
                # Awaited here, not in the gate: a waiting turn holds one frame
                # (and a closure) less.
                out = await self.agent.run(ctx)
            else:
                # in the executor cap's slot, within the run-time and inactivity limits
                out = await gate.run(place, self.agent.run, ctx, run.activity)
            if not ctx.finished and run.pending_state not in lifecycle.RETURN_STATES:
                # An executor that returns without a final word has finished its work;
                # what it returns, if anything, is its answer.
                if out is None:
                    await writer.emit(run, [writer.status(run.task, TaskState.COMPLETED)])
                else:
                    await answer(ctx, out)
            elif run.pending:
                await writer.flush(run)
            if run.inbox is not None and not run.inbox.empty() \
                    and run.task.status.state is TaskState.INPUT_REQUIRED:
                resumed = await self._resumed(run)
        except TaskCanceled:
            pass
        except MessageExists as exc:
            # Another process made the task for this message first: its callers
            # here are answered with that task (or refused, when it holds other
            # content under a strict message id), and this turn's work is dropped.
            run.lost_to(exc.message_id, exc.record)
            log.warning("task %s: message %s already has task %s (made by another "
                        "process); this turn's work is dropped", run.task.id,
                        exc.message_id, exc.record.task_id)
        except LeaseLost as exc:
            log.warning("task %s: this process lost its lease; the task is left to the "
                        "process that revoked it", run.task.id)
            await writer.taken_away(run)
            if not run.persisted:
                # its task never written: its callers are told to send it again (not
                # of an internal error: ``finally`` no longer sees the exception),
                # once the new lease that is then written under is taken
                _unwritten(run, exc)
                await writer.retake_lease_for(run)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and not current.cancelling():
                # raised by the agent itself, not a cancel of this turn (a library's
                # own timeout cancelling what it awaited): a failure like any other; it
                # left the task unfinished, its streams open, and nothing logged
                log.warning("executor of task %s raised CancelledError", run.task.id)
                await self._end_failed(run, "The agent failed: CancelledError (a cancel "
                                            "the agent did not catch)")
            elif not run.cancelled.is_set():
                raise
        except ExecutorTimeout as exc:
            await self._end_failed(run, str(exc))
        except LifecycleError as exc:
            if run.task.status.state not in TERMINAL_STATES:
                await self._end_failed(run, f"The agent made an invalid state change: {exc}")
        except StoreUnavailable as exc:  # the store failed a write of the turn, not the agent
            log.warning("task %s: %s", run.task.id, exc)
            # said without the store's own words, which name its file or host
            await self._end_failed(run, "The task store failed a write of the task.")
        except BaseException as exc:  # (SystemExit too: an agent's argparse, say, is no
            # reason for the server to stop; CancelledError is taken above)
            log.exception("executor of task %s failed", run.task.id)
            await self._end_failed(run, failure_text(exc))
        finally:
            if not run.persisted:
                _unwritten(run, sys.exception())
            # (a run that went on to another turn, this one's or one a message
            # started while this executor was still returning, is that turn's)
            if not resumed and run.turn is asyncio.current_task():
                self.runs.finish(run)

    async def _resumed(self, run: Run) -> bool:
        """Whether a new turn of ``run`` was begun with the messages sent while its
        turn worked that it ended without reading (it asked for input): they answer
        it, as if sent after it asked, instead of leaving the task waiting for an
        answer it already has. The first is the turn's message, the others wait in
        its inbox. Not when the task moved on meanwhile (an answer, a cancel)."""
        if run.cancelled.is_set() or self.runs.by_key.get(run.key) is not run \
                or run.turn is not asyncio.current_task():
            return False
        # the callers the question woke take the task as it asked (a step of theirs)
        # before the new turn's write changes it
        await asyncio.sleep(0)
        try:
            if not await self.writer.resume(run):
                return False
        except Exception as exc:  # (the store's, not the agent's: the task is not failed)
            # the task waits for input, as the turn left it; its messages are in
            # its history
            log.warning("task %s could not be continued with the messages its turn left "
                        "unread: %s", run.task.id, exc)
            return False
        assert run.inbox is not None
        message = run.inbox.get_nowait()
        self.runs.carry_on(run)
        self.start(run, message)
        return True

    async def _end_failed(self, run: Run, text: str) -> None:
        """End the task failed, saying ``text``. A store that fails that write too
        leaves the task as it was last written, and a new task unwritten is refused
        to its callers with that failure: nothing escapes the turn's own task."""
        try:
            await self.writer.fail(run, text)
        except Exception as exc:
            log.warning("task %s could not be ended failed: %s", run.task.id, exc)
            if not run.persisted:
                _unwritten(run, exc)
            elif isinstance(exc, StoreUnavailable):
                self.runs.stranded[run.key] = run


#: characters of an exception's text a failed task keeps (what is past it is cut)
MAX_FAILURE_TEXT = 4000


def failure_text(exc: BaseException) -> str:
    """What a task failed by ``exc`` says: its class and text, as every store and
    binding carries it (UTF-8, a bounded length), whatever the exception holds."""
    try:
        said = str(exc)
    except Exception:  # an exception whose own text fails
        said = "(its text could not be read)"
    text = f"The agent failed: {type(exc).__name__}: {said}" if said else \
        f"The agent failed: {type(exc).__name__}"
    if not text.isascii():  # a lone surrogate (a file name's undecodable bytes) escaped
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > MAX_FAILURE_TEXT:
        text = text[:MAX_FAILURE_TEXT] + f"... ({len(text) - MAX_FAILURE_TEXT} more characters)"
    return text


def _unwritten(run: Run, error: BaseException | None) -> None:
    """A turn that ends with its new task never written (the store failed, or
    refused, every write): the callers following the run are told so, instead of
    being answered with a task that does not exist."""
    if run.reply_message is None and run.duplicate is None and run.abandoned is None:
        run.abandon(error)
