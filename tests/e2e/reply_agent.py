"""An agent that answers every message with a bare message naming its run: a
second run of one message answers with another text."""

import uuid

from interlingua import Agent, Context


async def reply(ctx: Context) -> None:
    await ctx.reply(f"{ctx.text} run={uuid.uuid4().hex}")


agent = Agent("Replier", "Answers with a message.", reply)
