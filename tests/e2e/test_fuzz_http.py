"""Whatever arrives, the server answers with JSON-RPC (never a 5xx, a -32603 or a traceback).

Bodies and headers are mutated in the ways clients and attackers get wrong:
arbitrary JSON, invalid UTF-8, non-ASCII digits and numbers too big for any
field, with authentication off and on."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interlingua import Agent, create_app
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.hypothesis_budget import examples

from .sse_client import rpc, v1_message

METHODS = ["SendMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
           "message/send", "tasks/get", "tasks/cancel", "tasks/send", "tasks/send-streaming",
           "tasks/pushNotification/set", "tasks/pushNotificationConfig/set",
           "CreateTaskPushNotificationConfig", "GetExtendedAgentCard", "task/subscribe",
           "tasks/resubscribe", "nope"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=12,
)


async def _echo(text: str) -> str:
    return text


@pytest.fixture(scope="module")
def app() -> Iterator[Any]:
    application = create_app(Agent("Fuzz", "Fuzzed", _echo, streaming=False))
    yield application


KEY = "fuzz-key-" + "k" * 24


@pytest.fixture(scope="module")
def authed_app() -> Iterator[Any]:
    yield create_app(Agent("Fuzz", "Fuzzed", _echo, streaming=False),
                     auth=AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})}))


def post(app: Any, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return await c.post("/", content=body, headers=headers)

    return asyncio.run(go())


def check(r: httpx.Response, *, refused: bool = False) -> None:
    assert r.status_code in ((401,) if refused else (200, 204, 413)), r.text
    if r.status_code != 204:
        doc = r.json()
        answers = doc if isinstance(doc, list) else [doc]
        for a in answers:
            assert a["jsonrpc"] == "2.0" and ("result" in a) != ("error" in a)
            if "error" in a:
                assert isinstance(a["error"]["code"], int) and a["error"]["message"]
                assert "Traceback" not in a["error"]["message"]
                # an unexpected failure: something a client sent was not handled
                assert a["error"]["code"] != -32603, a


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(METHODS), json_values, st.sampled_from(["1.0", "0.3", "0.1", "x", ""]))
def test_any_params_to_any_method(app: Any, method: str, params: Any, version: str) -> None:
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    check(post(app, body, {"A2A-Version": version} if version else {}))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(json_values)
def test_any_json_document(app: Any, doc: Any) -> None:
    check(post(app, msgspec.json.encode(doc), {}))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutated_valid_requests(app: Any, data: st.DataObject) -> None:
    good = rpc("SendMessage", {"message": v1_message("hi")})
    doc: Any = msgspec.json.decode(msgspec.json.encode(good))
    # replace one member somewhere in the request with an arbitrary value
    path: list[Any] = []
    node = doc
    while isinstance(node, (dict, list)) and node and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(node) if isinstance(node, dict)
                                        else list(range(len(node)))))
        path.append(key)
        node = node[key]
    if path:
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = data.draw(json_values)
    check(post(app, msgspec.json.encode(doc), {"A2A-Version": "1.0"}))


@pytest.mark.parametrize("where", ["params", "body", "batch"])
def test_deeply_nested_json_is_a_clear_error(app: Any, where: str) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    if where == "params":
        body = b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":' + deep + b"}}"
    elif where == "body":
        body = deep
    else:
        body = b'[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":' + deep + b"}]"
    check(post(app, body, {"A2A-Version": "1.0"}))


# ------------------------------------------------ bytes and header values

#: what a header value or a number in the body may look like to a careless or hostile client
odd_numbers = st.sampled_from([
    "\u00b2", "\u0661", "\uff11", "1.\u00b2", "\u00bd", "1e999", "-1", "1.0.0.0", "",
    "9" * 5000, "1." + "9" * 5000, "0" * 5000 + "1", "99999999999999999999", "1_0",
]) | st.text(alphabet="0123456789.\u00b2\u0661 ", max_size=12)

GOOD_BODIES = [
    rpc("SendMessage", {"message": v1_message("hi")}),
    rpc("GetTask", {"id": "t", "historyLength": 2}),
    rpc("SubscribeToTask", {"id": "t"}),
    rpc("message/send", {"message": {"kind": "message", "messageId": "m", "role": "user",
                                      "parts": [{"kind": "text", "text": "hi"}]}}),
    rpc("tasks/get", {"id": "t", "historyLength": 1}),
    rpc("tasks/send", {"id": "t", "message": {"role": "user",
                                              "parts": [{"type": "text", "text": "hi"}]}}),
]


def _headers(version: str | None, last_event_id: str | None, key: bool) -> dict[str, bytes]:
    headers: dict[str, bytes] = {}
    if version is not None:
        headers["A2A-Version"] = version.encode("utf-8")
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id.encode("utf-8")
    if key:
        headers["X-API-Key"] = KEY.encode()
    return headers


def _post_any(app: Any, body: bytes, headers: dict[str, bytes]) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return await c.post("/", content=body, headers=headers)

    return asyncio.run(go())


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(GOOD_BODIES), st.data(),
       st.binary(min_size=1, max_size=4).filter(lambda b: not _is_utf8(b)))
def test_invalid_utf8_anywhere(app: Any, authed_app: Any, good: dict[str, Any],
                               data: st.DataObject, junk: bytes) -> None:
    body = msgspec.json.encode(good)
    at = data.draw(st.integers(0, len(body)))
    bad = body[:at] + junk + body[at:]
    check(_post_any(app, bad, _headers("1.0", None, key=False)))
    check(_post_any(authed_app, bad, _headers("1.0", None, key=True)))
    check(_post_any(authed_app, bad, _headers("1.0", None, key=False)), refused=True)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(GOOD_BODIES), st.none() | odd_numbers, st.none() | odd_numbers)
def test_odd_version_and_event_id_headers(app: Any, authed_app: Any, good: dict[str, Any],
                                          version: str | None, last_event_id: str | None) -> None:
    body = msgspec.json.encode(good)
    check(_post_any(app, body, _headers(version, last_event_id, key=False)))
    check(_post_any(authed_app, body, _headers(version, last_event_id, key=True)))
    check(_post_any(authed_app, body, _headers(version, last_event_id, key=False)), refused=True)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(GOOD_BODIES), st.data(),
       st.sampled_from(["9" * 5000, "-" + "9" * 400, "1e400", "18446744073709551616",
                        "9223372036854775808", "-9223372036854775809", "1.5", "0.0000001"]))
def test_oversized_numbers_in_params(app: Any, good: dict[str, Any], data: st.DataObject,
                                     number: str) -> None:
    doc: Any = msgspec.json.decode(msgspec.json.encode(good))
    params = doc["params"]
    key = data.draw(st.sampled_from(["historyLength", "id", "pageSize", "message"]))
    params[key] = "@NUMBER@"
    body = msgspec.json.encode(doc).replace(b'"@NUMBER@"', number.encode())
    check(post(app, body, {"A2A-Version": data.draw(st.sampled_from(["1.0", "0.3", "0.1"]))}))


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
