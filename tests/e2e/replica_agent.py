"""The agent the replica tests serve: what it does is said by the message.

``story N DELAY``: N chunks, DELAY seconds apart, then complete.
``gate N PATH``: N chunks, the last once PATH exists, then complete.
``wait PATH``: work until canceled; on cancellation write "canceled" to PATH.
``ask``: ask for input (a reply then gets its answer: anything else).
anything else: answer with it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from interlingua import Agent, Context
from interlingua.server.auth import Limits, RateLimit


async def _run(ctx: Context) -> None:
    command, _, rest = ctx.text.partition(" ")
    if command == "story":
        n, delay = rest.split()
        await ctx.update("writing")
        aid = None
        for i in range(int(n)):
            aid = await ctx.artifact(f"chunk {i};", artifact_id=aid, append=aid is not None,
                                     last_chunk=i == int(n) - 1, name="story.txt")
            await asyncio.sleep(float(delay))
        await ctx.complete("The story is complete!")
    elif command == "gate":
        n, path = rest.split(maxsplit=1)
        await ctx.update("writing")
        aid = None
        for i in range(int(n)):
            while i == int(n) - 1 and not Path(path).exists():
                await asyncio.sleep(0.01)
            aid = await ctx.artifact(f"chunk {i};", artifact_id=aid, append=aid is not None,
                                     last_chunk=i == int(n) - 1, name="story.txt")
        await ctx.complete("The story is complete!")
    elif command == "wait":
        await ctx.update("waiting")
        try:
            await asyncio.sleep(120)
        except asyncio.CancelledError:
            Path(rest).write_text("canceled" if ctx.cancelled.is_set() else "stopped")
            raise
        await ctx.complete("no one canceled")
    elif command == "ask":
        await ctx.require_input("and then?")
    else:
        await ctx.complete(ctx.text)


agent = Agent("Replica", "Tells stories, waits, answers.", _run, push_notifications=True)

#: for --limits: a rate every replica counts together (with a Redis bus)
LIMITS = Limits(rate_limit=RateLimit(rate=0.5, burst=4))

#: a second agent the same server serves beside ``agent`` (``replica_agent.py:other``),
#: for the tests of several agents on replicas
other = Agent("Other", "Does what Replica does, as another agent.", _run)
