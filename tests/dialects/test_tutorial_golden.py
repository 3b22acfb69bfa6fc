"""Golden inputs for the tutorial codec: every JSON example of seed 003.

The examples are read from the seed's text with the reader of the seed 002
tests (kept in ``tests/reference/extracted/seed-003-examples.json``): a request
(``message/send`` with a ``type``-tagged part and no ``messageId``), a success response (a Message with ``kind``, ``message_id`` and
``type`` parts) and an error response. What we write must keep every member the
seed shows, with its value, and also validate against the v0.3.0 JSON schema.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from interlingua.core import errors
from interlingua.core.calls import SendMessage
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.tutorial import TutorialCodec
from interlingua.core.model import Message, Role, TextPart
from tests.dialects.test_sam_golden import seed_examples
from tests.dialects.v0_3_strategies import assert_valid

codec = TutorialCodec()


@pytest.fixture(scope="module")
def examples() -> dict[str, Any]:
    docs = seed_examples("003")
    out: dict[str, Any] = {}
    for doc in docs:
        kind = "request" if "method" in doc else "error" if "error" in doc else "response"
        assert kind not in out
        out[kind] = doc
    return out


def assert_contains(seed: Any, ours: Any, path: str = "$") -> None:
    """Every member the seed shows is in ``ours`` with the same value."""
    if isinstance(seed, dict):
        assert isinstance(ours, dict), path
        for key, value in seed.items():
            assert key in ours, f"{path}.{key} missing from {sorted(ours)}"
            assert_contains(value, ours[key], f"{path}.{key}")
    elif isinstance(seed, list):
        assert isinstance(ours, list) and len(ours) == len(seed), path
        for i, (a, b) in enumerate(zip(seed, ours, strict=True)):
            assert_contains(a, b, f"{path}[{i}]")
    else:
        assert ours == seed, f"{path}: {ours!r} != {seed!r}"


def test_assert_contains_can_fail() -> None:
    with pytest.raises(AssertionError):
        assert_contains({"a": [{"type": "text"}]}, {"a": [{"kind": "text"}]})
    with pytest.raises(AssertionError):
        assert_contains({"a": 1}, {"a": "1"})


def test_seed_003_was_read(examples: dict[str, Any]) -> None:
    assert sorted(examples) == ["error", "request", "response"]
    assert examples["request"]["method"] == "message/send"


def test_request(examples: dict[str, Any]) -> None:
    request = examples["request"]
    assert request["method"] in codec.methods
    raw = msgspec.json.encode(request["params"])
    call = codec.decode_call(request["method"], raw)
    assert isinstance(call, SendMessage)
    assert call.message.role is Role.USER
    assert call.message.parts == [TextPart(text="ping")]
    assert call.config.blocking is True and not call.streaming
    # No messageId in the seed: one is made up, fresh for every request.
    again = codec.decode_call(request["method"], raw)
    assert isinstance(again, SendMessage)
    assert call.message.message_id and again.message.message_id
    assert call.message.message_id != again.message.message_id
    # Written back as a client would send it: the seed's members plus what v0.3 needs.
    method, params = codec.encode_call(call)
    assert method == "message/send"
    written = {"jsonrpc": "2.0", "id": request["id"], "method": method}
    written["params"] = msgspec.json.decode(params)
    assert_contains(request, written)
    assert_valid(written, "SendMessageRequest")
    assert codec.decode_call(method, params) == call


def test_seed_request_is_not_v03(examples: dict[str, Any]) -> None:
    # why the tutorial codec exists: the v0.3 schema refuses the seed's request
    with pytest.raises(AssertionError):
        assert_valid(examples["request"], "SendMessageRequest")


def test_response(examples: dict[str, Any]) -> None:
    response = examples["response"]
    result = response["result"]
    message = codec.decode_result(
        SendMessage(message=Message(message_id="x", role=Role.USER, parts=[TextPart(text="ping")])),
        msgspec.json.encode(result),
    )
    assert message == Message(
        message_id="fbuvdhb4ke6vq8hbva9qh9ha", role=Role.AGENT, parts=[TextPart(text="pong")]
    )
    assert codec.decode_stream_item(msgspec.json.encode(result)) == message
    # What our server answers: the seed's members and values, valid v0.3 as well.
    call = SendMessage(
        message=Message(message_id="x", role=Role.USER, parts=[TextPart(text="ping")])
    )
    ours = msgspec.json.decode(codec.encode_result(call, message))
    assert_contains(result, ours)
    assert ours["kind"] == "message"
    assert ours["message_id"] == ours["messageId"] == "fbuvdhb4ke6vq8hbva9qh9ha"
    assert ours["parts"] == [{"kind": "text", "type": "text", "text": "pong"}]
    whole = {"jsonrpc": "2.0", "id": response["id"], "result": ours}
    assert_valid(ours, "Message")
    assert_valid(whole, "SendMessageSuccessResponse")
    assert_valid(ours, "Message", "v0.2.6")
    with pytest.raises(AssertionError):  # the seed's own reply lacks messageId and part kinds
        assert_valid(result, "Message")


def test_error(examples: dict[str, Any]) -> None:
    error = examples["error"]["error"]
    decoded = codec.decode_error(error)
    assert type(decoded) is errors.InvalidRequest
    assert msgspec.json.decode(codec.encode_error(errors.InvalidRequest())) == error


def test_method_not_found_as_the_seed_code_sample_answers() -> None:
    # seed 003's handler answers {"code": -32601, "message": "Method not found"}
    with pytest.raises(errors.MethodNotFound) as info:
        codec.decode_call("tasks/get", b'{"id": "t"}')
    doc = msgspec.json.decode(codec.encode_error(errors.MethodNotFound()))
    assert doc == {"code": -32601, "message": "Method not found"}
    assert get_codec("tutorial").code_of(info.value) == -32601
