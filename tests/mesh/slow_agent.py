"""An agent for the instance tests: it says which process runs the turn, then
works for as many seconds as the message says (a report every 0.2 s)."""

from __future__ import annotations

import asyncio
import os
import time

from interlingua import Agent, Context


async def _work(ctx: Context) -> None:
    seconds = float(ctx.text or "1")
    await ctx.update(f"pid {os.getpid()}")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        await asyncio.sleep(0.2)
        await ctx.update("working")
    await ctx.complete(f"done by {os.getpid()}")


agent = Agent("Slow", "Works for as many seconds as it is told.", _work)
