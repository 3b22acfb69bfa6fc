"""Agents the end-to-end tests serve (also loadable by ``interlingua serve``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from interlingua import Agent, Context


async def _story(ctx: Context) -> None:
    # "N DELAY": N chunks, DELAY seconds between them
    words = ctx.text.split()
    n = int(words[0]) if words and words[0].isdigit() else 5
    delay = float(words[1]) if len(words) > 1 else 0.0
    await ctx.update("writing")
    aid = None
    for i in range(n):
        aid = await ctx.artifact(f"chunk {i};", artifact_id=aid, append=aid is not None,
                                 last_chunk=i == n - 1, name="story.txt")
        if delay:
            await asyncio.sleep(delay)
    await ctx.complete("The story is complete!")


story = Agent("Story", "Streams a story in chunks.", _story)


async def _echo(text: str) -> str:
    return text


echo = Agent("Echo", "Echoes.", _echo)


async def _gen(text: str) -> AsyncIterator[str]:
    for word in text.split():
        yield word + " "


words = Agent("Words", "Streams the words it is sent.", _gen)


async def _slow(ctx: Context) -> None:
    await ctx.update("working on it")
    await asyncio.sleep(float(ctx.text or "30"))
    await ctx.complete("done")


slow = Agent("Slow", "Takes its time.", _slow)
