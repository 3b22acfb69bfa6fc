"""The agent of benchmarks/long_poll.py: every message leaves its task waiting for input.

A follow-up moves the task to working and back to input-required: two events, so a
reader waiting on the task (a long poll, a stream) has something to be woken by.
"""

from __future__ import annotations

from interlingua import Agent, Context


async def ask(ctx: Context) -> None:
    await ctx.require_input("more?")


agent = Agent("Asking", "Asks for more, every time.", ask)
