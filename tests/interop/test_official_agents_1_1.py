"""Our A2A 1.1 client against the official 1.x agents (a2a-sdk 1.3.0, @a2a-js/sdk
1.3.0), which speak 1.0.

- From the agent's own card (interfaces of protocolVersion 1.0) the client speaks
  1.0, and refuses what needs 1.1 (task generations) before sending anything.
- Given a card that claims 1.1 for the same endpoints (a card that says more than
  the agent speaks): @a2a-js/sdk refuses ``A2A-Version: 1.1`` and the client falls
  back to 1.0 at the same endpoint; a2a-sdk takes any 1.x version and answers tasks
  without a generation, which the client reads as "not 1.1" (spec §3.2.7) and speaks
  1.0 from then on. Either way a call that needs 1.1 is refused with
  ``GenerationsNotSupported``, never sent without its field.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from interlingua import Client
from interlingua.client.generations import GenerationsNotSupported
from interlingua.core.model import Task
from tests.e2e.procs import free_port

from .conftest import AGENT_ROWS, agent_argv
from .harness import AgentProcess, ensure_env, running

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]

_ROWS = {r.id: r for r in AGENT_ROWS if r.id in ("py-1.3.0", "js-1.3.0")}


@pytest.fixture(scope="module", params=sorted(_ROWS))
def official(request: pytest.FixtureRequest) -> Iterator[AgentProcess]:
    row = _ROWS[request.param]
    env = ensure_env(row.env)
    port = free_port()
    with running(AgentProcess(f"{row.id}-v11", agent_argv(row, env, port), port)) as agent:
        yield agent


@pytest.fixture(scope="module")
def claimed_card(official: AgentProcess) -> Iterator[str]:
    """Where a copy of the official agent's card is served, its 1.0 interfaces
    claiming 1.1 (the URLs still the agent's)."""
    card = httpx.get(official.url + "/.well-known/agent-card.json").json()
    for iface in card["supportedInterfaces"]:
        if iface.get("protocolVersion") == "1.0":
            iface["protocolVersion"] = "1.1"
    body = json.dumps(card).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_the_official_card_is_spoken_to_in_1_0(official: AgentProcess) -> None:
    async with Client(official.url, binding="jsonrpc") as client:
        task = await client.send("hello")
        assert client.version == "1.0"
        assert isinstance(task, Task) and task.generation == 0
        with pytest.raises(GenerationsNotSupported, match="after_generation"):
            await client.get_task(task.id, after_generation=1)
        with pytest.raises(GenerationsNotSupported, match="if_generation_match"):
            await client.send("again", task_id=task.id, if_generation_match=1)


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_card_claiming_1_1_falls_back_to_1_0(claimed_card: str, binding: str) -> None:
    async with Client(claimed_card, binding=binding) as client:
        await client.resolve()
        assert client.version == "1.1"  # what the card says, until the agent answers
        task = await client.send("hello")
        assert isinstance(task, Task)
        # a2a-sdk 1.3.0 takes any 1.x A2A-Version, and its task has no generation;
        # @a2a-js/sdk 1.3.0 refuses 1.1 (VersionNotSupported), and the send is made
        # again in 1.0: either way the client speaks 1.0 to it from then on
        assert task.generation == 0 and client.version == "1.0"
        assert (await client.get_task(task.id)).id == task.id
        with pytest.raises(GenerationsNotSupported,
                           match=r"generation 0|spoken to in A2A 1\.0"):
            await client.get_task(task.id, after_generation=1)


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_first_long_poll_is_caught_by_its_answer(claimed_card: str,
                                                         binding: str) -> None:
    async with Client(claimed_card, binding=binding) as maker:
        made = await maker.send("hello")
    assert isinstance(made, Task)
    async with Client(claimed_card, binding=binding) as client:
        # a2a-sdk drops currentGeneration and answers at once, with no generation; the
        # JavaScript SDK refuses 1.1: never a long poll sent in 1.0 without its field
        with pytest.raises(GenerationsNotSupported,
                           match=r"without a generation|refused A2A-Version 1\.1"):
            await client.get_task(made.id, after_generation=1)
        assert client.version == "1.0"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_guarded_send_is_never_sent_to_an_agent_that_drops_the_check(
        claimed_card: str, binding: str) -> None:
    async with Client(claimed_card, binding=binding) as maker:
        made = await maker.send("hello")
    assert isinstance(made, Task)
    async with Client(claimed_card, binding=binding) as client:
        with pytest.raises(GenerationsNotSupported):
            await client.send("again", task_id=made.id, context_id=made.context_id,
                              if_generation_match=1)
        after = await client.get_task(made.id)
    # the agent never got the message: its history has the first one only
    texts = [p.text for m in after.history for p in m.parts if hasattr(p, "text")]
    assert "again" not in texts
