"""An agent that streams while it listens: ``stream PATH`` writes an artifact chunk every
few milliseconds for as long as its turn works, and writes the text of each message it
is handed meanwhile to PATH (a line each); ``done`` completes the task. However the turn
ends (canceled too), its last line in PATH is ``ended``."""

from __future__ import annotations

from pathlib import Path

from interlingua import Agent, Context
from interlingua.core.parts import get_text


async def _stream(ctx: Context) -> None:
    command, _, path = ctx.text.partition(" ")
    if command != "stream":
        await ctx.complete(ctx.text)
        return
    log = Path(path)

    def note(line: str) -> None:
        with log.open("a") as f:
            f.write(line + "\n")

    try:
        await ctx.update("streaming")
        aid = None
        n = 0
        while True:
            aid = await ctx.artifact(f"{n};", artifact_id=aid, append=aid is not None,
                                     name="stream.txt")
            n += 1
            # (one loop, no task of its own: a cancel that reaches either ends the turn)
            message = await ctx.next_message(timeout=0.001)
            if message is None:
                continue
            note(get_text(message))
            if get_text(message) == "done":
                break
        await ctx.complete(f"{n} chunks")
    finally:
        note("ended")


agent = Agent("BusyListener", "Streams while it listens.", _stream,
              accepts_messages_while_working=True)
