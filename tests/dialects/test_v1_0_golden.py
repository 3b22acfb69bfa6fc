"""The examples of the v1.0 specification, read by the v1.0 codec.

Every code block of ``specification.md`` is found by program
(``tests/reference/extract.py``, which keeps them in
``tests/reference/extracted/v1.0-specification-blocks.json``, checked against the
text where the shared folder is present); each that holds a v1.0 object is
decoded, so a block that stops decoding fails a test:

* JSON-RPC requests with a PascalCase method -> ``decode_call``;
* JSON-RPC responses -> ``decode_result`` / ``decode_error``;
* the HTTP+JSON examples, whose bodies are the same ProtoJSON messages
  (``SendMessageRequest``, ``SendMessageResponse``, ``ListTasksResponse``,
  ``StreamResponse``) -> the same functions;
* agent cards -> ``decode_card_v1``.

Blocks that cannot decode are listed in ``INVALID`` with the reason, each
matched by a snippet of its text; the test checks they still fail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.v1_0 import V1Codec, decode_card_v1
from interlingua.core.errors import A2AError, InvalidParams, TaskNotFound
from tests.reference import extract

codec = V1Codec()


@dataclass
class Block:
    line: int
    lang: str
    text: str

    @property
    def id(self) -> str:
        return f"line{self.line}"


def _blocks() -> list[Block]:
    return [Block(b["line"], b["lang"], b["text"])
            for b in extract.load("v1.0-specification-blocks.json")]


BLOCKS = _blocks()


# Examples that contradict the proto or are not JSON, and why (DIALECTS.md §i.11, §i.13).
INVALID: dict[str, str] = {
    '"params": { /* SendMessageRequest object */ }': "placeholder comment, not JSON",
    "/* SendMessageResponse object, contains one of:": "placeholder comment, not JSON",
    '"parts": [{"text": "Find restaurants near me"}],\n    "extensions"': (
        "the message has no messageId, which Message marks REQUIRED"
    ),
    '"raw": "iVBORw0KGgoAAAANSUhEUgAAAAUA..."\n': (
        "not JSON: a comma is missing after raw and one trails mediaType"
    ),
    "/* ... additional tasks */": "placeholder comment, not JSON",
    "/* Extended skills available to authenticated users */": "placeholder comment, not JSON",
    '"protocolVersion": "0.3",\n    }': "not JSON: trailing comma in supportedInterfaces",
    "application/a2a+json\n\n{ /* SendMessageRequest object */ }": "placeholder comment, not JSON",
    "data: { /* StreamResponse object */ }": "placeholder comment, not JSON",
    "a2a+json\nAuthorization: Bearer token\nA2A-Version: 0.3\n": (
        "the message has no messageId, which Message marks REQUIRED"
    ),
}


def _invalid_reason(block: Block) -> str | None:
    hits = [reason for snippet, reason in INVALID.items() if snippet in block.text]
    assert len(hits) <= 1, block.id
    return hits[0] if hits else None


def test_every_invalid_snippet_names_exactly_one_block() -> None:
    for snippet in INVALID:
        assert sum(snippet in b.text for b in BLOCKS) == 1, snippet


# ------------------------------------------------------------------ JSON-RPC bodies

_METHOD = re.compile(r'"method"\s*:\s*"([^"]+)"')


def _rpc_requests() -> list[Block]:
    out = []
    for b in BLOCKS:
        mt = _METHOD.search(b.text)
        if b.lang == "json" and mt and mt.group(1) in V1Codec.methods:
            out.append(b)
    return out


def _rpc_responses() -> list[Block]:
    return [
        b
        for b in BLOCKS
        if b.lang == "json"
        and '"jsonrpc"' in b.text
        and ('"result"' in b.text or '"error"' in b.text)
    ]


RPC_REQUESTS = _rpc_requests()
RPC_RESPONSES = _rpc_responses()


def test_the_spec_has_the_json_rpc_examples_we_expect() -> None:
    methods = sorted(_METHOD.search(b.text).group(1) for b in RPC_REQUESTS)  # type: ignore[union-attr]
    assert methods == [
        "CancelTask",
        "GetExtendedAgentCard",
        "GetTask",
        "ListTasks",
        "SendMessage",
        "SubscribeToTask",
    ]
    assert len(RPC_RESPONSES) == 3


def _call_of(block: Block) -> c.Call:
    doc = msgspec.json.decode(block.text)
    assert doc["jsonrpc"] == "2.0"
    params = doc.get("params")
    return codec.decode_call(doc["method"], None if params is None else msgspec.json.encode(params))


@pytest.mark.parametrize("block", RPC_REQUESTS, ids=lambda b: b.id)
def test_json_rpc_requests_decode(block: Block) -> None:
    reason = _invalid_reason(block)
    if reason is not None:
        with pytest.raises((msgspec.DecodeError, A2AError)):
            _call_of(block)
        return
    call = _call_of(block)
    # round trip: what we decoded encodes to params that decode the same
    method, params = codec.encode_call(call)
    assert codec.decode_call(method, params) == call


def test_json_rpc_request_values() -> None:
    calls = {
        type(call): call for b in RPC_REQUESTS if not _invalid_reason(b) for call in [_call_of(b)]
    }
    # values as the spec's §9.4 examples state them
    assert calls[c.GetTask] == c.GetTask(id="task-uuid", history_length=10)
    assert calls[c.ListTasks] == c.ListTasks(
        context_id="context-uuid",
        status=m.TaskState.WORKING,
        page_size=50,
        page_token="cursor-token",
    )
    assert calls[c.CancelTask] == c.CancelTask(id="task-uuid")
    assert calls[c.SubscribeToTask] == c.SubscribeToTask(id="task-uuid")
    assert calls[c.GetExtendedCard] == c.GetExtendedCard()


@pytest.mark.parametrize("block", RPC_RESPONSES, ids=lambda b: b.id)
def test_json_rpc_responses_decode(block: Block) -> None:
    if _invalid_reason(block) is not None:
        with pytest.raises(msgspec.DecodeError):
            msgspec.json.decode(block.text)
        return
    doc = msgspec.json.decode(block.text)
    if "error" in doc:
        err = codec.decode_error(doc["error"])
        assert get_codec("1.0").code_of(err) == doc["error"]["code"]
        assert err.message == doc["error"]["message"]
    else:
        _decode_result_body(doc["result"])


def test_json_rpc_error_examples_map_to_our_errors() -> None:
    errors = [
        codec.decode_error(msgspec.json.decode(b.text)["error"])
        for b in RPC_RESPONSES
        if '"error"' in b.text
    ]
    assert [type(e) for e in errors] == [InvalidParams, TaskNotFound]
    # the lone ErrorInfo's metadata becomes the error's data; other details stay as sent
    assert errors[1].data == {
        "taskId": "nonexistent-task-id",
        "timestamp": "2025-11-09T10:30:00.000Z",
    }
    assert errors[0].data[0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"


# ---------------------------------------------------------------- HTTP+JSON bodies


def _http_parts(block: Block) -> tuple[str, str]:
    head, _, body = block.text.partition("\n\n")
    return head, body


def _http_requests() -> list[Block]:
    return [
        b for b in BLOCKS if b.lang == "http" and re.match(r"POST /message:(send|stream)", b.text)
    ]


def _http_responses() -> list[Block]:
    return [
        b
        for b in BLOCKS
        if b.lang == "http"
        and b.text.startswith("HTTP/1.1 200")
        and "application/a2a+json" in b.text
    ]


def _http_streams() -> list[Block]:
    """SSE responses and webhook posts: both carry StreamResponse objects."""
    return [
        b
        for b in BLOCKS
        if b.lang == "http"
        and (
            (b.text.startswith("HTTP/1.1 200") and "text/event-stream" in b.text)
            or b.text.startswith("POST /webhook")
        )
    ]


HTTP_REQUESTS = _http_requests()
HTTP_RESPONSES = _http_responses()
HTTP_STREAMS = _http_streams()


def test_the_spec_has_the_http_examples_we_expect() -> None:
    assert len(HTTP_REQUESTS) == 12
    assert len(HTTP_RESPONSES) == 10
    assert len(HTTP_STREAMS) == 3


@pytest.mark.parametrize("block", HTTP_REQUESTS, ids=lambda b: b.id)
def test_http_request_bodies_decode(block: Block) -> None:
    head, body = _http_parts(block)
    method = "SendStreamingMessage" if ":stream" in head.split("\n")[0] else "SendMessage"
    reason = _invalid_reason(block)
    if reason is not None:
        with pytest.raises(A2AError):
            codec.decode_call(method, body.encode())
        return
    call = codec.decode_call(method, body.encode())
    assert isinstance(call, c.SendMessage)
    assert call.streaming == (method == "SendStreamingMessage")
    assert call.message.role is m.Role.USER and call.message.parts


def _decode_result_body(doc: Any) -> c.Result:
    body = msgspec.json.encode(doc)
    if "tasks" in doc:
        result = codec.decode_result(c.ListTasks(), body)
        assert isinstance(result, c.ListTasksResult)
        assert result.total_size == doc["totalSize"] and result.page_size == doc["pageSize"]
    elif "task" in doc or "message" in doc:
        result = codec.decode_result(c.SendMessage(message=_ANY_MESSAGE), body)
        assert isinstance(result, m.Task | m.Message)
    elif "id" in doc and "status" in doc:
        result = codec.decode_result(c.GetTask(id=doc["id"]), body)
    else:
        result = codec.decode_result(c.GetExtendedCard(), body)
    return result


_ANY_MESSAGE = m.Message(message_id="m", role=m.Role.USER, parts=[m.TextPart("x")])


@pytest.mark.parametrize("block", HTTP_RESPONSES, ids=lambda b: b.id)
def test_http_response_bodies_decode(block: Block) -> None:
    _, body = _http_parts(block)
    if _invalid_reason(block) is not None:
        with pytest.raises(msgspec.DecodeError):
            msgspec.json.decode(body)
        return
    _decode_result_body(msgspec.json.decode(body))


@pytest.mark.parametrize("block", HTTP_STREAMS, ids=lambda b: b.id)
def test_http_stream_events_decode(block: Block) -> None:
    _, body = _http_parts(block)
    if _invalid_reason(block) is not None:
        with pytest.raises(A2AError):
            for line in body.split("\n"):
                if line.startswith("data: "):
                    codec.decode_stream_item(line[len("data: ") :].encode())
        return
    if block.text.startswith("POST"):
        events = [body]
    else:
        events = [line[len("data: ") :] for line in body.split("\n") if line.startswith("data: ")]
    assert events
    for event in events:
        item = codec.decode_stream_item(event.encode())
        assert codec.decode_stream_item(codec.encode_stream_item(item)) == item


def test_http_example_values() -> None:
    # §6.1 and §6.7, read by eye
    by_line = {b.line: b for b in HTTP_RESPONSES}
    basic = next(b for b in by_line.values() if "Today will be sunny" in b.text)
    task = _decode_result_body(msgspec.json.decode(_http_parts(basic)[1]))
    assert isinstance(task, m.Task)
    assert task.status.state is m.TaskState.COMPLETED
    assert task.artifacts[0].parts == [m.TextPart("Today will be sunny with a high of 75°F")]
    files = next(b for b in by_line.values() if "processed_image_with_faces" in b.text)
    task = _decode_result_body(msgspec.json.decode(_http_parts(files)[1]))
    assert isinstance(task, m.Task)
    assert task.artifacts[0].parts == [
        m.FilePart(
            uri="https://storage.example.com/processed/task-bbb/output.png?token=xyz",
            filename="output.png",
            media_type="image/png",
        )
    ]
    # §6.8: microseconds come back as our millisecond form
    ticket = next(b for b in by_line.values() if "REQ12312" in b.text)
    task = _decode_result_body(msgspec.json.decode(_http_parts(ticket)[1]))
    assert isinstance(task, m.Task)
    assert task.status.timestamp == "2025-04-17T17:47:09.680Z"

    push = next(b for b in HTTP_REQUESTS if "taskPushNotificationConfig" in b.text)
    call = codec.decode_call("SendMessage", _http_parts(push)[1].encode())
    assert isinstance(call, c.SendMessage)
    assert call.config.push_config == m.PushConfig(
        url="https://client.example.com/webhook/a2a-notifications",
        authentication=m.AuthInfo(
            schemes=["Bearer"], credentials="secure-client-token-for-task-aaa"
        ),
    )


# ------------------------------------------------------------------------- cards


def _card_blocks() -> list[Block]:
    return [
        b
        for b in BLOCKS
        if b.lang == "json"
        and '"jsonrpc"' not in b.text
        and re.search(
            r'^\s*"(supportedInterfaces|capabilities|securitySchemes|skills)"', b.text, re.M
        )
    ]


CARD_BLOCKS = _card_blocks()


@pytest.mark.parametrize("block", CARD_BLOCKS, ids=lambda b: b.id)
def test_card_examples_decode(block: Block) -> None:
    if _invalid_reason(block) is not None:
        with pytest.raises(msgspec.DecodeError):
            msgspec.json.decode(block.text)
        return
    card = decode_card_v1(msgspec.json.decode(block.text))
    assert isinstance(card, m.AgentCard)


def test_the_sample_card() -> None:
    block = next(b for b in CARD_BLOCKS if "GeoSpatial Route Planner Agent" in b.text)
    card = decode_card_v1(msgspec.json.decode(block.text))
    assert [(i.binding, i.protocol_version) for i in card.interfaces] == [
        ("JSONRPC", "1.0"),
        ("GRPC", "1.0"),
        ("HTTP+JSON", "1.0"),
    ]
    assert card.capabilities.extended_card and card.capabilities.streaming
    assert card.security_schemes == {
        "google": m.OpenIdConnectScheme(
            url="https://accounts.google.com/.well-known/openid-configuration"
        )
    }
    # the sample still uses v0.3's ``security``; it is read as the requirements
    assert card.security == [{"google": ["openid", "profile", "email"]}]
    assert [s.id for s in card.skills] == ["route-optimizer-traffic", "custom-map-generator"]
    assert card.signatures[0].protected.startswith("eyJhbGciOiJFUzI1NiIs")
    assert card.provider == m.AgentProvider(
        organization="Example Geo Services Inc.", url="https://www.examplegeoservices.com"
    )
