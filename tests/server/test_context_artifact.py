"""What ``Context.artifact`` emits: every argument in its field, the right index."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from interlingua.core import model as m
from interlingua.server.context import Context, RequestInfo


class _Sink:
    max_nesting = 32

    def __init__(self, task: m.Task) -> None:
        self.task = task
        self.events: list[m.Event] = []

    async def emit(self, events: Sequence[m.Event], *, wait: bool = True) -> None:
        assert not wait or isinstance(events[-1], m.StatusUpdate)  # only a turn's end waits
        self.events.extend(events)

    def queue(self, artifact: m.Artifact, append: bool, last_chunk: bool) -> None:
        # the chunk as the run makes it (server/run.py)
        self.events.append(m.ArtifactUpdate(task_id=self.task.id, context_id=self.task.context_id,
                                            artifact=artifact, append=append,
                                            last_chunk=last_chunk))

    async def reply(self, message: m.Message) -> None:
        raise AssertionError

    async def context_tasks(self) -> list[m.Task]:
        return []

    def now(self) -> str:
        return "2030-01-01T00:00:00.000Z"


def _context(*artifact_ids: str) -> tuple[Context, _Sink]:
    task = m.Task(id="task-1", context_id="ctx-1",
                  status=m.TaskStatus(state=m.TaskState.WORKING),
                  artifacts=[m.Artifact(artifact_id=a, parts=[]) for a in artifact_ids])
    sink = _Sink(task)
    message = m.Message(message_id="m-1", role=m.Role.USER, parts=[m.TextPart(text="hi")])
    return Context(sink, message, RequestInfo()), sink


async def test_every_argument_lands_in_its_own_field() -> None:
    ctx, sink = _context("a-0", "a-1")
    for content, parts in [("text", [m.TextPart(text="text")]),
                           (b"\x00", [m.FilePart(raw=b"\x00",
                                                 media_type="application/octet-stream")]),
                           ({"k": 1}, [m.DataPart(data={"k": 1})])]:
        sink.events.clear()
        aid = await ctx.artifact(content, artifact_id="a-0", name="n", description="d",
                                 append=True, last_chunk=True, metadata={"x": [1]})
        assert aid == "a-0"
        assert sink.events == [m.ArtifactUpdate(
            task_id="task-1", context_id="ctx-1",
            artifact=m.Artifact(artifact_id="a-0", parts=parts, name="n", description="d",
                                metadata={"x": [1]}, index=0),
            append=True, last_chunk=True)]
    sink.events.clear()
    aid = await ctx.artifact("plain")
    (event,) = sink.events
    assert event == m.ArtifactUpdate(task_id="task-1", context_id="ctx-1", artifact=m.Artifact(
        artifact_id=aid, parts=[m.TextPart(text="plain")], index=2))
    assert msgspec.structs.asdict(event.artifact)["extensions"] is None


async def test_the_index_is_the_artifacts_position_or_the_next_one() -> None:
    ctx, sink = _context("a-0", "a-1", "a-2")
    for aid, index in [("a-2", 2), ("a-0", 0), ("a-1", 1), ("a-2", 2), ("new", 3)]:
        await ctx.artifact("x", artifact_id=aid)
        assert sink.events[-1].artifact.index == index, aid  # type: ignore[union-attr]


async def test_new_artifacts_still_queued_each_take_the_next_index() -> None:
    # the sink queues without writing: the task holds none of this turn's artifacts yet
    ctx, sink = _context("a-0")
    x = await ctx.artifact("x", name="X")
    await ctx.artifact("y", name="Y")
    await ctx.artifact({"k": 1}, name="Z")  # data: not the plain text path
    await ctx.artifact("more", artifact_id=x, append=True)  # a chunk keeps its index
    await ctx.complete(artifact="last")
    indexes = [e.artifact.index for e in sink.events if isinstance(e, m.ArtifactUpdate)]
    assert indexes == [1, 2, 3, 1, 4]


async def test_each_chunk_is_awaited_for_its_own_artifact_id_queued_or_written() -> None:
    # a queued chunk hands back a finished future of its id, one per run of chunks of an
    # artifact: chunks of artifacts that alternate, and a new one, each get their own
    ctx, sink = _context("a-0", "a-1")
    got = [await ctx.artifact("x", artifact_id=a, append=True)
           for a in ("a-0", "a-0", "a-1", "a-0", "a-1", "a-1")]
    assert got == ["a-0", "a-0", "a-1", "a-0", "a-1", "a-1"]
    new = await ctx.artifact("y")
    assert new not in ("a-0", "a-1")
    assert await ctx.artifact("z", append=True) == new  # continues the artifact added last
    assert [e.artifact.artifact_id for e in sink.events] == [*got, new, new]  # type: ignore[union-attr]

    written: list[str] = []

    async def write() -> None:
        written.append("w")

    sink.queue = lambda artifact, append, last_chunk: write()  # type: ignore[method-assign,assignment]
    assert await ctx.artifact("w", artifact_id="a-1", append=True) == "a-1"
    assert written == ["w"]
