"""The Store contract: every store (see conftest ``store``) must pass all of it."""

from __future__ import annotations

import asyncio
import base64

import msgspec
import pytest

from interlingua.core.calls import ListTasks
from interlingua.core.errors import (
    ConcurrentModification,
    InvalidParams,
    LifecycleError,
    TaskGenerationMismatch,
    TaskNotFound,
)
from interlingua.core.generation import after as numbered_after
from interlingua.core.model import (
    Artifact,
    ArtifactUpdate,
    DataPart,
    Event,
    FilePart,
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from interlingua.stores import (
    MessageExists,
    MessageRecord,
    Scope,
    Store,
    TaskExists,
    UnfinishedTask,
)

from .builders import agent, chunk, created, said, status, ts, user

S = TaskState
A = Scope("acme", "alice")
B = Scope("acme", "bob")


async def make(
    store: Store,
    scope: Scope,
    task_id: str,
    *,
    ctx: str = "ctx-1",
    at: str | None = None,
    state: TaskState | None = None,
    message_id: str | None = None,
    now: str | None = None,
) -> int:
    """A task created at ``at``, optionally moved on to ``state`` in the same write."""
    at = at or ts(0)
    events: list[Event] = [created(task_id, ctx, at=at)]
    if state is not None:
        events.append(status(task_id, state, at, ctx))
    return await store.create_task(
        scope, events, dialect="1.0", now=now or at, message_id=message_id
    )


def copy(task: Task) -> Task:
    """A deep copy, to compare a held task against later."""
    return msgspec.json.decode(msgspec.json.encode(task), type=Task)


# ------------------------------------------------------------------ create / get


async def test_create_returns_version_and_get_folds_the_log(store: Store) -> None:
    u1, a1 = user("m-1"), agent("m-2", "on it")
    events: list[Event] = [
        created("t-1", "ctx-9", at=ts(0), history=[u1], metadata={"k": [1, 2]}),
        status("t-1", S.WORKING, ts(1), "ctx-9", message=a1),
    ]
    version = await store.create_task(A, events, dialect="0.3", now=ts(2), message_id="m-1")
    assert version == 2

    record = await store.get_task(A, "t-1")
    assert record is not None
    assert record.version == 2
    assert record.scope == A
    assert record.dialect == "0.3"
    assert record.created_at == record.updated_at == ts(2)
    # lifecycle.apply: the status message joins the history after the user's message
    assert record.task == Task(
        id="t-1",
        context_id="ctx-9",
        status=TaskStatus(S.WORKING, message=a1, timestamp=ts(1)),
        history=[u1, a1],
        metadata={"k": [1, 2]},
    )


async def test_every_kind_of_content_comes_back_unchanged(store: Store) -> None:
    # a peer's JSON may hold integers beyond 64 bits; files carry raw bytes
    metadata = {"big": 2**70, "deep": {"list": [1.5, None, True, "ünï"]}}
    message = Message(
        message_id="m-1",
        role=Role.USER,
        parts=[
            TextPart("héllo", metadata={"n": -(2**65)}),
            FilePart(raw=b"\x00\xff binary", media_type="application/octet-stream", filename="b"),
            FilePart(uri="https://example.com/x.pdf", media_type="application/pdf"),
            DataPart(data=[{"a": 1}, 2, "three"]),
        ],
        context_id="ctx-1",
        reference_task_ids=["t-0"],
        extensions=["https://example.com/ext"],
        metadata=metadata,
    )
    events: list[Event] = [created("t-1", at=ts(0), history=[message], metadata=metadata)]
    artifact = Artifact("a", list(message.parts), name="n", description="d", index=0)
    more: list[Event] = [
        status("t-1", S.WORKING, ts(1)),
        ArtifactUpdate("t-1", "ctx-1", artifact, metadata=metadata),
    ]
    await store.create_task(A, events, dialect="0.1", now=ts(0))
    await store.append(A, "t-1", 1, more, now=ts(1))
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert record.task.history == [message]
    assert record.task.metadata == metadata
    assert record.task.artifacts == [artifact]
    assert [e.event for e in await store.read_events(A, "t-1")] == events + more
    # and once the task is finished (a store may keep those differently)
    done = status("t-1", S.COMPLETED, ts(2), message=message)
    await store.append(A, "t-1", 3, [done], now=ts(2))
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert record.task.history == [message]
    assert record.task.metadata == metadata
    assert record.task.artifacts == [artifact]
    assert record.task.status == done.status
    assert [e.event for e in await store.read_events(A, "t-1")] == [*events, *more, done]
    assert [e.seq for e in await store.read_events(A, "t-1", after=2)] == [3, 4]


async def test_a_finished_task_read_twice_gives_two_copies(store: Store) -> None:
    await store.create_task(A, [created("t-1", at=ts(0), history=[user("m-1")]),
                                chunk("t-1", "a", "x"), status("t-1", S.COMPLETED, ts(1))],
                            dialect="1.0", now=ts(1))
    first = await store.get_task(A, "t-1")
    assert first is not None
    first.task.history.append(user("m-2"))
    first.task.artifacts[0].parts.append(TextPart("y"))
    again = await store.get_task(A, "t-1")
    assert again is not None
    assert again.task.history == [user("m-1")]
    assert again.task.artifacts[0].parts == [TextPart("x")]
    listed = await store.list_tasks(A, ListTasks(include_artifacts=False))
    assert listed.tasks[0].artifacts == [] and listed.tasks[0].history == [user("m-1")]


async def test_get_unknown_task_is_none(store: Store) -> None:
    assert await store.get_task(A, "nope") is None


async def test_create_needs_task_created_first(store: Store) -> None:
    with pytest.raises(ValueError, match="TaskCreated"):
        await store.create_task(A, [status("t-1", S.WORKING, ts(0))], dialect="1.0", now=ts(0))
    with pytest.raises(ValueError, match="TaskCreated"):
        await store.create_task(A, [], dialect="1.0", now=ts(0))
    assert await store.get_task(A, "t-1") is None


async def test_create_refuses_an_illegal_first_batch(store: Store) -> None:
    events: list[Event] = [
        created("t-1"),
        status("t-1", S.COMPLETED, ts(1)),
        chunk("t-1", "a", "late"),
    ]
    with pytest.raises(LifecycleError):
        await store.create_task(A, events, dialect="1.0", now=ts(1))
    assert await store.get_task(A, "t-1") is None


async def test_create_existing_id_raises_task_exists(store: Store) -> None:
    await make(store, A, "t-1", state=S.WORKING)
    with pytest.raises(TaskExists):
        await make(store, A, "t-1", ctx="other")
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert record.version == 2
    assert record.task.context_id == "ctx-1"
    assert len(await store.read_events(A, "t-1")) == 2


# ---------------------------------------------------------------------- scoping


async def test_same_id_in_two_scopes_is_two_tasks(store: Store) -> None:
    await make(store, A, "t-1", ctx="ctx-a")
    await make(store, B, "t-1", ctx="ctx-b", state=S.WORKING)
    assert await store.append(A, "t-1", 1, [said(user("m-9"))], now=ts(5)) == 2

    a, b = await store.get_task(A, "t-1"), await store.get_task(B, "t-1")
    assert a is not None and b is not None
    assert (a.task.context_id, a.version, a.task.status.state) == ("ctx-a", 2, S.SUBMITTED)
    assert (b.task.context_id, b.version, b.task.status.state) == ("ctx-b", 2, S.WORKING)
    assert [m.message_id for m in a.task.history] == ["m-9"]
    assert b.task.history == []
    assert [e.seq for e in await store.read_events(B, "t-1")] == [1, 2]


async def test_scope_parts_do_not_run_together(store: Store) -> None:
    # ("ab", "c") and ("a", "bc") must not share a key however it is built
    await make(store, Scope("ab", "c"), "t-1", ctx="first")
    await make(store, Scope("a", "bc"), "t-1", ctx="second")
    await make(store, Scope("", "abc"), "t-1", ctx="third")
    for scope, ctx in [(Scope("ab", "c"), "first"), (Scope("a", "bc"), "second")]:
        record = await store.get_task(scope, "t-1")
        assert record is not None and record.task.context_id == ctx
    assert await store.get_task(Scope("abc", ""), "t-1") is None


async def test_other_scope_sees_nothing(store: Store) -> None:
    await make(store, A, "t-1", message_id="m-1")
    stranger = Scope("acme", "mallory")
    assert await store.get_task(stranger, "t-1") is None
    assert await store.task_for_message(stranger, "m-1") is None
    with pytest.raises(TaskNotFound):
        await store.read_events(stranger, "t-1")
    with pytest.raises(TaskNotFound):
        await store.append(stranger, "t-1", 1, [status("t-1", S.CANCELED, ts(1))], now=ts(1))
    listed = await store.list_tasks(stranger, ListTasks())
    assert listed.tasks == [] and listed.total_size == 0
    record = await store.get_task(A, "t-1")
    assert record is not None and record.task.status.state is S.SUBMITTED


async def test_task_for_message_is_per_scope(store: Store) -> None:
    await make(store, A, "t-a", message_id="m-1")
    await make(store, B, "t-b", message_id="m-1")
    await make(store, A, "t-c")
    assert await store.task_for_message(A, "m-1") == "t-a"
    assert await store.task_for_message(B, "m-1") == "t-b"
    assert await store.task_for_message(A, "m-2") is None
    assert await store.task_for_message(Scope(), "m-1") is None


# ----------------------------------------------------------------------- append


async def test_append_returns_new_version_and_numbers_events(store: Store) -> None:
    await make(store, A, "t-1")
    more: list[Event] = [status("t-1", S.WORKING, ts(1)), chunk("t-1", "a", "x")]
    assert await store.append(A, "t-1", 1, more, now=ts(1)) == 3
    assert await store.append(A, "t-1", 3, [status("t-1", S.COMPLETED, ts(2))], now=ts(2)) == 4
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert (record.version, record.task.status.state) == (4, S.COMPLETED)
    assert record.updated_at == ts(2) and record.created_at == ts(0)


async def test_empty_append_changes_nothing(store: Store) -> None:
    await make(store, A, "t-1")
    assert await store.append(A, "t-1", 1, [], now=ts(3)) == 1
    with pytest.raises(ConcurrentModification):
        await store.append(A, "t-1", 0, [], now=ts(3))


async def test_stale_version_raises_and_writes_nothing(store: Store) -> None:
    await make(store, A, "t-1", state=S.WORKING)
    await store.append(A, "t-1", 2, [status("t-1", S.CANCELED, ts(1))], now=ts(1))
    # a late "completed" written against the version it read before the cancel
    with pytest.raises(ConcurrentModification):
        await store.append(A, "t-1", 2, [status("t-1", S.COMPLETED, ts(2))], now=ts(2))
    with pytest.raises(ConcurrentModification):
        await store.append(A, "t-1", 9, [said(user("m-1"))], now=ts(2))
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert (record.version, record.task.status.state) == (3, S.CANCELED)
    assert len(await store.read_events(A, "t-1")) == 3


async def test_append_to_missing_task_raises_task_not_found(store: Store) -> None:
    with pytest.raises(TaskNotFound):
        await store.append(A, "nope", 1, [status("nope", S.WORKING, ts(1))], now=ts(1))


async def test_concurrent_appends_at_one_version_one_wins(store: Store) -> None:
    await make(store, A, "t-1", state=S.WORKING)
    results = await asyncio.gather(
        store.append(A, "t-1", 2, [status("t-1", S.COMPLETED, ts(1))], now=ts(1)),
        store.append(A, "t-1", 2, [status("t-1", S.CANCELED, ts(1))], now=ts(1)),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == ["ConcurrentModification", "int"]
    winner = S.COMPLETED if results[0] == 3 else S.CANCELED
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert (record.version, record.task.status.state) == (3, winner)


async def _busy(store: Store, task_id: str) -> int:
    """A working task with two chunks written, numbered as the writer numbers them
    (generation 4); its version (4)."""
    first = created(task_id)
    first.task.generation = 1
    events: list[Event] = [first, status(task_id, S.WORKING, ts(0)), chunk(task_id, "a", "x")]
    numbered_after(events[1:], 1)
    version = await store.create_task(A, events, dialect="1.0", now=ts(0))
    more = chunk(task_id, "a", "y", append=True)
    numbered_after([more], 3)
    return await store.append(A, task_id, version, [more], now=ts(1))


async def test_an_append_at_no_version_lands_where_the_task_is(store: Store) -> None:
    # (a cancel or a message of a process that does not run the task's turn)
    version = await _busy(store, "t-1")
    cancel = status("t-1", S.CANCELED, ts(2))
    assert await store.append(A, "t-1", None, [cancel], now=ts(2)) == version + 1
    assert cancel.generation == 5  # numbered on from the task's generation
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert (record.version, record.task.status.state) == (version + 1, S.CANCELED)
    assert record.task.generation == 5
    (last,) = await store.read_events(A, "t-1", version)
    assert last.seq == version + 1 and last.event == cancel
    # the turn's own write, at the version it read, loses
    with pytest.raises(ConcurrentModification):
        await store.append(A, "t-1", version, [chunk("t-1", "a", "z", append=True)],
                           now=ts(3))


async def test_an_append_at_no_version_is_checked_against_the_task_as_it_is(
        store: Store) -> None:
    version = await _busy(store, "t-1")
    await store.append(A, "t-1", version, [status("t-1", S.COMPLETED, ts(2))], now=ts(2))
    with pytest.raises(LifecycleError) as refused:
        await store.append(A, "t-1", None, [status("t-1", S.CANCELED, ts(3))], now=ts(3))
    assert refused.value.state is S.COMPLETED
    with pytest.raises(LifecycleError):
        await store.append(A, "t-1", None, [said(user("m-1"))], now=ts(3))
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert (record.version, record.task.status.state) == (version + 1, S.COMPLETED)
    # at a generation asked for: refused at another, nothing written
    version = await _busy(store, "t-2")
    with pytest.raises(TaskGenerationMismatch):
        await store.append(A, "t-2", None, [said(user("m-2"))], now=ts(2), if_generation=3,
                           message=("m-2", b"d2"))
    assert await store.find_message(A, "m-2") is None
    assert await store.append(A, "t-2", None, [said(user("m-2"))], now=ts(2), if_generation=4,
                              message=("m-2", b"d2")) == version + 1
    assert await store.find_message(A, "m-2") == MessageRecord("t-2", b"d2")
    with pytest.raises(MessageExists):
        await store.append(A, "t-2", None, [said(user("m-2"))], now=ts(3),
                           message=("m-2", b"d2"))


async def test_a_message_at_no_version_is_refused_once_the_task_asks(store: Store) -> None:
    # (a message for a turn another process runs, whose write lands after that turn
    # asked: no turn would read it; its sender continues the task with it instead)
    for task_id, asking in (("t-1", S.INPUT_REQUIRED), ("t-2", S.AUTH_REQUIRED)):
        version = await _busy(store, task_id)
        version = await store.append(A, task_id, version, [status(task_id, asking, ts(2))],
                                     now=ts(2))
        with pytest.raises(LifecycleError) as refused:
            await store.append(A, task_id, None, [said(user(f"{task_id}-m"))], now=ts(3),
                               message=(f"{task_id}-m", b"d"))
        assert refused.value.state is asking
        assert await store.find_message(A, f"{task_id}-m") is None
        record = await store.get_task(A, task_id)
        assert record is not None
        assert record.version == version
        assert f"{task_id}-m" not in [m.message_id for m in record.task.history]
        # a cancel at no version still lands
        await store.append(A, task_id, None, [status(task_id, S.CANCELED, ts(3))], now=ts(3))


async def test_appends_at_no_version_at_once_are_all_written_in_turn(store: Store) -> None:
    version = await _busy(store, "t-1")
    written = await asyncio.gather(*(
        store.append(A, "t-1", None, [said(user(f"m-{n}")), chunk("t-1", "a", f"{n}",
                                                                  append=True)],
                     now=ts(2), message=(f"m-{n}", b""))
        for n in range(6)))
    assert sorted(written) == list(range(version + 2, version + 13, 2))
    events = [e.event for e in await store.read_events(A, "t-1", version)]
    assert [e.generation for e in events if isinstance(e, ArtifactUpdate)] == list(range(5, 11))
    record = await store.get_task(A, "t-1")
    assert record is not None and record.task.generation == 10
    assert sorted(m.message_id for m in record.task.history) == [f"m-{n}" for n in range(6)]


async def test_refused_event_leaves_the_task_as_it_was(store: Store) -> None:
    await make(store, A, "t-1", state=S.WORKING)
    await store.append(A, "t-1", 2, [chunk("t-1", "a", "one")], now=ts(1))
    before = await store.get_task(A, "t-1")
    assert before is not None
    # the second event is refused, so the first must not be written either
    batch: list[Event] = [status("t-1", S.COMPLETED, ts(2)), chunk("t-1", "a", "two", append=True)]
    with pytest.raises(LifecycleError):
        await store.append(A, "t-1", 3, batch, now=ts(2))
    after = await store.get_task(A, "t-1")
    assert after == before
    assert len(await store.read_events(A, "t-1")) == 3
    # and the live projection was not half-advanced: the task still takes artifacts
    assert await store.append(A, "t-1", 3, [chunk("t-1", "a", "two", append=True)], now=ts(3)) == 4
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert record.task.artifacts == [Artifact("a", [TextPart("one"), TextPart("two")])]


async def test_terminal_task_takes_no_more_events(store: Store) -> None:
    await make(store, A, "t-1", state=S.WORKING)
    await store.append(A, "t-1", 2, [status("t-1", S.CANCELED, ts(1))], now=ts(1))
    late: list[Event] = [status("t-1", S.COMPLETED, ts(2)), chunk("t-1", "a", "x"), said(user("m"))]
    for event in late:
        with pytest.raises(LifecycleError):
            await store.append(A, "t-1", 3, [event], now=ts(2))
    record = await store.get_task(A, "t-1")
    assert record is not None and record.version == 3


# ------------------------------------------------------------------ read_events


async def test_read_events_in_order_with_after_and_limit(store: Store) -> None:
    first: list[Event] = [created("t-1", at=ts(0)), status("t-1", S.WORKING, ts(1))]
    more: list[Event] = [
        chunk("t-1", "a", "x"),
        said(user("m-2")),
        status("t-1", S.COMPLETED, ts(2), message=agent("m-3")),
    ]
    await store.create_task(A, first, dialect="1.0", now=ts(1))
    await store.append(A, "t-1", 2, more, now=ts(2))

    log = await store.read_events(A, "t-1")
    assert [e.seq for e in log] == [1, 2, 3, 4, 5]
    assert [e.event for e in log] == first + more
    assert [e.seq for e in await store.read_events(A, "t-1", after=2)] == [3, 4, 5]
    assert [e.seq for e in await store.read_events(A, "t-1", after=1, limit=2)] == [2, 3]
    assert await store.read_events(A, "t-1", after=5) == []
    assert await store.read_events(A, "t-1", limit=0) == []
    with pytest.raises(TaskNotFound):
        await store.read_events(A, "nope")


async def test_long_batches_read_back_from_any_point(store: Store) -> None:
    """Batches far longer than a few events, with kinds interleaved, read back
    whole and from every offset, and fold the same, whatever the store does with them."""
    first: list[Event] = [created("t-1", history=[user("m-1")]), *[
        chunk("t-1", "a", f"c{n}", append=n > 0) for n in range(300)
    ]]
    await store.create_task(A, first, dialect="1.0", now=ts(0))
    more: list[Event] = [
        *[chunk("t-1", "a", f"d{n}", append=True) for n in range(600)],
        said(user("m-2")),
        status("t-1", S.WORKING, ts(1)),
        *[chunk("t-1", "b", f"e{n}", append=n > 0) for n in range(3)],
        said(user("m-3")),
        said(user("m-4")),
        *[chunk("t-1", "a", f"f{n}", append=True) for n in range(257)],
    ]
    version = await store.append(A, "t-1", len(first), more, now=ts(1))
    everything = first + more
    assert version == len(everything)
    log = await store.read_events(A, "t-1")
    assert [e.event for e in log] == everything
    assert [e.seq for e in log] == list(range(1, len(everything) + 1))
    for after in (0, 1, 2, 255, 256, 257, 300, 301, 556, 557, 901, 902, 904, 906, 907, 1163, 1164):
        for limit in (None, 1, 2, 300):
            got = await store.read_events(A, "t-1", after=after, limit=limit)
            want = everything[after:] if limit is None else everything[after:after + limit]
            assert [e.event for e in got] == want, (after, limit)
            assert [e.seq for e in got] == list(range(after + 1, after + 1 + len(want)))
    record = await store.get_task(A, "t-1", history_length=None)
    assert record is not None
    assert [m.message_id for m in record.task.history] == ["m-1", "m-2", "m-3", "m-4"]
    texts = [[p.text for p in a.parts if isinstance(p, TextPart)] for a in record.task.artifacts]
    assert texts == [
        [f"c{n}" for n in range(300)] + [f"d{n}" for n in range(600)]
        + [f"f{n}" for n in range(257)],
        [f"e{n}" for n in range(3)],
    ]
    bare = await store.get_task(A, "t-1", history_length=1, include_artifacts=False)
    assert bare is not None and bare.task.artifacts == []
    assert [m.message_id for m in bare.task.history] == ["m-4"]
    listed = await store.list_tasks(A, ListTasks(include_artifacts=True))
    assert listed.tasks[0].artifacts == record.task.artifacts


def _variant(base: ArtifactUpdate, **changes: object) -> ArtifactUpdate:
    """``base`` with fields of the event (or, under ``artifact_``, of its artifact) changed."""
    art = {k.removeprefix("artifact_"): v for k, v in changes.items() if k.startswith("artifact_")}
    own = {k: v for k, v in changes.items() if not k.startswith("artifact_")}
    return msgspec.structs.replace(
        base, artifact=msgspec.structs.replace(base.artifact, **art), **own)


_SLOT = '"parts":[{"kind":"text","text":""}]'
_ODD = ['q"uo\\te\\', "\u00e9\n\u0000\u0003", _SLOT, "", "\U0001f600"]

#: chunks each differing from the run around it in one thing besides the text
_VARIANTS = {
    "artifact id": {"artifact_parts": [TextPart("x")], "artifact_artifact_id": "other"},
    "odd artifact id": {"artifact_artifact_id": _SLOT + '\\"'},
    "name": {"artifact_name": "n"},
    "description": {"artifact_description": "d"},
    "artifact metadata": {"artifact_metadata": {"k": [1, None]}},
    "extensions": {"artifact_extensions": ["https://example.com/ext"]},
    "index": {"artifact_index": 1},
    "part metadata": {"artifact_parts": [TextPart("x", metadata={"m": 1})]},
    "media type": {"artifact_parts": [TextPart("x", media_type="text/markdown")]},
    "filename": {"artifact_parts": [TextPart("x", filename="a.txt")]},
    "two parts": {"artifact_parts": [TextPart("x"), TextPart("y")]},
    "no parts": {"artifact_parts": []},
    "data part": {"artifact_parts": [DataPart({"parts": [{"kind": "text", "text": ""}]})]},
    "file part": {"artifact_parts": [FilePart(uri="https://example.com/f")]},
    "not appended": {"append": False},
    "last chunk": {"last_chunk": True},
    "event metadata": {"metadata": {"parts": [{"kind": "text", "text": ""}]}},
    "context": {"context_id": "ctx-2"},
}


@pytest.mark.parametrize("what", sorted(_VARIANTS))
async def test_a_chunk_unlike_its_run_comes_back_as_it_was(store: Store, what: str) -> None:
    """Runs of one artifact's text chunks may be stored in less room (the SQL stores
    do): a chunk differing in anything else, in any place of a run, is kept whole."""
    base = chunk("t-1", "a", "x", append=True)
    texts = [f"c{n}" for n in range(6)] + _ODD
    events: list[Event] = [created("t-1")]
    for at in (0, 1, 2, 5, len(texts) - 1):  # the odd chunk first, second, inside, last
        for n, text in enumerate(texts):
            one = _variant(base, artifact_parts=[TextPart(text)])
            events.append(_variant(one, **_VARIANTS[what]) if n == at else one)
    await store.create_task(A, events[:1], dialect="1.0", now=ts(0))
    await store.append(A, "t-1", 1, events[1:], now=ts(1))
    for finished in (False, True):  # (the memory store packs a finished task's log)
        if finished:
            events.append(status("t-1", S.COMPLETED, ts(2)))
            await store.append(A, "t-1", len(events) - 1, events[-1:], now=ts(2))
        assert [e.event for e in await store.read_events(A, "t-1")] == events
        for after in range(1, len(events), 7):
            got = await store.read_events(A, "t-1", after=after, limit=3)
            assert [e.event for e in got] == events[after:after + 3]


async def test_chunk_texts_and_ids_of_every_kind_come_back(store: Store) -> None:
    odd_id = 'id "with" \\ ' + _SLOT
    first = created(odd_id, odd_id)
    events: list[Event] = [first] + [
        chunk(odd_id, _SLOT, text, ctx=odd_id, append=n > 0)
        for n, text in enumerate([*_ODD, odd_id, f'"{odd_id}"', *_ODD])
    ]
    events.append(status(odd_id, S.COMPLETED, ts(0), odd_id))
    await store.create_task(A, events, dialect="1.0", now=ts(0))
    assert [e.event for e in await store.read_events(A, odd_id)] == events
    record = await store.get_task(A, odd_id)
    assert record is not None
    assert record.task.artifacts[0].parts == [
        TextPart(e.artifact.parts[0].text)  # type: ignore[union-attr]
        for e in events[1:-1]
    ]


# ------------------------------------------------------- history and artifacts


async def history_task(store: Store) -> None:
    """History u1, a1 (status message), u2; a repeated status message is not doubled."""
    u1, a1, u2 = user("m-1"), agent("m-2"), user("m-3")
    await store.create_task(A, [created("t-1", history=[u1])], dialect="1.0", now=ts(0))
    events: list[Event] = [
        status("t-1", S.INPUT_REQUIRED, ts(1), message=a1),
        said(u2),
        status("t-1", S.WORKING, ts(2)),
        status("t-1", S.WORKING, ts(3), message=agent("m-4")),
        status("t-1", S.WORKING, ts(4), message=agent("m-4")),
    ]
    await store.append(A, "t-1", 1, events, now=ts(4))


@pytest.mark.parametrize(
    ("history_length", "expected"),
    [
        (None, ["m-1", "m-2", "m-3", "m-4"]),
        (0, []),
        (1, ["m-4"]),
        (3, ["m-2", "m-3", "m-4"]),
        (10, ["m-1", "m-2", "m-3", "m-4"]),
    ],
)
async def test_history_length(
    store: Store, history_length: int | None, expected: list[str]
) -> None:
    await history_task(store)
    for include_artifacts in (True, False):
        record = await store.get_task(
            A, "t-1", history_length=history_length, include_artifacts=include_artifacts
        )
        assert record is not None
        assert [m.message_id for m in record.task.history] == expected
        assert record.task.status == TaskStatus(S.WORKING, agent("m-4"), ts(4))


async def test_negative_history_length_is_invalid(store: Store) -> None:
    await make(store, A, "t-1")
    with pytest.raises(InvalidParams, match="historyLength"):
        await store.get_task(A, "t-1", history_length=-1)


async def artifact_task(store: Store) -> None:
    await make(store, A, "t-1", state=S.WORKING)
    events: list[Event] = [
        chunk("t-1", "a", "Hel", name="greeting"),
        chunk("t-1", "b", "first draft"),
        chunk("t-1", "a", "lo", append=True),
        said(user("m-1")),
        chunk("t-1", "a", " world", append=True, last=True, name="final"),
        chunk("t-1", "b", "second draft"),  # not an append: replaces b
        chunk("t-1", "c", "x", "y", last=True),
    ]
    await store.append(A, "t-1", 2, events, now=ts(1))


async def test_artifact_chunks_fold_in_order(store: Store) -> None:
    await artifact_task(store)
    record = await store.get_task(A, "t-1")
    assert record is not None
    assert record.task.artifacts == [
        Artifact("a", [TextPart("Hel"), TextPart("lo"), TextPart(" world")], name="final"),
        Artifact("b", [TextPart("second draft")]),
        Artifact("c", [TextPart("x"), TextPart("y")]),
    ]
    assert [m.message_id for m in record.task.history] == ["m-1"]


async def test_include_artifacts_false_leaves_them_out(store: Store) -> None:
    await artifact_task(store)
    for history_length in (None, 0, 1):
        record = await store.get_task(
            A, "t-1", history_length=history_length, include_artifacts=False
        )
        assert record is not None
        assert record.task.artifacts == []
        assert record.task.status.state is S.WORKING
        assert record.version == 9
    record = await store.get_task(A, "t-1", history_length=0)
    assert record is not None
    assert [a.artifact_id for a in record.task.artifacts] == ["a", "b", "c"]
    assert record.task.history == []


async def test_a_returned_task_does_not_change_later(store: Store) -> None:
    await artifact_task(store)
    held = await store.get_task(A, "t-1")
    assert held is not None
    snapshot = copy(held.task)
    await store.append(
        A,
        "t-1",
        9,
        [
            chunk("t-1", "a", "!", append=True, name="renamed"),
            said(user("m-2")),
            status("t-1", S.COMPLETED, ts(5), message=agent("m-3")),
        ],
        now=ts(5),
    )
    assert held.task == snapshot
    assert held.version == 9
    # the later state is there for a new reader
    fresh = await store.get_task(A, "t-1")
    assert fresh is not None
    assert fresh.task.artifacts[0].name == "renamed"
    assert len(fresh.task.artifacts[0].parts) == 4


async def test_stored_events_are_not_changed_by_folding(store: Store) -> None:
    first = chunk("t-1", "a", "one")
    await make(store, A, "t-1", state=S.WORKING)
    await store.append(A, "t-1", 2, [first], now=ts(1))
    await store.append(A, "t-1", 3, [chunk("t-1", "a", "two", append=True)], now=ts(2))
    assert first.artifact.parts == [TextPart("one")]
    log = await store.read_events(A, "t-1")
    assert log[2].event == chunk("t-1", "a", "one")


# ----------------------------------------------------------------------- listing

# (id, status timestamp): three share a timestamp, so the id decides among them
LISTED = [
    ("t1", 1),
    ("t2", 5),
    ("t3", 3),
    ("t4", 5),
    ("t5", 2),
    ("t6", 4),
    ("t7", 5),
]
NEWEST_FIRST = ["t7", "t4", "t2", "t6", "t3", "t5", "t1"]


async def listed_tasks(store: Store) -> None:
    for task_id, second in LISTED:
        ctx = "even" if int(task_id[1]) % 2 == 0 else "odd"
        await make(store, A, task_id, ctx=ctx, at=ts(second), state=S.WORKING)
    await make(store, B, "t9", at=ts(9))  # another owner's task is never listed


async def page_through(store: Store, query: ListTasks) -> list[list[str]]:
    pages: list[list[str]] = []
    token: str | None = None
    while True:
        page = await store.list_tasks(A, msgspec.structs.replace(query, page_token=token))
        pages.append([t.id for t in page.tasks])
        # the page size used for the answer (spec §6.5), not how many it holds
        assert page.page_size == query.page_size
        if not page.next_page_token:
            return pages
        token = page.next_page_token
        assert len(pages) < 20, "paging does not end"


async def test_list_newest_first_across_pages(store: Store) -> None:
    await listed_tasks(store)
    pages = []
    token = None
    for _ in range(3):
        page = await store.list_tasks(A, ListTasks(page_size=3, page_token=token))
        assert page.total_size == 7
        pages.append(([t.id for t in page.tasks], page.page_size))
        token = page.next_page_token
    assert pages == [(["t7", "t4", "t2"], 3), (["t6", "t3", "t5"], 3), (["t1"], 3)]
    assert token == ""


async def test_list_one_page_and_exact_fit(store: Store) -> None:
    await listed_tasks(store)
    whole = await store.list_tasks(A, ListTasks(page_size=100))
    assert [t.id for t in whole.tasks] == NEWEST_FIRST
    assert (whole.next_page_token, whole.page_size, whole.total_size) == ("", 100, 7)
    # a page that ends exactly at the last task: the next one is empty, not an error
    assert await page_through(store, ListTasks(page_size=7)) == [NEWEST_FIRST]
    pages = await page_through(store, ListTasks(page_size=1))
    assert pages == [[task_id] for task_id in NEWEST_FIRST]


async def test_list_an_empty_scope(store: Store) -> None:
    page = await store.list_tasks(A, ListTasks())
    assert (page.tasks, page.next_page_token, page.page_size, page.total_size) == ([], "", 50, 0)


async def test_an_update_moves_a_task_to_the_front(store: Store) -> None:
    await listed_tasks(store)
    first = await store.list_tasks(A, ListTasks(page_size=2))
    await store.append(A, "t1", 2, [status("t1", S.COMPLETED, ts(8))], now=ts(8))
    page = await store.list_tasks(A, ListTasks(page_size=3))
    assert [t.id for t in page.tasks] == ["t1", "t7", "t4"]
    # keyset paging: the token from before still continues after t4
    rest = await store.list_tasks(A, ListTasks(page_size=10, page_token=first.next_page_token))
    assert [t.id for t in rest.tasks] == ["t2", "t6", "t3", "t5"]


async def test_a_status_without_timestamp_lists_by_write_time(store: Store) -> None:
    await listed_tasks(store)
    await store.create_task(A, [created("t0", "odd")], dialect="1.0", now=ts(4.5))
    page = await store.list_tasks(A, ListTasks())
    assert [t.id for t in page.tasks] == ["t7", "t4", "t2", "t0", "t6", "t3", "t5", "t1"]
    after = await store.list_tasks(A, ListTasks(status_timestamp_after=ts(4.5)))
    assert [t.id for t in after.tasks] == ["t7", "t4", "t2", "t0"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (ListTasks(context_id="even"), ["t4", "t2", "t6"]),
        (ListTasks(context_id="none"), []),
        (ListTasks(status=S.COMPLETED), ["t3"]),
        (ListTasks(status=S.WORKING), ["t7", "t4", "t2", "t6", "t5", "t1"]),
        # inclusive: "greater than or equal to" (v1.0 ListTasksRequest)
        (ListTasks(status_timestamp_after=ts(4)), ["t7", "t4", "t2", "t6"]),
        (ListTasks(status_timestamp_after=ts(4.001)), ["t7", "t4", "t2"]),
        (ListTasks(context_id="odd", status=S.WORKING), ["t7", "t5", "t1"]),
        (ListTasks(context_id="odd", status_timestamp_after=ts(2)), ["t7", "t3", "t5"]),
    ],
)
async def test_list_filters(store: Store, query: ListTasks, expected: list[str]) -> None:
    await listed_tasks(store)
    # t3 completes with the status timestamp it already had
    await store.append(A, "t3", 2, [status("t3", S.COMPLETED, ts(3))], now=ts(6))
    whole = await store.list_tasks(A, query)
    assert [t.id for t in whole.tasks] == expected
    assert whole.total_size == len(expected)
    paged = await page_through(store, msgspec.structs.replace(query, page_size=2))
    assert [i for page in paged for i in page] == expected
    for token_page in paged:
        assert len(token_page) <= 2


async def listed_as_folded(store: Store, task_id: str) -> None:
    """The task as listed (each historyLength) is the task as its log folds."""
    for history_length in (None, 0, 1, 2, 5):
        page = await store.list_tasks(A, ListTasks(history_length=history_length))
        listed = {t.id: t for t in page.tasks}[task_id]
        record = await store.get_task(A, task_id, history_length=history_length,
                                      include_artifacts=False)
        assert record is not None
        assert listed == record.task, history_length


async def test_listed_history_follows_every_write(store: Store) -> None:
    u1, a1, u2, a2 = user("m-1"), agent("m-2", "which?"), user("m-3", "this"), agent("m-4")
    await store.create_task(A, [created("t-1", at=ts(0), history=[u1]),
                                status("t-1", S.WORKING, ts(0))], dialect="1.0", now=ts(0))
    await listed_as_folded(store, "t-1")
    # asking for input: the status message joins the history once, even when repeated
    v = await store.append(A, "t-1", 2, [chunk("t-1", "a", "x"),
                                         status("t-1", S.INPUT_REQUIRED, ts(1), message=a1)],
                           now=ts(1))
    await listed_as_folded(store, "t-1")
    v = await store.append(A, "t-1", v, [said(u2), status("t-1", S.WORKING, ts(2)),
                                         status("t-1", S.WORKING, ts(3), message=u2)],
                           now=ts(3))
    await listed_as_folded(store, "t-1")
    # a write that adds no message leaves the history as it was
    v = await store.append(A, "t-1", v, [chunk("t-1", "a", "y", append=True)], now=ts(4))
    await listed_as_folded(store, "t-1")
    await store.append(A, "t-1", v, [status("t-1", S.CANCELED, ts(5), message=a2)], now=ts(5))
    await listed_as_folded(store, "t-1")
    page = await store.list_tasks(A, ListTasks())
    assert [m.message_id for m in page.tasks[0].history] == ["m-1", "m-2", "m-3", "m-4"]
    assert page.tasks[0].status.state is S.CANCELED


async def test_a_refused_write_leaves_the_listed_history(store: Store) -> None:
    await store.create_task(A, [created("t-1", at=ts(0), history=[user("m-1")])],
                            dialect="1.0", now=ts(0))
    with pytest.raises(ConcurrentModification):
        await store.append(A, "t-1", 7, [said(user("m-2"))], now=ts(1))
    v = await store.append(A, "t-1", 1, [status("t-1", S.COMPLETED, ts(1))], now=ts(1))
    with pytest.raises(LifecycleError):
        await store.append(A, "t-1", v, [said(user("m-3"))], now=ts(2))
    page = await store.list_tasks(A, ListTasks())
    assert [m.message_id for m in page.tasks[0].history] == ["m-1"]
    await listed_as_folded(store, "t-1")


async def test_list_carries_history_and_artifacts_when_asked(store: Store) -> None:
    await artifact_task(store)  # t-1: one history message, artifacts a, b, c
    await store.append(A, "t-1", 9, [said(user("m-2"))], now=ts(2))
    await make(store, A, "t-2", at=ts(0))

    default = await store.list_tasks(A, ListTasks())
    t1 = default.tasks[1] if default.tasks[0].id == "t-2" else default.tasks[0]
    assert t1.id == "t-1"
    assert [m.message_id for m in t1.history] == ["m-1", "m-2"]
    assert t1.artifacts == []

    short = await store.list_tasks(A, ListTasks(history_length=1, include_artifacts=True))
    by_id = {t.id: t for t in short.tasks}
    assert [m.message_id for m in by_id["t-1"].history] == ["m-2"]
    assert [a.artifact_id for a in by_id["t-1"].artifacts] == ["a", "b", "c"]
    assert by_id["t-1"].artifacts[0].parts == [TextPart("Hel"), TextPart("lo"), TextPart(" world")]
    assert by_id["t-2"].artifacts == [] and by_id["t-2"].history == []

    bare = await store.list_tasks(A, ListTasks(history_length=0))
    record = await store.get_task(A, "t-1", history_length=0, include_artifacts=False)
    assert record is not None
    assert {t.id: t for t in bare.tasks}["t-1"] == record.task
    assert record.task.status.state is S.WORKING


@pytest.mark.parametrize("token", ["not a token!", "AAAA", "bm9wZQ", "////", "é", "a"])
async def test_list_refuses_tokens_we_did_not_make(store: Store, token: str) -> None:
    await listed_tasks(store)
    with pytest.raises(InvalidParams, match="pageToken"):
        await store.list_tasks(A, ListTasks(page_token=token))


async def test_list_refuses_a_damaged_token(store: Store) -> None:
    await listed_tasks(store)
    token = (await store.list_tasks(A, ListTasks(page_size=2))).next_page_token
    raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    raw[0] ^= 0x01  # damage the structure
    forged = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    with pytest.raises(InvalidParams, match="pageToken"):
        await store.list_tasks(A, ListTasks(page_size=2, page_token=forged))


@pytest.mark.parametrize("at", [2, 3])
async def test_list_refuses_a_token_whose_cursor_holds_a_nul(store: Store, at: int) -> None:
    # (remade from a real one, its filter's fingerprint kept: PostgreSQL refused it as
    # an id it cannot hold, SQLite and the memory store paged on from it)
    await listed_tasks(store)
    token = (await store.list_tasks(A, ListTasks(page_size=2))).next_page_token
    fields = msgspec.msgpack.decode(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    fields[at] += "\x00"
    forged = base64.urlsafe_b64encode(msgspec.msgpack.encode(fields)).decode().rstrip("=")
    with pytest.raises(InvalidParams, match="pageToken is not a token from a previous"):
        await store.list_tasks(A, ListTasks(page_size=2, page_token=forged))


@pytest.mark.parametrize(
    "changed",
    [
        ListTasks(page_size=2, context_id="odd"),
        ListTasks(page_size=2, status=S.WORKING),
        ListTasks(page_size=2, status_timestamp_after=ts(0)),
    ],
)
async def test_list_refuses_a_token_from_another_filter(store: Store, changed: ListTasks) -> None:
    await listed_tasks(store)
    token = (await store.list_tasks(A, ListTasks(page_size=2))).next_page_token
    assert token
    with pytest.raises(InvalidParams, match="different filter"):
        await store.list_tasks(A, msgspec.structs.replace(changed, page_token=token))
    # another tenant's: the message names the tenant among what must not change
    with pytest.raises(InvalidParams, match="different filter; keep the tenant"):
        await store.list_tasks(B, ListTasks(page_size=2, page_token=token))
    # the page size and what each task carries may change between pages
    later = ListTasks(page_size=50, page_token=token, history_length=0, include_artifacts=True)
    assert [t.id for t in (await store.list_tasks(A, later)).tasks] == NEWEST_FIRST[2:]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        (ListTasks(page_size=0), "pageSize"),
        (ListTasks(page_size=101), "pageSize"),
        (ListTasks(history_length=-1), "historyLength"),
        (ListTasks(status_timestamp_after="2025-01-31T12:00:00Z"), "statusTimestampAfter"),
        (ListTasks(status_timestamp_after="yesterday"), "statusTimestampAfter"),
    ],
)
async def test_list_refuses_bad_queries(store: Store, query: ListTasks, field: str) -> None:
    with pytest.raises(InvalidParams, match=field):
        await store.list_tasks(A, query)


