"""The examples of seed 004 (the v0.1.0 specification), read by the v0.1 codec.

Every JSON example of the seed is found by program (``tests/reference/extract.py``,
which keeps them in ``tests/reference/extracted/seed-004-examples.json``, checked
against the seed's text where the shared folder is present), so an example that
stops decoding fails a test:

* blocks that start on a line of their own with ``{`` (the agent card of §5.6
  and the JSON-RPC messages of §9), after removing the ``//`` and ``/* */``
  comments the spec writes into them;
* the ``data:`` lines of the SSE stream in §9.2.

Requests go through ``decode_call``; responses' ``result`` through
``decode_result`` for the method of the request with the same JSON-RPC id;
stream data through ``decode_stream_item``; the card through
``decode_card_v01``.

Every block is valid JSON once its comments are removed (checked below), but
two hold ``...`` placeholders: §9.3's ``"returnDeparture": "..."`` is an
ordinary string value, while §9.5's ``"bytes": "iVBORw0KGgoAAAANSUhEUgAAAAUA..."``
is base64 cut short, which the codec must refuse; it decodes once the elision
is removed. §9.4's webhook body is server-defined, not an A2A object: only its
``status`` is read (as a v0.1 TaskStatus).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

from interlingua.core import errors
from interlingua.core.calls import (
    CancelTask,
    GetPushConfig,
    GetTask,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects._common import normalize_timestamp
from interlingua.core.dialects.v0_1 import V01Codec, decode_card_v01, encode_card_v01
from interlingua.core.model import (
    ArtifactUpdate,
    DataPart,
    FilePart,
    OAuth2Scheme,
    PushConfig,
    StatusUpdate,
    Task,
    TextPart,
)
from interlingua.core.parts import user_message
from tests.dialects.v0_1_strategies import assert_valid
from tests.reference import extract
from tests.reference.extract import strip_comments

codec = V01Codec()


# --------------------------------------------------------------------- seed examples


@dataclass
class Example:
    line: int
    raw: str

    @property
    def doc(self) -> Any:
        return json.loads(strip_comments(self.raw))

    @property
    def id(self) -> str:
        return f"line{self.line}"


def _read_seed() -> tuple[list[Example], list[Example]]:
    found = extract.load("seed-004-examples.json")
    return ([Example(b["line"], b["raw"]) for b in found["blocks"]],
            [Example(d["line"], d["raw"]) for d in found["data_lines"]])


BLOCKS, DATA_LINES = _read_seed()
REQUESTS = [b for b in BLOCKS if "method" in b.doc]
RESPONSES = [b for b in BLOCKS if "result" in b.doc or "error" in b.doc]
CARDS = [b for b in BLOCKS if "skills" in b.doc]
OTHERS = [b for b in BLOCKS if b not in REQUESTS + RESPONSES + CARDS]

# JSON-RPC id -> method, from the requests (responses are answered to them).
METHOD_OF = {b.doc["id"]: b.doc["method"] for b in REQUESTS}

# The one placeholder that breaks a value (§9.5): base64 cut short with "...".
ELIDED_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAUA..."


def test_every_example_was_found_and_is_json() -> None:
    # §5.6 card; §9.1-§9.6: 8 requests, 6 responses, 1 webhook body; 5 SSE events in §9.2
    assert (len(CARDS), len(REQUESTS), len(RESPONSES), len(OTHERS)) == (1, 8, 6, 1)
    assert len(DATA_LINES) == 5
    for b in BLOCKS:
        assert isinstance(b.doc, dict)  # parses once comments are gone
    for d in DATA_LINES:
        assert json.loads(d.raw)["jsonrpc"] == "2.0"
    # Comments really were there to remove (the reader is not a no-op).
    assert sum(1 for b in BLOCKS if "//" in strip_comments(b.raw)) >= 1  # URLs survive
    commented = [b for b in BLOCKS if strip_comments(b.raw) != b.raw]
    assert len(commented) >= 5
    assert {b.doc["method"] for b in REQUESTS} == {"tasks/send", "tasks/sendSubscribe", "tasks/get"}
    assert all(b.doc["id"] in METHOD_OF for b in RESPONSES)


def test_comment_stripper() -> None:
    text = '{"a": "http://x/y", // note\n "b": /* in */ 1, "c": "/* kept */"}'
    assert json.loads(strip_comments(text)) == {"a": "http://x/y", "b": 1, "c": "/* kept */"}


# ------------------------------------------------------------------------- requests


def _decode_request(doc: dict[str, Any]) -> Any:
    return codec.decode_call(doc["method"], msgspec.json.encode(doc["params"]))


@pytest.mark.parametrize("block", REQUESTS, ids=lambda b: b.id)
def test_requests_decode(block: Example) -> None:
    doc = block.doc
    params = doc["params"]
    if ELIDED_BASE64 in block.raw:
        with pytest.raises(errors.InvalidParams) as info:
            _decode_request(doc)
        assert "params.message.parts[1].file.bytes" in info.value.message
        for part in params["message"]["parts"]:
            if part["type"] == "file":
                part["file"]["bytes"] = part["file"]["bytes"].removesuffix("...")
    call = _decode_request(doc)
    if doc["method"] == "tasks/get":
        assert call == GetTask(id=params["id"])
        return
    assert isinstance(call, SendMessage)
    assert call.streaming is (doc["method"] == "tasks/sendSubscribe")
    assert call.client_task_id == params["id"]
    assert call.message.context_id == params.get("sessionId")
    assert call.message.role.value == params["message"]["role"]
    assert call.message.message_id  # made up: v0.1 messages have none
    assert call.config.blocking is True
    for got, sent in zip(call.message.parts, params["message"]["parts"], strict=True):
        assert got.metadata == sent.get("metadata")
        if sent["type"] == "text":
            assert got == TextPart(text=sent["text"], metadata=sent.get("metadata"))
        else:
            assert isinstance(got, FilePart)
            assert got.raw == base64.b64decode(sent["file"]["bytes"])
            assert (got.filename, got.media_type) == (
                sent["file"]["name"],
                sent["file"]["mimeType"],
            )
    push = params.get("pushNotification")
    if push is None:
        assert call.config.push_config is None
    else:
        config = call.config.push_config
        assert config is not None
        assert (config.url, config.token) == (push["url"], push["token"])
        assert config.authentication is not None
        assert config.authentication.schemes == push["authentication"]["schemes"]
    # and it is written back as it came
    method, out = codec.encode_call(call)
    assert method == doc["method"]
    assert msgspec.json.decode(out) == params


# ------------------------------------------------------------------------ responses


def _call_for(method: str) -> Any:
    return {
        "tasks/send": SendMessage(message=user_message("x"), client_task_id="x"),
        "tasks/get": GetTask(id="x"),
        "tasks/cancel": CancelTask(id="x"),
        "tasks/resubscribe": SubscribeToTask(id="x"),
        "tasks/pushNotification/set": SetPushConfig(task_id="x", config=PushConfig(url="u")),
        "tasks/pushNotification/get": GetPushConfig(task_id="x"),
    }[method]


def _as_we_write(doc: Any, *, in_task: bool = True) -> Any:
    """A seed result with the normalizations the codec documents applied.

    Timestamps in their canonical form; artifacts of a task with their index
    (their position when absent); non-object data wrapped as ``{"value": X}``
    plus the ``data_part_compat`` flag.
    """
    doc = json.loads(json.dumps(doc))
    status = doc.get("status")
    if isinstance(status, dict) and "timestamp" in status:
        status["timestamp"] = normalize_timestamp(status["timestamp"])
    for i, artifact in enumerate(doc.get("artifacts", [])):
        artifact.setdefault("index", i)
    if "artifact" in doc:
        doc["artifact"].setdefault("index", 0)
    for container in [*doc.get("artifacts", []), doc.get("artifact", {})]:
        for part in container.get("parts", []):
            if part["type"] == "data" and not isinstance(part["data"], dict):
                part["data"] = {"value": part["data"]}
                part["metadata"] = {**part.get("metadata", {}), "data_part_compat": True}
    return doc


@pytest.mark.parametrize("block", RESPONSES, ids=lambda b: b.id)
def test_responses_decode(block: Example) -> None:
    doc = block.doc
    result = doc["result"]
    call = _call_for(METHOD_OF[doc["id"]])
    task = codec.decode_result(call, msgspec.json.encode(result))
    assert isinstance(task, Task)
    assert task.id == result["id"]
    assert task.context_id == result.get("sessionId", "")
    assert task.status.state.value == result["status"]["state"]
    assert task.status.timestamp == normalize_timestamp(result["status"]["timestamp"])
    status_message = result["status"].get("message")
    if status_message is None:
        assert task.status.message is None
    else:
        assert task.status.message is not None
        assert [p.text for p in task.status.message.parts if isinstance(p, TextPart)] == [
            p["text"] for p in status_message["parts"]
        ]
    assert len(task.artifacts) == len(result.get("artifacts", []))
    for i, (got, sent) in enumerate(zip(task.artifacts, result.get("artifacts", []), strict=True)):
        assert got.name == sent["name"]
        assert got.index == sent.get("index", i)
        assert got.artifact_id == f"artifact-{got.index}"
        for part, sent_part in zip(got.parts, sent["parts"], strict=True):
            if sent_part["type"] == "data":
                # §9.6 sends an array: the prose allows it, the canonical part takes any JSON
                assert part == DataPart(data=sent_part["data"], metadata=sent_part.get("metadata"))
            elif sent_part["type"] == "file":
                assert isinstance(part, FilePart)
                assert part.uri == sent_part["file"]["uri"]
                assert part.raw is None
    # Written back: the same document, normalized as documented.
    assert msgspec.json.decode(codec.encode_result(call, task)) == _as_we_write(result)
    assert_valid(msgspec.json.decode(codec.encode_result(call, task)), "Task")


# --------------------------------------------------------------------------- stream


@pytest.mark.parametrize("line", DATA_LINES, ids=lambda d: d.id)
def test_stream_events_decode(line: Example) -> None:
    envelope = json.loads(line.raw)
    assert METHOD_OF[envelope["id"]] == "tasks/sendSubscribe"
    result = envelope["result"]
    item = codec.decode_stream_item(msgspec.json.encode(result))
    assert isinstance(item, StatusUpdate | ArtifactUpdate)
    assert item.task_id == result["id"]
    if "status" in result:
        assert isinstance(item, StatusUpdate)
        assert item.status.state.value == result["status"]["state"]
        assert item.status.timestamp == normalize_timestamp(result["status"]["timestamp"])
    else:
        assert isinstance(item, ArtifactUpdate)
        sent = result["artifact"]
        assert item.artifact.name == sent["name"]
        assert item.artifact.index == sent["index"]
        assert item.append is sent.get("append", False)
        assert item.last_chunk is sent.get("lastChunk", False)
        assert [p.text for p in item.artifact.parts if isinstance(p, TextPart)] == [
            p["text"] for p in sent["parts"]
        ]
    again = msgspec.json.decode(codec.encode_stream_item(item))
    assert again == _as_we_write(result)
    assert_valid(
        again, "TaskStatusUpdateEvent" if "status" in result else "TaskArtifactUpdateEvent"
    )


def test_stream_ends_with_the_final_event() -> None:
    finals = [json.loads(d.raw)["result"].get("final") for d in DATA_LINES]
    assert finals == [False, None, None, None, True]
    ours = [
        msgspec.json.decode(
            codec.encode_stream_item(
                codec.decode_stream_item(msgspec.json.encode(json.loads(d.raw)["result"]))
            )
        ).get("final")
        for d in DATA_LINES
    ]
    assert ours == finals


# ----------------------------------------------------------------------------- rest


def test_webhook_body_status_is_a_v01_status() -> None:
    (body,) = OTHERS
    doc = body.doc
    assert doc["eventType"] == "taskUpdate"  # server-defined; only the status is A2A
    assert_valid(doc["status"], "TaskStatus")
    task = codec.decode_result(
        GetTask(id=doc["taskId"]),
        msgspec.json.encode({"id": doc["taskId"], "status": doc["status"]}),
    )
    assert isinstance(task, Task)
    assert task.status.state.value == doc["status"]["state"]


def test_sample_agent_card() -> None:
    (block,) = CARDS
    doc = block.doc
    assert_valid(doc, "AgentCard")
    card = decode_card_v01(doc)
    assert card.name == doc["name"]
    assert card.description == doc["description"]
    assert card.version == doc["version"]
    assert [(i.url, i.binding, i.protocol_version) for i in card.interfaces] == [
        (doc["url"], "JSONRPC", "0.1")
    ]
    assert card.provider is not None
    assert (card.provider.organization, card.provider.url) == (
        doc["provider"]["organization"],
        doc["provider"]["url"],
    )
    assert card.documentation_url == doc["documentationUrl"]
    caps = doc["capabilities"]
    assert (
        card.capabilities.streaming,
        card.capabilities.push_notifications,
        card.capabilities.state_transition_history,
    ) == (caps["streaming"], caps["pushNotifications"], caps["stateTransitionHistory"])
    assert card.default_input_modes == doc["defaultInputModes"]
    assert card.default_output_modes == doc["defaultOutputModes"]
    assert [(s.id, s.name, s.tags, s.examples) for s in card.skills] == [
        (s["id"], s["name"], s["tags"], s["examples"]) for s in doc["skills"]
    ]
    assert [(s.input_modes, s.output_modes) for s in card.skills] == [
        (s["inputModes"], s["outputModes"]) for s in doc["skills"]
    ]
    # "OAuth2" with its URLs and scopes given as a JSON string in credentials
    assert list(card.security_schemes) == doc["authentication"]["schemes"]
    scheme = card.security_schemes["OAuth2"]
    assert isinstance(scheme, OAuth2Scheme)
    details = json.loads(doc["authentication"]["credentials"])
    flow = scheme.flows["authorization_code"]
    assert (flow.authorization_url, flow.token_url, flow.scopes) == (
        details["authorizationUrl"],
        details["tokenUrl"],
        details["scopes"],
    )
    assert card.security == [{"OAuth2": []}]
    # and the v0.1 members we add to our own card name the scheme the same way
    added = encode_card_v01(card, url=doc["url"])
    assert added["authentication"] == {"schemes": doc["authentication"]["schemes"]}
    assert added["capabilities"] == {"stateTransitionHistory": caps["stateTransitionHistory"]}
