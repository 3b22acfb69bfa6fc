"""The agent of ``benchmarks/mesh.py``, served by ``interlingua serve`` on HTTP and on
the mesh at once: a unary send completes with its text as the artifact; ``stream N``
sends N artifact chunks, each its own event, then completes."""

from __future__ import annotations

from interlingua import Agent, Context


async def echo(ctx: Context) -> None:
    text = ctx.text
    if text.startswith("stream "):
        aid = None
        for n in range(int(text.split()[1])):
            aid = await ctx.artifact(f"chunk {n:04d} ", artifact_id=aid, append=aid is not None)
        await ctx.complete()
        return
    await ctx.complete(artifact=text)


agent = Agent("BenchEcho", "Echoes, or streams N chunks.", echo, streaming=True)