# --------------------------------------------------------------- recovery, purge


async def test_unfinished_tasks_across_scopes(store: Store) -> None:
    await make(store, A, "t-submitted", ctx="c1")
    await make(store, B, "t-working", ctx="c2", state=S.WORKING)
    await make(store, Scope("other", ""), "t-input", state=S.INPUT_REQUIRED)
    await make(store, A, "t-done", state=S.COMPLETED)
    await make(store, A, "t-rejected", state=S.REJECTED)
    await make(store, B, "t-later", state=S.WORKING)
    await store.append(B, "t-later", 2, [status("t-later", S.FAILED, ts(1))], now=ts(1))

    found = await store.unfinished_tasks()
    assert sorted(found, key=lambda u: u.task_id) == [
        UnfinishedTask(A, "t-submitted", "c1", S.SUBMITTED, 1),
        UnfinishedTask(B, "t-working", "c2", S.WORKING, 2),
    ]


async def test_unfinished_tasks_follow_their_state(store: Store) -> None:
    await make(store, A, "t-1", ctx="c1", state=S.WORKING)
    await store.append(A, "t-1", 2, [status("t-1", S.INPUT_REQUIRED, ts(1))], now=ts(1))
    assert await store.unfinished_tasks() == []
    await store.append(A, "t-1", 3, [status("t-1", S.WORKING, ts(2))], now=ts(2))
    assert await store.unfinished_tasks() == [UnfinishedTask(A, "t-1", "c1", S.WORKING, 4)]
    await store.append(A, "t-1", 4, [status("t-1", S.COMPLETED, ts(3))], now=ts(3))
    assert await store.unfinished_tasks() == []


