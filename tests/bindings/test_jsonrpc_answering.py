"""The JSON-RPC endpoint keeps the codec that answers a v1.0 method at an A2A-Version:
by method and version (1.0 and 1.1 apart), and never more than a bound of them."""

from __future__ import annotations

import httpx

from interlingua import Agent, create_app
from interlingua.bindings.jsonrpc import endpoint
from interlingua.server.context import Context


async def _idle(ctx: Context) -> None:
    await ctx.complete("done")


async def test_the_codecs_kept_by_method_and_version_are_bounded() -> None:
    app = create_app(Agent("Idle", "Does nothing.", _idle))
    kept = dict(endpoint._ANSWERING)
    endpoint._ANSWERING.clear()
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            for n in range(endpoint._MAX_ANSWERING + 20):
                await c.post("/", headers={"A2A-Version": f"1.{n}"}, json={
                    "jsonrpc": "2.0", "id": n, "method": "GetTask", "params": {"id": "none"}})
        assert len(endpoint._ANSWERING) == endpoint._MAX_ANSWERING
        assert endpoint._ANSWERING["GetTask", "1.0"].name == "1.0"
        assert endpoint._ANSWERING["GetTask", "1.1"].name == "1.1"
    finally:
        # the process's other tests find the table as they left it: a full one keeps
        # no codec more, and the call budget's sends would each be detected anew
        endpoint._ANSWERING.clear()
        endpoint._ANSWERING.update(kept)
