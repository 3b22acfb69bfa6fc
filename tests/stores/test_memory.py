"""What only the in-process store promises: finished tasks cost the cycle collector nothing."""

from __future__ import annotations

import gc
import types
from typing import Any

import msgspec
import pytest

from interlingua.core.calls import ListTasks
from interlingua.core.model import Event, Message
from interlingua.core.model import TaskState as S
from interlingua.stores import MemoryStore, Scope, _packed_log, _projection

from .builders import agent, chunk, created, said, status, ts, user

#: these tests need the push outbox (see conftest.py)
NEEDS_PUSH = True

A = Scope("acme", "alice")


async def finish(store: MemoryStore, task_id: str) -> None:
    await store.create_task(
        A,
        [created(task_id, at=ts(0), history=[user(f"m-{task_id}")]),
         chunk(task_id, "a", "some text")],
        dialect="1.0", now=ts(0), message_id=f"m-{task_id}",
    )
    await store.append(A, task_id, 2, [status(task_id, S.COMPLETED, ts(1))], now=ts(1))


async def test_finished_tasks_add_no_objects_for_the_cycle_collector() -> None:
    store = MemoryStore()
    await finish(store, "warm-up")
    gc.collect()
    before = len(gc.get_objects())
    for n in range(500):
        await finish(store, f"t-{n}")
    gc.collect()
    grown = len(gc.get_objects()) - before
    # Held as objects, each task kept several tracked lists (thousands here).
    assert grown < 50, f"{grown} more objects tracked by the cycle collector"
    record = await store.get_task(A, "t-499")
    assert record is not None and record.task.status.state is S.COMPLETED
    assert record.task.artifacts[0].parts[0].text == "some text"  # type: ignore[union-attr]
    assert await store.task_for_message(A, "m-t-499") == "t-499"


