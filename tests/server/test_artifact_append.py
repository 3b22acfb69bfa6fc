"""``ctx.artifact(..., append=True)`` without an id continues the task's last artifact
of that name (its last artifact, without a name), across turns; the first such chunk
starts it. Over real HTTP, as a client sees it."""

from __future__ import annotations

from interlingua import Agent, Context
from interlingua.client import Client
from interlingua.core.model import ArtifactUpdate, Task, TaskState
from interlingua.core.parts import get_text
from tests.live import live_agent


async def ticker(ctx: Context) -> None:
    if ctx.text == "more":
        await ctx.artifact("tick 3\n", name="ticks.txt", append=True)
        await ctx.complete()
        return
    for i in range(3):
        await ctx.artifact(f"tick {i}\n", name="ticks.txt", append=True)
        await ctx.artifact(f"log {i}\n", name="log.txt", append=True)
    await ctx.artifact("end of log\n", append=True)  # no name: the last artifact, log.txt
    await ctx.require_input("more?")


AGENT = Agent("Ticker", "Ticks into one artifact.", ticker, streaming=True)


def _texts(task: Task) -> dict[str | None, str]:
    return {a.name: get_text(a, sep="") for a in task.artifacts}


async def test_appends_without_an_id_continue_the_artifact_of_that_name() -> None:
    with live_agent(AGENT) as url:
        async with Client(url) as client:
            events = [e.item async for e in client.stream("go")]
            chunks = [e for e in events if isinstance(e, ArtifactUpdate)]
            ticks = [c for c in chunks if c.artifact.name == "ticks.txt"]
            # one artifact: the first chunk starts it, the others append to its id
            assert [c.append for c in ticks] == [False, True, True]
            assert len({c.artifact.artifact_id for c in ticks}) == 1
            task = await client.get_task(ticks[0].task_id)
            assert task.status.state is TaskState.INPUT_REQUIRED
            assert _texts(task) == {"ticks.txt": "tick 0\ntick 1\ntick 2\n",
                                    "log.txt": "log 0\nlog 1\nlog 2\nend of log\n"}
            # a later turn continues the same artifact
            done = await client.send("more", task_id=task.id)
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
            assert len(done.artifacts) == 2
            assert _texts(done)["ticks.txt"] == "tick 0\ntick 1\ntick 2\ntick 3\n"
