"""A finished task's log, read back over HTTP after the memory store packed it:
a replay from every event id gives, byte for byte, what the live streams gave."""

from __future__ import annotations

from interlingua.client import Client, StreamEvent
from interlingua.core.model import Task, TaskState
from interlingua.server import Agent, Context
from tests.live import live_agent


async def two_turns(ctx: Context) -> None:
    if ctx.text == "start":
        await ctx.update("thinking", metadata={"big": 2**70})
        await ctx.artifact("first", name="first")
        await ctx.require_input("more?")
        return
    aid = await ctx.artifact("a", metadata={"n": [1, 2.5, None]})
    await ctx.artifact("b", artifact_id=aid, append=True, last_chunk=True)
    await ctx.complete(f"got {ctx.text}")


def frames(events: list[StreamEvent]) -> dict[int, bytes]:
    return {e.seq: e.raw for e in events if e.seq is not None}


async def test_a_finished_tasks_log_replays_as_it_streamed() -> None:
    with live_agent(Agent("Turns", "Two turns.", two_turns)) as url:
        async with Client(url) as c:
            first = [e async for e in c.stream("start")]
            assert isinstance(first[0].item, Task)
            task_id = first[0].item.id
            second = [e async for e in c.stream("go on", task_id=task_id)]
            task = await c.get_task(task_id)
            assert task.status.state is TaskState.COMPLETED
            assert [a.name for a in task.artifacts] == ["first", None]
            # the continuation's stream opens with a snapshot of the task, not an event
            seen = frames(first) | frames([e for e in second if not isinstance(e.item, Task)])
            full = frames([e async for e in c.subscribe(task_id, last_event_id=0)])
            assert {s: full.get(s) for s in seen} == seen
            for after in range(max(full) + 1):
                replay = [e async for e in c.subscribe(task_id, last_event_id=after)]
                assert frames(replay) == {s: raw for s, raw in full.items() if s > after}
