"""A draining server takes no new sends on any binding, streaming or not: JSON-RPC,
HTTP+JSON and gRPC (v1.0 and v0.3, through the parity drivers) each refuse with their
own "unavailable" answer, and no task is made; the MQTT mesh leaves the send in the
agent's session for the next process, which answers it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua.core import calls as c
from tests.live import bind_loopback, live_server, url_of

from .drivers import DRIVERS, Refused
from .test_parity import AGENT, send

#: what each binding answers a send refused by a drain
UNAVAILABLE: dict[str, tuple[Any, str]] = {
    "jsonrpc-1.0": (503, "-32603"), "jsonrpc-0.3": (503, "-32603"),
    "rest-1.0": (503, "RESOURCE_UNAVAILABLE"), "rest-0.3": (503, "InternalError"),
    "grpc-1.0": ("UNAVAILABLE", "RESOURCE_UNAVAILABLE"),
    "grpc-0.3": ("UNAVAILABLE", "RESOURCE_UNAVAILABLE"),
}


@pytest.fixture
def draining() -> Iterator[str]:
    """A server (all bindings) in the state ``Engine.drain`` puts it in, which
    ``interlingua serve`` enters on SIGTERM (tests/e2e/test_drain.py)."""
    from interlingua.bindings.grpc import add_grpc
    from interlingua.host import create_app

    sock = bind_loopback()
    app = create_app(AGENT, public_url=url_of(sock), store="memory://")
    add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        app.state.engine.draining = True
        yield url


@pytest.mark.parametrize("kind", list(DRIVERS))
@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "blocking"])
def test_a_send_during_a_drain_is_refused(kind: str, streaming: bool, draining: str,
                                          client: httpx.Client) -> None:
    d = DRIVERS[kind](client, draining)
    call = send("1", streaming=streaming)
    with pytest.raises(Refused) as refused:
        d.stream(call) if streaming else d.call(call)
    assert (refused.value.status, refused.value.reason) == UNAVAILABLE[kind]
    assert "shutting down" in refused.value.message
    if d.lists_tasks:  # reads are still served, and the refused send made no task
        page = d.call(c.ListTasks(page_size=10))
        assert isinstance(page, c.ListTasksResult) and page.tasks == []



@pytest.mark.parametrize("method", ["tasks/send-streaming", "tasks/send"])
async def test_a_send_on_the_mesh_during_a_drain_waits_for_the_next_process(method: str) -> None:
    """The mesh's counterpart of the refusal: its requests are queued in the agent's
    session, so the draining process leaves them there (neither run nor refused), and
    the process that takes its name next answers them."""
    from tests.mesh.helpers import Peer, decoded, namespace, need_broker, on_mesh

    need_broker()
    ns = namespace()
    async with Peer(ns) as peer:
        reply_to = peer.topics.client_response("drain")
        status = peer.topics.client_status("drain", "#")
        await peer.listen(reply_to, status)
        async with on_mesh(AGENT, ns, name="Worker") as mesh:
            mesh.door.engine.draining = True  # sent as the drain begins
            await peer.request("Worker", {"jsonrpc": "2.0", "id": "d1", "method": method,
                "params": {"message": {"role": "user", "parts": [{"text": "1"}],
                                       "message_id": "d1-m"}}},
                replyTo=reply_to, clientId="drain")
            assert await peer.quiet(1.0) == []  # neither refused nor run here
            assert mesh.door.engine.running_turns == 0 and mesh.handled == 0
        async with on_mesh(AGENT, ns, name="Worker") as mesh:
            answer, _ = await peer.until(reply_to)
            assert decoded(answer)["result"]["status"]["state"] == "completed"
            assert mesh.handled == 1
