"""The executor the A2A 1.1 (generation) tests serve.

``ask``: waits for input. ``chunks N [DELAY]``: N chunks of one artifact, DELAY
seconds apart, then waits for input. ``keep N``: N chunks, then works on until
canceled (its last event an artifact's). ``hold``: works until canceled.
Anything else: completes.
"""

from __future__ import annotations

import asyncio

from interlingua import Agent, Context


async def converse(ctx: Context) -> None:
    words = ctx.text.split()
    command = words[0] if words else ""
    if command == "ask":
        await ctx.require_input("more?")
    elif command == "chunks":
        n = int(words[1])
        delay = float(words[2]) if len(words) > 2 else 0.0
        await ctx.update("writing")
        aid = None
        for i in range(n):
            aid = await ctx.artifact(f"c{i};", artifact_id=aid, append=aid is not None,
                                     name="out.txt")
            if delay:
                await asyncio.sleep(delay)
        await ctx.require_input("more?")
    elif command == "keep":
        await ctx.update("writing")
        aid = None
        for i in range(int(words[1])):
            aid = await ctx.artifact(f"k{i};", artifact_id=aid, append=aid is not None)
        await asyncio.sleep(60)
    elif command == "hold":
        await ctx.update("holding")
        await asyncio.sleep(60)
    else:
        await ctx.complete("done")


AGENT = Agent("Generations", "Asks, writes chunks, holds.", converse, streaming=True)
