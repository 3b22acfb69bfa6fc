"""Whatever arrives, the server answers with JSON-RPC (never a 500 or a traceback)."""

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


def post(app: Any, body: bytes, headers: dict[str, str]) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return await c.post("/", content=body, headers=headers)

    return asyncio.run(go())


def check(r: httpx.Response) -> None:
    assert r.status_code in (200, 204, 413), r.text
    if r.status_code != 204:
        doc = r.json()
        answers = doc if isinstance(doc, list) else [doc]
        for a in answers:
            assert a["jsonrpc"] == "2.0" and ("result" in a) != ("error" in a)
            if "error" in a:
                assert isinstance(a["error"]["code"], int) and a["error"]["message"]
                assert "Traceback" not in a["error"]["message"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(METHODS), json_values, st.sampled_from(["1.0", "0.3", "0.1", "x", ""]))
def test_any_params_to_any_method(app: Any, method: str, params: Any, version: str) -> None:
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    check(post(app, body, {"A2A-Version": version} if version else {}))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(json_values)
def test_any_json_document(app: Any, doc: Any) -> None:
    check(post(app, msgspec.json.encode(doc), {}))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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
