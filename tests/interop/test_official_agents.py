"""interlingua's client calls agents built on the official SDKs (Python and JavaScript).

Each agent (``peers/*_agent_*``) runs in its own process on loopback and
behaves as ``agent.py`` describes, over JSON-RPC at ``/`` and HTTP+JSON under
``/rest``; the Python agents serve gRPC too, on a port of their own named in
their cards. Rows of a 1.x SDK in v0.3 talk to the SDK's own v0.3
compatibility layer, on the same URL (or gRPC server) as its v1.0 endpoint of
the binding.

A gRPC row is run twice where it can be: with the client choosing gRPC from the
card (``Client(url, binding="grpc")``) and with the client given the service's
address and dialect (``Client("grpc://host:port", dialect=...)``); both fill
the row's cells. v1.0 gRPC rows also list the tasks of a context (``test_list``,
outside the matrix).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from interlingua import Client
from interlingua.client import BadResponse, ClientError, StreamEvent
from interlingua.core.calls import GetExtendedCard, GetPushConfig, SetPushConfig
from interlingua.core.errors import (
    A2AError,
    InternalError,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)
from interlingua.core.model import (
    AgentCard,
    ArtifactUpdate,
    DataPart,
    FilePart,
    Message,
    Part,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TextPart,
)
from interlingua.core.parts import get_text
from tests.e2e.procs import free_port

from .conftest import AGENT_ROWS, Peers, agent_argv
from .content import (
    DATA,
    DOUBLES_NOTE,
    FILE_BYTES,
    FILE_NAME,
    FILE_TYPE,
    NO_FILE_NAME_NOTE,
    STREAM_CHUNKS,
    TEXT,
)
from .harness import AgentProcess, Receiver, ensure_env
from .matrix import Row

DIRECTION = "agent"
pytestmark = pytest.mark.interop

Note = Callable[..., None]


def _vias(row: Row) -> tuple[str, ...]:
    """How the client reaches the row's agent: from its card ("card"), or, over gRPC, by
    the service's address and the dialect ("address"). A compatibility row names the
    dialect, so over gRPC it is reached by address only."""
    if row.binding != "GRPC":
        return ("card",)
    return ("address",) if row.compat else ("card", "address")


#: tests that run on some rows only (by default: every row)
_ONLY: dict[str, Callable[[Row], bool]] = {
    # A2A 0.3 has no task listing; the other bindings' listing is left to their own tests
    "test_list": lambda row: row.binding == "GRPC" and row.dialect == "1.0",
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "peer" not in metafunc.fixturenames:
        return
    wanted = _ONLY.get(metafunc.function.__name__, lambda row: True)
    pairs = [(row, via) for row in AGENT_ROWS if wanted(row) for via in _vias(row)]
    metafunc.parametrize(("peer", "via"), pairs,
                         ids=[row.id if len(_vias(row)) == 1 else f"{row.id}-{via}"
                              for row, via in pairs])


def _compat(row: Row) -> bool:
    """A v0.3 row of a 1.x SDK: its compatibility layer, reached by choosing the dialect."""
    return row.compat


#: the client's name of each binding of the rows
_BINDING = {"JSONRPC": "jsonrpc", "HTTP+JSON": "rest", "GRPC": "grpc"}
#: where each HTTP binding is served on the SDK agents
_PATH = {"JSONRPC": "/", "HTTP+JSON": "/rest"}


def _address(peer: Row, agent: AgentProcess) -> str:
    """Where the row's binding is served on the agent (the URL its card names)."""
    if peer.binding == "GRPC":
        assert agent.grpc_port is not None, f"{agent.name} serves no gRPC"
        return f"grpc://127.0.0.1:{agent.grpc_port}"
    return agent.url + _PATH[peer.binding].rstrip("/")


@pytest.fixture
async def client(peer: Row, via: str, peers: Peers) -> AsyncIterator[Client]:
    agent = peers.agent(peer)
    binding = _BINDING[peer.binding]
    if peer.binding == "GRPC":
        c = (Client(_address(peer, agent), dialect=peer.dialect, timeout=20)
             if via == "address" else Client(agent.url, binding=binding, timeout=20))
    # The v1.0 card of a 1.x agent names both dialects; the client prefers 1.0,
    # so the compatibility rows name the dialect and the binding's URL.
    elif _compat(peer):
        c = Client(agent.url + _PATH[peer.binding], dialect="0.3", binding=binding)
    else:
        c = Client(agent.url, binding=binding)
    async with c:
        yield c
        if c.endpoint is not None:  # every call went over the row's binding, in its dialect
            assert (c.endpoint.binding, c.endpoint.dialect) == (peer.binding, peer.dialect)


