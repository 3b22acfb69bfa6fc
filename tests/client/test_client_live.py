"""The client against a real server over loopback HTTP, in each dialect and binding."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlingua import get_data, get_text
from interlingua.client import Client, DialectMismatch
from interlingua.core.errors import TaskNotCancelable, TaskNotFound, UnsupportedOperation
from interlingua.core.model import FilePart, Message, Role, Task, TaskState
from tests.live import grpc_address_of

# (binding, dialect); None: chosen from the card (v1.0 JSON-RPC, which the server
# lists first and best; for "rest", v1.0 HTTP+JSON)
CLIENTS = [(None, None), (None, "1.0"), (None, "0.3"), ("rest", None), ("rest", "1.0"),
           ("rest", "0.3"), ("grpc", None), ("grpc", "1.0"), ("grpc", "0.3")]


@pytest.fixture(params=CLIENTS,
                ids=["card", "v1.0", "v0.3", "rest-card", "rest-v1.0", "rest-v0.3", "grpc-card",
                     "grpc-v1.0", "grpc-v0.3"])
async def client(request: pytest.FixtureRequest, agent_url: str) -> AsyncIterator[Client]:
    binding, dialect = request.param
    url = grpc_address_of(agent_url) if binding == "grpc" and dialect else agent_url
    async with Client(url, dialect=dialect, binding=binding, timeout=20) as c:
        yield c
        if binding is not None:
            # every call went over the binding asked for
            assert c.endpoint is not None
            assert c.endpoint.binding == {"rest": "HTTP+JSON", "grpc": "GRPC"}[binding]


async def test_card_names_both_dialects(agent_url: str) -> None:
    client = await Client.connect(agent_url)
    try:
        card = client.card
        assert card is not None
        assert card.name == "Test assistant"
        assert card.version == "2.1.0"
        assert [s.id for s in card.skills] == ["greet", "echo"]
        grpc = grpc_address_of(agent_url)
        assert [(e.binding, e.dialect, e.url) for e in client.endpoints] == [
            ("JSONRPC", "1.0", agent_url + "/"), ("HTTP+JSON", "1.0", agent_url),
            ("GRPC", "1.0", grpc), ("JSONRPC", "0.3", agent_url + "/"),
            ("HTTP+JSON", "0.3", agent_url), ("GRPC", "0.3", grpc)]
        assert client.dialect == "1.0"
        assert client.endpoint is not None and client.endpoint.binding == "JSONRPC"
    finally:
        await client.aclose()


async def test_send_and_get(client: Client) -> None:
    task = await client.send("hello there")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.status.message is not None and get_text(task.status.message) == "done"
    [artifact] = task.artifacts
    assert artifact.name == "echo" and get_text(artifact) == "hello there"
    again = await client.get_task(task.id)
    assert again.id == task.id and again.context_id == task.context_id
    assert again.status.state is TaskState.COMPLETED
    assert get_text(again.artifacts[0]) == "hello there"
    assert [m.role for m in again.history][:1] == [Role.USER]
    assert get_text(again.history[0]) == "hello there"


async def test_two_turns_with_input_required(client: Client) -> None:
    first = await client.send("greet")
    assert isinstance(first, Task)
    assert first.status.state is TaskState.INPUT_REQUIRED
    assert first.status.message is not None
    assert get_text(first.status.message) == "What is your name?"
    second = await client.send("Ada", task_id=first.id, context_id=first.context_id)
    assert isinstance(second, Task)
    assert second.id == first.id and second.context_id == first.context_id
    assert second.status.state is TaskState.COMPLETED
    assert [get_text(a) for a in second.artifacts] == ["Hello, Ada!"]
    stored = await client.get_task(first.id)
    users = [get_text(m) for m in stored.history if m.role is Role.USER]
    assert users == ["greet", "Ada"]


async def test_a_finished_task_takes_no_more_messages(client: Client) -> None:
    task = await client.send("once")
    assert isinstance(task, Task)
    # -32004 in both dialects (DIALECTS.md §f.1)
    with pytest.raises(UnsupportedOperation, match="finished"):
        await client.send("twice", task_id=task.id)


async def test_reply_without_a_task(client: Client) -> None:
    reply = await client.send("reply nice to meet you")
    assert isinstance(reply, Message)
    assert reply.role is Role.AGENT
    assert get_text(reply) == "nice to meet you"


async def test_data_artifact(client: Client) -> None:
    task = await client.send("data")
    assert isinstance(task, Task)
    assert get_data(task.artifacts[0]) == [{"answer": 42, "items": [1, 2]}]


async def test_files_go_and_come_back_inline(client: Client, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(b"# plan\n- milk\n")
    task = await client.send("files", data={"note": "see file"}, files=[notes])
    assert isinstance(task, Task)
    received, report = task.artifacts
    # names travel on every binding (over v0.3 gRPC in FilePart.name, field 4)
    assert get_data(received) == [{"received": [
        {"name": "notes.md", "type": "text/markdown", "size": 14}]}]
    [part] = report.parts
    assert isinstance(part, FilePart)
    assert (part.raw, part.media_type, part.filename) == (b"a,b\n1,2\n", "text/csv", "report.csv")


async def test_failure_is_a_failed_task(client: Client) -> None:
    task = await client.send("fail")
    assert isinstance(task, Task)
    assert task.status.state is TaskState.FAILED
    assert task.status.message is not None and get_text(task.status.message) == "it broke"


async def test_no_wait_then_cancel(client: Client) -> None:
    task = await client.send("sleep 30", blocking=False)
    assert isinstance(task, Task)
    assert task.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
    for _ in range(100):
        seen = await client.get_task(task.id)
        if seen.status.state is TaskState.WORKING:
            break
        await asyncio.sleep(0.02)
    assert seen.status.state is TaskState.WORKING
    canceled = await client.cancel(task.id)
    assert canceled.id == task.id
    assert canceled.status.state is TaskState.CANCELED
    assert (await client.get_task(task.id)).status.state is TaskState.CANCELED
    with pytest.raises(TaskNotCancelable):
        await client.cancel(task.id)


async def test_unknown_task(client: Client) -> None:
    with pytest.raises(TaskNotFound):
        await client.get_task("no-such-task")
    with pytest.raises(TaskNotFound):
        await client.cancel("no-such-task")


async def test_history_length(client: Client) -> None:
    first = await client.send("greet")
    assert isinstance(first, Task)
    await client.send("Grace", task_id=first.id)
    full = await client.get_task(first.id)
    assert len(full.history) >= 2
    one = await client.get_task(first.id, history_length=1)
    assert one.history == full.history[-1:]


@pytest.mark.parametrize(("binding", "dialect"), [(None, None), (None, "1.0"), ("rest", None),
                                                  ("grpc", None)])
async def test_list_tasks(agent_url: str, binding: str | None, dialect: str | None) -> None:
    context = str(uuid.uuid4())
    async with Client(agent_url, dialect=dialect, binding=binding, timeout=20) as client:
        a = await client.send("first", context_id=context)
        b = await client.send("fail", context_id=context)
        assert isinstance(a, Task) and isinstance(b, Task)
        page = await client.list_tasks(context_id=context)
        assert {t.id for t in page.tasks} == {a.id, b.id}
        assert page.total_size == 2 and page.next_page_token == ""
        assert all(t.artifacts == [] for t in page.tasks)

        failed = await client.list_tasks(context_id=context, status=TaskState.FAILED)
        assert [t.id for t in failed.tasks] == [b.id]

        first_page = await client.list_tasks(context_id=context, page_size=1,
                                             include_artifacts=True)
        assert len(first_page.tasks) == 1 and first_page.next_page_token
        second_page = await client.list_tasks(context_id=context, page_size=1,
                                              page_token=first_page.next_page_token)
        assert {first_page.tasks[0].id, second_page.tasks[0].id} == {a.id, b.id}
        with_artifacts = first_page.tasks[0]
        if with_artifacts.id == a.id:
            assert get_text(with_artifacts.artifacts[0]) == "first"


async def test_list_tasks_is_not_in_v03(agent_url: str) -> None:
    async with Client(agent_url, dialect="0.3") as client:
        with pytest.raises(DialectMismatch):
            await client.list_tasks()


async def test_a_task_is_the_same_in_both_dialects(agent_url: str) -> None:
    async with Client(agent_url, dialect="1.0") as v1, Client(agent_url, dialect="0.3") as v03:
        made = await v1.send("greet")
        assert isinstance(made, Task)
        seen = await v03.get_task(made.id)
        assert (seen.id, seen.context_id, seen.status.state) == (
            made.id, made.context_id, TaskState.INPUT_REQUIRED)
        done = await v03.send("Linus", task_id=made.id)
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        assert get_text((await v1.get_task(made.id)).artifacts[0]) == "Hello, Linus!"
