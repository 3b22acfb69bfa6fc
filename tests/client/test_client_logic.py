"""Client logic against a scripted agent (httpx.MockTransport): card reading,
dialect choice and fallback, request shapes, error decoding.

Wire documents here are written from the specifications (v1.0 a2a.proto
ProtoJSON names, the v0.3.0 JSON schema), not produced by our codecs.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from interlingua.client import (
    AgentTimeout,
    AgentUnreachable,
    BadResponse,
    CardNotFound,
    Client,
    DialectMismatch,
    InvalidCard,
)
from interlingua.core.calls import DeletePushConfig, GetPushConfig, ListTasksResult
from interlingua.core.dialects import get_codec
from interlingua.core.errors import (
    AuthenticationRequired,
    InvalidParams,
    MethodNotFound,
    RemoteError,
    TaskNotCancelable,
    TaskNotFound,
    VersionNotSupported,
)
from interlingua.core.model import (
    DataPart,
    FilePart,
    Message,
    PushConfig,
    Role,
    Task,
    TaskState,
    TextPart,
)
from tests.ports import free_port

BASE = "http://agent.test"
V1_URL = "http://agent.test/a2a/v1"
V03_URL = "http://agent.test/a2a/v03"

V1_CARD: dict[str, Any] = {
    "name": "Weather",
    "description": "Forecasts.",
    "version": "1.2.0",
    "supportedInterfaces": [
        {"url": V1_URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": V03_URL, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    ],
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "forecast", "name": "Forecast", "description": "Tomorrow's weather",
                "tags": ["weather"]}],
}

V03_CARD: dict[str, Any] = {
    "protocolVersion": "0.3.0",
    "name": "Weather",
    "description": "Forecasts.",
    "url": V03_URL,
    "preferredTransport": "JSONRPC",
    "version": "1.2.0",
    "capabilities": {"streaming": False},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [],
}

V1_TASK: dict[str, Any] = {
    "id": "t1",
    "contextId": "c1",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-01-02T03:04:05.000Z"},
    "artifacts": [{"artifactId": "a1", "name": "forecast", "parts": [{"text": "sunny"}]}],
}
V03_TASK: dict[str, Any] = {
    "kind": "task",
    "id": "t1",
    "contextId": "c1",
    "status": {"state": "completed", "timestamp": "2025-01-02T03:04:05.000Z"},
    "artifacts": [{"artifactId": "a1", "name": "forecast",
                   "parts": [{"kind": "text", "text": "sunny"}]}],
}

Answer = Callable[[str, dict[str, Any]], httpx.Response]


def ok(rid: Any, result: Any) -> httpx.Response:
    return httpx.Response(200, json={"jsonrpc": "2.0", "id": rid, "result": result})


def err(rid: Any, code: int, message: str, data: Any = None, status: int = 200) -> httpx.Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return httpx.Response(status, json={"jsonrpc": "2.0", "id": rid, "error": error})


def standard(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
    """A well-behaved agent speaking both dialects."""
    if method == "SendMessage":
        return ok(rid, {"task": V1_TASK})
    if method in ("GetTask", "CancelTask"):
        return ok(rid, V1_TASK)
    if method == "ListTasks":
        return ok(rid, {"tasks": [V1_TASK], "nextPageToken": "", "pageSize": 1, "totalSize": 1})
    if method in ("message/send", "tasks/get", "tasks/cancel"):
        return ok(rid, V03_TASK)
    return err(rid, -32601, f"Method not found: {method}")


class FakeAgent:
    """Serves cards at given paths and answers JSON-RPC posts with ``answer``."""

    def __init__(self, cards: dict[str, Any] | None = None,
                 answer: Callable[[str, dict[str, Any], Any], httpx.Response] = standard) -> None:
        self.cards = cards if cards is not None else {"/.well-known/agent-card.json": V1_CARD}
        self.answer = answer
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method == "GET":
            card = self.cards.get(request.url.path)
            if card is None:
                return httpx.Response(404, text="not found")
            if isinstance(card, httpx.Response):
                return card
            return httpx.Response(200, json=card)
        body = msgspec.json.decode(request.content)
        return self.answer(body["method"], body.get("params") or {}, body["id"])

    @property
    def posts(self) -> list[tuple[str, str, dict[str, Any], str | None]]:
        """(url, method, params, A2A-Version header) of every JSON-RPC post."""
        out = []
        for r in self.requests:
            if r.method == "POST":
                body = msgspec.json.decode(r.content)
                out.append((str(r.url), body["method"], body.get("params"),
                            r.headers.get("a2a-version")))
        return out

    def client(self, url: str = BASE, **kwargs: Any) -> Client:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self))
        return Client(url, httpx_client=http, **kwargs)


# ------------------------------------------------------------- choosing a dialect


async def test_v1_card_means_v1_jsonrpc_at_its_interface() -> None:
    agent = FakeAgent()
    async with agent.client() as client:
        task = await client.send("weather in Oslo?")
    assert [r.url.path for r in agent.requests if r.method == "GET"] == [
        "/.well-known/agent-card.json"
    ]
    [(url, method, params, version)] = agent.posts
    assert (url, method, version) == (V1_URL, "SendMessage", "1.0")
    assert params["message"]["role"] == "ROLE_USER"
    assert params["message"]["parts"] == [{"text": "weather in Oslo?"}]
    assert params["message"]["messageId"]
    assert isinstance(task, Task)
    assert task.id == "t1" and task.context_id == "c1"
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts[0].parts == [TextPart(text="sunny")]
    assert client.dialect == "1.0"


async def test_v1_interface_wins_even_when_listed_after_a_v03_one() -> None:
    card = {**V1_CARD, "supportedInterfaces": list(reversed(V1_CARD["supportedInterfaces"]))}
    agent = FakeAgent({"/.well-known/agent-card.json": card})
    async with agent.client() as client:
        await client.get_task("t1")
    assert agent.posts[0][:2] == (V1_URL, "GetTask")
    assert client.dialect == "1.0"


async def test_v03_card_means_v03_jsonrpc_at_its_url() -> None:
    agent = FakeAgent({"/.well-known/agent-card.json": V03_CARD})
    async with agent.client() as client:
        task = await client.send("weather in Oslo?")
    [(url, method, params, version)] = agent.posts
    assert (url, method, version) == (V03_URL, "message/send", "0.3")
    assert params["message"]["kind"] == "message"
    assert params["message"]["role"] == "user"
    assert params["message"]["parts"] == [{"kind": "text", "text": "weather in Oslo?"}]
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert client.dialect == "0.3"


async def test_hybrid_card_is_read_as_v1() -> None:
    hybrid = {**V03_CARD, **V1_CARD}  # what a server speaking both publishes
    agent = FakeAgent({"/.well-known/agent-card.json": hybrid})
    async with agent.client() as client:
        await client.get_task("t1")
    assert agent.posts[0][:2] == (V1_URL, "GetTask")


async def test_card_found_at_the_old_well_known_path() -> None:
    agent = FakeAgent({"/.well-known/agent.json": V03_CARD})
    async with agent.client(BASE + "/") as client:
        card = await client.get_card()
    assert card.name == "Weather"
    assert [r.url.path for r in agent.requests] == [
        "/.well-known/agent-card.json",
        "/.well-known/agent.json",
    ]
    assert client.card_url == BASE + "/.well-known/agent.json"


async def test_card_url_given_directly() -> None:
    agent = FakeAgent({"/cards/weather.json": V03_CARD})
    async with agent.client(BASE + "/cards/weather.json") as client:
        await client.send("hi")
    assert [r.url.path for r in agent.requests if r.method == "GET"] == ["/cards/weather.json"]
    assert agent.posts[0][0] == V03_URL


async def test_relative_interface_url_is_resolved_against_the_card() -> None:
    card = {**V03_CARD, "url": "/rpc"}
    agent = FakeAgent({"/.well-known/agent-card.json": card})
    async with agent.client() as client:
        await client.get_task("t1")
    assert agent.posts[0][0] == BASE + "/rpc"


async def test_no_card_is_card_not_found() -> None:
    agent = FakeAgent({})
    async with agent.client() as client:
        with pytest.raises(CardNotFound) as info:
            await client.send("hi")
    assert "agent-card.json: HTTP 404" in str(info.value)
    assert "agent.json: HTTP 404" in str(info.value)
    assert isinstance(info.value, AgentUnreachable)


async def test_card_behind_authentication_is_not_reported_missing() -> None:
    locked = httpx.Response(401, text="Unauthorized")
    agent = FakeAgent({"/.well-known/agent-card.json": locked})
    async with agent.client() as client:
        with pytest.raises(BadResponse, match="HTTP 401") as caught:
            await client.get_card()
    assert not isinstance(caught.value, AgentUnreachable)
    assert caught.value.status == 401


async def test_html_instead_of_a_card_is_no_card() -> None:
    # a site's catch-all page where the card would be: no agent there, as after a 404
    page = httpx.Response(200, text="<html>hello</html>", headers={"content-type": "text/html"})
    agent = FakeAgent({"/.well-known/agent-card.json": page, "/.well-known/agent.json": page})
    async with agent.client() as client:
        with pytest.raises(CardNotFound, match="HTTP 200: an HTML page;"):
            await client.get_card()


async def test_a_card_served_as_json_that_is_malformed_is_invalid_card() -> None:
    page = httpx.Response(200, text='{"name": "A",', headers={"content-type": "application/json"})
    agent = FakeAgent({"/.well-known/agent-card.json": page})
    async with agent.client() as client:
        with pytest.raises(InvalidCard, match="not JSON"):
            await client.get_card()


async def test_card_without_a_name_is_invalid_card() -> None:
    card = {k: v for k, v in V03_CARD.items() if k != "name"}
    agent = FakeAgent({"/.well-known/agent-card.json": card})
    async with agent.client() as client:
        with pytest.raises(InvalidCard, match="name"):
            await client.get_card()


@pytest.mark.parametrize("version", ["\u00b2.0", "0.\u00b2"])
async def test_an_interface_of_a_version_in_other_digits_is_passed_over(version: str) -> None:
    # "²" passes str.isdigit(), which int() refuses: the card is the peer's to write
    card = {**V1_CARD, "supportedInterfaces": [
        {"url": V03_URL, "protocolBinding": "JSONRPC", "protocolVersion": version},
        {"url": V1_URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
    agent = FakeAgent({"/.well-known/agent-card.json": card})
    async with agent.client() as client:
        endpoint = await client.resolve()
    assert (endpoint.dialect, endpoint.url) == ("1.0", V1_URL)


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_an_answer_opening_with_a_byte_order_mark_is_read(binding: str) -> None:
    # RFC 8259 §8.1: a parser may ignore it (as the server does with requests)
    def answer(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        doc = {"jsonrpc": "2.0", "id": rid, "result": V1_TASK}
        return httpx.Response(200, content=b"\xef\xbb\xbf" + msgspec.json.encode(doc),
                              headers={"content-type": "application/json"})

    def rest(request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and "agent-card" in request.url.path:
            card = {**V1_CARD, "supportedInterfaces": [
                {"url": V1_URL, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]}
            # a card file saved with a byte order mark, served as it is
            return httpx.Response(200, content=b"\xef\xbb\xbf" + msgspec.json.encode(card),
                                  headers={"content-type": "application/json"})
        return httpx.Response(200, content=b"\xef\xbb\xbf" + msgspec.json.encode(V1_TASK),
                              headers={"content-type": "application/json"})

    if binding == "jsonrpc":
        agent = FakeAgent(answer=answer)
        async with agent.client() as client:
            task = await client.get_task("t1")
    else:
        http = httpx.AsyncClient(transport=httpx.MockTransport(rest))
        async with Client(BASE, httpx_client=http) as client:
            task = await client.get_task("t1")
    assert isinstance(task, Task) and task.id == "t1"


async def test_grpc_only_agent_is_spoken_to_over_grpc() -> None:
    card = {**V1_CARD, "supportedInterfaces": [
        {"url": "agent.test:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}
    agent = FakeAgent({"/.well-known/agent-card.json": card})
    async with agent.client() as client:
        endpoint = await client.resolve()
    # a card's gRPC address is host:port, not a path below the card's URL
    assert (endpoint.binding, endpoint.url) == ("GRPC", "grpc://agent.test:50051")


async def test_grpc_only_agent_is_a_dialect_mismatch_without_the_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from interlingua.client import bindings

    monkeypatch.setitem(bindings.BINDINGS, "grpc",
                        dataclasses.replace(bindings.BINDINGS["grpc"], available=lambda: False))
    card = {**V1_CARD, "supportedInterfaces": [
        {"url": "grpc://agent.test", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}
    agent = FakeAgent({"/.well-known/agent-card.json": card})
    async with agent.client() as client:
        with pytest.raises(DialectMismatch, match="GRPC"):
            await client.send("hi")
    assert agent.posts == []


@pytest.mark.parametrize(("dialect", "method"), [("1.0", "GetTask"), ("0.3", "tasks/get")])
async def test_given_dialect_skips_the_card(dialect: str, method: str) -> None:
    agent = FakeAgent({})
    async with agent.client(BASE + "/rpc", dialect=dialect) as client:
        task = await client.get_task("t1", history_length=3)
    assert [r.method for r in agent.requests] == ["POST"]
    [(url, m, params, version)] = agent.posts
    assert (url, m, version) == (BASE + "/rpc", method, dialect)
    assert params == {"id": "t1", "historyLength": 3}
    assert task.id == "t1"



def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match=r"0\.9"):
        Client(BASE, dialect="0.9")


async def test_connect_reads_the_card_at_once() -> None:
    agent = FakeAgent()
    transport = httpx.MockTransport(agent)
    client = await Client.connect(BASE, httpx_client=httpx.AsyncClient(transport=transport))
    try:
        assert [r.method for r in agent.requests] == ["GET"]
        assert client.card is not None and client.card.name == "Weather"
        assert client.card.skills[0].id == "forecast"
        assert client.dialect == "1.0"
        assert client.endpoint is not None and client.endpoint.url == V1_URL
        assert msgspec.json.decode(client.card_document or b"") == V1_CARD
    finally:
        await client.aclose()


async def test_headers_go_with_every_request() -> None:
    agent = FakeAgent()
    async with agent.client(headers={"Authorization": "Bearer xyz"}) as client:
        await client.get_task("t1")
    assert [r.headers.get("authorization") for r in agent.requests] == ["Bearer xyz"] * 2


# ----------------------------------------------------------------------- fallback


async def test_method_not_found_falls_back_to_v03_and_stays_there() -> None:
    def v03_only(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        if method[0].isupper():
            return err(rid, -32601, f"Method not found: {method}")
        return standard(method, params, rid)

    agent = FakeAgent(answer=v03_only)
    async with agent.client() as client:
        task = await client.send("hi")
        assert client.dialect == "0.3"
        await client.get_task("t1")
    assert [(u, m, v) for u, m, _, v in agent.posts] == [
        (V1_URL, "SendMessage", "1.0"),
        (V03_URL, "message/send", "0.3"),
        (V03_URL, "tasks/get", "0.3"),
    ]
    assert isinstance(task, Task) and task.artifacts[0].parts == [TextPart(text="sunny")]


async def test_version_not_supported_falls_back_too() -> None:
    def old_server(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        if method[0].isupper():
            info = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                     "reason": "VERSION_NOT_SUPPORTED", "domain": "a2a-protocol.org"}]
            return err(rid, -32009, "Version 1.0 not supported", info, status=400)
        return standard(method, params, rid)

    agent = FakeAgent(answer=old_server)
    async with agent.client() as client:
        await client.cancel("t1")
    assert [m for _, m, _, _ in agent.posts] == ["CancelTask", "tasks/cancel"]
    assert client.dialect == "0.3"


async def test_v03_agent_refusing_v03_is_tried_in_v1_at_the_same_url() -> None:
    def v1_only(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        if "/" in method:
            return err(rid, -32601, f"Method not found: {method}")
        return standard(method, params, rid)

    agent = FakeAgent({"/.well-known/agent-card.json": V03_CARD}, answer=v1_only)
    async with agent.client() as client:
        await client.get_task("t1")
    assert [(u, m) for u, m, _, _ in agent.posts] == [(V03_URL, "tasks/get"), (V03_URL, "GetTask")]
    assert client.dialect == "1.0"


async def test_no_fallback_when_the_dialect_was_given() -> None:
    agent = FakeAgent(answer=lambda m, p, rid: err(rid, -32601, "Method not found"))
    async with agent.client(dialect="1.0") as client:
        with pytest.raises(MethodNotFound):
            await client.get_task("t1")
    assert len(agent.posts) == 1


async def test_no_fallback_once_the_agent_has_answered() -> None:
    def no_cancel(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        if method == "CancelTask":
            return err(rid, -32601, "Method not found: CancelTask")
        return standard(method, params, rid)

    agent = FakeAgent(answer=no_cancel)
    async with agent.client() as client:
        await client.get_task("t1")
        with pytest.raises(MethodNotFound, match="CancelTask"):
            await client.cancel("t1")
    assert [m for _, m, _, _ in agent.posts] == ["GetTask", "CancelTask"]
    assert client.dialect == "1.0"


async def test_method_missing_in_every_dialect_raises_the_first_answer() -> None:
    # the card's dialect's refusal, not only the last fallback's "method not found"
    agent = FakeAgent(answer=lambda m, p, rid: err(rid, -32601, f"no {m}"))
    async with agent.client() as client:
        with pytest.raises(MethodNotFound, match=r"^no GetTask; in A2A 0\.1: no tasks/get"):
            await client.get_task("t1")
        # settled on the card's choice: the next call is not retried
        with pytest.raises(MethodNotFound, match="no GetTask"):
            await client.get_task("t1")
    # 1.0, then 0.3, then 0.1 (same method name, another dialect), then settled on 1.0
    assert [m for _, m, _, _ in agent.posts] == ["GetTask", "tasks/get", "tasks/get", "GetTask"]


# -------------------------------------------------------------------- request shapes


async def test_send_v1_with_data_files_and_options(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"remember the milk")
    agent = FakeAgent()
    async with agent.client() as client:
        await client.send("plan my day", task_id="t1", context_id="c1", data={"city": "Oslo"},
                          files=[notes], blocking=False, history_length=2,
                          metadata={"trace": "abc"})
    [(_, method, params, _)] = agent.posts
    assert method == "SendMessage"
    message = params["message"]
    assert message["taskId"] == "t1" and message["contextId"] == "c1"
    assert message["parts"] == [
        {"text": "plan my day"},
        {"data": {"city": "Oslo"}},
        {"raw": base64.b64encode(b"remember the milk").decode(), "filename": "notes.txt",
         "mediaType": "text/plain"},
    ]
    assert params["configuration"]["returnImmediately"] is True
    assert params["configuration"]["historyLength"] == 2
    assert params["metadata"] == {"trace": "abc"}


async def test_send_v03_with_data_files_and_options(tmp_path: Path) -> None:
    image = tmp_path / "chart.png"
    image.write_bytes(b"\x89PNG....")
    agent = FakeAgent({"/.well-known/agent-card.json": V03_CARD})
    async with agent.client() as client:
        await client.send("describe", data={"n": 1}, files=[image], blocking=False,
                          history_length=0)
    [(_, method, params, _)] = agent.posts
    assert method == "message/send"
    assert params["message"]["parts"] == [
        {"kind": "text", "text": "describe"},
        {"kind": "data", "data": {"n": 1}},
        {"kind": "file", "file": {"bytes": base64.b64encode(b"\x89PNG....").decode(),
                                  "mimeType": "image/png", "name": "chart.png"}},
    ]
    assert params["configuration"]["blocking"] is False
    assert params["configuration"]["historyLength"] == 0


async def test_send_a_prepared_message_keeps_its_parts_and_id() -> None:
    agent = FakeAgent()
    msg = Message(message_id="m-1", role=Role.USER, parts=[TextPart(text="a"), TextPart(text="b")])
    async with agent.client() as client:
        await client.send(msg, context_id="c9")
    message = agent.posts[0][2]["message"]
    assert message["messageId"] == "m-1"
    assert message["parts"] == [{"text": "a"}, {"text": "b"}]
    assert message["contextId"] == "c9"


async def test_list_tasks_v1_params_and_result() -> None:
    agent = FakeAgent()
    async with agent.client() as client:
        page = await client.list_tasks(context_id="c1", status="working", page_size=10,
                                       page_token="p2", include_artifacts=True)
    [(_, method, params, _)] = agent.posts
    assert method == "ListTasks"
    assert params["contextId"] == "c1"
    assert params["status"] == "TASK_STATE_WORKING"
    assert params["pageSize"] == 10
    assert params["pageToken"] == "p2"
    assert params["includeArtifacts"] is True
    assert isinstance(page, ListTasksResult)
    assert [t.id for t in page.tasks] == ["t1"]
    assert (page.next_page_token, page.page_size, page.total_size) == ("", 1, 1)


@pytest.mark.parametrize(("after", "sent"), [
    (datetime(2025, 1, 31, 12, 0, 0, 976000, tzinfo=UTC), "2025-01-31T12:00:00.976Z"),
    # "at or after" an instant inside a millisecond starts at the next one
    (datetime(2025, 1, 31, 12, 0, 0, 976400, tzinfo=UTC), "2025-01-31T12:00:00.977Z"),
    (datetime(2025, 1, 31, 12, 0, 59, 999001, tzinfo=UTC), "2025-01-31T12:01:00.000Z"),
])
async def test_list_tasks_after_a_datetime(after: datetime, sent: str) -> None:
    agent = FakeAgent()
    async with agent.client() as client:
        await client.list_tasks(status_timestamp_after=after)
    [(_, _, params, _)] = agent.posts
    assert params["statusTimestampAfter"] == sent


async def test_list_tasks_on_a_v03_agent_is_refused_without_asking() -> None:
    agent = FakeAgent({"/.well-known/agent-card.json": V03_CARD})
    async with agent.client() as client:
        with pytest.raises(DialectMismatch, match=r"1\.0"):
            await client.list_tasks()
    assert agent.posts == []


@pytest.mark.parametrize("state", ["sleeping", "unknown", TaskState.UNKNOWN])
async def test_list_tasks_with_an_unknown_state_is_a_value_error(state: Any) -> None:
    """The state "unknown" is TASK_STATE_UNSPECIFIED in v1.0, which a server reads
    as no filter: asked for, the page held every task."""
    agent = FakeAgent()
    async with agent.client() as client:
        with pytest.raises(ValueError, match="use one of submitted, working") as refused:
            await client.list_tasks(status=state)
    assert "'unknown'" in str(refused.value) or "sleeping" in str(refused.value)
    assert "unknown," not in str(refused.value)
    assert agent.posts == []


@pytest.mark.parametrize("card", [V1_CARD, V03_CARD], ids=["v1", "v03"])
async def test_reply_message_is_returned_as_a_message(card: dict[str, Any]) -> None:
    def reply(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        if method == "SendMessage":
            return ok(rid, {"message": {"messageId": "r1", "role": "ROLE_AGENT",
                                        "parts": [{"text": "hello"}]}})
        return ok(rid, {"kind": "message", "messageId": "r1", "role": "agent",
                        "parts": [{"kind": "text", "text": "hello"}]})

    agent = FakeAgent({"/.well-known/agent-card.json": card}, answer=reply)
    async with agent.client() as client:
        result = await client.send("hi")
    assert isinstance(result, Message)
    assert result.role is Role.AGENT and result.parts == [TextPart(text="hello")]


async def test_data_and_file_parts_in_answers_are_decoded() -> None:
    task = {**V1_TASK, "artifacts": [{"artifactId": "a1", "parts": [
        {"data": [1, 2, 3]},
        {"raw": base64.b64encode(b"xyz").decode(), "mediaType": "text/csv", "filename": "r.csv"},
    ]}]}
    agent = FakeAgent(answer=lambda m, p, rid: ok(rid, task))
    async with agent.client() as client:
        got = await client.get_task("t1")
    data, file = got.artifacts[0].parts
    assert isinstance(data, DataPart) and data.data == [1, 2, 3]
    assert isinstance(file, FilePart)
    assert (file.raw, file.media_type, file.filename) == (b"xyz", "text/csv", "r.csv")


async def test_last_result_is_the_raw_result_member() -> None:
    agent = FakeAgent()
    async with agent.client() as client:
        await client.get_task("t1")
    assert msgspec.json.decode(client.last_result or b"") == V1_TASK


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("card", [V1_CARD, V03_CARD], ids=["v1", "v03"])
async def test_task_not_found_is_decoded(card: dict[str, Any]) -> None:
    agent = FakeAgent({"/.well-known/agent-card.json": card},
                      answer=lambda m, p, rid: err(rid, -32001, "Task not found: t9"))
    async with agent.client() as client:
        with pytest.raises(TaskNotFound, match="t9"):
            await client.get_task("t9")


async def test_v1_error_with_error_info_is_decoded() -> None:
    info = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
             "reason": "TASK_NOT_CANCELABLE", "domain": "a2a-protocol.org",
             "metadata": {"taskId": "t1"}}]
    agent = FakeAgent(answer=lambda m, p, rid: err(rid, -32002, "Task t1 is completed", info))
    async with agent.client() as client:
        with pytest.raises(TaskNotCancelable) as caught:
            await client.cancel("t1")
    assert caught.value.message == "Task t1 is completed"
    assert caught.value.data == {"taskId": "t1"}


async def test_jsonrpc_error_in_an_http_error_answer_is_decoded() -> None:
    agent = FakeAgent(answer=lambda m, p, rid: err(rid, -32602, "Invalid params: id",
                                                   status=400))
    async with agent.client() as client:
        with pytest.raises(InvalidParams, match="id"):
            await client.get_task("")


async def test_unknown_error_code_keeps_the_agents_code() -> None:
    agent = FakeAgent({"/.well-known/agent-card.json": V03_CARD},
                      answer=lambda m, p, rid: err(rid, -32099, "quota exhausted"))
    async with agent.client() as client:
        with pytest.raises(RemoteError) as caught:
            await client.get_task("t1")
    assert get_codec("0.3").code_of(caught.value) == -32099
    assert caught.value.message == "quota exhausted"


async def test_http_401_without_a_jsonrpc_body_is_authentication_required() -> None:
    agent = FakeAgent(answer=lambda m, p, rid: httpx.Response(401, text="Unauthorized"))
    async with agent.client() as client:
        with pytest.raises(AuthenticationRequired, match="401"):
            await client.get_task("t1")


async def test_http_500_html_is_a_bad_response() -> None:
    page = httpx.Response(502, text="<html><body>Bad Gateway</body></html>",
                          headers={"content-type": "text/html"})
    agent = FakeAgent(answer=lambda m, p, rid: page)
    async with agent.client() as client:
        with pytest.raises(BadResponse, match="HTTP 502") as caught:
            await client.get_task("t1")
    assert caught.value.status == 502


async def test_non_json_success_answer_is_a_bad_response() -> None:
    agent = FakeAgent(answer=lambda m, p, rid: httpx.Response(200, text="OK"))
    async with agent.client() as client:
        with pytest.raises(BadResponse, match="not a JSON-RPC response"):
            await client.get_task("t1")


@pytest.mark.parametrize(("card", "broken", "field"), [
    (V1_CARD, {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SLEEPING"}},
     "state"),
    (V03_CARD, {"kind": "task", "contextId": "c1", "status": {"state": "working"}}, "id"),
], ids=["v1-unknown-state", "v03-no-id"])
async def test_result_of_the_wrong_shape_is_a_bad_response(
    card: dict[str, Any], broken: dict[str, Any], field: str
) -> None:
    agent = FakeAgent({"/.well-known/agent-card.json": card},
                      answer=lambda m, p, rid: ok(rid, broken))
    async with agent.client() as client:
        with pytest.raises(BadResponse, match=field):
            await client.get_task("t1")


async def test_answer_to_another_request_is_a_bad_response() -> None:
    agent = FakeAgent(answer=lambda m, p, rid: ok(rid + 1000, V1_TASK))
    async with agent.client() as client:
        with pytest.raises(BadResponse, match="answered request"):
            await client.get_task("t1")


async def test_error_member_without_a_code_is_a_bad_response() -> None:
    agent = FakeAgent(answer=lambda m, p, rid: httpx.Response(
        200, json={"jsonrpc": "2.0", "id": rid, "error": {"message": "oops"}}))
    async with agent.client() as client:
        with pytest.raises(BadResponse, match="integer code"):
            await client.get_task("t1")


async def test_connection_refused_is_agent_unreachable() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    async with Client(BASE, httpx_client=http) as client:
        with pytest.raises(AgentUnreachable, match=r"cannot reach http://agent\.test") as caught:
            await client.send("hi")
    assert "\n" not in str(caught.value)


async def test_timeout_is_agent_timeout() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(slow))
    async with Client(BASE, dialect="1.0", httpx_client=http) as client:
        with pytest.raises(AgentTimeout, match="did not answer"):
            await client.get_task("t1")


async def test_nothing_listening_is_agent_unreachable() -> None:
    # a port nothing listens on, and no other test is given
    port = free_port()
    async with Client(f"http://127.0.0.1:{port}", timeout=5) as client:
        with pytest.raises(AgentUnreachable, match=f"127.0.0.1:{port}"):
            await client.get_card()


async def test_a_callers_http_client_is_left_open() -> None:
    agent = FakeAgent()
    http = httpx.AsyncClient(transport=httpx.MockTransport(agent))
    async with Client(BASE, httpx_client=http) as client:
        await client.get_task("t1")
    assert not http.is_closed
    await http.aclose()


# ------------------------------------------------------- push configs read without an id


@pytest.mark.parametrize("refusal", [
    (-32602, "Invalid params: id is required"),  # a2a-sdk 1.3.0
    (-32001, "Task not found: config with id '' not found"),  # @a2a-js/sdk 1.3.0
])
async def test_a_push_config_asked_for_without_an_id_is_read_from_the_list(
        refusal: tuple[int, str]) -> None:
    # v1.0 makes the config's id required: a get without one is never sent empty (the
    # peers refuse it); the task's configs are listed and its own chosen, as over HTTP+JSON
    configs = [{"taskId": "t1", "id": "c2", "url": "https://hooks.example/2"},
               {"taskId": "t1", "id": "t1", "url": "https://hooks.example/own"}]

    def answer(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        if method == "GetTaskPushNotificationConfig" and not params.get("id"):
            return err(rid, *refusal)
        if method == "ListTaskPushNotificationConfigs":
            return ok(rid, {"configs": configs})
        return standard(method, params, rid)

    agent = FakeAgent(answer=answer)
    async with agent.client() as client:
        got = await client.call(GetPushConfig(task_id="t1"))
    assert isinstance(got, PushConfig) and got.id == "t1" and got.url.endswith("/own")
    assert [m for _, m, _, _ in agent.posts] == ["ListTaskPushNotificationConfigs"]


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_a_delete_answered_with_neither_result_nor_error_succeeded(dialect: str) -> None:
    # a2a-sdk 0.3.26 answers a push config's delete {"id":9,"jsonrpc":"2.0"}: a call
    # whose result is empty succeeded; one that needs a result is still refused
    def answer(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        return httpx.Response(200, json={"id": rid, "jsonrpc": "2.0"})

    agent = FakeAgent(answer=answer)
    async with agent.client(dialect=dialect) as client:
        assert await client.call(DeletePushConfig(task_id="t1", config_id="c1")) is None
        with pytest.raises(BadResponse, match="not a JSON-RPC response"):
            await client.get_task("t1")


async def test_a_refusal_in_the_cards_dialect_is_not_hidden_by_the_fallbacks() -> None:
    # langgraph-api (v1.0): an unknown task's subscription refused; the v0.3 method tried
    # next is unknown there, which said nothing of the task
    def answer(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        if method == "SubscribeToTask":
            return err(rid, -32009, "Version not supported for this task")
        return err(rid, -32601, f"Method not found: {method}")

    agent = FakeAgent(answer=answer)
    async with agent.client() as client:
        with pytest.raises(VersionNotSupported,
                           match=r"^Version not supported for this task; in A2A 0\.1: "
                                 "Method not found: tasks/resubscribe"):
            async for _ in client.subscribe("t1"):
                pass


async def test_a_version_refusal_read_in_an_older_dialect_is_no_task_state_error() -> None:
    # --dialect 0.1 to a v1.0 agent: its -32009 is v1.0's VersionNotSupported, which
    # v0.1's table reads as InvalidTaskState; the message (or ErrorInfo) says which
    def answer(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        return err(rid, -32009, "The requested A2A protocol version '0.1' is not supported")

    agent = FakeAgent(answer=answer)
    async with agent.client(dialect="0.1") as client:
        with pytest.raises(VersionNotSupported, match=r"'0\.1' is not supported"):
            await client.send("echo x")


async def test_a_card_offering_1_1_whose_agent_refused_it_is_not_said_to_offer_none() -> None:
    from interlingua.client.generations import GenerationsNotSupported

    card = {**V1_CARD, "supportedInterfaces": [
        {"url": V1_URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.1"}]}

    def answer(method: str, params: dict[str, Any], rid: Any) -> httpx.Response:
        return standard(method, params, rid)

    agent = FakeAgent({"/.well-known/agent-card.json": card}, answer=answer)

    def refusing(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.headers.get("a2a-version") == "1.1":
            rid = msgspec.json.decode(request.content)["id"]
            return err(rid, -32009, "Version 1.1 not supported")
        return agent(request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(refusing))
    async with Client(BASE, httpx_client=http) as client:
        await client.get_task("t1")
        with pytest.raises(GenerationsNotSupported) as info:
            await client.get_task("t1", after_generation=1)
    assert "offers no" not in str(info.value)
    assert "the agent refused A2A 1.1, which its card offers" in str(info.value)