#: rows whose agent reads a v0.3 ProtoJSON file's bytes as UTF-8 text (PY_V03_FILE_BYTES_BUG)
_FILE_BYTES_AS_TEXT = {"py-1.3.0-v03-rest", "py-0.3.26-rest", "py-1.3.0-v03-grpc",
                       "py-0.3.26-grpc"}
#: rows whose agent has no file name in v0.3's proto shapes (NO_FILE_NAME_NOTE)
_NO_FILE_NAME = {"js-1.3.0-v03-rest", "js-0.3.14-rest"}
#: the file those agents can take: bytes that are base64 text (UTF-8, and read as base64
#: by 1.3.0's conversion to its v1.0 objects)
TEXT_FILE_BYTES = b"SGVsbG8sIHdvcmxkIQ=="

PY_V03_FILE_BYTES_BUG = (
    "a2a-sdk's v0.3 HTTP+JSON routes and gRPC service (0.3.26, and 1.3.0's v0.3 "
    "compatibility routes and `CompatGrpcHandler`) read a file part's `fileWithBytes` as "
    "UTF-8 text: `POST /v1/message:send` "
    "`{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"content\":[{\"file\":"
    "{\"fileWithBytes\":\"gP8=\",\"mimeType\":\"application/octet-stream\"}}]},"
    "\"configuration\":{\"blocking\":true}}` (the bytes 0x80 0xFF) answers HTTP 500 "
    "(`UnicodeDecodeError` in `FromProto.file`); expected: the task. Over gRPC the same "
    "`SendMessage` (`a2a.v1.A2AService`, `file_with_bytes` 0x80 0xFF) ends with status "
    "`UNKNOWN` \"Unexpected <class 'UnicodeDecodeError'>\". The SDK keeps inline "
    "files as base64 text and converts them to the proto with `.encode('utf-8')` / "
    "`.decode('utf-8')`, so its own v0.3 clients send the base64 text base64-encoded again "
    "(interlingua reads what the proto says: the bytes). Only a file whose bytes happen to "
    "be base64 text gets through (and the agent holds their decoding, not them); the rest "
    "of this cell is checked with such a file.")


def _file_bytes(peer: Row, note: Note) -> bytes:
    if peer.id in _FILE_BYTES_AS_TEXT:
        note(PY_V03_FILE_BYTES_BUG, kind="peer-bug")
        return TEXT_FILE_BYTES
    return FILE_BYTES


def _echo_parts_intact(parts: list[object], peer: Row, raw: bytes = FILE_BYTES) -> None:
    assert len(parts) == 3, parts
    text, data, file = parts
    assert isinstance(text, TextPart) and text.text == TEXT
    assert isinstance(data, DataPart) and data.data == DATA, data
    assert isinstance(file, FilePart) and file.raw == raw and file.uri is None
    name = None if peer.id in _NO_FILE_NAME else FILE_NAME
    assert (file.media_type, file.filename) == (FILE_TYPE, name)


def _texts(parts: list[Part]) -> str:
    """The text parts, joined (an artifact streamed in chunks has one part per chunk)."""
    return "".join(p.text for p in parts if isinstance(p, TextPart))


async def _send_echo(client: Client, raw: bytes = FILE_BYTES) -> Task:
    task = await client.send(TEXT, data=DATA,
                             files=[FilePart(raw=raw, media_type=FILE_TYPE,
                                             filename=FILE_NAME)])
    assert isinstance(task, Task), task
    return task


async def _send(client: Client, text: str, **kwargs: Any) -> Task:
    task = await client.send(text, **kwargs)
    assert isinstance(task, Task), task
    return task


# ---------------------------------------------------------------------------- card


