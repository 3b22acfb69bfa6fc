"""examples/secure_agent.py: API key at the door, a second credential asked for mid-task."""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlingua.client import Client
from interlingua.core.errors import AuthenticationRequired
from interlingua.core.model import DataPart, Task, TaskState
from interlingua.core.parts import data_parts, get_text

from .helpers import serve_agent

ROOT = Path(__file__).resolve().parents[2]
KEY = "dev-only-key-change-me-0123456789"


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("secure_agent", ROOT / "examples" /
                                                  "secure_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    ex = _example()
    with serve_agent(ex.agent, auth=ex.auth()) as base:
        yield base


async def test_secondary_credential_round_trip(url: str) -> None:
    async with Client(url, headers={"X-API-Key": KEY}) as c:
        first = await c.send("show my calendar")
        assert isinstance(first, Task) and first.status.state is TaskState.AUTH_REQUIRED
        assert first.status.message is not None
        [need] = data_parts(first.status.message)
        assert need.data["authenticationRequired"]["type"] == "calendar-token"
        wrong = await c.send(DataPart(data={"credential": {"type": "calendar-token",
                                                           "token": "guess"}}),
                             task_id=first.id, context_id=first.context_id)
        assert isinstance(wrong, Task) and wrong.status.state is TaskState.AUTH_REQUIRED
        assert wrong.status.message is not None
        assert data_parts(wrong.status.message)[0].data["error"] == "invalid_token"
        done = await c.send(DataPart(data={"credential": {"type": "calendar-token",
                                                          "token": "cal-alice-demo-token"}}),
                            task_id=first.id)
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        assert data_parts(done.artifacts[0])[0].data == {
            "events": ["09:00 stand-up", "14:00 design review"]}
        assert done.status.message is not None
        assert get_text(done.status.message) == "Here is your calendar."
        # the secondary credential is not echoed anywhere the agent wrote
        agent_parts = [p for m in done.history if m.role.value == "agent" for p in m.parts]
        assert "cal-alice-demo-token" not in repr(agent_parts) + repr(done.artifacts)


def test_v01_client_sees_input_required(url: str) -> None:
    tid = f"task-{uuid.uuid4()}"
    with httpx.Client() as c:
        r = c.post(url + "/", headers={"X-API-Key": KEY}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {
                "id": tid, "message": {"role": "user", "parts": [
                    {"type": "text", "text": "calendar please"}]}}})
        task = r.json()["result"]
        assert task["status"]["state"] == "input-required"
        assert task["status"]["message"]["parts"][1]["type"] == "data"
        r = c.post(url + "/", headers={"X-API-Key": KEY}, json={
            "jsonrpc": "2.0", "id": 2, "method": "tasks/send", "params": {
                "id": tid, "message": {"role": "user", "parts": [{"type": "data", "data": {
                    "credential": {"type": "calendar-token",
                                   "token": "cal-alice-demo-token"}}}]}}})
        assert r.json()["result"]["status"]["state"] == "completed"


async def test_the_door_is_locked(url: str) -> None:
    async with Client(url) as c:
        card = await c.get_card()  # the card is public and names the scheme
        assert list(card.security_schemes) == ["apiKey"]
        with pytest.raises(AuthenticationRequired):
            await c.send("show my calendar")
