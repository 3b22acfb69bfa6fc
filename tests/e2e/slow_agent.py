"""An agent slow to say anything: it waits ``FIRST_STEP`` seconds before its first
event, as a model does before its first token (``interlingua serve tests/e2e/slow_agent.py``)."""

from __future__ import annotations

import asyncio

from interlingua import Agent, Context

#: seconds the executor waits before its first event
FIRST_STEP = 1.0


class Slow:
    """Waits FIRST_STEP before its first event; "reply" answers with a bare message
    after half of it."""

    def __init__(self) -> None:
        self.turns = 0
        self.steps_done = 0

    async def __call__(self, ctx: Context) -> None:
        self.turns += 1
        await asyncio.sleep(FIRST_STEP / 2 if ctx.text == "reply" else FIRST_STEP)
        self.steps_done += 1
        if ctx.text == "reply":
            await ctx.reply(f"pong: {ctx.text}")
            return
        await ctx.artifact(f"answer to {ctx.text}", name="answer")
        await ctx.complete("done")


agent = Agent("Slow", "Slow to start.", Slow())
