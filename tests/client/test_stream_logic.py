"""Stream logic against a scripted agent over loopback HTTP: resume rules,
deduplication, error events, lagging readers, non-streaming answers, fallback.

The agent here answers each request with the next scripted reply. Wire
documents are written from the specifications (v1.0 ProtoJSON
``StreamResponse``, the v0.3.0 JSON schema's event kinds, DIALECTS.md §c and
§f), not produced by our codecs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from interlingua.client import (
    BadResponse,
    Client,
    ResumePolicy,
    StreamEvent,
    StreamInterrupted,
)
from interlingua.core.errors import InvalidParams, TaskNotFound
from interlingua.core.model import ArtifactUpdate, StatusUpdate, Task, TaskState
from tests.live import live_server

TASK = "task-1"
CTX = "ctx-1"

Reply = Callable[[dict[str, Any]], Response]


class Agent:
    """Answers request n with ``replies[n]``; records what it was sent."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[tuple[dict[str, Any], dict[str, str]]] = []

    async def endpoint(self, request: Request) -> Response:
        body = msgspec.json.decode(await request.body())
        self.requests.append((body, dict(request.headers)))
        n = len(self.requests) - 1
        if n >= len(self.replies):
            return Response(b"no more replies", status_code=500)
        return self.replies[n](body)

    @property
    def methods(self) -> list[str]:
        return [body["method"] for body, _ in self.requests]

    def last_event_ids(self) -> list[str | None]:
        return [headers.get("last-event-id") for _, headers in self.requests]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, list[Agent]]]:
    holder: list[Agent] = [Agent()]

    async def endpoint(request: Request) -> Response:
        return await holder[0].endpoint(request)

    async def card(request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        doc = {
            "name": "Scripted", "description": "Answers from a script.", "version": "1.0.0",
            "supportedInterfaces": [
                {"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            ],
            "capabilities": {"streaming": True},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [],
        }
        return Response(msgspec.json.encode(doc), media_type="application/json")

    app = Starlette(routes=[Route("/rpc", endpoint, methods=["POST"]),
                            Route("/.well-known/agent-card.json", card)])
    with live_server(app) as url:
        yield url + "/rpc", holder


@pytest.fixture
def agent(server: tuple[str, list[Agent]]) -> Agent:
    server[1][0] = Agent()
    return server[1][0]


@pytest.fixture
def url(server: tuple[str, list[Agent]]) -> str:
    return server[0]


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def policy(sleeps: Sleeps, retries: int = 3) -> ResumePolicy:
    # random() == 1.0: every delay is its ceiling, so the expected values are exact
    return ResumePolicy(retries=retries, backoff=0.25, jitter=0.5, sleep=sleeps,
                        random=lambda: 1.0)


# ------------------------------------------------------------------ wire pieces


def v1_task(state: str = "TASK_STATE_SUBMITTED") -> dict[str, Any]:
    return {"task": {"id": TASK, "contextId": CTX, "status": {"state": state}}}


def v1_status(state: str) -> dict[str, Any]:
    return {"statusUpdate": {"taskId": TASK, "contextId": CTX, "status": {"state": state}}}


def v1_chunk(text: str, *, append: bool = True, last: bool = False) -> dict[str, Any]:
    return {"artifactUpdate": {"taskId": TASK, "contextId": CTX,
                               "artifact": {"artifactId": "a1", "parts": [{"text": text}]},
                               "append": append, "lastChunk": last}}


def v03_status(state: str, final: bool) -> dict[str, Any]:
    return {"kind": "status-update", "taskId": TASK, "contextId": CTX,
            "status": {"state": state}, "final": final}


def v03_chunk(text: str) -> dict[str, Any]:
    return {"kind": "artifact-update", "taskId": TASK, "contextId": CTX,
            "artifact": {"artifactId": "a1", "parts": [{"kind": "text", "text": text}]},
            "append": True}


def frame(rid: Any, result: Any, seq: int | None) -> bytes:
    head = f"id: {seq}\n" if seq is not None else ""
    data = msgspec.json.encode({"jsonrpc": "2.0", "id": rid, "result": result}).decode()
    return f"{head}data: {data}\n\n".encode()


def error_frame(rid: Any, error: dict[str, Any]) -> bytes:
    data = msgspec.json.encode({"jsonrpc": "2.0", "id": rid, "error": error}).decode()
    return f"event: error\ndata: {data}\n\n".encode()


def sse(*items: tuple[int | None, Any] | dict[str, Any], tail: bytes = b"") -> Reply:
    """An SSE answer: (seq, result) pairs, or error objects, then ``tail``."""

    def reply(body: dict[str, Any]) -> Response:
        out = b": hello\n\n"
        for item in items:
            if isinstance(item, dict):
                out += error_frame(body["id"], item)
            else:
                out += frame(body["id"], item[1], item[0])
        return Response(out + tail, media_type="text/event-stream")

    return reply


def json_answer(member: str, value: Any, status: int = 200) -> Reply:
    def reply(body: dict[str, Any]) -> Response:
        doc = {"jsonrpc": "2.0", "id": body["id"], member: value}
        return Response(msgspec.json.encode(doc), status_code=status,
                        media_type="application/json")

    return reply


async def collect(client: Client, *args: Any, **kwargs: Any) -> list[StreamEvent]:
    return [e async for e in client.stream(*args, **kwargs)]


# ---------------------------------------------------------------------- tests


async def test_end_without_final_state_resumes_with_last_event_id(agent: Agent,
                                                                   url: str) -> None:
    agent.replies = [
        sse((1, v1_task()), (2, v1_status("TASK_STATE_WORKING")), (3, v1_chunk("a", append=False))),
        sse((4, v1_chunk("b", last=True)), (5, v1_status("TASK_STATE_COMPLETED"))),
    ]
    sleeps = Sleeps()
    async with Client(url, dialect="1.0", resume=policy(sleeps)) as client:
        events = await collect(client, "hi")
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]
    assert agent.methods == ["SendStreamingMessage", "SubscribeToTask"]
    assert agent.requests[1][0]["params"]["id"] == TASK
    assert agent.last_event_ids() == [None, "3"]
    assert agent.requests[1][1]["accept"].startswith("text/event-stream")
    assert sleeps.calls == [0.25]


async def test_events_already_delivered_are_dropped_after_a_resume(agent: Agent,
                                                                    url: str) -> None:
    # A server that ignores Last-Event-ID and sends from the start again.
    agent.replies = [
        sse((1, v1_task()), (2, v1_status("TASK_STATE_WORKING"))),
        sse((1, v1_task("TASK_STATE_WORKING")), (2, v1_status("TASK_STATE_WORKING")),
            (3, v1_status("TASK_STATE_COMPLETED"))),
    ]
    async with Client(url, dialect="1.0", resume=policy(Sleeps())) as client:
        events = await collect(client, "hi")
    assert [e.seq for e in events] == [1, 2, 3]
    assert events[-1].state is TaskState.COMPLETED


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_a_lagging_reader_reconnects_at_once(agent: Agent, url: str, dialect: str) -> None:
    if dialect == "1.0":
        lag_error = {"code": -32603, "message": "fell behind", "data": [{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RESOURCE_UNAVAILABLE",
            "domain": "a2a-protocol.org",
            "metadata": {"lastEventId": "2", "resumable": "true"}}]}
        first = sse((1, v1_task()), (2, v1_status("TASK_STATE_WORKING")), lag_error)
        rest = sse((3, v1_status("TASK_STATE_COMPLETED")))
    else:
        lag_error = {"code": -32603, "message": "fell behind",
                     "data": {"lastEventId": 2, "resumable": True}}
        first = sse((1, {"kind": "task", "id": TASK, "contextId": CTX,
                         "status": {"state": "submitted"}}),
                    (2, v03_status("working", False)), lag_error)
        rest = sse((3, v03_status("completed", True)))
    agent.replies = [first, rest]
    sleeps = Sleeps()
    async with Client(url, dialect=dialect, resume=policy(sleeps)) as client:
        events = await collect(client, "hi")
    assert [e.seq for e in events] == [1, 2, 3]
    assert agent.last_event_ids() == [None, "2"]
    assert agent.methods[1] == ("SubscribeToTask" if dialect == "1.0" else "tasks/resubscribe")
    assert sleeps.calls == []


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_an_error_event_is_raised_as_its_a2a_error(agent: Agent, url: str,
                                                         dialect: str) -> None:
    status = (v1_status("TASK_STATE_WORKING") if dialect == "1.0"
              else v03_status("working", False))
    agent.replies = [sse((1, status), {"code": -32001, "message": "Task not found: gone"})]
    sleeps = Sleeps()
    seen: list[StreamEvent] = []
    async with Client(url, dialect=dialect, resume=policy(sleeps)) as client:
        with pytest.raises(TaskNotFound, match="gone"):
            async for e in client.stream("hi"):
                seen.append(e)
    assert [e.seq for e in seen] == [1]
    assert len(agent.requests) == 1 and sleeps.calls == []


async def test_an_error_before_the_stream_is_raised(agent: Agent, url: str) -> None:
    agent.replies = [json_answer("error", {"code": -32602, "message": "Invalid params: parts"})]
    async with Client(url, dialect="1.0", resume=policy(Sleeps())) as client:
        with pytest.raises(InvalidParams, match="parts"):
            await collect(client, "hi")
    assert len(agent.requests) == 1


async def test_a_plain_json_answer_is_one_event(agent: Agent, url: str) -> None:
    # An agent that does not stream may answer message/stream with one result.
    done = {"kind": "task", "id": TASK, "contextId": CTX, "status": {"state": "completed"}}
    agent.replies = [json_answer("result", done)]
    async with Client(url, dialect="0.3", resume=policy(Sleeps())) as client:
        events = await collect(client, "hi")
    assert len(events) == 1 and events[0].seq is None
    assert isinstance(events[0].item, Task) and events[0].final


async def test_first_stream_falls_back_to_the_other_dialect(agent: Agent, url: str) -> None:
    agent.replies = [
        json_answer("error", {"code": -32601, "message": "Method not found"}),
        sse((1, v03_chunk("x")), (2, v03_status("completed", True))),
    ]
    base = url.removesuffix("/rpc")
    async with Client(base, resume=policy(Sleeps())) as client:
        events = await collect(client, "hi")
        assert client.dialect == "0.3"
    assert agent.methods == ["SendStreamingMessage", "message/stream"]
    assert isinstance(events[0].item, ArtifactUpdate)
    assert isinstance(events[1].item, StatusUpdate) and events[1].final


async def test_a_server_without_event_ids_is_resumed_from_now(agent: Agent, url: str) -> None:
    agent.replies = [
        sse((None, v1_task()), (None, v1_status("TASK_STATE_WORKING"))),
        sse((None, v1_task("TASK_STATE_COMPLETED"))),
    ]
    async with Client(url, dialect="1.0", resume=policy(Sleeps())) as client:
        events = await collect(client, "hi")
    assert [e.state for e in events] == [TaskState.SUBMITTED, TaskState.WORKING,
                                         TaskState.COMPLETED]
    assert agent.last_event_ids() == [None, None]


async def test_a_server_without_event_ids_repeating_its_snapshot_is_given_up_on(
        agent: Agent, url: str) -> None:
    # (each resumption's snapshot, the same again, counted as progress: with no ids,
    # the client subscribed again for ever, whatever ``retries`` said)
    streamed = sse((None, v1_task("TASK_STATE_WORKING")))
    asked = json_answer("result", v1_task("TASK_STATE_WORKING")["task"])
    agent.replies = [lambda body: (asked if body["method"] == "GetTask" else streamed)(body)
                     ] * 20
    sleeps = Sleeps()
    async with Client(url, dialect="1.0", resume=policy(sleeps, retries=2)) as client:
        with pytest.raises(StreamInterrupted, match="gave up after 2 attempts"):
            await collect(client, "hi")
    assert agent.methods.count("SubscribeToTask") == 2 and sleeps.calls == [0.25, 0.5]


async def test_a_stream_that_breaks_before_naming_its_task_is_not_resent(agent: Agent,
                                                                          url: str) -> None:
    agent.replies = [sse()]
    sleeps = Sleeps()
    async with Client(url, dialect="1.0", resume=policy(sleeps)) as client:
        with pytest.raises(StreamInterrupted, match="before it named its task") as info:
            await collect(client, "hi")
    assert info.value.task_id is None
    assert len(agent.requests) == 1 and sleeps.calls == []


async def test_an_event_that_is_not_json_rpc_is_a_bad_response(agent: Agent, url: str) -> None:
    agent.replies = [sse((1, v1_task()), tail=b"id: 2\ndata: {not json\n\n")]
    async with Client(url, dialect="1.0", resume=policy(Sleeps())) as client:
        with pytest.raises(BadResponse, match="not a JSON-RPC response"):
            await collect(client, "hi")


async def test_a_5xx_while_resuming_is_retried_and_a_missing_task_is_not(agent: Agent,
                                                                        url: str) -> None:
    gateway_down: Reply = lambda body: Response(b"bad gateway", status_code=502)  # noqa: E731
    agent.replies = [
        sse((1, v1_task()), (2, v1_status("TASK_STATE_WORKING"))),
        gateway_down,
        json_answer("error", {"code": -32001, "message": "Task not found: task-1"}),
    ]
    sleeps = Sleeps()
    async with Client(url, dialect="1.0", resume=policy(sleeps)) as client:
        with pytest.raises(TaskNotFound):
            await collect(client, "hi")
    assert agent.last_event_ids() == [None, "2", "2"]
    assert sleeps.calls == [0.25, 0.5]


async def test_subscribe_from_the_end_of_a_finished_task_asks_once(agent: Agent,
                                                                   url: str) -> None:
    # An empty resumption is fine when the task is done: one GetTask to be sure.
    agent.replies = [sse(), json_answer("result", v1_task("TASK_STATE_COMPLETED")["task"])]
    sleeps = Sleeps()
    async with Client(url, dialect="1.0", resume=policy(sleeps)) as client:
        got = [e async for e in client.subscribe(TASK, last_event_id=7)]
    assert got == []
    assert agent.methods == ["SubscribeToTask", "GetTask"]
    assert agent.last_event_ids()[0] == "7" and sleeps.calls == []


async def test_an_empty_resumption_of_a_running_task_resumes_again(agent: Agent,
                                                                  url: str) -> None:
    agent.replies = [
        sse(),
        json_answer("result", v1_task("TASK_STATE_WORKING")["task"]),
        sse((8, v1_status("TASK_STATE_COMPLETED"))),
    ]
    sleeps = Sleeps()
    async with Client(url, dialect="1.0", resume=policy(sleeps)) as client:
        got = [e async for e in client.subscribe(TASK, last_event_id=7)]
    assert [e.seq for e in got] == [8]
    assert agent.methods == ["SubscribeToTask", "GetTask", "SubscribeToTask"]
    assert agent.last_event_ids() == ["7", None, "7"]
    assert sleeps.calls == [0.25]


def test_backoff_doubles_up_to_its_ceiling_with_bounded_jitter() -> None:
    top = ResumePolicy(backoff=0.5, max_backoff=3.0, jitter=0.4, random=lambda: 1.0)
    assert [top.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    bottom = ResumePolicy(backoff=0.5, max_backoff=3.0, jitter=0.4, random=lambda: 0.0)
    assert [bottom.delay(n) for n in range(1, 6)] == pytest.approx([0.3, 0.6, 1.2, 1.8, 1.8])
    with pytest.raises(ValueError):
        ResumePolicy(jitter=1.5)
    with pytest.raises(ValueError):
        ResumePolicy(retries=-1)



async def test_a_resumption_broken_off_for_a_finished_task_ends_the_stream() -> None:
    # The subscription ends without an event; its resumption begins an SSE answer and
    # breaks it off (an agent refusing a finished task so); the task has finished.
    async def refuse() -> Any:
        yield b": hello\n\n"
        raise RuntimeError("the task is in a terminal state")

    broken: Reply = lambda body: StreamingResponse(refuse(),  # noqa: E731
                                                   media_type="text/event-stream")
    agent = Agent()
    agent.replies = [
        sse(),
        broken,
        json_answer("result", {"kind": "task", "id": TASK, "contextId": CTX,
                               "status": {"state": "canceled"}}),
    ]
    app = Starlette(routes=[Route("/rpc", agent.endpoint, methods=["POST"])])
    sleeps = Sleeps()
    # the agent's broken answer is logged as a server error, on purpose
    with live_server(app, allow_errors=True) as base:
        async with Client(base + "/rpc", dialect="0.3", resume=policy(sleeps)) as client:
            got = [e async for e in client.subscribe(TASK)]
    assert [(e.state, e.reconciled) for e in got] == [(TaskState.CANCELED, True)]
    assert agent.methods == ["tasks/resubscribe", "tasks/resubscribe", "tasks/get"]


async def test_a_subscription_broken_off_for_an_unknown_task_is_task_not_found() -> None:
    # a2a-sdk's v0.3 HTTP+JSON route answers a subscription to a task it does not have
    # with the start of an event stream, then breaks it off; its GetTask says 404. The
    # client gave up only after every resumption, each one's answer thrown away, with
    # StreamInterrupted (an agent that "could not be reached").
    asked: list[str] = []

    async def refuse() -> Any:
        raise RuntimeError("task not found")
        yield b""  # (a generator)

    async def route(request: Request) -> Response:
        asked.append(f"{request.method} {request.url.path}")
        if request.url.path.endswith(":subscribe"):
            return StreamingResponse(refuse(), media_type="text/event-stream")
        return Response(msgspec.json.encode({"message": "Task not found",
                                             "type": "TaskNotFoundError"}), status_code=404,
                        media_type="application/json")

    app = Starlette(routes=[Route("/v1/tasks/{rest:path}", route, methods=["GET"])])
    sleeps = Sleeps()
    # the broken answers are logged as server errors, on purpose
    with live_server(app, allow_errors=True) as base:
        async with Client(base, binding="rest", dialect="0.3",
                          resume=policy(sleeps)) as client:
            with pytest.raises(TaskNotFound):
                [e async for e in client.subscribe(TASK)]
    # one resumption, as after any break, and the task read: there is none
    assert asked == [f"GET /v1/tasks/{TASK}:subscribe"] * 2 + [f"GET /v1/tasks/{TASK}"]
    assert sleeps.calls == [0.25]


async def test_an_event_id_or_retry_in_digits_other_than_ascii_is_no_seq(agent: Agent,
                                                                         url: str) -> None:
    # "²" passes str.isdigit(), which int() refuses: the agent's event ids and retry
    # fields are read as the SSE grammar has them (ASCII digits), else left aside
    def reply(body: dict[str, Any]) -> Response:
        out = b""
        for seq, result in ((b"\xc2\xb2", v1_task()),
                            (b"3", v1_status("TASK_STATE_COMPLETED"))):
            data = msgspec.json.encode({"jsonrpc": "2.0", "id": body["id"], "result": result})
            out += b"retry: \xc2\xb2\nid: " + seq + b"\ndata: " + data + b"\n\n"
        return Response(out, media_type="text/event-stream")

    agent.replies = [reply]
    async with Client(url, dialect="1.0") as client:
        events = await collect(client, "hi")
    assert [e.seq for e in events] == [None, 3]
    assert events[-1].item.status.state is TaskState.COMPLETED  # type: ignore[union-attr]



# ------------------------------------------------- a stream that ends before its end


def v1_done(state: str = "TASK_STATE_COMPLETED") -> dict[str, Any]:
    return {"id": TASK, "contextId": CTX, "status": {"state": state},
            "artifacts": [{"artifactId": "a1", "parts": [{"text": "the whole story"}]}]}


async def test_a_stream_cut_near_its_end_delivers_the_finished_task(agent: Agent,
                                                                    url: str) -> None:
    # a2a-sdk 1.3.0 behind a proxy that cut its first answer: the resumption is refused
    # (the task finished meanwhile); the task read then is how the stream ends, where it
    # used to end with the first snapshot alone (its artifacts and final state lost)
    agent.replies = [
        sse((None, v1_task()), tail=b'data: {"jsonrpc":"2.0","id":1,"result":{"statusUp'),
        json_answer("error", {"code": -32004, "message":
                              "Task task-1 is in terminal state: TASK_STATE_COMPLETED"}),
        json_answer("result", v1_done()),
    ]
    async with Client(url, dialect="1.0", resume=policy(Sleeps())) as client:
        events = await collect(client, "hi")
    assert agent.methods == ["SendStreamingMessage", "SubscribeToTask", "GetTask"]
    assert [e.state for e in events] == [TaskState.SUBMITTED, TaskState.COMPLETED]
    last = events[-1]
    assert last.final and last.reconciled and last.seq is None
    assert isinstance(last.item, Task)
    assert last.item.artifacts[0].parts[0].text == "the whole story"  # type: ignore[union-attr]
    assert msgspec.json.decode(last.raw)["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_silent_subscription_of_a_task_canceled_meanwhile_ends_with_it(
        agent: Agent, url: str) -> None:
    # a2a-sdk 0.3.26: the subscription of a task canceled meanwhile ends without an
    # event, and its resumption is refused; the canceled task is the stream's end
    agent.replies = [
        sse(),
        json_answer("error", {"code": -32004, "message": "Task is in terminal state"}),
        json_answer("result", {"kind": "task", "id": TASK, "contextId": CTX,
                               "status": {"state": "canceled"}}),
    ]
    async with Client(url, dialect="0.3", resume=policy(Sleeps())) as client:
        got = [e async for e in client.subscribe(TASK)]
    assert agent.methods == ["tasks/resubscribe", "tasks/resubscribe", "tasks/get"]
    assert [(e.state, e.reconciled) for e in got] == [(TaskState.CANCELED, True)]


async def test_a_resumption_repeating_the_same_snapshot_delivers_it_once(agent: Agent,
                                                                       url: str) -> None:
    # a peer without event ids, every connection cut: each resumption begins with the
    # task as it stands, the same bytes while nothing changed; delivered once
    working = v1_task("TASK_STATE_WORKING")
    streams = iter([
        sse((None, v1_task()), (None, v1_status("TASK_STATE_WORKING"))),
        sse((None, working)),
        sse((None, working)),
        sse((None, working), (None, working)),
        sse((None, v1_status("TASK_STATE_CANCELED"))),
    ])
    asked = json_answer("result", working["task"])
    agent.replies = [lambda body: (asked if body["method"] == "GetTask"
                                   else next(streams))(body)] * 10
    async with Client(url, dialect="1.0", resume=policy(Sleeps())) as client:
        events = await collect(client, "hi")
    assert [(type(e.item).__name__, e.state) for e in events] == [
        ("Task", TaskState.SUBMITTED), ("StatusUpdate", TaskState.WORKING),
        ("Task", TaskState.WORKING), ("StatusUpdate", TaskState.CANCELED)]
    assert agent.methods.count("SubscribeToTask") == 4


async def test_identical_artifact_chunks_are_all_delivered(agent: Agent, url: str) -> None:
    # (only a repeated snapshot is dropped: the same chunk twice is two chunks)
    agent.replies = [sse((None, v1_task()), (None, v1_chunk("ha")), (None, v1_chunk("ha")),
                         (None, v1_status("TASK_STATE_COMPLETED")))]
    async with Client(url, dialect="1.0", resume=policy(Sleeps())) as client:
        events = await collect(client, "hi")
    assert len(events) == 4
