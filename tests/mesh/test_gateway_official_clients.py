"""The official a2a-sdk clients (Python, 0.3 and 1.x) talk to a mesh agent through
the gateway as to any A2A agent: send, stream, get, cancel."""

from __future__ import annotations

import asyncio

import pytest

from tests.interop.harness import PEERS_DIR, Driver, ensure_env

from .helpers import on_mesh
from .test_client import WORKER
from .test_gateway import gateway

ENVS = {"py-a2a-0.3.26": ("py_client_v03.py", []),
        "py-a2a-1.3.0": ("py_client_v1.py", ["--dialect", "1.0"])}

pytestmark = [pytest.mark.timeout(120), pytest.mark.interop(envs=list(ENVS))]


@pytest.mark.parametrize("env", list(ENVS))
async def test_an_official_client_through_the_gateway(ns: str, env: str) -> None:
    script, extra = ENVS[env]
    python = str(ensure_env(env) / "bin" / "python")
    async with on_mesh(WORKER, ns), gateway(ns) as url:
        driver = Driver(env, [python, str(PEERS_DIR / script), url + "/agents/Worker/", *extra])
        try:
            await asyncio.to_thread(driver.wait_ready)
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
