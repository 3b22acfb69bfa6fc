"""Sends: the turn a message asks for, begun once however often it is sent.

A send creates a task, or continues one that waits for input; a message
already seen in the caller's scope is answered with its task instead (a retry).
A known message id with other content is a new message, or, in strict mode,
refused (``server/idempotency.py``). In one process, sends of one message are
begun one at a time, and a repeat that arrives while the first's turn runs
follows that run.
"""

from __future__ import annotations

import asyncio

import msgspec

from ..bus.base import shared, task_key
from ..core import lifecycle
from ..core.calls import SendMessage
from ..core.dialects import get_codec
from ..core.dialects.as_sent import joined as path_text
from ..core.errors import (
    ConcurrentModification,
    InvalidParams,
    InvalidTaskState,
    LifecycleError,
    ResourceUnavailable,
    TaskGenerationMismatch,
    task_not_found,
)
from ..core.generation import mismatch
from ..core.ids import MAX_ID_BYTES, send_id_fault
from ..core.model import (
    TERMINAL_STATES,
    HistoryAppended,
    Message,
    PushConfig,
    Task,
    TaskState,
    TaskStatus,
)
from ..core.parts import new_id
from ..stores.base import (
    MessageExists,
    MessageRecord,
    Scope,
    StoreUnavailable,
    TaskPort,
    other_content,
)
from .context import RequestInfo, TaskCanceled
from .grace import Grace
from .idempotency import (
    MessageIds,
    check_same,
    message_digest,
    message_id_mode,
    redacted,
    reused,
)
from .leases import LeaseKeeper
from .ports import Admission, PushHooks
from .run import MessageKey, Run, Runs, Writer
from .turns import TurnRunner

__all__ = ["Draining", "Sends"]

#: every new task's first state, as a plain name: an enum member's read on Python 3.11
#: goes through its metaclass's ``__getattr__`` hook (about 1,000 instructions)
_SUBMITTED = TaskState.SUBMITTED


_RETURN = lifecycle.RETURN_STATES


class Draining(ResourceUnavailable):
    """A send to a server that is draining (answered 503 with ``Retry-After``)."""

    retry_after = 1