def _tracked_entries(root: object) -> int:
    """Entries of the tracked dicts, lists and sets reachable from ``root``: what
    a collection visits for it."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if gc.is_tracked(obj) and isinstance(obj, dict | list | set):
            total += len(obj)
        # the store's own data, not the code and modules it refers to
        stack.extend(r for r in gc.get_referents(obj) if not isinstance(r, _CODE))
    return total


_CODE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
         types.MethodType)


async def test_a_collection_does_not_walk_every_stored_task() -> None:
    # A dict keyed per task is one object to the cycle collector, but while it
    # is tracked every collection (young ones too) visits each of its entries:
    # the cost grows with the store. Inserting a tracked key (a tuple) tracks it
    # again after each full collection, so this looks right after the inserts.
    store = MemoryStore()
    await finish(store, "warm-up")
    for n in range(2000):
        await finish(store, f"t-{n}")
    visited = _tracked_entries(store)
    assert visited < 100, f"a collection visits {visited} entries for the store"
    assert await store.task_for_message(A, "m-t-1999") == "t-1999"
    assert await store.purge_finished(ts(9)) == 2001
    assert await store.task_for_message(A, "m-t-1999") is None


async def test_a_running_task_is_not_packed_until_it_finishes() -> None:
    store = MemoryStore()
    await store.create_task(A, [created("t-1", at=ts(0)), status("t-1", S.WORKING, ts(0))],
                            dialect="1.0", now=ts(0))
    for n in range(3):
        await store.append(A, "t-1", 2 + n, [chunk("t-1", "a", str(n), append=n > 0)],
                           now=ts(n))
    await store.append(A, "t-1", 5, [status("t-1", S.COMPLETED, ts(5))], now=ts(5))
    record = await store.get_task(A, "t-1")
    assert record is not None and record.version == 6
    assert [p.text for p in record.task.artifacts[0].parts] == ["0", "1", "2"]  # type: ignore[union-attr]
    assert [e.seq for e in await store.read_events(A, "t-1", after=4, limit=1)] == [5]


async def test_a_finished_task_is_folded_at_its_first_read_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from interlingua.stores import _projection

    store = MemoryStore()
    await store.create_task(A, [created("t-1", at=ts(0)), status("t-1", S.WORKING, ts(0))],
                            dialect="1.0", now=ts(0))
    for n in range(50):
        await store.append(A, "t-1", 2 + n, [chunk("t-1", "a", str(n), append=n > 0)],
                           now=ts(n))
    await store.append(A, "t-1", 52, [status("t-1", S.COMPLETED, ts(60))], now=ts(60))
    folds = 0
    fold = _projection.fold

    def counting(events: Any) -> Any:
        nonlocal folds
        folds += 1
        return fold(events)

    monkeypatch.setattr(_projection, "fold", counting)
    reads = [await store.get_task(A, "t-1") for _ in range(3)]
    assert folds == 1
    texts = [[p.text for p in r.task.artifacts[0].parts] for r in reads if r is not None]  # type: ignore[union-attr]
    assert texts == [[str(n) for n in range(50)]] * 3


def _own(message: Message, task_id: str, ctx: str = "ctx-1") -> Message:
    return msgspec.structs.replace(message, task_id=task_id, context_id=ctx)


async def test_a_packed_log_reads_back_as_written_from_every_seq() -> None:
    # Every shape the packing treats apart: messages that name their own task
    # (kept without the ids), messages that name none or another, events of
    # another context (kept whole), metadata beyond 64 bits, a continuation
    # after input-required, chunks appended to an artifact.
    store = MemoryStore()
    tid = "t-1"
    big = {"n": 2**70, "when": "2025-01-31", "nested": [1, 2.5, None, {"x": "y"}]}
    first = _own(user("m-1"), tid)
    stranger = msgspec.structs.replace(user("m-0"), task_id="t-9", context_id="ctx-1")
    log: list[Event] = [
        created(tid, at=ts(0), history=[first, user("m-00"), stranger], metadata=big),
        status(tid, S.WORKING, ts(1)),
        chunk(tid, "a", "one", name="out"),
        msgspec.structs.replace(chunk(tid, "a", "two", append=True), metadata=big),
        status(tid, S.INPUT_REQUIRED, ts(2), message=_own(agent("m-2", "more?"), tid)),
        said(_own(user("m-3", "yes"), tid)),
        said(user("m-4", "no ids")),
        status(tid, S.WORKING, ts(3)),
        chunk(tid, "b", "elsewhere", ctx="ctx-2"),
        msgspec.structs.replace(status(tid, S.COMPLETED, ts(4)), metadata={"k": "v"}),
    ]
    await store.create_task(A, log[:2], dialect="1.0", now=ts(0), message_id="m-1")
    version = 2
    for n, event in enumerate(log[2:], 2):
        version = await store.append(A, tid, version, [event], now=ts(n))
    for after in range(len(log) + 1):
        got = await store.read_events(A, tid, after=after)
        assert [e.seq for e in got] == list(range(after + 1, len(log) + 1))
        assert [e.event for e in got] == log[after:]
    record = await store.get_task(A, tid)
    assert record is not None and record.version == len(log)
    assert record.task == _projection.fold(log)
    assert await store.find_message(A, "m-1") is not None


async def test_a_task_finished_at_creation_reads_back_as_written() -> None:
    store = MemoryStore()
    log: list[Event] = [created("t-1", at=ts(0), history=[_own(user("m-1"), "t-1")]),
           chunk("t-1", "a", "hello", last=True), status("t-1", S.COMPLETED, ts(0))]
    await store.create_task(A, log, dialect="1.0", now=ts(0), message_id="m-1")
    assert [e.event for e in await store.read_events(A, "t-1")] == log
    assert [e.event for e in await store.read_events(A, "t-1", after=1, limit=1)] == log[1:2]
    listed = await store.list_tasks(A, ListTasks(status=S.COMPLETED, include_artifacts=True))
    assert listed.tasks == [_projection.fold(log)]


async def test_a_finished_stream_packs_its_chunks_as_their_texts() -> None:
    store = MemoryStore()
    log: list[Event] = [
        created("t-1", at=ts(0)),
        *[chunk("t-1", "a", f"chunk {n:04d} ", append=n > 0) for n in range(1000)],
        status("t-1", S.COMPLETED, ts(1)),
    ]
    await store.create_task(A, log, dialect="1.0", now=ts(0))
    packed = _packed_log.pack(log, "t-1", "ctx-1", bytearray())
    # each chunk after the first is its text: 15 bytes for 12 of text, where a
    # chunk's row of its own takes more than 80
    head = len(_packed_log.pack(log[:2], "t-1", "ctx-1", bytearray()))
    alone = head - len(_packed_log.pack(log[:1], "t-1", "ctx-1", bytearray()))
    assert alone > 80 and len(packed) < head + 999 * 15 + 100
    assert _packed_log.unpack(packed, "t-1", "ctx-1") == log
    assert [e.event for e in await store.read_events(A, "t-1", after=500, limit=2)] == log[500:502]


def test_the_packed_rows_stand_for_every_field_of_their_events() -> None:
    # A field added to one of these events would otherwise be dropped when its
    # task is packed.
    for cls, fields in _packed_log.FIELDS.items():
        assert cls.__struct_fields__ == fields, cls.__name__
