"""Golden inputs for the v0.2/v0.3 codec: seed 000 and the v0.3.0 schema's own definitions.

Seed 000 (``shared/seeds/000_*.txt``, "Data objects in A2A protocol") gives its
examples as TypeScript-style object literals, not as JSON. Its blocks are read by
program (``tests/reference/extract.py``; the fields of each are kept in
``tests/reference/extracted/seed-000-blocks.json``, checked against the seed's text
where the shared folder is present), and the test builds JSON instances from them
(every field, and required fields only; one instance per literal alternative).

The request examples are built the same way from the v0.3.0 JSON schema: for
each ``*Request`` definition, instances with every property and with only the
required ones, one per ``anyOf`` branch; each is first checked to be valid
against the schema, then decoded.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from interlingua.core import errors
from interlingua.core.calls import (
    CancelTask,
    DeletePushConfig,
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.v0_3 import V03Codec
from interlingua.core.model import Message, Role, Task, TaskState, TextPart
from tests.dialects.v0_3_strategies import assert_valid, schema
from tests.reference import extract

codec = V03Codec()
SEND = SendMessage(message=Message(message_id="m", role=Role.USER, parts=[TextPart(text="x")]))


# ------------------------------------------------------------------ seed 000 blocks


def seed_blocks() -> dict[str, list[tuple[str, bool, str]]]:
    """Heading -> [(field, optional, type text)] for every ``{ … }`` block of seed 000."""
    found = extract.load("seed-000-blocks.json")
    return {heading: [(f, bool(opt), t) for f, opt, t in fields]
            for heading, fields in found.items()}


TIMESTAMPS = ["2023-10-27T10:00:00Z", "2023-10-27T12:00:00+02:00", "2023-10-27T10:00:00.000Z"]
CANONICAL_TIMESTAMP = "2023-10-27T10:00:00.000Z"


def _alternatives(type_text: str) -> list[str]:
    return [t.strip() for t in type_text.split("|")]


class SeedBuilder:
    """Builds JSON instances from the seed's type notation."""

    def __init__(self, blocks: dict[str, list[tuple[str, bool, str]]]) -> None:
        self.blocks = blocks

    def value(self, name: str, type_text: str, variant: int, full: bool) -> Any:
        alts = _alternatives(type_text)
        t = alts[variant % len(alts)]
        if t.startswith('"'):
            return t.strip('"')
        if t == "{":  # an inline ``{[key: string]: any}`` map: metadata
            return {"origin": "seed-000"}
        if t.endswith("[]"):
            return [self.value(name, t[:-2], variant, full)]
        if t in ("string", "String"):
            if name == "timestamp":  # "ISO 8601"; three spellings of one instant
                return TIMESTAMPS[variant % len(TIMESTAMPS)]
            return f"{name}-{variant}"
        if t == "Integer":
            return -32001 if name == "code" else variant + 1
        if t == "null":
            return None
        if t == "any":
            return {"detail": "seed-000"}
        if t == "TaskState":
            states = [v.strip('"') for _, _, v in self.blocks["TaskState Enum"]]
            return states[variant % len(states)]
        if t == "Part":
            return self.instance("Text Part", variant, full)
        if t == "Artifact":
            # Seed 000 has no Artifact block; the v0.3.0 schema's required fields.
            return {
                "artifactId": f"artifact-{variant}",
                "parts": [self.value("p", "Part", 0, full)],
            }
        block = {
            "Message": "Message Object",
            "Task": "Task Object",
            "TaskStatus": "TaskStatus Object",
            "JSONRPCError": "JSONRPCError Object",
        }[t]
        return self.instance(block, variant, full)

    def instance(self, heading: str, variant: int, full: bool) -> dict[str, Any]:
        return {
            name: self.value(name, type_text, variant, full)
            for name, optional, type_text in self.blocks[heading]
            if full or not optional
        }


@pytest.fixture(scope="module")
def seed() -> SeedBuilder:
    return SeedBuilder(seed_blocks())


VARIANTS = [(v, full) for v in range(9) for full in (True, False)]


def test_seed_000_was_read(seed: SeedBuilder) -> None:
    assert set(seed.blocks) >= {
        "Message Object",
        "Text Part",
        "Task Object",
        "TaskStatus Object",
        "TaskState Enum",
        "JSONRPCRequest Object",
        "JSONRPCResponse Object",
        "JSONRPCError Object",
    }
    assert [f for f, _, _ in seed.blocks["Message Object"]] == [
        "role",
        "parts",
        "metadata",
        "extensions",
        "referenceTaskIds",
        "messageId",
        "taskId",
        "contextId",
        "kind",
    ]


