"""An agent for the load tests: it writes as many artifact chunks as the message says,
as fast as it can, then completes."""

from __future__ import annotations

from interlingua import Agent, Context


async def _burst(ctx: Context) -> None:
    count = int(ctx.text or "1")
    for i in range(count):
        await ctx.artifact(f"c{i} ", artifact_id="burst", append=i > 0,
                           last_chunk=i == count - 1)
    await ctx.complete(f"wrote {count}")


agent = Agent("Fast", "Writes as many chunks as it is told, as fast as it can.", _burst,
              streaming=True)
