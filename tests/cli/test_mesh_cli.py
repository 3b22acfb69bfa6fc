"""The CLI on an agent over the mesh (``mqtt://`` URLs): what ``card`` and ``stream``
print, as for an agent over HTTP (real Mosquitto; the CLI runs as a process)."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from interlingua.core.model import TaskState
from interlingua.mesh.client import MeshClient
from tests.e2e.agents import story
from tests.mesh.helpers import BROKER, need_broker, on_mesh
from tests.services import new_name

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("interlingua")


@pytest.fixture
def ns() -> str:
    need_broker()
    return new_name("t")


async def _cli(*args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        str(SCRIPT), *args, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "COLUMNS": "200"})
    out, err = await asyncio.wait_for(proc.communicate(), 45)
    assert proc.returncode == 0, err.decode()
    return out.decode()


@pytest.mark.parametrize("http", [False, True], ids=["mesh-only", "with-http"])
async def test_card_over_the_mesh_names_the_dialect_the_client_speaks(ns: str,
                                                                      http: bool) -> None:
    async with on_mesh(story, ns, name="Story", http=http):
        out = await _cli("card", f"{BROKER}/{ns}/Story")
    assert "none this client speaks" not in out
    assert "Dialects: MQTT 0.3" in out
    if not http:  # its one interface is the mesh address: the one used
        assert re.search(rf"MQTT +0\.3 +{re.escape(BROKER)}/{ns}/Story +\(used by default\)",
                         out), out


async def test_stream_over_the_mesh_shows_the_task_id_first(ns: str) -> None:
    async with on_mesh(story, ns, name="Story"):
        lines = (await _cli("stream", f"{BROKER}/{ns}/Story", "3")).splitlines()
        first = re.fullmatch(r"Task (\S+)  submitted", lines[0])
        assert first is not None, lines
        assert lines[1].startswith("  context: ")
        # as over HTTP (tests/cli/test_stream_cli.py)
        assert lines[2:] == ["working  writing", "Artifact story.txt",
                             "chunk 0;chunk 1;chunk 2;", "completed  The story is complete!"]
        # the id shown is the task's
        async with MeshClient(f"{BROKER}/{ns}/Story", timeout=10) as client:
            task = await client.get_task(first.group(1))
    assert task.status.state is TaskState.COMPLETED


async def test_card_over_the_mesh_waits_no_longer_than_the_timeout(ns: str) -> None:
    """No agent publishes a card there: ``card --timeout 2`` gives up after 2 s. It
    waited at least 12 s (a card period and a bit), whatever the timeout said."""
    proc = await asyncio.create_subprocess_exec(
        str(SCRIPT), "card", "--timeout", "2", f"{BROKER}/{ns}/Nobody", cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 45)
    assert proc.returncode == 3, err.decode()
    assert "Nobody published no card" in err.decode() and "within 2 s" in err.decode(), err
