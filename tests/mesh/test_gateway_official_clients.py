"""The official a2a-sdk clients (Python, 0.3 and 1.x) talk to a mesh agent through
the gateway as to any A2A agent: send, stream, get, cancel; over JSON-RPC, and (1.x)
over HTTP+JSON in v1.0 and through its v0.3 compatibility transport."""

from __future__ import annotations

import asyncio

import pytest

from tests.interop.harness import PEERS_DIR, Driver, ensure_env

from .helpers import on_mesh
from .test_client import WORKER
from .test_gateway import gateway

#: case -> (env, driver script, its options, the transport class it must pick)
CASES = {
    "py-a2a-0.3.26": ("py-a2a-0.3.26", "py_client_v03.py", [], None),
    "py-a2a-1.3.0": ("py-a2a-1.3.0", "py_client_v1.py", ["--dialect", "1.0"], None),
    "py-a2a-1.3.0-rest": ("py-a2a-1.3.0", "py_client_v1.py",
                          ["--dialect", "1.0", "--binding", "HTTP+JSON"], "RestTransport"),
    "py-a2a-1.3.0-rest-0.3": ("py-a2a-1.3.0", "py_client_v1.py",
                              ["--dialect", "0.3", "--binding", "HTTP+JSON"],
                              "CompatRestTransport"),
}

# an official SDK client starts in seconds idle, but far slower on a loaded machine
pytestmark = [pytest.mark.timeout(240),
              pytest.mark.interop(envs=sorted({c[0] for c in CASES.values()}))]


@pytest.mark.parametrize("case", list(CASES))
async def test_an_official_client_through_the_gateway(ns: str, case: str) -> None:
    env, script, extra, transport = CASES[case]
    python = str(ensure_env(env) / "bin" / "python")
    # bounded below the test's timeout: a stall then fails with the await it was in
    async with asyncio.timeout(200), on_mesh(WORKER, ns), gateway(ns) as url:
        driver = Driver(env, [python, str(PEERS_DIR / script), url + "/agents/Worker/", *extra])
        try:
            await asyncio.to_thread(driver.wait_ready)
            if transport is not None:
                info = await asyncio.to_thread(driver.call, "info")
                assert info.ok, info.error
                assert info.result["transport"] == transport, info.result
            sent = await asyncio.to_thread(driver.call, "send", text="report")
            assert sent.ok, sent.error
            assert _state(sent.result["state"]) == "completed"
            parts = sent.result["artifacts"][0]["parts"]
            assert "".join(p["text"] for p in parts) == "one two three", parts
            streamed = await asyncio.to_thread(driver.call, "stream", text="story")
            assert streamed.ok, streamed.error
            events = streamed.result["events"]
            assert sum(e["kind"] == "artifact" for e in events) == 3, events
            assert _state(events[-1]["state"]) == "completed"
            task_id = sent.result["id"]
            got = await asyncio.to_thread(driver.call, "get", taskId=task_id)
            assert got.ok and got.result["id"] == task_id
            slow = await asyncio.to_thread(driver.call, "send", text="slow",
                                           returnImmediately=True)
            assert slow.ok, slow.error
            await asyncio.sleep(0.5)
            canceled = await asyncio.to_thread(driver.call, "cancel", taskId=slow.result["id"])
            assert canceled.ok, canceled.error
            assert _state(canceled.result["state"]) == "canceled"
        finally:
            driver.close()


def _state(value: str) -> str:
    """``completed`` from either SDK's spelling (``TASK_STATE_COMPLETED``)."""
    return value.lower().removeprefix("task_state_").replace("cancelled", "canceled")