def test_seed_000_states_are_ours(seed: SeedBuilder) -> None:
    states = {v.strip('"') for _, _, v in seed.blocks["TaskState Enum"]}
    assert states == {s.value for s in TaskState}


@pytest.mark.parametrize(("variant", "full"), VARIANTS)
def test_seed_000_message_as_params(seed: SeedBuilder, variant: int, full: bool) -> None:
    doc = seed.instance("Message Object", variant, full)
    assert_valid(doc, "Message")
    # Seed 000: "params: Message" — the bare form (DIALECTS §i.3) and the schema's wrapped form.
    for params in (doc, {"message": doc}):
        call = codec.decode_call("message/send", msgspec.json.encode(params))
        assert isinstance(call, SendMessage)
        msg = call.message
        assert msg.message_id == doc["messageId"]
        assert msg.role.value == doc["role"]
        assert [p.text for p in msg.parts if isinstance(p, TextPart)] == [
            p["text"] for p in doc["parts"]
        ]
        assert msg.task_id == doc.get("taskId")
        assert msg.context_id == doc.get("contextId")
        assert msg.reference_task_ids == doc.get("referenceTaskIds")
        assert msg.extensions == doc.get("extensions")
        assert msg.metadata == doc.get("metadata")
        assert call.config.blocking is True
    # and the wrapped form is what we write back
    _, out = codec.encode_call(call)
    assert msgspec.json.decode(out) == {"message": doc}


@pytest.mark.parametrize(("variant", "full"), VARIANTS)
def test_seed_000_task(seed: SeedBuilder, variant: int, full: bool) -> None:
    doc = seed.instance("Task Object", variant, full)
    assert_valid(doc, "Task")
    wire = msgspec.json.encode(doc)
    for task in (
        codec.decode_result(GetTask(id="x"), wire),
        codec.decode_result(SEND, wire),
        codec.decode_stream_item(wire),
    ):
        assert isinstance(task, Task)
        assert task.id == doc["id"]
        assert task.context_id == doc["contextId"]
        assert task.status.state.value == doc["status"]["state"]
        assert len(task.history) == len(doc.get("history", []))
        assert len(task.artifacts) == len(doc.get("artifacts", []))
        assert task.metadata == doc.get("metadata")
    if "timestamp" in doc["status"]:
        assert task.status.timestamp == CANONICAL_TIMESTAMP
        doc["status"]["timestamp"] = CANONICAL_TIMESTAMP
    # what we write back is the same document (timestamps in their normal form)
    assert msgspec.json.decode(codec.encode_result(GetTask(id="x"), task)) == doc


@pytest.mark.parametrize(("variant", "full"), VARIANTS)
def test_seed_000_jsonrpc_request(seed: SeedBuilder, variant: int, full: bool) -> None:
    doc = seed.instance("JSONRPCRequest Object", variant, full)
    assert isinstance(doc["params"], dict)
    call = codec.decode_call("message/send", msgspec.json.encode(doc["params"]))
    assert isinstance(call, SendMessage)
    assert call.message.message_id == doc["params"]["messageId"]


@pytest.mark.parametrize(("variant", "full"), VARIANTS)
def test_seed_000_jsonrpc_response(seed: SeedBuilder, variant: int, full: bool) -> None:
    doc = seed.instance("JSONRPCResponse Object", variant, full)
    if "result" in doc:
        result = doc["result"]
        if result is None:
            assert (
                codec.decode_result(DeletePushConfig(task_id="t", config_id="c"), b"null") is None
            )
        else:
            decoded = codec.decode_result(SEND, msgspec.json.encode(result))
            assert isinstance(decoded, Task if result["kind"] == "task" else Message)
    if "error" in doc:
        err = codec.decode_error(doc["error"])
        assert isinstance(err, errors.TaskNotFound)
        assert err.message == doc["error"]["message"]
        assert err.data == doc["error"].get("data")


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (-32700, errors.ParseError),
        (-32600, errors.InvalidRequest),
        (-32601, errors.MethodNotFound),
        (-32602, errors.InvalidParams),
        (-32603, errors.InternalError),
        (-32001, errors.TaskNotFound),
        (-32002, errors.TaskNotCancelable),
        (-32003, errors.PushNotSupported),
        (-32004, errors.UnsupportedOperation),
        (-32005, errors.ContentTypeNotSupported),
        (-32006, errors.InvalidAgentResponse),
        (-32007, errors.ExtendedCardNotConfigured),
    ],
)
def test_error_codes_of_the_schema(code: int, cls: type[errors.A2AError]) -> None:
    # Each code as pinned by the v0.3.0 schema's *Error definitions.
    definitions = schema("v0.3.0")["definitions"]
    pinned = {
        d["properties"]["code"]["const"]
        for d in definitions.values()
        if "const" in d.get("properties", {}).get("code", {})
    }
    assert code in pinned
    err = codec.decode_error({"code": code, "message": "m", "data": [1]})
    assert type(err) is cls
    assert (err.message, err.data) == ("m", [1])
    assert get_codec("0.3").code_of(err) == code


