"""The engine, driven directly (no HTTP): lifecycle, multi-turn, cancel, failures."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from interlingua.bus import LocalBus
from interlingua.core.calls import CancelTask, GetTask, ListTasks, SendConfig, SendMessage
from interlingua.core.errors import (
    InternalError,
    InvalidParams,
    InvalidTaskState,
    TaskNotCancelable,
    TaskNotFound,
)
from interlingua.core.model import (
    ArtifactUpdate,
    DataPart,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TextPart,
)
from interlingua.core.parts import get_text, new_id
from interlingua.server import Agent, Context, Engine, RequestInfo
from interlingua.stores import open_store

REQ = RequestInfo(principal="alice")


def msg(text: str, **kw: Any) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=[TextPart(text=text)], **kw)


def send(text: str | Message, *, blocking: bool = True, history_length: int | None = None,
         **kw: Any) -> SendMessage:
    m = msg(text, **kw) if isinstance(text, str) else text
    return SendMessage(message=m, config=SendConfig(blocking=blocking,
                                                    history_length=history_length))


@pytest.fixture(params=["memory", "sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    return "memory://" if request.param == "memory" else f"sqlite:///{tmp_path}/tasks.db"


EngineFactory = Callable[[Any], Any]


def counting_echo(runs: list[str]) -> Callable[[str], Any]:
    """An executor that answers with the text, recording each run in ``runs``."""

    async def count(text: str) -> str:
        runs.append(text)
        return text

    return count


async def completed(engine: Engine, task_id: str) -> Task:
    """The task once completed (a non-blocking send answers before it is)."""
    for _ in range(100):
        got = await engine.get_task(GetTask(id=task_id), REQ)
        if got.status.state is TaskState.COMPLETED:
            break
        await asyncio.sleep(0.01)
    return got


@pytest.fixture
async def make_engine(store_url: str) -> AsyncIterator[Callable[[Any], Any]]:
    engines: list[Engine] = []

    async def factory(executor: Any) -> Engine:
        engine = Engine(Agent("t", "test agent", executor), open_store(store_url), LocalBus())
        await engine.start()
        engines.append(engine)
        return engine

    yield factory
    for e in engines:
        await e.stop()


async def test_plain_function_completes_with_one_artifact(make_engine: Any) -> None:
    async def upper(text: str) -> str:
        return text.upper()

    engine = await make_engine(upper)
    task = await engine.send(send("hello"), REQ)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert [get_text(a) for a in task.artifacts] == ["HELLO"]
    assert task.history[0].parts == [TextPart(text="hello")]
    assert task.history[0].task_id == task.id and task.history[0].context_id == task.context_id
    stored = await engine.get_task(GetTask(id=task.id), REQ)
    assert stored.status.state is TaskState.COMPLETED
    assert [get_text(a) for a in stored.artifacts] == ["HELLO"]
    # The log holds the creation, the artifact and the final status, in order.
    from interlingua.stores.base import Scope

    events = await engine.store.read_events(Scope(owner="alice"), task.id)
    kinds = [type(e.event) for e in events]
    assert kinds == [TaskCreated, ArtifactUpdate, StatusUpdate]
    assert [e.seq for e in events] == [1, 2, 3]


async def test_data_return_becomes_data_part(make_engine: Any) -> None:
    async def data(message: Message) -> dict[str, int]:
        return {"n": len(message.parts)}

    engine = await make_engine(data)
    task = await engine.send(send("x"), REQ)
    assert task.artifacts[0].parts == [DataPart(data={"n": 1})]


async def test_multi_turn_input_required_then_completed(make_engine: Any) -> None:
    async def ask(ctx: Context) -> None:
        if len(ctx.task.history) == 1:
            await ctx.require_input("Where to?")
            return
        await ctx.complete(f"Booked: {ctx.text}")

    engine = await make_engine(ask)
    first = await engine.send(send("book a flight"), REQ)
    assert first.status.state is TaskState.INPUT_REQUIRED
    assert get_text(first.status.message) == "Where to?"
    second = await engine.send(send("to Paris", task_id=first.id), REQ)
    assert second.id == first.id and second.status.state is TaskState.COMPLETED
    assert get_text(second.status.message) == "Booked: to Paris"
    texts = [get_text(m) for m in second.history]
    assert texts == ["book a flight", "Where to?", "to Paris", "Booked: to Paris"]
    # a finished task takes no more messages
    with pytest.raises(InvalidTaskState):
        await engine.send(send("again", task_id=first.id), REQ)


async def test_continuation_errors(make_engine: Any) -> None:
    async def ask(ctx: Context) -> None:
        await ctx.require_input("more?")

    engine = await make_engine(ask)
    task = await engine.send(send("hi"), REQ)
    with pytest.raises(TaskNotFound):
        await engine.send(send("x", task_id="no-such-task"), REQ)
    with pytest.raises(InvalidParams, match="contextId"):
        await engine.send(send("x", task_id=task.id, context_id="other"), REQ)
    # another owner does not see the task at all
    with pytest.raises(TaskNotFound):
        await engine.send(send("x", task_id=task.id), RequestInfo(principal="mallory"))


async def test_context_id_reused_and_generated(make_engine: Any) -> None:
    async def echo(text: str) -> str:
        return text

    engine = await make_engine(echo)
    a = await engine.send(send("a"), REQ)
    b = await engine.send(send("b", context_id=a.context_id), REQ)
    assert a.context_id and b.context_id == a.context_id and a.id != b.id


async def test_cancel_running_task_and_late_event_is_refused(make_engine: Any) -> None:
    started = asyncio.Event()
    outcome: list[str] = []

    async def slow(ctx: Context) -> None:
        await ctx.update("working")
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            # the turn's context holds its run's cancellation, set by the cancel
            outcome.append(f"cancelled, said: {ctx.cancelled.is_set()}")
            # A late event after cancel must not overwrite "canceled".
            try:
                await ctx.complete("too late")
            except Exception as exc:
                outcome.append(type(exc).__name__)
            raise

    engine = await make_engine(slow)
    task = await engine.send(send("go", blocking=False), REQ)
    await asyncio.wait_for(started.wait(), 5)
    canceled = await engine.cancel_task(CancelTask(id=task.id), REQ)
    assert canceled.status.state is TaskState.CANCELED
    for _ in range(100):
        if len(outcome) == 2:
            break
        await asyncio.sleep(0.01)
    assert outcome == ["cancelled, said: True", "TaskCanceled"]
    again = await engine.get_task(GetTask(id=task.id), REQ)
    assert again.status.state is TaskState.CANCELED
    with pytest.raises(TaskNotCancelable):
        await engine.cancel_task(CancelTask(id=task.id), REQ)
    with pytest.raises(TaskNotFound):
        await engine.cancel_task(CancelTask(id="missing"), REQ)


async def test_cancel_waiting_for_input(make_engine: Any) -> None:
    async def ask(ctx: Context) -> None:
        await ctx.require_input("?")

    engine = await make_engine(ask)
    task = await engine.send(send("hi"), REQ)
    canceled = await engine.cancel_task(CancelTask(id=task.id), REQ)
    assert canceled.status.state is TaskState.CANCELED


async def test_executor_exception_fails_the_task(make_engine: Any) -> None:
    async def boom(text: str) -> str:
        raise RuntimeError("disk on fire")

    engine = await make_engine(boom)
    task = await engine.send(send("x"), REQ)
    assert task.status.state is TaskState.FAILED
    assert "disk on fire" in get_text(task.status.message)


async def test_invalid_transition_by_executor_fails_the_task(make_engine: Any) -> None:
    async def confused(ctx: Context) -> None:
        await ctx.require_input("?")
        await ctx.artifact("not allowed while waiting")

    engine = await make_engine(confused)
    task = await engine.send(send("x"), REQ)
    # The blocking answer came at input-required; the bad artifact then fails it.
    assert task.status.state in (TaskState.INPUT_REQUIRED, TaskState.FAILED)
    for _ in range(100):
        got = await engine.get_task(GetTask(id=task.id), REQ)
        if got.status.state is TaskState.FAILED:
            break
        await asyncio.sleep(0.01)
    assert got.status.state is TaskState.FAILED
    assert "invalid state change" in get_text(got.status.message)


@pytest.mark.parametrize("end", ["complete", "require_input", "fail"])
async def test_a_chunk_after_the_task_stopped_is_refused_to_the_executor(
        make_engine: Any, end: str) -> None:
    refused: list[BaseException] = []

    async def late(ctx: Context) -> None:
        aid = await ctx.artifact("one")
        await getattr(ctx, end)("stopped")
        try:
            await ctx.artifact("two", artifact_id=aid, append=True)
        except Exception as exc:
            refused.append(exc)

    engine = await make_engine(late)
    task = await engine.send(send("x"), REQ)
    for _ in range(100):
        if refused:
            break
        await asyncio.sleep(0.01)
    assert [type(e).__name__ for e in refused] == ["LifecycleError"]
    got = await engine.get_task(GetTask(id=task.id), REQ)
    assert [[p.text for p in a.parts] for a in got.artifacts] == [["one"]]  # type: ignore[union-attr]


async def test_bare_message_reply_creates_no_task(make_engine: Any) -> None:
    async def chat(ctx: Context) -> None:
        await ctx.reply(f"pong: {ctx.text}")

    engine = await make_engine(chat)
    reply = await engine.send(send("ping"), REQ)
    assert isinstance(reply, Message)
    assert reply.role is Role.AGENT and get_text(reply) == "pong: ping"
    page = await engine.list_tasks(ListTasks(), REQ)
    assert page.total_size == 0


async def test_non_blocking_reply_becomes_completed_task(make_engine: Any) -> None:
    async def chat(ctx: Context) -> None:
        await ctx.reply("pong")

    engine = await make_engine(chat)
    task = await engine.send(send("ping", blocking=False), REQ)
    assert isinstance(task, Task)
    got = await completed(engine, task.id)
    assert got.status.state is TaskState.COMPLETED
    assert get_text(got.status.message) == "pong"


async def test_same_message_id_is_idempotent(make_engine: Any) -> None:
    runs: list[str] = []
    engine = await make_engine(counting_echo(runs))
    m = msg("once")
    a = await engine.send(send(m), REQ)
    b = await engine.send(send(m), REQ)
    assert a.id == b.id and len(runs) == 1
    # Another owner sending the same message id gets its own task.
    c = await engine.send(send(m), RequestInfo(principal="bob"))
    assert c.id != a.id and len(runs) == 2


async def test_new_task_written_first_needs_no_message_lookup(make_engine: Any) -> None:
    """A task written before its executor runs (here: a non-blocking send) is not
    preceded by a look-up of its message id: the store's refusal of a known id
    finds a repeat instead, which still gets the first task and runs nothing."""
    runs: list[str] = []
    engine = await make_engine(counting_echo(runs))
    lookups: list[str] = []
    creates: list[str] = []
    find, create = engine.store.find_message, engine.store.create_task

    async def counted_find(scope: Any, message_id: str, digest: bytes = b"") -> Any:
        lookups.append(message_id)
        return await find(scope, message_id, digest)

    async def counted_create(*args: Any, **kwargs: Any) -> Any:
        creates.append(kwargs["message_id"])
        return await create(*args, **kwargs)

    engine.store.find_message = counted_find  # type: ignore[method-assign]
    engine.store.create_task = counted_create  # type: ignore[method-assign]
    m = msg("once")
    a = await engine.send(send(m, blocking=False), REQ)
    assert lookups == []
    await completed(engine, a.id)
    for _ in range(100):  # the first turn's run is gone, so the repeat cannot join it
        if not engine.runs.by_message:
            break
        await asyncio.sleep(0.01)
    assert not engine.runs.by_message
    b = await engine.send(send(m, blocking=False), REQ)
    # the repeat tried to write a task, and the store refused it
    assert creates == [m.message_id, m.message_id] and lookups == []
    assert a.id == b.id and len(runs) == 1
    # A blocking send may answer with a bare message, so its task is not written
    # first: there the look-up stays.
    await engine.send(send("again"), REQ)
    assert len(lookups) == 1


async def test_repeats_while_the_first_send_looks_its_message_up_wait_and_join_it(
        make_engine: Any) -> None:
    """Sends of one message id are begun one at a time: repeats that arrive while the
    first is still looking its message up wait for it, then follow its run."""
    runs: list[str] = []
    engine = await make_engine(counting_echo(runs))
    gate = asyncio.Event()
    find = engine.store.find_message
    lookups: list[str] = []

    async def held(scope: Any, message_id: str, digest: bytes = b"") -> Any:
        lookups.append(message_id)
        if len(lookups) == 1:
            await gate.wait()
        return await find(scope, message_id, digest)

    engine.store.find_message = held  # type: ignore[method-assign]
    m = msg("look it up")
    first = asyncio.create_task(engine.send(send(m), REQ))
    await asyncio.sleep(0.01)
    repeats = [asyncio.create_task(engine.send(send(m), REQ)) for _ in range(2)]
    await asyncio.sleep(0.01)
    assert lookups == [m.message_id]  # the repeats wait before their own look-up
    assert not any(r.done() for r in repeats)
    gate.set()
    a, b, c = await asyncio.wait_for(asyncio.gather(first, *repeats), 5)
    assert a.id == b.id == c.id and len(runs) == 1
    assert not engine.runs.sending


async def _gated_repeats(engine: Engine, m: Message, fail: Exception | None
                         ) -> tuple[asyncio.Task[Any], asyncio.Task[Any], asyncio.Task[Any]]:
    """A repeat of ``m`` whose task write is held, and a second repeat and a
    streaming one that join it meanwhile (the stream's items, read to its end);
    the held write then goes on (to the store's refusal) or fails."""
    gate = asyncio.Event()
    create = engine.store.create_task

    async def held(*args: Any, **kwargs: Any) -> Any:
        await gate.wait()
        if fail is not None:
            raise fail
        return await create(*args, **kwargs)

    engine.store.create_task = held  # type: ignore[method-assign]
    first = asyncio.create_task(engine.send(send(m, blocking=False), REQ))
    for _ in range(100):
        if engine.runs.by_message:
            break
        await asyncio.sleep(0)
    assert engine.runs.by_message  # the first repeat's run, its write held
    joined = asyncio.create_task(engine.send(send(m, blocking=False), REQ))
    stream = await engine.open_stream(SendMessage(message=m, streaming=True), REQ)

    async def read() -> list[Any]:
        return [out async for out in stream]

    streamed = asyncio.create_task(read())
    await asyncio.sleep(0.01)
    assert not joined.done() and not streamed.done()  # they wait for the held write
    gate.set()
    return first, joined, streamed


async def test_a_repeat_that_joined_a_refused_write_gets_the_first_task(
        make_engine: Any) -> None:
    """Two repeats of a message whose turn is over: the first tries to write a task
    (and is refused, the message has one), the second joins it meanwhile. Both get
    the message's task, in time, and nothing runs again."""
    runs: list[str] = []
    engine = await make_engine(counting_echo(runs))
    m = msg("once more")
    a = await engine.send(send(m), REQ)
    for _ in range(100):
        if not engine.runs.by_message:
            break
        await asyncio.sleep(0.01)
    assert not engine.runs.by_message
    first, joined, streamed = await _gated_repeats(engine, m, None)
    b, c, items = await asyncio.wait_for(asyncio.gather(first, joined, streamed), 5)
    assert a.id == b.id == c.id and len(runs) == 1
    # the stream follows the message's task instead
    assert items[-1].item.id == a.id and items[-1].item.status.state is TaskState.COMPLETED


async def test_a_repeat_that_joined_a_failed_write_gets_an_error(make_engine: Any) -> None:
    runs: list[str] = []
    engine = await make_engine(counting_echo(runs))
    first, joined, streamed = await _gated_repeats(engine, msg("unlucky"),
                                                   RuntimeError("disk gone"))
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(first, 5)
    with pytest.raises(InternalError, match="could not be written"):
        await asyncio.wait_for(joined, 5)
    # the stream ends with the failure, not with a task that was never written
    items = await asyncio.wait_for(streamed, 5)
    assert [type(out).__name__ for out in items] == ["Unavailable"]
    assert "could not be written" in items[0].message
    assert runs == []


async def test_history_length(make_engine: Any) -> None:
    async def ask(ctx: Context) -> None:
        if len(ctx.task.history) < 3:
            await ctx.require_input("more")
            return
        await ctx.complete("done")

    engine = await make_engine(ask)
    t = await engine.send(send("1"), REQ)
    t = await engine.send(send("2", task_id=t.id), REQ)
    assert t.status.state is TaskState.COMPLETED
    full = await engine.get_task(GetTask(id=t.id), REQ)
    assert len(full.history) == 4
    none = await engine.get_task(GetTask(id=t.id, history_length=0), REQ)
    assert none.history == []
    last2 = await engine.get_task(GetTask(id=t.id, history_length=2), REQ)
    assert [get_text(m) for m in last2.history] == ["2", "done"]
    trimmed = await engine.send(send("x", history_length=1), REQ)
    assert len(trimmed.history) == 1


async def test_client_chosen_task_id_creates_then_continues(make_engine: Any) -> None:
    async def ask(ctx: Context) -> None:
        if len(ctx.task.history) == 1:
            await ctx.require_input("?")
        else:
            await ctx.complete("ok")

    engine = await make_engine(ask)
    call = SendMessage(message=msg("hi"), client_task_id="task-abc-123")
    t = await engine.send(call, REQ)
    assert t.id == "task-abc-123" and t.status.state is TaskState.INPUT_REQUIRED
    t2 = await engine.send(SendMessage(message=msg("more"), client_task_id="task-abc-123"), REQ)
    assert t2.id == "task-abc-123" and t2.status.state is TaskState.COMPLETED
    # the same id of another owner is another task
    t3 = await engine.send(SendMessage(message=msg("hi"), client_task_id="task-abc-123"),
                           RequestInfo(principal="bob"))
    assert t3.status.state is TaskState.INPUT_REQUIRED


async def test_streaming_generator_appends_chunks(make_engine: Any) -> None:
    async def story(text: str) -> AsyncIterator[str]:
        for word in ["Once ", "upon ", "a time."]:
            yield word

    engine = await make_engine(story)
    task = await engine.send(send("tell"), REQ)
    assert task.status.state is TaskState.COMPLETED
    assert len(task.artifacts) == 1
    assert get_text(task.artifacts[0], sep="") == "Once upon a time."


async def test_list_tasks_newest_first_and_owner_scoped(make_engine: Any) -> None:
    async def echo(text: str) -> str:
        return text

    engine = await make_engine(echo)
    ids = [(await engine.send(send(str(i)), REQ)).id for i in range(5)]
    await engine.send(send("other"), RequestInfo(principal="bob"))
    page = await engine.list_tasks(ListTasks(page_size=2), REQ)
    assert page.total_size == 5 and page.page_size == 2 and page.next_page_token
    seen = [t.id for t in page.tasks]
    while page.next_page_token:
        page = await engine.list_tasks(ListTasks(page_size=2, page_token=page.next_page_token), REQ)
        seen += [t.id for t in page.tasks]
    assert sorted(seen) == sorted(ids) and len(seen) == 5
    with pytest.raises(InvalidParams):
        await engine.list_tasks(ListTasks(page_size=0), REQ)
    with pytest.raises(InvalidParams):
        await engine.list_tasks(ListTasks(page_size=101), REQ)


async def test_retention_removes_finished_tasks_only(store_url: str) -> None:
    from datetime import UTC, datetime, timedelta

    now = [datetime(2026, 1, 1, tzinfo=UTC)]

    async def ask(ctx: Context) -> None:
        if ctx.text == "wait":
            await ctx.require_input("?")
        else:
            await ctx.complete("done")

    from interlingua.server import EngineConfig

    engine = Engine(Agent("t", "t", ask), open_store(store_url), LocalBus(),
                    config=EngineConfig(retention=3600, retention_interval=0.01),
                    clock=lambda: now[0])
    await engine.start()
    try:
        done = await engine.send(send("go"), REQ)
        waiting = await engine.send(send("wait"), REQ)
        await asyncio.sleep(0.05)  # sweeps run, but nothing is old enough yet
        assert (await engine.get_task(GetTask(id=done.id), REQ)).id == done.id
        now[0] += timedelta(hours=2)
        for _ in range(200):
            try:
                await engine.get_task(GetTask(id=done.id), REQ)
            except TaskNotFound:
                break
            await asyncio.sleep(0.01)
        with pytest.raises(TaskNotFound):
            await engine.get_task(GetTask(id=done.id), REQ)
        # a task still waiting for input is kept
        assert (await engine.get_task(GetTask(id=waiting.id), REQ)).id == waiting.id
    finally:
        await engine.stop()


async def test_strict_repeats_of_an_unwritten_run_get_what_the_store_decided() -> None:
    """Strict message ids: a send whose task is not written yet has not got its message
    id. While its write waits, a repeat of its content and a send of other content
    under the id join it; then another process's task for the other content turns
    out to hold the id. The other content gets that task; this content (the first
    send and its repeat) is refused, never answered with a task of other content."""
    from interlingua.server.engine import EngineConfig
    from interlingua.server.idempotency import message_digest

    from ..stores.builders import created

    runs: list[str] = []
    engine = Engine(Agent("t", "test agent", counting_echo(runs)), open_store("memory://"),
                    LocalBus(), config=EngineConfig(message_ids="strict"))
    await engine.start()
    try:
        hello = msg("hello")
        other = Message(message_id=hello.message_id, role=Role.USER,
                        parts=[TextPart(text="other")])
        gate = asyncio.Event()
        create = engine.store.create_task

        async def held(*args: Any, **kwargs: Any) -> Any:
            await gate.wait()
            return await create(*args, **kwargs)

        engine.store.create_task = held  # type: ignore[method-assign]
        first = asyncio.create_task(engine.send(send(hello, blocking=False), REQ))
        for _ in range(100):
            if engine.runs.by_message:
                break
            await asyncio.sleep(0)
        assert engine.runs.by_message  # the first send's run, its write held
        same = asyncio.create_task(engine.send(send(hello, blocking=False), REQ))
        changed = [asyncio.create_task(engine.send(send(other, blocking=blocking), REQ))
                   for blocking in (False, True)]
        await asyncio.sleep(0.01)
        assert not any(t.done() for t in (first, same, *changed))  # all wait for the write
        # meanwhile another process writes its task for the other content
        await create(REQ.scope, [created("t-other", history=[other])], dialect="1.0",
                     now="2026-01-01T00:00:00.000Z", message_id=hello.message_id,
                     digest=message_digest(other), strict=True)
        gate.set()
        for refused in (first, same):
            with pytest.raises(InvalidParams, match="already used for a different message"):
                await asyncio.wait_for(refused, 5)
        for task in changed:
            got = await asyncio.wait_for(task, 5)
            assert isinstance(got, Task) and got.id == "t-other"
        assert runs == []
    finally:
        await engine.stop()


async def test_a_continued_turn_canceled_before_it_begins_is_not_left_tracked(
        tmp_path: Any) -> None:
    # A turn that asked for input with a message unread is continued at once; that new
    # turn canceled before its first step (its executor never ran) leaves no run behind.
    from interlingua.core.task_log import StoredEvent
    from interlingua.server.run import Run
    from tests.e2e.asking_listener_agent import agent

    engine = Engine(agent, open_store("memory://"), LocalBus())
    await engine.start()
    canceled: list[str] = []
    asked: set[str] = set()

    def cancel_the_continuation(run: Run, stored: Sequence[StoredEvent]) -> None:
        for s in stored:
            e = s.event
            if isinstance(e, StatusUpdate) and e.status.state is TaskState.INPUT_REQUIRED:
                asked.add(run.task.id)
            elif isinstance(e, StatusUpdate) and run.task.id in asked and not canceled:
                # the new turn is begun right after this commit, and its first step
                # comes after this callback
                canceled.append(run.task.id)
                asyncio.get_running_loop().call_soon(run.cancel)

    engine.on_commit(cancel_the_continuation)
    try:
        signal = tmp_path / "ask"
        task = await engine.send(send(f"ask {signal}", blocking=False), REQ)
        assert isinstance(task, Task)
        await engine.send(send("blue", blocking=False, task_id=task.id), REQ)
        signal.touch()
        for _ in range(300):
            if canceled and not engine.turns.turns:
                break
            await asyncio.sleep(0.01)
        assert canceled == [task.id]
        await asyncio.sleep(0.05)
        assert not engine.turns.turns
        assert engine.runs.get(REQ.scope, task.id) is None
    finally:
        await engine.stop()
