"""A client that was closed says so on every binding: over HTTP httpx raised a bare
``RuntimeError``, and over gRPC the client opened new channels that nothing closed."""

from __future__ import annotations

import httpx
import pytest

from interlingua import Client
from interlingua.client import ClientError

CLOSED = "this client is closed"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest", "grpc"])
async def test_a_closed_client_refuses_every_call(agent_url: str, binding: str) -> None:
    async with Client(agent_url, binding=binding) as client:
        task = await client.send("echo this")
    for call in (lambda: client.send("again"), lambda: client.get_task(task.id)):
        with pytest.raises(ClientError, match=CLOSED):
            await call()
    with pytest.raises(ClientError, match=CLOSED):
        [e async for e in client.stream("again")]
    assert not client._bindings  # nothing opened again


async def test_a_client_whose_httpx_client_was_closed_says_so(agent_url: str) -> None:
    http = httpx.AsyncClient()
    client = Client(agent_url, httpx_client=http)
    await http.aclose()
    with pytest.raises(ClientError, match=CLOSED):
        await client.send("hi")
    await client.aclose()
