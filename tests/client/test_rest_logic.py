"""The client's HTTP+JSON binding against a scripted agent (httpx.MockTransport):
routes of each operation, error bodies, binding choice and fallback; and, against
fakes on loopback, a status that names no error, read as the gRPC binding reads it.

Wire documents are written from the v1.0 specification (a2a.proto's HTTP
annotations, ProtoJSON names, google.rpc.Status with ErrorInfo), not produced
by our codecs.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import grpc
import httpx
import msgspec
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from interlingua.client import BadResponse, Client, DialectMismatch, ResumePolicy
from interlingua.core.calls import (
    DeletePushConfig,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    SetPushConfig,
)
from interlingua.core.errors import (
    AuthenticationRequired,
    AuthorizationFailed,
    ContentTypeNotSupported,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    PushNotSupported,
    RateLimitExceeded,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
    VersionNotSupported,
)
from interlingua.core.model import PushConfig, Task, TaskState
from tests.live import live_server

BASE = "http://agent.test"
REST_URL = "http://agent.test/rest"
RPC_URL = "http://agent.test/rpc"

TASK: dict[str, Any] = {
    "id": "t1",
    "contextId": "c1",
    "status": {"state": "TASK_STATE_COMPLETED"},
    "artifacts": [{"artifactId": "a1", "name": "forecast", "parts": [{"text": "sunny"}]}],
}
PUSH: dict[str, Any] = {"id": "p1", "taskId": "t1", "url": "https://hook.test/a2a"}


def card(*interfaces: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "name": "Weather", "description": "Forecasts.", "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": binding, "protocolVersion": version}
            for binding, version, url in interfaces
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


REST_FIRST = card(("HTTP+JSON", "1.0", REST_URL), ("JSONRPC", "1.0", RPC_URL))
RPC_FIRST = card(("JSONRPC", "1.0", RPC_URL), ("HTTP+JSON", "1.0", REST_URL))


def status(http: int, grpc: str, reason: str, message: str) -> httpx.Response:
    return httpx.Response(http, json={"error": {
        "code": http, "status": grpc, "message": message,
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason,
                     "domain": "a2a-protocol.org"}]}})


class Agent:
    """A card, an HTTP+JSON agent below REST_URL and a JSON-RPC one at RPC_URL."""

    def __init__(self, card_doc: dict[str, Any] = REST_FIRST, rest: bool = True) -> None:
        self.card = card_doc
        self.rest = rest
        #: (HTTP method, path, query, body or None) of every HTTP+JSON request
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.rpc: list[str] = []
        self.answer: httpx.Response | None = None

    def handler(self, request: httpx.Request) -> httpx.Response:
        url = urlsplit(str(request.url))
        if url.path == "/.well-known/agent-card.json":
            return httpx.Response(200, json=self.card)
        if url.path == "/rpc":
            doc = msgspec.json.decode(request.content)
            self.rpc.append(doc["method"])
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": doc["id"], "result": TASK})
        if not self.rest or not url.path.startswith("/rest/"):
            return httpx.Response(404, text="Not Found")
        body = msgspec.json.decode(request.content) if request.content else None
        path = url.path.removeprefix("/rest")
        self.requests.append((request.method, path, dict(parse_qsl(url.query)), body))
        version = request.headers["A2A-Version"]
        if body is not None:
            assert request.headers["Content-Type"] == (
                "application/a2a+json" if version == "1.0" else "application/json")
        if self.answer is not None:
            return self.answer
        if path == "/message:send":
            return httpx.Response(200, json={"task": TASK})
        if path == "/tasks" and request.method == "GET":
            return httpx.Response(200, json={"tasks": [TASK], "nextPageToken": "",
                                             "pageSize": 50, "totalSize": 1})
        if "/pushNotificationConfigs" in path:
            if request.method == "DELETE":
                return httpx.Response(200, json={})
            if path.endswith("/pushNotificationConfigs") and request.method == "GET":
                return httpx.Response(200, json={"configs": [PUSH]})
            return httpx.Response(200, json=PUSH)
        return httpx.Response(200, json=TASK)

    def client(self, url: str = BASE, **kwargs: Any) -> Client:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handler))
        kwargs.setdefault("httpx_client", http)
        return Client(url, **kwargs)


# ------------------------------------------------------------------------ routes


async def test_every_operation_takes_its_route() -> None:
    agent = Agent()
    async with agent.client() as client:
        task = await client.send("weather?", history_length=2)
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert (await client.get_task("t1", history_length=3)).id == "t1"
        page = await client.list_tasks(context_id="c1", status="working", page_size=5,
                                       include_artifacts=True)
        assert [t.id for t in page.tasks] == ["t1"]
        assert (await client.cancel("t/1")).id == "t1"
        await client.call(SetPushConfig(task_id="t1",
                                        config=PushConfig(url="https://hook.test/a2a", id="p1")))
        await client.call(GetPushConfig(task_id="t1", config_id="p1"))
        await client.call(ListPushConfigs(task_id="t1"))
        await client.call(DeletePushConfig(task_id="t1", config_id="p1"))
        await client.call(GetTask(id="t1", tenant="acme"))
    assert client.endpoint is not None and client.endpoint.binding == "HTTP+JSON"
    routes = [(m, p, q) for m, p, q, _ in agent.requests]
    assert routes == [
        ("POST", "/message:send", {}),
        ("GET", "/tasks/t1", {"historyLength": "3"}),
        ("GET", "/tasks", {"contextId": "c1", "status": "TASK_STATE_WORKING", "pageSize": "5",
                           "includeArtifacts": "true"}),
        ("POST", "/tasks/t%2F1:cancel", {}),
        ("POST", "/tasks/t1/pushNotificationConfigs", {}),
        ("GET", "/tasks/t1/pushNotificationConfigs/p1", {}),
        ("GET", "/tasks/t1/pushNotificationConfigs", {}),
        ("DELETE", "/tasks/t1/pushNotificationConfigs/p1", {}),
        ("GET", "/acme/tasks/t1", {}),  # a tenant goes in front of the path
    ]
    send_body = agent.requests[0][3]
    assert send_body["message"]["parts"] == [{"text": "weather?"}]
    assert send_body["configuration"]["historyLength"] == 2
    assert agent.rpc == []


V03_TASK: dict[str, Any] = {"id": "t1", "contextId": "c1",
                            "status": {"state": "TASK_STATE_COMPLETED"}}


async def test_v03_operations_take_their_routes_under_v1() -> None:
    agent = Agent()
    agent.answer = httpx.Response(200, json=V03_TASK)
    async with agent.client(REST_URL, binding="rest", dialect="0.3") as client:
        assert (await client.get_task("t1", history_length=1)).id == "t1"
        assert (await client.cancel("t1")).id == "t1"
        agent.answer = httpx.Response(
            200, json={"name": "tasks/t1/pushNotificationConfigs/p1",
                       "pushNotificationConfig": {"url": "https://hook.test/a2a", "id": "p1"}})
        await client.call(SetPushConfig(task_id="t1",
                                        config=PushConfig(url="https://hook.test/a2a", id="p1")))
        await client.call(GetPushConfig(task_id="t1", config_id="p1"))
        agent.answer = httpx.Response(200, json={})
        await client.call(DeletePushConfig(task_id="t1", config_id="p1"))
        with pytest.raises(DialectMismatch):
            await client.list_tasks()
    assert [(m, p, q) for m, p, q, _ in agent.requests] == [
        ("GET", "/v1/tasks/t1", {"historyLength": "1"}),
        ("POST", "/v1/tasks/t1:cancel", {}),
        ("POST", "/v1/tasks/t1/pushNotificationConfigs", {}),
        ("GET", "/v1/tasks/t1/pushNotificationConfigs/p1", {}),
        ("DELETE", "/v1/tasks/t1/pushNotificationConfigs/p1", {}),
    ]
    # the whole CreateTaskPushNotificationConfigRequest, which a2a-sdk's v0.3 routes parse
    assert agent.requests[2][3] == {
        "parent": "tasks/t1", "configId": "p1",
        "config": {"name": "tasks/t1/pushNotificationConfigs/p1",
                   "pushNotificationConfig": {"url": "https://hook.test/a2a", "id": "p1"}}}


async def test_v03_message_send_says_blocking_always() -> None:
    # a server reads an absent `blocking` (or configuration) as proto3's false
    agent = Agent()
    agent.answer = httpx.Response(200, json={"task": V03_TASK})
    async with agent.client(REST_URL, binding="rest", dialect="0.3") as client:
        await client.send("hi")
        await client.send("hi", blocking=False)
    assert [body["configuration"]["blocking"] for _, _, _, body in agent.requests] == [
        True, False]


async def test_a_v03_404_without_a_type_off_a_task_route_is_no_route() -> None:
    agent = Agent()
    agent.answer = httpx.Response(404, json={"message": "Not Found"})
    async with agent.client(REST_URL, binding="rest", dialect="0.3") as client:
        with pytest.raises(MethodNotFound):
            await client.send("hi")


async def test_a_v03_push_config_refused_as_a_request_is_sent_as_its_config() -> None:
    # @a2a-js/sdk 1.x's v0.3 routes read the body as the proto's HTTP mapping says
    # (`body: "config"`) and refuse the whole request
    agent = Agent()
    answers = iter([
        httpx.Response(400, json={"code": -32602,
                                  "message": "missing pushNotificationConfig"}),
        httpx.Response(200, json={"name": "tasks/t1/pushNotificationConfigs/p1",
                                  "pushNotificationConfig": {"url": "https://hook.test/a2a",
                                                             "id": "p1"}}),
    ])

    def handler(request: httpx.Request) -> httpx.Response:
        agent.requests.append((request.method, request.url.path, {},
                               msgspec.json.decode(request.content)))
        return next(answers)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    async with Client(REST_URL, binding="rest", dialect="0.3", httpx_client=http) as client:
        made = await client.call(SetPushConfig(
            task_id="t1", config=PushConfig(url="https://hook.test/a2a", id="p1")))
    assert isinstance(made, PushConfig) and made.id == "p1"
    first, second = (body for _, _, _, body in agent.requests)
    assert first["parent"] == "tasks/t1" and second == first["config"]


@pytest.mark.parametrize(("answer", "raised"), [
    (httpx.Response(404, json={"message": "Task not found: t1", "type": "TaskNotFoundError"}),
     TaskNotFound),
    (httpx.Response(409, json={"message": "done", "type": "TaskNotCancelableError"}),
     TaskNotCancelable),
    (httpx.Response(422, json={"message": "bad", "type": "InvalidParamsError"}), InvalidParams),
    (httpx.Response(501, json={"message": "no", "type": "PushNotificationNotSupportedError"}),
     PushNotSupported),
    (httpx.Response(401, json={"message": "who?"}), AuthenticationRequired),
    # @a2a-js/sdk's bodies: the v0.3 JSON-RPC code
    (httpx.Response(404, json={"code": -32001, "message": "Task not found"}), TaskNotFound),
    (httpx.Response(400, json={"code": -32002, "message": "done"}), TaskNotCancelable),
    # a2a-sdk 1.x's v0.3 routes: the v1.0 body
    (status(404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found"), TaskNotFound),
    # a2a-sdk 0.3's: a message only, told by v0.3's status (404: on a route naming a task)
    (httpx.Response(404, json={"message": "Task not found"}), TaskNotFound),
    (httpx.Response(409, json={"message": "done"}), TaskNotCancelable),
    (httpx.Response(500, json={"message": "oops"}), InternalError),
    (httpx.Response(404, json={"detail": "Not Found"}), MethodNotFound),
    (httpx.Response(404, text="Not Found"), MethodNotFound),
    (httpx.Response(503, json={"message": "later"}), BadResponse),
    # v0.3 has no version error: an invalid request saying so, read as JSON-RPC's is
    (httpx.Response(400, json={"code": -32600, "type": "InvalidRequestError",
                               "message": "A2A-Version '9.9' is not supported"}),
     VersionNotSupported),
    (httpx.Response(400, json={"code": -32600, "type": "InvalidRequestError",
                               "message": "bad"}), InvalidRequest),
])
async def test_v03_error_bodies_are_read_by_their_type(
        answer: httpx.Response, raised: type[Exception]) -> None:
    agent = Agent()
    agent.answer = answer
    async with agent.client(REST_URL, binding="rest", dialect="0.3") as client:
        with pytest.raises(raised):
            await client.get_task("t1")


# ------------------------------------------------------------------------ errors


@pytest.mark.parametrize(("answer", "raised"), [
    (status(404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found: t1"), TaskNotFound),
    (status(400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", "done"), TaskNotCancelable),
    (status(400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", "no"), UnsupportedOperation),
    (status(400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "no"),
     PushNotSupported),
    (status(400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED", "no"),
     ContentTypeNotSupported),
    (status(400, "INVALID_ARGUMENT", "INVALID_PARAMS", "bad id"), InvalidParams),
    (status(400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", "2.0?"), VersionNotSupported),
    (status(401, "UNAUTHENTICATED", "UNAUTHENTICATED", "who?"), AuthenticationRequired),
    (status(429, "RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED", "slow"), RateLimitExceeded),
    (httpx.Response(401, text="go away"), AuthenticationRequired),
    (httpx.Response(429), RateLimitExceeded),
    (httpx.Response(404, text="Not Found"), MethodNotFound),
    (httpx.Response(405, text="Method Not Allowed"), MethodNotFound),
])
async def test_error_bodies_raise_the_errors_json_rpc_raises(
        answer: httpx.Response, raised: type[Exception]) -> None:
    agent = Agent()
    agent.answer = answer
    async with agent.client(REST_URL, binding="rest", dialect="1.0") as client:
        with pytest.raises(raised):
            await client.get_task("t1")


async def test_the_status_message_is_the_errors_message() -> None:
    agent = Agent()
    agent.answer = status(404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found: t1")
    async with agent.client(binding="rest") as client:
        with pytest.raises(TaskNotFound, match="Task not found: t1"):
            await client.get_task("t1")


@pytest.mark.parametrize("answer", [
    httpx.Response(500, text="<html>oops</html>"),
    httpx.Response(502, json={"error": {"code": 502, "message": "gateway"}}),
    httpx.Response(200, text="<html>hello</html>", headers={"content-type": "text/html"}),
])
async def test_answers_that_are_no_a2a_answers_are_bad_responses(answer: httpx.Response) -> None:
    agent = Agent()
    agent.answer = answer
    async with agent.client(binding="rest") as client:
        with pytest.raises(BadResponse):
            await client.get_task("t1")


# ------------------------------------------------ a status naming no error, on loopback

#: google.rpc.Status codes without the ErrorInfo v1.0 §11 asks for (a proxy's, a
#: non-compliant peer's answer): the code's name, its HTTP status, the error it is read as
BARE_STATUSES = [
    ("NOT_FOUND", 404, TaskNotFound),
    ("INTERNAL", 500, InternalError),
    ("INVALID_ARGUMENT", 400, InvalidParams),
    ("FAILED_PRECONDITION", 400, UnsupportedOperation),
    ("UNAUTHENTICATED", 401, AuthenticationRequired),
    ("PERMISSION_DENIED", 403, AuthorizationFailed),
    ("RESOURCE_EXHAUSTED", 429, RateLimitExceeded),
]


async def _scripted_answer(request: Request) -> Response:
    """The answer the request's headers script: ``x-http`` its status, ``x-body`` its
    body, ``x-type`` its content type."""
    return Response(request.headers.get("x-body", ""), int(request.headers["x-http"]),
                    media_type=request.headers.get("x-type", "application/json"))


class _Aborts(grpc.GenericRpcHandler):
    """Every method ends with the status code the ``x-status`` metadata names, and no details."""

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        def abort(request: bytes, context: grpc.ServicerContext) -> bytes:
            code = dict(context.invocation_metadata())["x-status"]
            context.abort(getattr(grpc.StatusCode, str(code)), "boom")
            raise AssertionError("abort returns by raising")

        return grpc.unary_unary_rpc_method_handler(abort)


@pytest.fixture(scope="module")
def scripted() -> Iterator[dict[str, str]]:
    """The address, by binding, of a fake agent answering as each request's headers say."""
    app = Starlette(routes=[Route("/{path:path}", _scripted_answer,
                                  methods=["GET", "POST", "DELETE"])])
    server = grpc.server(ThreadPoolExecutor(max_workers=2), handlers=(_Aborts(),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with live_server(app) as url:
            yield {"rest": url, "grpc": f"127.0.0.1:{port}"}
    finally:
        server.stop(0).wait()


@pytest.mark.parametrize("binding", ["rest", "grpc"])
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
@pytest.mark.parametrize(("code", "http", "raised"), BARE_STATUSES)
async def test_a_status_naming_no_error_is_read_by_its_code_on_either_binding(
        scripted: dict[str, str], binding: str, dialect: str, code: str, http: int,
        raised: type[Exception]) -> None:
    # the HTTP+JSON body carries the very name gRPC sends as its code
    body = msgspec.json.encode({"error": {"code": http, "status": code, "message": "boom",
                                          "details": []}}).decode()
    headers = {"x-status": code, "x-http": str(http), "x-body": body}
    async with Client(scripted[binding], binding=binding, dialect=dialect,
                      headers=headers) as client:
        with pytest.raises(raised, match="boom") as caught:
            await client.get_task("t1")
    assert type(caught.value) is raised


@pytest.mark.parametrize(("http", "body", "media_type", "raised"), [
    # no Status: a route this agent does not serve, so another binding may be tried
    (404, "", "application/json", MethodNotFound),
    (404, '{"detail": "Not Found"}', "application/json", MethodNotFound),
    (404, "<html>Not Found</html>", "text/html", MethodNotFound),
    (405, "Method Not Allowed", "text/plain", MethodNotFound),
    (500, "", "application/json", BadResponse),
    (502, "<html>Bad Gateway</html>", "text/html", BadResponse),
    (401, "go away", "text/plain", AuthenticationRequired),
    # a Status without a code's name, or with one no A2A error stands for
    (502, '{"error": {"code": 502, "message": "gateway"}}', "application/json", BadResponse),
    (500, '{"error": {"code": 500, "status": "DATA_LOSS", "message": "x"}}',
     "application/json", BadResponse),
    (404, '{"error": "NOT_FOUND"}', "application/json", MethodNotFound),
])
async def test_an_error_body_that_is_no_status_is_read_by_the_http_status(
        scripted: dict[str, str], http: int, body: str, media_type: str,
        raised: type[Exception]) -> None:
    headers = {"x-http": str(http), "x-body": body, "x-type": media_type}
    for dialect in ("1.0", "0.3"):
        async with Client(scripted["rest"], binding="rest", dialect=dialect,
                          headers=headers) as client:
            with pytest.raises(raised) as caught:
                await client.get_task("t1")
        assert type(caught.value) is raised


async def test_a_bare_not_found_status_is_no_reason_to_try_another_binding() -> None:
    agent = Agent(REST_FIRST)
    agent.answer = httpx.Response(404, json={"error": {
        "code": 404, "status": "NOT_FOUND", "message": "Task not found", "details": []}})
    async with agent.client() as client:
        with pytest.raises(TaskNotFound, match="Task not found"):
            await client.get_task("t1")
    assert agent.rpc == []


async def test_an_error_event_in_a_stream_is_raised() -> None:
    agent = Agent()
    first = b'{"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}}'
    error = (b'{"error": {"code": 404, "status": "NOT_FOUND", "message": "gone", "details": '
             b'[{"@type": "type.googleapis.com/google.rpc.ErrorInfo", '
             b'"reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}]}}')
    agent.answer = httpx.Response(
        200, headers={"content-type": "text/event-stream"},
        content=b"id: 1\ndata: " + first + b"\n\nevent: error\ndata: " + error + b"\n\n")
    seen = []
    async with agent.client(binding="rest") as client:
        with pytest.raises(TaskNotFound, match="gone"):
            async for event in client.stream("hi"):
                seen.append(event)
    assert [e.seq for e in seen] == [1]
    assert agent.requests[0][:2] == ("POST", "/message:stream")


async def test_a_v1_error_event_that_names_no_error_is_a_bad_response() -> None:
    # v1.0 bodies name their error (and carry a lagging reader's resume hint): one
    # that does not is the agent's fault, not a broken stream to resume
    agent = Agent()
    agent.answer = httpx.Response(
        200, headers={"content-type": "text/event-stream"},
        content=b'event: error\ndata: {"message": "something"}\n\n')
    async with agent.client(binding="rest") as client:
        with pytest.raises(BadResponse, match="without an A2A reason"):
            async for _ in client.stream("hi"):
                pass


async def test_a_v03_stream_broken_off_with_an_untyped_error_is_resumed() -> None:
    def event(seq: int, state: str) -> bytes:
        item = {"statusUpdate": {"taskId": "t1", "contextId": "c1",
                                 "status": {"state": state}, "final": state.endswith("ED")}}
        return b"id: %d\ndata: " % seq + msgspec.json.encode(item) + b"\n\n"

    task = b'id: 1\ndata: {"task": ' + msgspec.json.encode(
        {**V03_TASK, "status": {"state": "TASK_STATE_WORKING"}}) + b"}\n\n"
    answers = [
        task + event(2, "TASK_STATE_WORKING")
        + b'event: error\ndata: {"message": "This stream fell too far behind"}\n\n',
        event(3, "TASK_STATE_COMPLETED"),
    ]
    seen: list[tuple[str, str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((urlsplit(str(request.url)).path, request.headers.get("Last-Event-ID")))
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              content=answers.pop(0))

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    async with Client(REST_URL, binding="rest", dialect="0.3", httpx_client=http,
                      resume=ResumePolicy(sleep=_no_sleep)) as client:
        events = [e async for e in client.stream("hi")]
    assert [e.seq for e in events] == [1, 2, 3]
    assert events[-1].state is TaskState.COMPLETED
    assert seen == [("/rest/v1/message:stream", None), ("/rest/v1/tasks/t1:subscribe", "2")]


async def _no_sleep(seconds: float) -> None:
    return None


# ------------------------------------------------------------------ binding choice


async def test_the_cards_order_decides_within_a_version() -> None:
    rest = Agent(REST_FIRST)
    async with rest.client() as client:
        await client.get_task("t1")
    assert [e.binding for e in client.endpoints] == ["HTTP+JSON", "JSONRPC"]
    assert len(rest.requests) == 1 and rest.rpc == []
    rpc = Agent(RPC_FIRST)
    async with rpc.client() as client:
        await client.get_task("t1")
    assert rpc.requests == [] and rpc.rpc == ["GetTask"]


async def test_a_newer_version_wins_over_the_cards_order() -> None:
    agent = Agent(card(("JSONRPC", "0.3", RPC_URL), ("HTTP+JSON", "1.0", REST_URL)))
    async with agent.client() as client:
        await client.get_task("t1")
    assert client.endpoint is not None
    assert (client.endpoint.binding, client.dialect) == ("HTTP+JSON", "1.0")


@pytest.mark.parametrize(("binding", "used"), [("jsonrpc", "JSONRPC"), ("rest", "HTTP+JSON"),
                                               ("HTTP+JSON", "HTTP+JSON")])
async def test_a_forced_binding_is_the_only_one_used(binding: str, used: str) -> None:
    agent = Agent(RPC_FIRST if used == "HTTP+JSON" else REST_FIRST)
    async with agent.client(binding=binding) as client:
        await client.get_task("t1")
        assert [e.binding for e in client.endpoints] == [used]
    assert client.endpoint is not None and client.endpoint.binding == used


async def test_a_forced_binding_the_card_lacks_is_a_mismatch() -> None:
    agent = Agent(card(("JSONRPC", "1.0", RPC_URL)))
    async with agent.client(binding="rest") as client:
        with pytest.raises(DialectMismatch, match=r"HTTP\+JSON"):
            await client.get_task("t1")


async def test_a_card_of_unknown_bindings_names_what_it_offers() -> None:
    agent = Agent(card(("CARRIER-PIGEON", "1.0", "agent.test:443")))
    async with agent.client() as client:
        with pytest.raises(DialectMismatch, match=r"CARRIER-PIGEON 1\.0 at"):
            await client.get_task("t1")


def test_unknown_bindings_and_impossible_pairs_are_value_errors() -> None:
    with pytest.raises(ValueError,
                       match="unknown binding 'mqtt'; use one of jsonrpc, rest, grpc"):
        Client(BASE, binding="mqtt")
    with pytest.raises(ValueError, match=r"rest binding is spoken in A2A 1\.0, 0\.3, not 0\.1"):
        Client(BASE, binding="rest", dialect="0.1")
    for timeout in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="timeout must be above 0 seconds"):
            Client(BASE, timeout=timeout)
    assert Client(BASE, timeout=None).url == BASE
    # a URL no agent can be at is said at once, not as a failure of the first call
    for url in ("http://127.0.0.1:99999/", "http://h:x/", "http://[::1/"):
        with pytest.raises(ValueError, match="is not a URL an agent can be reached at"):
            Client(url)


async def test_a_rest_interface_that_is_not_there_falls_back_to_json_rpc() -> None:
    agent = Agent(REST_FIRST, rest=False)
    async with agent.client() as client:
        first = await client.get_task("t1")
        again = await client.get_task("t1")
    assert first.id == again.id == "t1"
    assert agent.rpc == ["GetTask", "GetTask"]  # settled on JSON-RPC after one 404
    assert client.endpoint is not None and client.endpoint.binding == "JSONRPC"


async def test_no_fallback_to_json_rpc_when_rest_is_forced() -> None:
    agent = Agent(REST_FIRST, rest=False)
    async with agent.client(binding="rest") as client:
        with pytest.raises(MethodNotFound):
            await client.get_task("t1")
    assert agent.rpc == []
