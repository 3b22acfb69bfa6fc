"""An agent that listens while it works: ``collect N`` gathers the next N messages
sent to its task, then completes with them joined; anything else is echoed."""

from __future__ import annotations

from interlingua import Agent, Context
from interlingua.core.parts import get_text


async def _listen(ctx: Context) -> None:
    command, _, rest = ctx.text.partition(" ")
    if command != "collect":
        await ctx.complete(ctx.text)
        return
    await ctx.update("listening")
    got: list[str] = []
    async for message in ctx.incoming():
        got.append(get_text(message))
        if len(got) == int(rest):
            break
    await ctx.complete(" + ".join(got))


agent = Agent("Listener", "Collects messages while it works.", _listen,
              accepts_messages_while_working=True)
