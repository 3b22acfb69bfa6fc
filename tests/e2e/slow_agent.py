"""An agent slow to say anything: it waits ``FIRST_STEP`` seconds before its first
event, as a model does before its first token (``interlingua serve tests/e2e/slow_agent.py``)."""

from __future__ import annotations

import asyncio
import contextlib

from interlingua import Agent, Context

#: seconds the executor waits before its first event
FIRST_STEP = 1.0


class Slow:
    """Waits FIRST_STEP before its first event; "reply" answers with a bare message
    after half of it."""

    def __init__(self) -> None:
        self.turns = 0
        self.steps_done = 0
        self._in_first_step: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def release(self) -> None:
        """End now the first step of the turns in it (from any thread): for a test
        that has seen what it came for before the step's end, and needs the rest."""
        for loop, ended in list(self._in_first_step):
            with contextlib.suppress(RuntimeError):  # its loop has closed
                loop.call_soon_threadsafe(ended.set)

    async def __call__(self, ctx: Context) -> None:
        self.turns += 1
        ended = asyncio.Event()
        turn = (asyncio.get_running_loop(), ended)
        self._in_first_step.add(turn)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), FIRST_STEP / 2 if ctx.text == "reply"
                                       else FIRST_STEP)
        finally:
            self._in_first_step.discard(turn)
        self.steps_done += 1
        if ctx.text == "reply":
            await ctx.reply(f"pong: {ctx.text}")
            return
        await ctx.artifact(f"answer to {ctx.text}", name="answer")
        await ctx.complete("done")


agent = Agent("Slow", "Slow to start.", Slow())
