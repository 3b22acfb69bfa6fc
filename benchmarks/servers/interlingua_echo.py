"""Echo agent on interlingua, the server under test.

Launched by ``benchmarks/run.py`` as ``uvicorn interlingua_echo:create --factory`` in the
project venv. Everything that depends on the shape of ``interlingua.server`` lives in
``build_app``; if that API changes, only this function changes.

Plain uvicorn serves it, as it serves the other servers of the comparison, so the
connection bounds of ``interlingua serve`` (head size, read deadlines, 512 connections per
client address: ``interlingua.server.connections``) are not applied here; the load clients,
all on one address, open up to 64 connections (the idle-stream case more), which would need
``ConnectionLimits(max_per_ip=...)`` raised if those bounds were applied.

What the agent does depends on the message text:

- ``idle`` (unary or streaming): one ``working`` status update, then nothing until the
  task is canceled;
- any other text, unary send: a completed task whose one artifact is the text;
- ``stream N``, streaming send: N artifact chunks, then completed;
- any other text, streaming send: ``STREAM_CHUNKS`` artifact chunks, then completed.

Environment (set by the harness):
    BENCH_STORE_URL   the store URL, e.g. ``memory://`` or ``sqlite:///tmp/x/tasks.db``
    BENCH_PUBLIC_URL  the URL clients reach the server at, e.g. ``http://127.0.0.1:41234/``
    BENCH_SUBMIT_GRACE  optional: the submit grace in seconds (``EngineConfig.submit_grace``;
                      ``instructions.py`` stretches it as valgrind stretches time)
"""

from __future__ import annotations

import os
from typing import Any

from echo_modes import IDLE_TEXT, STREAM_CHUNKS, chunks_asked, wait_forever

try:
    from interlingua import Agent, Context, create_app
except ImportError as exc:
    raise SystemExit(
        "interlingua_echo: cannot import `Agent, create_app` from interlingua "
        f"({exc}); the interlingua server is not available in this venv"
    ) from exc


async def echo(ctx: Context) -> None:
    """A unary send completes with the text as its one artifact; a streaming send gets
    its chunks, each its own event, then completes; ``idle`` waits to be canceled."""
    text = ctx.text
    if text == IDLE_TEXT:
        await ctx.update(IDLE_TEXT)
        # Held until CancelTask (or the server's shutdown) cancels this turn.
        await wait_forever()
        return
    if not ctx.request.streaming:
        await ctx.complete(artifact=text)
        return
    aid = None
    for n in range(chunks_asked(text) or STREAM_CHUNKS):
        aid = await ctx.artifact(f"chunk {n:04d} ", artifact_id=aid, append=aid is not None)
    await ctx.complete()


def build_app(store_url: str, public_url: str, submit_grace: float | None = None,
              **engine: float) -> Any:
    """The ASGI app serving the echo agent; the one place that knows the server API.

    ``engine``: other ``EngineConfig`` fields (the call-count test puts its timers far off).
    """
    agent = Agent(name="echo", description="Echo agent", executor=echo)
    # Two calls, not engine_config=None: instructions.py runs older revisions'
    # src with this file, and only a stretched grace needs their EngineConfig.
    if submit_grace is None and not engine:
        return create_app(agent, store=store_url, public_url=public_url)
    from interlingua.server import EngineConfig

    if submit_grace is not None:
        engine["submit_grace"] = submit_grace
    return create_app(agent, store=store_url, public_url=public_url,
                      engine_config=EngineConfig(**engine))


def create() -> Any:
    """App factory for ``uvicorn --factory``."""
    grace = os.environ.get("BENCH_SUBMIT_GRACE")
    return build_app(os.environ["BENCH_STORE_URL"], os.environ["BENCH_PUBLIC_URL"],
                     float(grace) if grace else None)