def test_unknown_error_codes_stay_remote() -> None:
    err = codec.decode_error({"code": -32042, "message": "odd"})
    assert isinstance(err, errors.RemoteError)
    assert get_codec("0.3").code_of(err) == -32042
    assert isinstance(codec.decode_error("nonsense"), errors.InvalidAgentResponse)
    assert isinstance(codec.decode_error({"message": "no code"}), errors.InvalidAgentResponse)


# ------------------------------------------------------- v0.3.0 schema request builder


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema("v0.3.0")["definitions"][node["$ref"].rsplit("/", 1)[1]]
    return node


def build(node: dict[str, Any], variant: int, full: bool, name: str = "") -> Any:
    node = _resolve(node)
    if "anyOf" in node:
        return build(node["anyOf"][variant % len(node["anyOf"])], variant, full, name)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][variant % len(node["enum"])]
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object":
        props = node.get("properties", {})
        if not props:
            return {"k": "v"}
        keys = list(props) if full else node.get("required", [])
        return {k: build(props[k], variant, full, k) for k in keys}
    if kind == "array":
        items = _resolve(node["items"])
        count = len(items.get("anyOf", [None]))
        return [build(items, variant + i, full, name) for i in range(count)]
    if kind == "string":
        if name == "bytes":
            return "aGVsbG8gd29ybGQ="
        if name in ("url", "uri"):
            return f"https://example.com/{variant}"
        return f"{name}-{variant}"
    if kind == "integer":
        return 2
    if kind == "boolean":
        return variant % 2 == 0
    raise AssertionError(f"no builder for {node}")


REQUESTS = {
    "SendMessageRequest": SendMessage,
    "SendStreamingMessageRequest": SendMessage,
    "GetTaskRequest": GetTask,
    "CancelTaskRequest": CancelTask,
    "TaskResubscriptionRequest": SubscribeToTask,
    "SetTaskPushNotificationConfigRequest": SetPushConfig,
    "GetTaskPushNotificationConfigRequest": GetPushConfig,
    "ListTaskPushNotificationConfigRequest": ListPushConfigs,
    "DeleteTaskPushNotificationConfigRequest": DeletePushConfig,
    "GetAuthenticatedExtendedCardRequest": GetExtendedCard,
}
# Params fields the canonical call has no place for (request metadata of lookups).
DROPPED = {
    "tasks/get": {"metadata"},
    "tasks/resubscribe": {"metadata"},
    "tasks/pushNotificationConfig/get": {"metadata"},
    "tasks/pushNotificationConfig/list": {"metadata"},
    "tasks/pushNotificationConfig/delete": {"metadata"},
}


def test_every_request_of_the_schema_is_covered() -> None:
    names = {
        n
        for n, d in schema("v0.3.0")["definitions"].items()
        if "method" in d.get("properties", {}) and n.endswith("Request") and n != "JSONRPCRequest"
    }
    assert names == set(REQUESTS)
    assert {
        schema("v0.3.0")["definitions"][n]["properties"]["method"]["const"] for n in names
    } == set(codec.methods)


@pytest.mark.parametrize("definition", sorted(REQUESTS))
@pytest.mark.parametrize(("variant", "full"), [(v, f) for v in range(4) for f in (True, False)])
def test_schema_built_requests_decode(definition: str, variant: int, full: bool) -> None:
    request = build({"$ref": f"#/definitions/{definition}"}, variant, full)
    request.setdefault("id", 1)
    assert_valid(request, definition)
    method = request["method"]
    params = request.get("params")
    raw = msgspec.json.encode(params) if params is not None else None
    call = codec.decode_call(method, raw)
    assert type(call) is REQUESTS[definition]
    if params is None:
        return
    # encode(decode(y)) gives y back, less what the canonical call cannot hold.
    out_method, out = codec.encode_call(call)
    assert out_method == method
    expected = {k: v for k, v in params.items() if k not in DROPPED.get(method, set())}
    assert msgspec.json.decode(out) == expected
