"""Whatever arrives on an HTTP+JSON route, the answer is the binding's own error body or
a result: never a 5xx, an internal error or a traceback."""

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
from tests.hypothesis_budget import examples

ROUTES = [
    ("POST", "/message:send"), ("POST", "/message:stream"), ("GET", "/tasks"),
    ("GET", "/tasks/t"), ("POST", "/tasks/t:cancel"), ("GET", "/tasks/t:subscribe"),
    ("POST", "/tasks/t/pushNotificationConfigs"), ("GET", "/tasks/t/pushNotificationConfigs"),
    ("GET", "/tasks/t/pushNotificationConfigs/c"), ("DELETE", "/tasks/t/pushNotificationConfigs/c"),
    ("GET", "/extendedAgentCard"), ("POST", "/acme/message:send"), ("GET", "/acme/tasks"),
    ("POST", "/v1/message:send"), ("POST", "/v1/message:stream"), ("GET", "/v1/tasks/t"),
    ("POST", "/v1/tasks/t:cancel"), ("POST", "/v1/tasks/t:subscribe"),
    ("POST", "/v1/tasks/t/pushNotificationConfigs"), ("POST", "/v1/task/t/pushNotificationConfigs"),
    ("GET", "/v1/tasks/t/pushNotificationConfigs/c"), ("GET", "/v1/card"),
    ("PUT", "/tasks/t"), ("GET", "/no/such/route"), ("PATCH", "/v1/message:send"),
]
QUERY_NAMES = ["historyLength", "pageSize", "pageToken", "status", "contextId",
               "includeArtifacts", "statusTimestampAfter", "A2A-Version", "history_length"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=12,
)
query_values = st.text(max_size=12) | st.sampled_from(
    ["1", "-1", "0", "true", "99999999999999999999", "\u00b2", "TASK_STATE_WORKING", "1e3"])


async def _echo(text: str) -> str:
    return text


@pytest.fixture(scope="module")
def app() -> Iterator[Any]:
    yield create_app(Agent("Fuzz", "Fuzzed", _echo, streaming=False))


def request(app: Any, method: str, path: str, body: bytes | None,
            params: dict[str, str], headers: dict[str, str]) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
            return await c.request(method, path, content=body, params=params, headers=headers)

    return asyncio.run(go())


def check(r: httpx.Response, path: str) -> None:
    # 501: what v0.3 answers for an operation the agent does not offer
    assert r.status_code < 500 or (r.status_code == 501 and path.startswith("/v1/")), r.text
    if r.status_code == 200:
        return
    doc = r.json()
    assert "Traceback" not in r.text
    if path.startswith("/v1/") and "error" not in doc:
        assert isinstance(doc["message"], str) and doc["message"]
    else:
        err = doc["error"]
        assert err["code"] == r.status_code and err["message"]
        assert err["details"][0]["domain"] == "a2a-protocol.org"
        assert err["details"][0]["reason"] != "INTERNAL_ERROR", doc


@settings(max_examples=examples(200), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(ROUTES), st.one_of(st.none(), json_values.map(msgspec.json.encode),
                                          st.binary(max_size=20)),
       st.dictionaries(st.sampled_from(QUERY_NAMES), query_values, max_size=3),
       st.sampled_from(["1.0", "0.3", "x", ""]))
def test_anything_on_any_route(app: Any, route: tuple[str, str], body: bytes | None,
                               params: dict[str, str], version: str) -> None:
    method, path = route
    headers = {"Content-Type": "application/json"}
    if version:
        headers["A2A-Version"] = version
    check(request(app, method, path, body, params, headers), path)


@pytest.mark.parametrize("path", ["/message:send", "/v1/message:send", "/tasks/t:cancel",
                                  "/v1/tasks/t/pushNotificationConfigs"])
def test_deeply_nested_json(app: Any, path: str) -> None:
    deep = b'{"message":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    check(request(app, "POST", path, deep, {}, {"Content-Type": "application/json"}), path)
