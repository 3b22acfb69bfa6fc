"""The examples, served over real HTTP and called with the Client in each dialect."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from interlingua import Client, DataPart, FilePart, TaskState, get_text
from interlingua.cli.serve import load_agent
from interlingua.core.model import Task
from interlingua.core.parts import file_part
from tests.live import live_agent

from .procs import ServerProcess
from .sse_client import V1, rpc, v1_message

EXAMPLES = Path(__file__).parents[2] / "examples"
DIALECTS = ["1.0", "0.3", "0.1"]


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, str]]:
    names = ["echo", "flight_booking", "support_tickets", "image_rotate"]
    from contextlib import ExitStack

    with ExitStack() as stack:
        yield {n: stack.enter_context(live_agent(load_agent(str(EXAMPLES / f"{n}.py"))))
               for n in names}


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_echo(served: dict[str, str], dialect: str) -> None:
    async with Client(served["echo"], dialect=dialect) as c:
        task = await c.send("hello there")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert get_text(task.artifacts[0]) == "hello there"


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_flight_booking_multi_turn(served: dict[str, str], dialect: str) -> None:
    async with Client(served["flight_booking"], dialect=dialect) as c:
        first = await c.send("I'd like to book a flight.")
        assert isinstance(first, Task)
        assert first.status.state is TaskState.INPUT_REQUIRED
        assert "Where would you like to fly" in get_text(first.status.message)  # type: ignore[arg-type]
        done = await c.send("From JFK to LHR around October 10th", task_id=first.id,
                            context_id=first.context_id)
        assert isinstance(done, Task) and done.id == first.id
        assert done.status.state is TaskState.COMPLETED
        itinerary = done.artifacts[0]
        assert itinerary.name == "FlightItinerary.json"
        data = itinerary.parts[0]
        assert isinstance(data, DataPart)
        assert (data.data["from"], data.data["to"]) == ("JFK", "LHR")
        assert [m.role.value for m in done.history] == ["user", "agent", "user", "agent", "agent"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_structured_data(served: dict[str, str], dialect: str) -> None:
    async with Client(served["support_tickets"], dialect=dialect) as c:
        task = await c.send("List my open IT support tickets created in the last week.")
        assert isinstance(task, Task)
        part = task.artifacts[0].parts[0]
        assert isinstance(part, DataPart)
        assert [t["ticketId"] for t in part.data] == ["IT00123", "IT00125"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_file_in_file_out(served: dict[str, str], dialect: str) -> None:
    image = bytes(range(256)) * 4
    async with Client(served["image_rotate"], dialect=dialect) as c:
        task = await c.send("Analyze this image", files=[file_part(
            raw=image, media_type="image/png", filename="input_image.png")])
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        out = task.artifacts[0].parts[0]
        assert isinstance(out, FilePart)
        assert out.raw == image[::-1] and out.media_type == "image/png"
        assert out.filename == "processed_input_image.png"
        by_uri = await c.send("process", files=[file_part(
            uri="https://storage.example.com/in.png", media_type="image/png")])
        assert isinstance(by_uri, Task)
        ref = by_uri.artifacts[0].parts[0]
        assert isinstance(ref, FilePart) and ref.uri == "https://storage.example.com/in.png#processed"
        rejected = await c.send("no file here")
        # v0.1 has no "rejected": its clients see "failed" (DIALECTS.md §i.18)
        expected = TaskState.FAILED if dialect == "0.1" else TaskState.REJECTED
        assert isinstance(rejected, Task) and rejected.status.state is expected


def test_file_bytes_are_base64_on_the_wire(served: dict[str, str]) -> None:
    raw = b"\x89PNG\r\n"
    msg = v1_message("x")
    msg["parts"].append({"raw": base64.b64encode(raw).decode(), "mediaType": "image/png",
                         "filename": "a.png"})
    r = httpx.post(served["image_rotate"] + "/", json=rpc("SendMessage", {"message": msg}),
                   headers=V1).json()
    part = r["result"]["task"]["artifacts"][0]["parts"][0]
    assert base64.b64decode(part["raw"]) == raw[::-1]


def test_tasks_survive_a_restart(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/tasks.db"
    with ServerProcess("examples/flight_booking.py", db) as srv, httpx.Client() as c:
        waiting = c.post(srv.url + "/", headers=V1, json=rpc("SendMessage", {
            "message": v1_message("I'd like to book a flight.")})).json()["result"]["task"]
        done = c.post(srv.url + "/", headers=V1, json=rpc("SendMessage", {
            "message": v1_message("JFK to LHR")})).json()["result"]["task"]
        port = srv.port
    with ServerProcess("examples/flight_booking.py", db, port=port) as srv, httpx.Client() as c:
        again = c.post(srv.url + "/", headers=V1, json=rpc("GetTask", {"id": done["id"]})).json()
        assert again["result"] == done
        listed = c.post(srv.url + "/", headers=V1, json=rpc("ListTasks", {})).json()["result"]
        assert {t["id"] for t in listed["tasks"]} == {waiting["id"], done["id"]}
        # the task waiting for input still takes its answer after the restart
        cont = c.post(srv.url + "/", headers=V1, json=rpc("SendMessage", {
            "message": v1_message("From SFO to NRT", taskId=waiting["id"])})).json()
        assert cont["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_running_task_ends_failed_after_a_crash(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/tasks.db"
    srv = ServerProcess("tests/e2e/agents.py:slow", db).start()
    try:
        with httpx.Client() as c:
            t = c.post(srv.url + "/", headers=V1, json=rpc("SendMessage", {
                "message": v1_message("60"), "configuration": {"returnImmediately": True}}),
                ).json()["result"]["task"]
            srv.kill()
            srv = ServerProcess("tests/e2e/agents.py:slow", db, port=srv.port).start()
            got = c.post(srv.url + "/", headers=V1, json=rpc("GetTask", {"id": t["id"]})).json()
    finally:
        srv.stop()
    status = got["result"]["status"]
    assert status["state"] == "TASK_STATE_FAILED"
    assert "restarted" in status["message"]["parts"][0]["text"]


def test_the_orchestrator_delegates_in_one_conversation(served: dict[str, str]) -> None:
    """examples/orchestrator.py --ask, as its docstring runs it: a session with the flight
    booker, whose first turn runs in the background (polled) and asks; the next answers."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "orchestrator.py"), "--agent", served["flight_booking"],
         "--ask", "I'd like to book a flight.", "--ask", "From JFK to LHR on October 10th"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    asked, booked = (line.split(" ", 2) for line in done.stdout.splitlines())
    assert asked[0] == booked[0] == "task"
    assert asked[1] == booked[1]  # the answer continued the task that asked
    assert asked[2].startswith("[input-required] Sure, I can help with that!")
    assert booked[2].startswith("[completed] Okay, I've found a flight from JFK to LHR.")
