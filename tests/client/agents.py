"""The agent the client and CLI end-to-end tests talk to.

Its first word picks what it does:

- ``greet``: asks for a name (``input-required``); the answer completes the
  task with the artifact ``Hello, NAME!`` (two turns).
- ``sleep SECONDS``: reports ``working``, sleeps, completes.
- ``ask SECONDS``: asks whether to go on (``input-required``); the answer
  reports ``working``, sleeps SECONDS, then completes with the status message
  ``went on`` and the artifact ``answered TEXT`` (two turns, the second slow).
- ``until PATH``: reports ``working``, waits until the file PATH exists, completes.
- ``reply TEXT``: answers with a bare message, no task.
- ``data``: completes with a data artifact ``{"answer": 42, "items": [1, 2]}``.
- ``files``: describes the files it received in a data artifact and sends
  back a file artifact ``report.csv``.
- ``fail``: the task fails with a status message.
- ``status TEXT``: answers only in a status update (``working`` with TEXT), then
  completes with neither message nor artifact, as some agents in the wild do.
- anything else: completes with the status message ``done`` and the
  artifact ``echo`` holding the text.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from interlingua import Agent, AgentSkill, Context, FilePart, Role, file_part, get_text


async def run(ctx: Context) -> None:
    command, _, rest = ctx.text.partition(" ")
    if _answers_greeting(ctx):
        await ctx.complete(artifact=f"Hello, {ctx.text}!", name="greeting")
    elif _answers(ctx, "ask"):
        await ctx.update("going on")
        await asyncio.sleep(float(_first(ctx).partition(" ")[2] or "0.5"))
        await ctx.complete("went on", artifact=f"answered {ctx.text}", name="answer")
    elif command == "ask":
        await ctx.require_input("Go on?")
    elif command == "greet":
        await ctx.require_input("What is your name?")
    elif command == "sleep":
        await ctx.update("sleeping")
        await asyncio.sleep(float(rest or "30"))
        await ctx.complete("slept")
    elif command == "until":
        await ctx.update("waiting")
        while not Path(rest).exists():
            await asyncio.sleep(0.01)
        await ctx.complete("the file is there")
    elif command == "reply":
        await ctx.reply(rest)
    elif command == "data":
        await ctx.complete(artifact={"answer": 42, "items": [1, 2]}, name="result")
    elif command == "files":
        received = [
            {"name": p.filename, "type": p.media_type, "size": len(p.raw or b"")}
            for p in ctx.message.parts
            if isinstance(p, FilePart)
        ]
        await ctx.artifact({"received": received}, name="received")
        report = file_part(raw=b"a,b\n1,2\n", media_type="text/csv", filename="report.csv")
        await ctx.complete(artifact=report, name="report")
    elif command == "fail":
        await ctx.fail("it broke")
    elif command == "status":
        await ctx.update(rest)
        await ctx.complete()
    else:
        await ctx.complete("done", artifact=ctx.text, name="echo")


def _answers_greeting(ctx: Context) -> bool:
    # A second turn of a task whose first message asked for a greeting.
    return _answers(ctx, "greet")


def _answers(ctx: Context, command: str) -> bool:
    # A later turn of a task whose first message was ``command``.
    users = [m for m in ctx.task.history if m.role is Role.USER]
    return len(users) >= 2 and get_text(users[0]).startswith(command)


def _first(ctx: Context) -> str:
    return next(get_text(m) for m in ctx.task.history if m.role is Role.USER)


agent = Agent(
    "Test assistant",
    "Greets, echoes, sleeps and fails on request.",
    run,
    version="2.1.0",
    skills=[
        AgentSkill(id="greet", name="Greeting", description="Asks your name, then greets you.",
                   tags=["conversation"]),
        AgentSkill(id="echo", name="Echo", description="Says back what it is sent.",
                   tags=["test", "echo"]),
    ],
)