async def test_card(peer: Row, via: str, client: Client, peers: Peers, note: Note) -> None:
    agent = peers.agent(peer)
    # A client given a gRPC address reads no card; the card is read over HTTP here.
    reader = client if via == "card" else Client(agent.url, binding=_BINDING[peer.binding])
    async with contextlib.AsyncExitStack() as stack:
        if reader is not client:
            await stack.enter_async_context(reader)
        await _check_card(peer, reader, agent)
    if via == "address":
        # The address dialed is the one the card names for the row's binding and dialect.
        assert (peer.binding, _address(peer, agent), peer.dialect) in {
            (e.binding, e.url, e.dialect) for e in reader.endpoints}
        if peer.dialect == "0.3":
            await _check_grpc_card_rpc(peer, client, reader, note)
        task = await _send(client, "echo by address")
        assert task.status.state is TaskState.COMPLETED


async def _check_grpc_card_rpc(peer: Row, client: Client, reader: Client, note: Note) -> None:
    """v0.3's gRPC service has an RPC for the card (``GetAgentCard``, the counterpart of
    JSON-RPC's ``agent/getAuthenticatedExtendedCard``)."""
    try:
        served = await client.call(GetExtendedCard())
    except UnsupportedOperation:
        if not _compat(peer):
            raise
        note(f"{peer.peer}'s v0.3 gRPC compatibility handler answers `GetAgentCard` as "
             "v0.3's `agent/getAuthenticatedExtendedCard`: an agent without an extended "
             "card (`capabilities.extendedAgentCard` unset) refuses it as an unsupported "
             "operation (`FAILED_PRECONDITION`, \"The agent does not support authenticated "
             "extended cards\"), where a2a-sdk 0.3.26's `GrpcHandler` returns the public card. "
             "v0.3 maps the RPC to the extended card, so both are allowed; a client learns "
             "the card over HTTP.", kind="peer-quirk")
        return
    assert isinstance(served, AgentCard), served
    assert reader.card is not None and served.name == reader.card.name


async def _check_card(peer: Row, client: Client, agent: AgentProcess) -> None:
    agent_card = await client.get_card()
    assert agent_card.name.startswith("Interop (")
    assert agent_card.capabilities.streaming and agent_card.capabilities.push_notifications
    assert [s.id for s in agent_card.skills] == ["interop"]
    assert "application/octet-stream" in agent_card.default_input_modes
    dialects = {e.dialect for e in client.endpoints}
    native = {"1.0"} if peer.env.rsplit("-", 1)[1].startswith("1.") else set()
    # A 1.x card names v1.0 and v0.3 interfaces; a 0.3 card its one URL.
    assert dialects == (native | {"0.3"}), client.endpoints
    # The client keeps to the row's binding, at the URL the card names for it.
    assert {(e.binding, e.url.rstrip("/")) for e in client.endpoints} == {
        (peer.binding, _address(peer, agent))}
    if not _compat(peer):
        await client.resolve()
        assert client.dialect == peer.dialect


# ------------------------------------------------------------------------- calls


async def test_send(peer: Row, client: Client, note: Note) -> None:
    raw = _file_bytes(peer, note)
    if peer.id in _NO_FILE_NAME:
        note(NO_FILE_NAME_NOTE, kind="peer-quirk")
    if raw != FILE_BYTES:
        # The known bug: when it is fixed, this send stops failing and the set is trimmed.
        # HTTP 500; over gRPC, the status UNKNOWN
        with pytest.raises((InternalError, BadResponse, ClientError)):
            await _send_echo(client)
    task = await _send_echo(client, raw)
    assert client.dialect == peer.dialect
    assert task.status.state is TaskState.COMPLETED
    assert [a.name for a in task.artifacts] == ["echo"]
    _echo_parts_intact(list(task.artifacts[0].parts), peer, raw)
    user = [m for m in task.history if m.role is Role.USER]
    assert user, task.history
    _echo_parts_intact(list(user[0].parts), peer, raw)
    data = task.artifacts[0].parts[1]
    assert isinstance(data, DataPart)
    if isinstance(data.data["n"], float):
        note(DOUBLES_NOTE)


