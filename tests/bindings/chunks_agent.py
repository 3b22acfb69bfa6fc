"""The executor the binding tests serve: chunks of one artifact, or a turn that works
until it is canceled."""

from __future__ import annotations

import asyncio

from interlingua import Context


async def write_chunks(ctx: Context) -> None:
    # "slow": works until canceled; "ask": waits for input; "N DELAY": N chunks, DELAY
    # seconds apart
    if ctx.text == "slow":
        await ctx.update("working on it")
        await asyncio.sleep(30)
        return
    if ctx.text == "ask":
        await ctx.require_input("which one?")
        return
    words = ctx.text.split()
    n = int(words[0]) if words and words[0].isdigit() else 3
    delay = float(words[1]) if len(words) > 1 else 0.0
    await ctx.update("writing")
    aid = None
    for i in range(n):
        aid = await ctx.artifact(f"chunk {i};", artifact_id=aid, append=aid is not None,
                                 last_chunk=i == n - 1, name="story.txt")
        if delay:
            await asyncio.sleep(delay)
    await ctx.complete("done")
