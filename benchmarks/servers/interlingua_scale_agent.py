"""The echo agent of ``interlingua_echo.py`` for ``interlingua serve`` (replicas).

``benchmarks/scale.py`` runs ``interlingua serve benchmarks/servers/interlingua_scale_agent.py
--store postgresql://… --bus redis://…`` for its replica cases. The agent answers as
``interlingua_echo.echo`` does, plus the text ``ts N PAUSE``: N chunks of one artifact whose
text is the wall-clock time of the emit (seconds) and the chunk's number, ``PAUSE`` seconds
apart (0: back to back), then completed; the same mode as ``a2a_sdk_db_echo.py``'s.
"""

from __future__ import annotations

import asyncio
import time

from interlingua_echo import echo

from interlingua import Agent, Context


async def run(ctx: Context) -> None:
    words = ctx.text.split()
    if len(words) != 3 or words[0] != "ts":
        await echo(ctx)
        return
    count, pause = int(words[1]), float(words[2])
    aid = None
    for n in range(count):
        # its emit time, and its number: two chunks may share a microsecond
        aid = await ctx.artifact(f"{time.time():.6f} {n}", artifact_id=aid,
                                 append=aid is not None)
        if pause:
            await asyncio.sleep(pause)
        elif n % 64 == 63:
            await asyncio.sleep(0)
    await ctx.complete()


agent = Agent(name="echo", description="Echo agent", executor=run)
