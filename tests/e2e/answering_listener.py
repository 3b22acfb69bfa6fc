"""An agent that answers while it works: each message its task is sent meanwhile gets
an artifact of its own (the text in capitals, named after it); ``done`` completes it."""

from __future__ import annotations

from interlingua import Agent, Context
from interlingua.core.parts import get_text


async def _answer(ctx: Context) -> None:
    await ctx.update("listening")
    async for message in ctx.incoming():
        text = get_text(message)
        if text == "done":
            break
        await ctx.artifact(text.upper(), name=text)
    await ctx.complete("bye")


agent = Agent("AnsweringListener", "Answers each message while it works.", _answer,
              accepts_messages_while_working=True, streaming=True)
