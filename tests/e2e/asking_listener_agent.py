"""An agent that takes messages while it works, but asks before it reads them:
``ask PATH`` works until the file PATH exists, then asks for input without reading
the messages sent to its task meanwhile. Any other message (an answer) completes
the task with ``answered: `` and its text, joined by `` + `` to the texts of the
messages waiting in the turn's inbox."""

from __future__ import annotations

import asyncio
from pathlib import Path

from interlingua import Agent, Context
from interlingua.core.parts import get_text


async def _ask(ctx: Context) -> None:
    command, _, path = ctx.text.partition(" ")
    if command != "ask":
        texts = [ctx.text]
        while (message := await ctx.next_message(timeout=0.05)) is not None:
            texts.append(get_text(message))
        await ctx.complete("answered: " + " + ".join(texts))
        return
    await ctx.update("working")
    while not Path(path).exists():
        await asyncio.sleep(0.02)
    await ctx.require_input("what next?")


agent = Agent("AskingListener", "Asks before it reads what it is sent.", _ask,
              accepts_messages_while_working=True)
