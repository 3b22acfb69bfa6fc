"""The echo agent ``test_client_tls.py`` serves with ``interlingua serve``."""

from interlingua import Agent, Context


async def echo(ctx: Context) -> None:
    await ctx.artifact(ctx.text)
    await ctx.complete()


agent = Agent("Echo", "Echoes.", echo, streaming=True)
