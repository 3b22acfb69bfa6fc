"""An agent that writes artifact chunks while it waits for a message: the chunks come
from a task of its own, which stops at the first write refused; the wait ends only
with a message, or when the turn is stopped."""

from __future__ import annotations

import asyncio

from interlingua import Agent, Context


async def stream_and_listen(ctx: Context) -> None:
    await ctx.update("listening")

    async def chunks() -> None:
        for n in range(100_000):
            await ctx.artifact(f"{n} ", name="chunks", append=n > 0)
            await asyncio.sleep(0.02)

    writer = asyncio.get_running_loop().create_task(chunks())
    try:
        async for _ in ctx.incoming():
            break
    finally:
        writer.cancel()
    await ctx.complete("heard")


agent = Agent("Streaming listener", "Writes chunks while it listens.", stream_and_listen,
              accepts_messages_while_working=True)