async def test_stream(peer: Row, client: Client, note: Note) -> None:
    events: list[StreamEvent] = []
    async with asyncio.timeout(20):
        async for event in client.stream(f"stream {STREAM_CHUNKS}"):
            events.append(event)
    assert client.dialect == peer.dialect
    assert len({e.task_id for e in events}) == 1, [e.task_id for e in events]
    items = [e.item for e in events]
    if peer.binding == "GRPC":
        assert isinstance(items[0], Task), items[0]  # the stream begins with the task
    chunks = [i for i in items if isinstance(i, ArtifactUpdate)]
    assert [_texts(c.artifact.parts) for c in chunks] == [
        f"chunk {i};" for i in range(STREAM_CHUNKS)]
    assert [c.append for c in chunks] == [False, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, True]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    assert chunks[0].artifact.name == "stream.txt"
    first_chunk = items.index(chunks[0])
    working = [i for i in items[:first_chunk] if isinstance(i, (StatusUpdate, Task))
               and i.status.state is TaskState.WORKING]
    assert working and working[-1].status.message is not None
    assert get_text(working[-1].status.message) == "streaming"
    last = items[-1]
    assert isinstance(last, StatusUpdate) and last.status.state is TaskState.COMPLETED, last
    assert last.status.message is not None and get_text(last.status.message) == "done"
    if all(e.seq is None for e in events) and peer.binding == "GRPC":
        note("The agent numbers no streamed event (no `interlingua.dev/eventId` in an "
             "event's metadata, as an interlingua agent sends), so a broken stream can only be "
             "resumed from the task's current state (interlingua's client then subscribes "
             "without `last-event-id` metadata).")
    elif all(e.seq is None for e in events):
        note("The agent gives its SSE events no `id`, so a broken stream can only be resumed "
             "from the task's current state (interlingua's client then resubscribes without "
             "`Last-Event-ID`).")
    # What the agent kept: one artifact, the chunks in order.
    task_id = events[0].task_id
    assert task_id is not None
    task = await client.get_task(task_id)
    assert task.status.state is TaskState.COMPLETED
    assert len(task.artifacts) == 1
    assert _texts(task.artifacts[0].parts) == "".join(f"chunk {i};" for i in range(STREAM_CHUNKS))


async def test_get(peer: Row, client: Client, note: Note) -> None:
    raw = _file_bytes(peer, note)
    sent = await _send_echo(client, raw)
    got = await client.get_task(sent.id)
    assert (got.id, got.context_id, got.status.state) == (sent.id, sent.context_id,
                                                          sent.status.state)
    assert [a.artifact_id for a in got.artifacts] == [a.artifact_id for a in sent.artifacts]
    _echo_parts_intact(list(got.artifacts[0].parts), peer, raw)
    if sent.history and not got.history:
        note(f"{peer.peer}: `tasks/get` without `historyLength` answers with an empty "
             "`history` (the send's answer had the user's message). v0.3 leaves the default "
             "open and v1.0 makes it implementation-defined, so this is allowed, but it "
             'surprises: `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"<task '
             'id>"}}` → `"history":[]`; with `"historyLength":10` the messages are there.',
             kind="peer-quirk")
    asked = await _send(client, "book a flight")
    full = await client.get_task(asked.id, history_length=10)
    assert full.history, full
    last = await client.get_task(asked.id, history_length=1)
    assert [m.message_id for m in last.history] == [m.message_id for m in full.history[-1:]]


async def test_cancel(peer: Row, client: Client, note: Note) -> None:
    started = await _send(client, "slow", blocking=False)
    assert started.status.state in (TaskState.SUBMITTED, TaskState.WORKING)
    cancelled = await client.cancel(started.id)
    assert cancelled.id == started.id and cancelled.status.state is TaskState.CANCELED
    got = await client.get_task(started.id)
    assert got.status.state is TaskState.CANCELED
    # A canceled task is finished: canceling it again is refused.
    if peer.env in _CANCEL_AGAIN_ANSWERED:
        again = await client.cancel(started.id)
        assert again.id == started.id and again.status.state is TaskState.CANCELED
        note(JS_CANCEL_AGAIN_NOTE, kind="peer-quirk")
        return
    with pytest.raises(TaskNotCancelable):
        await client.cancel(started.id)


#: agents that answer a second cancel with the canceled task (JS_CANCEL_AGAIN_NOTE)
_CANCEL_AGAIN_ANSWERED = {"js-1.3.0"}

