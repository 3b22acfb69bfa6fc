"""A gateway's first seconds: until it has listened to the mesh for one card
interval, an agent it has not heard yet is "not yet" (503 with Retry-After), which
interlingua's client waits out within its timeout; the CLI shows what the
gateway said (real Mosquitto, real processes)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from interlingua import Agent, Client, Context
from interlingua.client.errors import BadResponse
from tests.services import free_port

from .helpers import BROKER, Peer, on_mesh, stop_child

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")


async def _echo(ctx: Context) -> None:
    await ctx.complete(f"echo: {ctx.text}")


ECHO = Agent("Echo", "Echoes.", _echo)


@contextmanager
def _gateway(ns: str, warmup: float) -> Iterator[str]:
    """``interlingua gateway`` as a process; its base URL as soon as it says it listens."""
    port = free_port()
    proc = subprocess.Popen(
        [str(SCRIPT), "gateway", "--mesh", BROKER, "--namespace", ns, "--port", str(port),
         "--warmup", str(warmup), "--log-level", "warning", "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.communicate()
        yield json.loads(line)["listen"]
    finally:
        stop_child(proc)


async def _cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        str(SCRIPT), *args, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 45)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_a_send_at_once_after_the_gateway_starts_is_answered(ns: str) -> None:
    # The agent is on the mesh first, its next card due 6 s later: a gateway started
    # now has not heard it when the send arrives, and hears it within its warm-up.
    async with Peer(ns) as peer:
        await peer.listen(peer.topics.discovery())
        async with on_mesh(ECHO, ns, card_interval=6.0):
            await peer.until(peer.topics.discovery())  # its first card, before the gateway
            code, out, err = await _send_at_once(ns)
    assert code == 0, err
    assert "echo: hello" in out


async def _send_at_once(ns: str) -> tuple[int, str, str]:
    with _gateway(ns, warmup=8) as url:
        async with httpx.AsyncClient() as http:
            early = await http.get(f"{url}/agents/Echo/.well-known/agent-card.json")
        assert early.status_code == 503  # not heard yet (it was a 404 here once)
        return await _cli("send", f"{url}/agents/Echo/", "hello")


async def test_the_gateway_says_not_yet_then_not_there(ns: str) -> None:
    with _gateway(ns, warmup=3) as url:
        async with httpx.AsyncClient() as http:
            card = f"{url}/agents/Nobody/.well-known/agent-card.json"
            early = await http.get(card)
            assert early.status_code == 503
            assert 1 <= int(early.headers["retry-after"]) <= 3
            assert "has not heard 'Nobody' yet" in early.json()["error"]["message"]
            # once it has listened for the whole interval: not there
            deadline = time.monotonic() + 20
            while (late := await http.get(card)).status_code == 503:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.2)
            assert late.status_code == 404
            assert "retry-after" not in late.headers
            assert "no agent 'Nobody' is live on the mesh" in late.json()["error"]["message"]
        # the CLI shows the gateway's own words, not only the status
        code, _, err = await _cli("send", f"{url}/agents/Nobody/", "hi")
    assert code == 3
    assert "no agent 'Nobody' is live on the mesh" in err
    assert len(err.strip().splitlines()) == 1


async def test_the_client_waits_only_within_its_timeout(ns: str) -> None:
    with _gateway(ns, warmup=30) as url:
        # Retry-After (30 s) is past the client's timeout: it fails at once, with
        # the gateway's words
        started = time.monotonic()
        async with Client(f"{url}/agents/Nobody/", timeout=2) as client:
            with pytest.raises(BadResponse, match="has not heard 'Nobody' yet") as caught:
                await client.send("hi")
        assert caught.value.status == 503
        assert time.monotonic() - started < 20  # a ceiling: it did not wait 30 s
        code, _, err = await _cli("send", "--timeout", "2", f"{url}/agents/Nobody/", "hi")
        assert code != 0
        assert "HTTP 503" in err and "has not heard 'Nobody' yet" in err