async def test_purge_finished(store: Store) -> None:
    await make(store, A, "old-done", state=S.WORKING, message_id="m-1")
    await store.append(A, "old-done", 2, [status("old-done", S.COMPLETED, ts(1))], now=ts(1))
    await make(store, B, "old-canceled", state=S.CANCELED, now=ts(2))
    await make(store, A, "new-done", state=S.FAILED, now=ts(10))
    await make(store, A, "old-working", state=S.WORKING, now=ts(1))
    await make(store, A, "old-input", state=S.INPUT_REQUIRED, now=ts(1))

    # last written early, its status stamped by a clock ahead of the writer's: kept
    # until both are past, on every store (the memory store purged it at once)
    await store.create_task(A, [created("ahead", "c", at=ts(0)),
                                status("ahead", S.COMPLETED, ts(100_000), "c")],
                            dialect="1.0", now=ts(0))
    assert await store.purge_finished(ts(5)) == 2
    assert await store.get_task(A, "ahead") is not None
    assert await store.get_task(A, "old-done") is None
    assert await store.get_task(B, "old-canceled") is None
    assert await store.task_for_message(A, "m-1") is None
    with pytest.raises(TaskNotFound):
        await store.read_events(A, "old-done")
    for scope, task_id in [(A, "new-done"), (A, "old-working"), (A, "old-input")]:
        assert await store.get_task(scope, task_id) is not None
    assert (await store.list_tasks(A, ListTasks())).total_size == 4
    # the boundary is exclusive, and a second purge finds nothing more
    assert await store.purge_finished(ts(10)) == 0
    # a purged id is free again, with a fresh log
    assert await make(store, A, "old-done") == 1
    assert [e.seq for e in await store.read_events(A, "old-done")] == [1]