JS_CANCEL_AGAIN_NOTE = (
    "@a2a-js/sdk 1.3.0 agent: canceling a task that is already canceled answers with the "
    "task (`DefaultRequestHandler.cancelTask` returns it as it is), in either dialect and "
    "binding: `tasks/cancel` `{\"id\":\"<canceled task id>\"}` → the task, state "
    "`canceled`. The specification names `TaskNotCancelableError` for a task in a terminal "
    "state, which the agent answers for a completed one (see errors); for a canceled one it "
    "chose idempotence.")


async def test_multi_turn(peer: Row, client: Client) -> None:
    asked = await _send(client, "book a flight")
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None and get_text(asked.status.message) == "Where to?"
    done = await _send(client, "to LHR", task_id=asked.id, context_id=asked.context_id)
    assert (done.id, done.context_id) == (asked.id, asked.context_id)
    assert done.status.state is TaskState.COMPLETED
    assert [(a.name, get_text(a)) for a in done.artifacts] == [
        ("booking", "book a flight -> to LHR")]


async def test_reply(peer: Row, client: Client) -> None:
    reply = await client.send("reply hi")
    assert isinstance(reply, Message), reply
    assert reply.role is Role.AGENT and get_text(reply) == "re: reply hi"
    async with asyncio.timeout(20):
        events = [e async for e in client.stream("reply there")]
    assert len(events) == 1, events
    item = events[0].item
    assert isinstance(item, Message) and get_text(item) == "re: reply there"


async def test_subscribe(peer: Row, client: Client, note: Note) -> None:
    started = await _send(client, "slow", blocking=False)
    events: list[StreamEvent] = []
    first = asyncio.Event()

    async def follow() -> None:
        async for event in client.subscribe(started.id):
            events.append(event)
            first.set()

    follower = asyncio.create_task(follow())
    # Cancel once the subscription has its first event (or after a second: an agent
    # may send nothing until the task changes).
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(first.wait(), 1.0)
    cancelled = await client.cancel(started.id)
    assert cancelled.status.state is TaskState.CANCELED
    try:
        async with asyncio.timeout(20):
            await follower
        error: BaseException | None = None
    except A2AError as exc:
        error = exc

    streamed = [e for e in events if not e.reconciled]
    if peer.env == "py-a2a-0.3.26" and not streamed:
        # The SDK's known bug (see the note); when it is fixed, this branch stops matching.
        note(PY03_RESUBSCRIBE_BUG, kind="peer-bug")
        # The agent then refuses the resumption (the task is terminal; over HTTP+JSON
        # by breaking off the stream it began); the client asks for the task, sees it
        # finished and ends the stream with it.
        assert error is None, error
        assert [(e.state, e.task_id) for e in events] == [(TaskState.CANCELED, started.id)]
        return
    assert error is None, error
    assert events, "the subscription brought nothing"
    assert {e.task_id for e in events} == {started.id}
    assert events[-1].state is TaskState.CANCELED, events[-1]
    assert not any(isinstance(e.item, Message) for e in events)


PY03_RESUBSCRIBE_BUG = (
    "a2a-sdk 0.3.26 agent: a subscriber never learns that the task was canceled. "
    "`message/send` `{\"message\":{\"kind\":\"message\",\"messageId\":\"m1\","
    "\"role\":\"user\",\"parts\":[{\"kind\":\"text\",\"text\":\"slow\"}]},"
    "\"configuration\":{\"blocking\":false}}` (a task that works until canceled), then "
    "`tasks/resubscribe` `{\"id\":\"<task id>\"}` (SSE, left open), then `tasks/cancel` "
    "`{\"id\":\"<task id>\"}` (answers `canceled`): the resubscribe stream ends without a "
    "single event; expected: a `status-update` with state `canceled` and `final: true`. "
    "`DefaultRequestHandler.on_cancel_task` hands the executor its own tap of the task's "
    "event queue, so the `canceled` status reaches only the cancel call, and cancelling the "
    "producer closes the queue under every other tap. (Nor does the stream begin with the "
    "task's current state: it is silent until the task changes.) Over HTTP+JSON the same: "
    "`GET /v1/tasks/<task id>:subscribe` ends without an event; over gRPC, "
    "`TaskSubscription` `{\"name\":\"tasks/<task id>\"}` too.")