class Sends:
    def __init__(self, store: TaskPort, runs: Runs, writer: Writer, turns: TurnRunner,
                 push: PushHooks, admission: Admission, *,
                 default_history_length: int | None,
                 submit_grace: float | None = None,
                 leases: LeaseKeeper | None = None,
                 message_ids: MessageIds = "content") -> None:
        message_id_mode(message_ids)  # ValueError for another
        self.store = store
        self.runs = runs
        self.writer = writer
        self.turns = turns
        self.push = push
        self.admission = admission
        #: history returned when a caller does not say (None = all)
        self.default_history_length = default_history_length
        #: seconds a new task waits for its executor's first event before it is
        #: written as submitted (None: it waits for that event)
        self.submit_grace = submit_grace
        self.grace = Grace(writer, submit_grace) if submit_grace else None
        #: whether other live processes serve the store (``leases.shared``; see
        #: server/leases.py), read as an attribute: no call per send
        self.leases = leases
        #: the server drains before it stops: no new sends are taken
        self.draining = False
        #: one message handed to a working turn at a time (each records its id)
        self._delivering = asyncio.Lock()
        #: the tasks a message is continuing here, until its write is stored: a
        #: second message meanwhile finds the task still waiting for input
        self._continuing: set[str] = set()
        #: a message id names one message, whatever its content (else the id and
        #: the content's digest do)
        self.strict = message_ids == "strict"

    async def send(self, call: SendMessage, request: RequestInfo) -> Task | Message:
        begun = await self.begin(call, request)
        if not isinstance(begun, Run):  # a retry's answer
            return begun
        if not call.config.blocking:
            return self.view(begun.task, call.config.history_length)
        started = begun.message_key
        if started is None or started[1] != call.message.message_id:
            # a message handed to a turn that another message started
            return await self._answered(begun, call.config.history_length)
        # _settle's wait and its common answer here: no coroutine of its own per send,
        # nor one for the wait (the turn's end sets ``settled``, whatever happens)
        await begun.settled.woken()
        if begun.task.status.state not in _RETURN and begun.pending_state in _RETURN:
            # the turn ended while a last write was in flight (a cancel): answered
            # with the task once that write is stored
            async with begun.lock:
                pass
        if begun.reply_message is None and begun.duplicate is None and begun.abandoned is None \
                and (begun.task.status.state in _RETURN or begun.key not in self.runs.stranded):
            return self.view(begun.task, call.config.history_length)
        return await self._settle(begun, call.config.history_length)

    async def begin(self, call: SendMessage, request: RequestInfo) -> Run | Task | Message:
        """Start the turn a message asks for; a repeated message gets its task instead
        (or the bare message it was answered with)."""
        if self.draining:
            raise Draining("This server is shutting down and takes no new messages; "
                           "send to another replica, or again shortly")
        # ids every store can keep (core/ids.py), whichever this server has; looked at
        # in a call only past the common case (printable ASCII ids within the limit, no
        # others: an ASCII text is printable when it holds no control character)
        message = call.message
        mid, cid = message.message_id, message.context_id
        if not (len(mid) <= MAX_ID_BYTES and mid.isascii() and mid.isprintable()
                and (cid is None or (len(cid) <= MAX_ID_BYTES and cid.isascii()
                                     and cid.isprintable()))
                and message.task_id is None and call.client_task_id is None
                and message.reference_task_ids is None):
            fault = send_id_fault(message, call.client_task_id)
            if fault is not None:
                path, what = fault
                named = path_text(get_codec(request.dialect).member_path(path))
                raise InvalidParams(f"Invalid params: params.{named} {what}")
        # Refused here (size limits, no room for another executor), no task is made.
        # The turn is begun in this frame, not in one of its own: a call less per send.
        # With no cap on turns (the default) the send holds no place: nothing is
        # entered then, and nothing left (no frames of a context manager per send).
        held = self.admission.admission(call.message, call.metadata)
        if held is not None:
            held.__enter__()
        try:
            scope = request.scope
            message = call.message
            digest = message_digest(message, call.client_task_id)
            key = (scope, message.message_id, b"" if self.strict else digest)
            # One send of a message at a time in this process (single flight): a
            # repeat that arrives meanwhile waits, then finds the first's run or task.
            sending = self.runs.sending
            while True:
                live = self.runs.by_message.get(key)
                if live is not None:
                    joined = await self._join(live, digest, call)
                    if joined is not None:
                        return joined
                    continue  # the store has decided which message holds the id: look again
                if key not in sending:
                    break
                # The first repeat makes the future they all wait for (a send that
                # no repeat meets, nearly every send, needs none).
                pending = sending[key]
                if pending is None:
                    pending = sending[key] = asyncio.get_running_loop().create_future()
                await asyncio.shield(pending)
            sending[key] = None
            try:
                return await self._begin_new(scope, call, request, digest, key)
            finally:
                pending = sending.pop(key)
                if pending is not None:
                    pending.set_result(None)
        finally:
            if held is not None:
                held.__exit__(None, None, None)

    async def _join(self, run: Run, digest: bytes,
                    call: SendMessage) -> Run | Task | Message | None:
        """A repeated message while its turn runs here: the caller follows that run.
        None: look again (the run's message id was contested, and is now settled)."""
        if run.digest and run.digest != digest:  # strict mode: other content, one id
            if not run.flushed.is_set():
                # Its task is not written yet, and the store may give the id to
                # another process's send (of this message, perhaps): once it has
                # decided, the run is either written or abandoned.
                await run.flushed.wait()
                return None
            raise reused(call.message.message_id)
        if not call.config.blocking and not call.streaming:
            await run.flushed.wait()  # answered with the task, which must exist
            if run.reply_message is not None:  # or with the message it was answered with
                return run.reply_message
            if run.duplicate is not None:
                return await self._answer(run.scope, run.duplicate, call.config.history_length,
                                          False)
            if run.abandoned is not None:
                raise run.abandoned
        return run

    async def _repeated(self, scope: Scope, call: SendMessage, found: MessageRecord,
                        digest: bytes) -> Task | Message:
        """The same message sent again (a retry): its task, or the bare message it was
        answered with, and nothing run."""
        check_same(call.message.message_id, found.digest, digest)
        if found.reply is not None:
            return found.reply
        return await self._answer(scope, found.task_id, call.config.history_length,
                                  call.config.blocking and not call.streaming)

    async def _begin_new(self, scope: Scope, call: SendMessage, request: RequestInfo,
                         digest: bytes, key: MessageKey) -> Run | Task | Message:
        message = call.message
        target = message.task_id or call.client_task_id
        # Decided once: whether a new task is written before its executor runs
        # (the look-up below is skipped only if it is): for a non-blocking caller,
        # with other processes on the store, or with no submit grace.
        leases = self.leases
        first = ((not call.config.blocking and not call.streaming)
                 or (leases is not None and leases.shared) or self.submit_grace == 0)
        other = None
        looked_up = bool(target) or not first
        if looked_up:
            existing = await self.store.find_message(scope, message.message_id, digest)
            if existing is not None:
                if self.strict or not existing.digest or existing.digest == digest:
                    return await self._repeated(scope, call, existing, digest)
                # said here for a new turn of a task; the store says it when it
                # writes a new task (whether looked up here or not)
                other = existing
        # else the store refuses a message id it has when the task is written
        # (MessageExists, handled in _create): one round trip fewer per new task.

        if target:
            run = self.runs.get(scope, target)
            if run is None:
                rec = await self.store.get_task(scope, target)
                if rec is not None:
                    run = Run(self.writer, scope, rec.task, version=rec.version, persisted=True,
                               dialect=rec.dialect, request=request)
            if run is not None:
                return await self._for_task(run, call, request, digest, key, other)
            if message.task_id:
                raise task_not_found(message.task_id)
        if first or call.config.push_config is not None:
            return await self._create(scope, call, request, target, digest, key, first,
                                      looked_up, other)
        # A new task written once its executor first speaks (a blocking send, nearly
        # every new task): nothing to await before its turn, no coroutine of its own.
        return self._started(self._new_run(scope, call, request, target, digest, key, None,
                                           looked_up, other))

    async def _for_task(self, run: Run, call: SendMessage, request: RequestInfo,
                        digest: bytes, key: MessageKey,
                        other: MessageRecord | None = None) -> Run | Task | Message:
        """A message for the existing task of ``run``: handed to its working turn
        (here, or in another process), or continuing it, as the task stands.
        ``other``: another message found under its id (content mode), whose use
        is logged."""
        expected = call.config.if_generation_match
        if expected is not None and expected != run.task.generation:
            taken = await self._taken_meanwhile(run, call, digest)
            if taken is not None:
                return taken
            raise mismatch(run.task.id, expected, run.task.generation)
        if other is not None:
            other_content(call.message.message_id, other.task_id)
        if run.inbox is not None and self._working_here(run):
            return await self._deliver(run, call, request, digest)
        if (run.turn is None and run.task.status.state is TaskState.WORKING
                and self.turns.agent.accepts_messages_while_working
                and self.runs.get(run.scope, run.task.id) is None):
            # its turn runs in another process, which hands it over
            return await self._deliver_elsewhere(run, call, request, digest, key)
        return await self._continue(run, call, request, digest, key)

    async def _create(self, scope: Scope, call: SendMessage, request: RequestInfo,
                      task_id: str | None, digest: bytes, key: MessageKey,
                      written_first: bool, looked_up: bool,
                      other: MessageRecord | None) -> Run | Task | Message:
        """A new task whose push configs are checked, or that is written, before its
        turn begins. ``looked_up``: the message id was looked up, and ``other`` found
        under it (another message, with other content), or nothing."""
        tid = task_id or new_id()
        # most sends carry no push config: no call then
        configs = None if call.config.push_config is None else \
            await self.push.send_configs(call, request, tid)
        run = self._new_run(scope, call, request, tid, digest, key, configs, looked_up, other)
        # A non-blocking caller is answered with the task, so it must exist first.
        # With other processes on the store, it is written before the executor
        # runs: another process that gets the same message id then finds it
        # instead of running the executor a second time.
        if written_first:
            try:
                await self.writer.persist_created(run)
            except MessageExists as exc:
                self._abandon(run, duplicate=exc)
                return await self._repeated(scope, call, exc.record, digest)
            except BaseException as exc:
                self._abandon(run, error=exc)
                raise
        return self._started(run)

    def _new_run(self, scope: Scope, call: SendMessage, request: RequestInfo,
                 task_id: str | None, digest: bytes, key: MessageKey,
                 configs: list[PushConfig] | None, looked_up: bool,
                 other: MessageRecord | None) -> Run:
        """The run of a new task, tracked (its turn not begun)."""
        now = self.writer.now()
        tid = task_id or new_id()
        cid = call.message.context_id or new_id()
        message = msgspec.structs.replace(call.message, task_id=tid, context_id=cid)
        status = TaskStatus(state=_SUBMITTED, timestamp=now)
        metadata = call.metadata
        initial = Task(id=tid, context_id=cid, status=status, history=[message], metadata=metadata,
                       generation=1)
        live = Task(id=tid, context_id=cid, status=status, history=[message], metadata=metadata,
                    generation=1)
        # by position: a class called with keywords makes a dict of them first
        run = Run(self.writer, scope, live, 0, False, request.dialect, request, initial,
                  message.message_id, digest, configs, looked_up, other)
        if run.key in self.runs.by_key:
            raise InvalidTaskState(f"task {tid} is already running")
        self.runs.track(run, key)
        return run

    def _started(self, run: Run) -> Run:
        """``run`` with its first turn begun (the task's one message)."""
        self.turns.start(run, run.task.history[0])
        if self.grace is not None and not run.persisted:
            # A slow first step must not hide the task: if the executor says
            # nothing within the grace, the task is written as submitted.
            self.grace.watch(run)
        return run

    def _abandon(self, run: Run, *, duplicate: MessageExists | None = None,
                 error: BaseException | None = None) -> None:
        """A turn this send will not begin (its message has a task already, or was
        taken for its task by another send; or the write failed): the run is
        forgotten, and the repeats of its message that joined it meanwhile are
        woken, to answer with that task or that failure."""
        if duplicate is not None:
            run.lost_to(duplicate.message_id, duplicate.record)
        if error is not None:
            run.abandon(error)
        self.runs.finish(run)

    async def _continue(self, run: Run, call: SendMessage, request: RequestInfo,
                        digest: bytes, key: MessageKey) -> Run | Task | Message:
        task = run.task
        message = _to_task(task, call.message, request.dialect)
        state = task.status.state
        if state not in lifecycle.INTERRUPTED_STATES:
            taken = await self._taken_meanwhile(run, call, digest)
            if taken is not None:
                return taken
            if state in TERMINAL_STATES:
                raise InvalidTaskState(
                    f"Task {task.id} is {state.value}; a finished task takes no more messages"
                )
            raise InvalidTaskState(
                f"Task {task.id} is {state.value}; it takes a message only while it waits for input"
            )
        if self.runs.by_key.get(run.key, run) is not run or run.key in self._continuing:
            # The message being taken here now may yet lose to this very one, sent
            # to another process too: once its write is decided, this one is
            # answered as a retry if that process took it.
            await self._continuing_settled(run)
            taken = await self._taken_meanwhile(run, call, digest)
            if taken is not None:
                return taken
            asked = call.config.if_generation_match
            if asked is not None:
                # the message being taken now decides: once it is written, this one,
                # for the same generation, is the mismatch its caller asked to be told
                current = await self._settled_generation(run)
                if current is not None and current != asked:
                    raise mismatch(task.id, asked, current)
            raise InvalidTaskState(f"Task {task.id} is already being continued")
        message_id = message.message_id
        stored = message
        if state is TaskState.AUTH_REQUIRED:
            # The answer to auth-required carries a credential: the executor gets
            # it whole, the log only a note that it was there (spec v1.0 §7.6.3).
            # No digest either: nothing derived from the credential is kept.
            stored = redacted(message)
            digest = b""
        run.continued(request, digest)
        self.runs.track(run, key)
        # Written only if the task is still at the generation it waited for input at:
        # another message that continued it first (here or in another process), or a
        # cancel, moved it on, and this one is refused as it is refused here.
        asked = call.config.if_generation_match
        self._continuing.add(run.key)
        try:
            await self.push.add_send_configs(run.scope, task.id, call, request)
            await self.writer.emit_message(run, [HistoryAppended(message=stored),
                                           self.writer.status(task, TaskState.WORKING)],
                                           message_id, digest,
                                           if_generation=task.generation if asked is None
                                           else asked)
        except BaseException as exc:
            return await self._not_continued(run, call, digest, asked, exc)
        finally:
            self._continuing.discard(run.key)
        self.turns.start(run, message)
        return run

    async def _not_continued(self, run: Run, call: SendMessage, digest: bytes,
                             asked: int | None, exc: BaseException) -> Task | Message:
        """A follow-up whose write was refused or failed (``exc``): its run is given up,
        and the repeats of its message that joined it meanwhile are woken, to be
        answered as its caller is: with the task of the send that took the message
        (another process's, at the same instant), or with the same refusal."""
        self.runs.untrack(run)  # (its task is looked up below, not followed here)
        self._continuing.discard(run.key)  # (ours: nothing to wait for)
        try:
            found = await self._refusal(run, call, digest, asked, exc)
        except BaseException as error:
            self._abandon(run, error=error)
            raise
        self._abandon(run, duplicate=MessageExists(call.message.message_id, found))
        return await self._repeated(run.scope, call, found, digest)

    async def _refusal(self, run: Run, call: SendMessage, digest: bytes,
                       asked: int | None, exc: BaseException) -> MessageRecord:
        """Why a follow-up's write failed with ``exc``, raised as its caller is told;
        or the record of the message, when another send took this very message."""
        task = run.task
        if isinstance(exc, MessageExists):  # the same follow-up, taken by another process
            check_same(call.message.message_id, exc.record.digest, digest)
            return exc.record
        if isinstance(exc, TaskCanceled):
            raise InvalidTaskState(f"Task {task.id} is canceled") from None
        if not isinstance(exc, (TaskGenerationMismatch, ConcurrentModification,
                                LifecycleError)):
            raise exc
        found = await self._found_meanwhile(run, call, digest)
        if found is not None:
            check_same(call.message.message_id, found.digest, digest)
            return found
        if asked is not None:
            if isinstance(exc, TaskGenerationMismatch):
                raise exc
            # the write lost to another's (a store that tells a lost race so, as
            # PostgreSQL does): the task moved past the generation asked for, the
            # mismatch the caller asked to be told of (it was told InvalidTaskState)
            current = await self._settled_generation(run)
            raise mismatch(task.id, asked, current if current is not None
                           else asked + 1) from None
        raise InvalidTaskState(
            f"Task {task.id} is {task.status.state.value}; it was continued by "
            "another message meanwhile") from None

    async def _taken_meanwhile(self, run: Run, call: SendMessage,
                               digest: bytes) -> Task | Message | None:
        """Before a follow-up is refused because its task moved on: the answer of a
        retry if that was this very message, taken by another process since it was
        looked up (the same follow-up sent to both at once); None: refuse it."""
        found = await self._found_meanwhile(run, call, digest)
        if found is None:
            return None
        return await self._repeated(run.scope, call, found, digest)

    async def _found_meanwhile(self, run: Run, call: SendMessage,
                               digest: bytes) -> MessageRecord | None:
        """The record of this very message if another send took it for ``run``'s task
        (with the same content; in strict mode, with any); None: it has not."""
        found = await self.store.find_message(run.scope, call.message.message_id, digest)
        if found is None or found.task_id != run.task.id:
            return None
        if not self.strict and found.digest and found.digest != digest:
            return None  # another message under the id, a new one (content mode)
        # (strict mode: other content is refused as a reused id)
        return found

    async def _settled_generation(self, run: Run) -> int | None:
        """The generation of ``run``'s task once the message being taken for it now is
        written (or refused), as the store holds it (None: no such task). Waits a few
        seconds at most for that write."""
        await self._continuing_settled(run)
        rec = await self.store.get_task(run.scope, run.task.id, history_length=0,
                                        include_artifacts=False)
        return rec.task.generation if rec is not None else None

    async def _continuing_settled(self, run: Run) -> None:
        """Once the message being taken for ``run``'s task here now (if any) is
        written or refused; a few seconds at most."""
        for _ in range(500):
            if run.key not in self._continuing:
                break
            await asyncio.sleep(0.01)

    def _working_here(self, run: Run) -> bool:
        return (run.turn is not None and not run.turn.done()
                and self.runs.by_key.get(run.key) is run
                and run.pending_state not in lifecycle.RETURN_STATES
                and run.task.status.state not in lifecycle.RETURN_STATES)

    async def _deliver(self, run: Run, call: SendMessage, request: RequestInfo,
                       digest: bytes) -> Run | Task | Message:
        """A message for a working task, to an agent that takes them: recorded in
        the history (its id too, so a retry finds it), then handed to the executor."""
        task = run.task
        message = _to_task(task, call.message, request.dialect)
        async with self._delivering:
            try:
                await self.push.add_send_configs(run.scope, task.id, call, request)
                await self.writer.emit_message(run, [HistoryAppended(message=message)],
                                               call.message.message_id, digest,
                                               if_generation=call.config.if_generation_match)
            except MessageExists as exc:  # the same message, taken by another process
                return await self._repeated(run.scope, call, exc.record, digest)
            except TaskCanceled:
                raise InvalidTaskState(f"Task {task.id} is canceled") from None
        assert run.inbox is not None
        run.inbox.put_nowait(message)
        return run

    async def _answered(self, run: Run, history_length: int | None) -> Task | Message:
        """A blocking send's answer for a message handed to a working turn here: the task
        once it settles. A turn that asks for input without having read it goes on
        at once with a new turn that takes it (``TurnRunner``): that turn is
        followed, as a send made after the question would be."""
        turn = run.turn
        while True:
            settled = run.settled
            await settled.wait()
            if turn is None or run.task.status.state is not TaskState.INPUT_REQUIRED:
                break
            await asyncio.wait([turn])  # its end decides whether the task goes on
            if run.turn is turn or run.settled is settled:
                break
            turn = run.turn
        if run.task.status.state not in _RETURN and run.pending_state in _RETURN:
            async with run.lock:  # a last write in flight (a cancel): once it is stored
                pass
        return await self._settle(run, history_length)

    async def _deliver_elsewhere(self, run: Run, call: SendMessage, request: RequestInfo,
                                 digest: bytes, key: MessageKey) -> Run | Task | Message:
        """A message for a task whose turn runs in another process: written into its
        log, at whatever version that turn's writes have reached, without taking the
        task over; that process hands it to the executor when it hears of the write
        (server/peers.py), or at its next write. A blocking caller is answered once
        the task settles, as any blocking send is.

        The store writes it only while the task works: once the turn has asked for
        input (its last write landed first), the message is refused there, and sent
        on as the follow-up it now is (``_after_the_question``)."""
        task = run.task
        message = _to_task(task, call.message, request.dialect)
        try:
            await self.push.add_send_configs(run.scope, task.id, call, request)
            await self.writer.write_as_stored(run, [HistoryAppended(message=message)],
                                              message=(call.message.message_id, digest),
                                              if_generation=call.config.if_generation_match)
        except MessageExists as exc:
            return await self._repeated(run.scope, call, exc.record, digest)
        except LifecycleError as exc:  # the turn ended meanwhile
            if exc.state in lifecycle.INTERRUPTED_STATES:
                return await self._after_the_question(run, call, request, digest, key)
            taken = await self._taken_meanwhile(run, call, digest)
            if taken is not None:  # this very message, taken by another process meanwhile
                return taken
            if exc.state is TaskState.CANCELED:
                raise InvalidTaskState(f"Task {task.id} is canceled") from None
            state = exc.state.value if isinstance(exc.state, TaskState) else exc.state
            raise InvalidTaskState(
                f"Task {task.id} is {state}; it takes a message only "
                "while it waits for input") from None
        if call.config.blocking and not call.streaming:
            return await self._settled_elsewhere(run.scope, run.task.id, run.version,
                                                 call.config.history_length)
        return self.view(run.task, call.config.history_length)

    async def _after_the_question(self, run: Run, call: SendMessage, request: RequestInfo,
                                  digest: bytes, key: MessageKey) -> Run | Task | Message:
        """A message for a turn that asked for input (or auth) and ended before its
        write reached the store: it answers the question, as a send made after it
        does. The task is read again, and the message continues it here, taking it
        over (its write at the version read: of several processes that try at once,
        one wins, and the others are told as any follow-up is); or, if the task works
        again meanwhile (another message continued it), the message goes to that turn."""
        fresh = self.runs.get(run.scope, run.task.id)
        if fresh is None:
            rec = await self.store.get_task(run.scope, run.task.id)
            if rec is None:
                raise task_not_found(run.task.id)
            fresh = Run(self.writer, run.scope, rec.task, version=rec.version, persisted=True,
                        dialect=rec.dialect, request=request)
        return await self._for_task(fresh, call, request, digest, key)

    async def _settled_elsewhere(self, scope: Scope, task_id: str, version: int,
                                 history_length: int | None) -> Task:
        """The task once it reaches a terminal or interrupted state, whichever process
        writes it (the bus says when the log moves on; without a shared bus, a look
        every second)."""
        bus = self.writer.bus
        # (a shared bus tells of every write: its look is a safeguard)
        every = 5.0 if shared(bus) else 1.0
        sub = bus.subscribe(task_key(scope, task_id), seen=version)
        try:
            while True:
                rec = await self.store.get_task(scope, task_id,
                                                history_length=self.history_length_or_default(history_length))
                if rec is None:
                    raise task_not_found(task_id)
                if rec.task.status.state in lifecycle.RETURN_STATES:
                    return rec.task
                version = max(version, rec.version)
                woken = sub.wake_on_news(version, every)
                if woken is not None:
                    await woken
        finally:
            sub.close()

    async def _answer(self, scope: Scope, task_id: str, history_length: int | None,
                      blocking: bool) -> Task:
        run = self.runs.get(scope, task_id)
        if run is not None:
            if blocking:
                result = await self._settle(run, history_length)
                if isinstance(result, Task):
                    return result
            return self.view(run.task, history_length)
        rec = await self.store.get_task(scope, task_id, history_length=self.history_length_or_default(history_length))
        if rec is None:
            raise task_not_found(task_id)
        if blocking and rec.task.status.state not in lifecycle.RETURN_STATES:
            # its turn runs in another process: a blocking retry waits for it to
            # settle, as the first send does
            return await self._settled_elsewhere(scope, task_id, rec.version, history_length)
        return rec.task

    async def _settle(self, run: Run, history_length: int | None) -> Task | Message:
        await run.settled.wait()
        if run.reply_message is not None:
            return run.reply_message
        if run.duplicate is not None:
            return await self._answer(run.scope, run.duplicate, history_length, True)
        if run.abandoned is not None:
            raise run.abandoned
        if run.task.status.state not in _RETURN and run.key in self.runs.stranded:
            return await self._after_the_outage(run, history_length)
        return self.view(run.task, history_length)

    async def _after_the_outage(self, run: Run, history_length: int | None) -> Task:
        """The task of a turn that ended with its last writes failed by the store, left
        unfinished: once the store is back, it is ended failed (``Recovery.end_stranded``),
        or moved on by another process. A blocking caller waits for that, as a stream
        does: for as long as the store is out of reach, and then for up to three outage
        graces (the heartbeats that end it), after which it is answered with the task
        as it stands rather than held without end."""
        while True:
            try:
                async with asyncio.timeout(3 * self.writer.outage_grace):
                    return await self._settled_elsewhere(
                        run.scope, run.task.id, run.version, history_length)
            except StoreUnavailable:
                await asyncio.sleep(1.0)  # (the heartbeat ends it once it is back)
            except TimeoutError:
                return self.view(run.task, history_length)

    def history_length_or_default(self, history_length: int | None) -> int | None:
        """The history length asked for, else the server's default (None: all of it)."""
        return self.default_history_length if history_length is None else history_length

    def view(self, task: Task, history_length: int | None) -> Task:
        """The task as answered: history trimmed, without copying the rest."""
        # history_length_or_default's rule, without the call: every answer comes here
        n = self.default_history_length if history_length is None else history_length
        if n is None or len(task.history) <= n:
            return task
        return msgspec.structs.replace(task, history=task.history[-n:] if n else [])


def _to_task(task: Task, message: Message, dialect: str) -> Message:
    """``message`` as a message of ``task``: InvalidParams when it names another context
    (named as the caller's dialect names it)."""
    if message.context_id and message.context_id != task.context_id:
        field = get_codec(dialect).context_field
        raise InvalidParams(
            f"Invalid params: {field} {message.context_id!r} does not match "
            f"the context {task.context_id!r} of task {task.id!r}"
        )
    return msgspec.structs.replace(message, task_id=task.id, context_id=task.context_id)