async def test_push(peer: Row, client: Client, receiver: Receiver) -> None:
    asked = await _send(client, "book a flight")
    # A webhook on loopback: an agent that delivers notifications reaches only the test.
    config = PushConfig(url=f"{receiver.url}/agent-hook/{peer.id}", id="cfg-1", token="tok-123")
    stored = await client.call(SetPushConfig(task_id=asked.id, config=config))
    assert isinstance(stored, PushConfig), stored
    assert (stored.id, stored.url, stored.token) == (config.id, config.url, config.token)
    assert stored.task_id in (None, asked.id)
    got = await client.call(GetPushConfig(task_id=asked.id, config_id="cfg-1"))
    assert isinstance(got, PushConfig), got
    assert (got.id, got.url, got.token) == (config.id, config.url, config.token)


async def test_list(peer: Row, client: Client) -> None:
    task = await _send(client, "echo listed")
    page = await client.list_tasks(context_id=task.context_id)
    assert [t.id for t in page.tasks] == [task.id]


async def test_errors(peer: Row, client: Client, peers: Peers, note: Note) -> None:
    with pytest.raises(TaskNotFound):
        await client.get_task("no-such-task")
    done = await _send(client, "echo finished")
    assert done.status.state is TaskState.COMPLETED
    with pytest.raises(TaskNotCancelable):
        await client.cancel(done.id)
    if peer.id == "js-0.3.14":
        await _check_commonjs_errors(peer, note)
    if peer.binding == "HTTP+JSON" and peer.dialect == "0.3":
        await _note_v03_error_body(peers.agent(peer).url, note)


async def _note_v03_error_body(url: str, note: Note) -> None:
    """What the agent's v0.3 HTTP+JSON routes answer for a missing task, when it is not
    v0.3's own body (a type by name or a v0.3 JSON-RPC code)."""
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.get(url + "/rest/v1/tasks/no-such-task")
    body = answer.json()
    assert answer.status_code == 404, (answer.status_code, body)
    if "error" in body:
        note("The SDK's v0.3 HTTP+JSON routes answer errors with v1.0's body: `GET "
             "/v1/tasks/no-such-task` → 404 `{\"error\":{\"code\":404,\"status\":"
             "\"NOT_FOUND\",\"details\":[{…\"reason\":\"TASK_NOT_FOUND\"…}]}}`, where its "
             "own v0.3 client looks for `type` and sees only an HTTP error; interlingua's "
             "client reads either body.", kind="peer-quirk")
    elif set(body) == {"message"}:
        note("The SDK's v0.3 HTTP+JSON routes answer errors with a message only: `GET "
             "/v1/tasks/no-such-task` → 404 `{\"message\":\"Task not found\"}`; "
             "interlingua's client tells the error by v0.3's HTTP status (404 on a route "
             "naming a task, 409 …).", kind="peer-quirk")


async def _check_commonjs_errors(peer: Row, note: Note) -> None:
    """The same agent on the SDK's CommonJS build (``require``), where 0.3.14 loses its
    error codes: every protocol error is answered as an internal error."""
    port = free_port()
    agent = AgentProcess(f"{peer.env}-cjs", [*agent_argv(peer, ensure_env(peer.env), port),
                                             "--cjs"], port)
    try:
        await asyncio.to_thread(agent.wait_ready)
        async with Client(agent.url + "/", dialect="0.3") as c:
            with pytest.raises((TaskNotFound, InternalError)) as caught:
                await c.get_task("no-such-task")
    finally:
        agent.stop()
    if isinstance(caught.value, InternalError):
        assert "Task not found" in caught.value.message
        note(f"{peer.peer}, loaded with `require()` (its CommonJS build) instead of `import`: "
             "every protocol error is answered as `-32603` Internal error. "
             '`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"id":"no-such-task"}}` → '
             '`{"code":-32603,"message":"Task not found: no-such-task"}`; expected `-32001`, '
             "as its ES module build answers. The CommonJS entry points `server` and "
             "`server/express` each bundle their own `A2AError` class, so the JSON-RPC handler's "
             "`instanceof` test fails for errors the request handler throws. The tests load the "
             "SDK as ES modules, as its documentation does.", kind="peer-aside")
