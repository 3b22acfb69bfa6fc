"""HTTP+JSON over real HTTP: what only this binding has (routes, verbs, query
parameters, content types, tenants in the path, the v0.3 routes as the v0.3 SDK's
REST client calls them), and bad input answered with a clear error, never a 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Agent
from interlingua.core.parts import new_id
from interlingua.server.auth import APIKeyAuth, AuthConfig
from interlingua.server.push.settings import PushSettings
from tests.live import live_agent

from .test_parity import AGENT

KEY = {"X-API-Key": "alice-" + "a" * 20}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    push = PushSettings(allow_http=True, allow_private_networks=True)
    with live_agent(AGENT, push=push, max_body_bytes=4096) as u:
        yield u


@pytest.fixture(scope="module")
def tenanted() -> Iterator[str]:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY["X-API-Key"]})},
                      tenant_header="X-Tenant")
    with live_agent(AGENT, auth=auth) as u:
        yield u


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as cl:
        yield cl


def v1_send(text: str = "1", **extra: Any) -> dict[str, Any]:
    return {"message": {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": text}]},
            **extra}


def v03_send(text: str = "1") -> dict[str, Any]:
    return {"message": {"messageId": new_id(), "role": "ROLE_USER", "content": [{"text": text}]},
            "configuration": {"blocking": True}}


def status_of(resp: httpx.Response) -> tuple[int, str]:
    err = resp.json()["error"]
    assert err["code"] == resp.status_code
    return resp.status_code, err["details"][0]["reason"]


# ---------------------------------------------------------------------- v1.0


def test_content_types(url: str, http: httpx.Client) -> None:
    for ct in ("application/a2a+json", "application/json", "application/json; charset=utf-8"):
        r = http.post(url + "/message:send", json=v1_send(), headers={"Content-Type": ct})
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/a2a+json"
    r = http.post(url + "/message:send", content=b"{}", headers={"Content-Type": "text/xml"})
    assert status_of(r) == (400, "CONTENT_TYPE_NOT_SUPPORTED")


@pytest.mark.parametrize("media", ["image/png", "text/plain",
                                   "application/x-www-form-urlencoded", "text/json"])
def test_a_body_of_another_type_is_refused_by_jsonrpc_as_by_rest(
        url: str, http: httpx.Client, media: str) -> None:
    """One rule on both HTTP bindings: a body sent as another type than JSON is
    ContentTypeNotSupported, in the caller's dialect (JSON-RPC read it anyway)."""
    rest = http.post(url + "/message:send", json=v1_send(), headers={"Content-Type": media})
    assert rest.status_code == 400 and media in rest.json()["error"]["message"], rest.text
    v03 = {"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": new_id(), "role": "user",
        "parts": [{"kind": "text", "text": "1"}]}}}
    v1 = {"jsonrpc": "2.0", "id": 8, "method": "SendMessage", "params": v1_send()}
    for body, extra in ((v03, {}), (v1, {"A2A-Version": "1.0"})):
        r = http.post(url, content=msgspec.json.encode(body),
                      headers={"Content-Type": media, **extra})
        assert r.status_code == 415, r.text
        answer = r.json()
        assert answer["id"] == body["id"] and answer["error"]["code"] == -32005, answer
        assert f"Content-Type '{media}' is not supported; send application/json" in \
            answer["error"]["message"]
    for media_ok in ("application/json; charset=utf-8", "application/a2a+json",
                     "application/vnd.x+json"):
        r = http.post(url, content=msgspec.json.encode(v03), headers={"Content-Type": media_ok})
        assert r.status_code == 200 and "result" in r.json(), r.text


def test_unknown_routes_and_verbs(url: str, http: httpx.Client) -> None:
    r = http.get(url + "/no/such/route")
    assert status_of(r) == (404, "METHOD_NOT_FOUND")
    r = http.get(url + "/message:send")
    assert status_of(r) == (405, "METHOD_NOT_ALLOWED")
    assert r.headers["allow"] == "POST"
    r = http.delete(url + "/tasks/x")
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD"
    r = http.put(url + "/")  # the JSON-RPC URL takes POST only
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    # python-a2a's JSON-RPC URL is POST-only too: a GET there is no GetTask of "send"
    for alias in ("/tasks/send", "/tasks/sendSubscribe"):
        r = http.get(url + alias)
        assert status_of(r) == (405, "METHOD_NOT_ALLOWED"), r.text
        assert r.headers["allow"] == "POST"
        assert r.json()["error"]["message"] == f"Method not allowed: GET '{alias}' (allowed: POST)"
    assert http.delete(url + "/tasks/send").headers["allow"] == "POST"
    posted = http.post(url + "/tasks/send", json={
        "jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "send"}})
    assert posted.json()["error"]["code"] == -32001, posted.text  # JSON-RPC, as before
    # the other routes of the app are untouched
    assert http.get(url + "/healthz").status_code == 200
    assert http.get(url + "/.well-known/agent-card.json").status_code == 200


@pytest.mark.parametrize(("query", "bad"), [
    ("pageSize=ten", "pageSize"), ("historyLength=-", "historyLength"),
    ("includeArtifacts=maybe", "includeArtifacts"), ("status=TASK_STATE_NAPPING", "status"),
    ("pageSize=0", "pageSize"), ("statusTimestampAfter=yesterday", "statusTimestampAfter"),
    ("historyLength=-3", "historyLength"), ("pageSize=99999999999999999", "pageSize"),
    ("pageSize=--5", "pageSize"), ("historyLength=--1", "historyLength"),
    ("statusTimestampAfter=2020-13-45T99:99:99.999Z", "statusTimestampAfter"),
    ("statusTimestampAfter=0001-01-01T00:00:00%2B01:00", "statusTimestampAfter"),
])
def test_bad_query_values(url: str, http: httpx.Client, query: str, bad: str) -> None:
    r = http.get(url + "/tasks?" + query)
    assert status_of(r) == (400, "INVALID_PARAMS"), r.text
    assert bad in r.json()["error"]["message"]


def test_query_parameters(url: str, http: httpx.Client) -> None:
    task = http.post(url + "/message:send", json=v1_send("2")).json()["task"]
    ctx = task["contextId"]
    r = http.get(url + "/tasks", params={"contextId": ctx, "status": "TASK_STATE_COMPLETED",
                                         "includeArtifacts": "true", "historyLength": 0,
                                         "pageSize": 1, "unknownParameter": "ignored"})
    assert r.status_code == 200, r.text
    page = r.json()
    assert [t["id"] for t in page["tasks"]] == [task["id"]]
    assert page["tasks"][0]["artifacts"] and "history" not in page["tasks"][0]
    assert page["pageSize"] == 1 and page["nextPageToken"] == ""
    # snake_case names too, as ProtoJSON readers take them
    r = http.get(url + "/tasks", params={"context_id": ctx, "page_size": 5})
    assert [t["id"] for t in r.json()["tasks"]] == [task["id"]]
    r = http.get(url + f"/tasks/{task['id']}", params={"historyLength": 1})
    assert len(r.json()["history"]) == 1


@pytest.mark.parametrize(("body", "reason"), [
    (b"{not json", "PARSE_ERROR"),  # no JSON at all: as JSON-RPC's -32700
    (b"[]", "INVALID_PARAMS"),
    (b"", "INVALID_PARAMS"),
    (b'{"message": {"role": "ROLE_USER", "parts": []}}', "INVALID_PARAMS"),
    (b'{"message": 5}', "INVALID_PARAMS"),
    (b"\xff\xfe", "PARSE_ERROR"),  # not UTF-8
])
def test_malformed_bodies(url: str, http: httpx.Client, body: bytes, reason: str) -> None:
    r = http.post(url + "/message:send", content=body,
                  headers={"Content-Type": "application/json"})
    assert status_of(r) == (400, reason), r.text


def test_malformed_bodies_elsewhere(url: str, http: httpx.Client) -> None:
    for path in ("/tasks/x:cancel", "/tasks/x/pushNotificationConfigs"):
        r = http.post(url + path, content=b"{nope", headers={"Content-Type": "application/json"})
        assert status_of(r)[0] == 400, r.text
    r = http.post(url + "/tasks/x:cancel", json={"id": "y"})
    assert status_of(r) == (400, "INVALID_PARAMS")  # the path's id and the body's disagree


def test_too_large(url: str, http: httpx.Client) -> None:
    r = http.post(url + "/message:send", json=v1_send("x" * 5000))
    assert r.status_code == 413
    r = http.post(url + "/v1/message:send", json=v03_send("x" * 5000))
    assert r.status_code == 413 and "message" in r.json()


def test_a_v1_base_path_with_the_v1_header(url: str, http: httpx.Client) -> None:
    r = http.post(url + "/v1/message:send", json=v1_send(), headers={"A2A-Version": "1.0"})
    assert r.status_code == 200 and r.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_version_header_is_checked(url: str, http: httpx.Client) -> None:
    r = http.post(url + "/message:send", json=v1_send(), headers={"A2A-Version": "7.0"})
    assert status_of(r) == (400, "VERSION_NOT_SUPPORTED")


def test_sse_heartbeat_free_stream_has_event_ids(url: str, http: httpx.Client) -> None:
    with http.stream("POST", url + "/message:stream", json=v1_send("2")) as s:
        text = s.read().decode()
    assert s.headers["content-type"].startswith("text/event-stream")
    ids = [int(line[4:]) for line in text.splitlines() if line.startswith("id: ")]
    assert ids == list(range(1, len(ids) + 1))


# -------------------------------------------------------------------- tenants


def test_path_tenant_and_header_must_agree(tenanted: str, http: httpx.Client) -> None:
    r = http.post(tenanted + "/acme/message:send", json=v1_send(),
                  headers={**KEY, "X-Tenant": "globex"})
    assert status_of(r) == (400, "INVALID_PARAMS")
    r = http.post(tenanted + "/acme/message:send", json=v1_send(tenant="globex"), headers=KEY)
    assert status_of(r) == (400, "INVALID_PARAMS")
    r = http.post(tenanted + "/acme/message:send", json=v1_send(tenant="acme"),
                  headers={**KEY, "X-Tenant": "acme"})
    assert r.status_code == 200, r.text
    task_id = r.json()["task"]["id"]
    # the header alone names the same tenant as the path did
    r = http.get(tenanted + f"/tasks/{task_id}", headers={**KEY, "X-Tenant": "acme"})
    assert r.status_code == 200
    assert http.get(tenanted + f"/tasks/{task_id}", headers=KEY).status_code == 404
    # refused before routing when not authenticated
    assert http.get(tenanted + f"/acme/tasks/{task_id}").status_code == 401


def test_a_query_tenant_is_the_requests_tenant(tenanted: str, http: httpx.Client) -> None:
    # the operations without a body take the request's tenant as a query parameter
    r = http.post(tenanted + "/acme/message:send", json=v1_send(), headers=KEY)
    assert r.status_code == 200, r.text
    task_id = r.json()["task"]["id"]
    acme = {"tenant": "acme"}
    assert http.get(tenanted + f"/tasks/{task_id}", params=acme, headers=KEY).status_code == 200
    listed = http.get(tenanted + "/tasks", params=acme, headers=KEY).json()["tasks"]
    assert task_id in [t["id"] for t in listed]
    listed = http.get(tenanted + "/tasks", headers=KEY).json()["tasks"]
    assert task_id not in [t["id"] for t in listed]
    configs = f"/tasks/{task_id}/pushNotificationConfigs"
    assert http.get(tenanted + configs, params=acme, headers=KEY).status_code == 200
    assert http.get(tenanted + configs, headers=KEY).status_code == 404
    for path, method in [(configs + "/c1", "GET"), (configs + "/c1", "DELETE"),
                         (f"/tasks/{task_id}:subscribe", "GET")]:
        in_path = http.request(method, tenanted + "/acme" + path, headers=KEY)
        in_query = http.request(method, tenanted + path, params=acme, headers=KEY)
        assert in_query.status_code == in_path.status_code, (path, in_query.text)
        assert in_query.text == in_path.text
        assert "Task not found" not in in_query.text
    # a query tenant other than the path's, or the header's, is refused
    r = http.get(tenanted + f"/acme/tasks/{task_id}", params={"tenant": "globex"}, headers=KEY)
    assert status_of(r) == (400, "INVALID_PARAMS")
    assert "globex" in r.json()["error"]["message"]
    r = http.get(tenanted + f"/tasks/{task_id}", params={"tenant": "globex"},
                 headers={**KEY, "X-Tenant": "acme"})
    assert status_of(r) == (400, "INVALID_PARAMS")


# ----------------------------------------------------------------------- v0.3


def test_v03_routes_as_the_v03_sdk_calls_them(url: str, http: httpx.Client) -> None:
    """Bodies and paths as the v0.3 SDK's REST client builds them."""
    sent = http.post(url + "/v1/message:send", json=v03_send("2"))
    assert sent.status_code == 200, sent.text
    assert sent.headers["content-type"] == "application/json"
    task = sent.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["content"] == [{"text": "done"}]
    assert "kind" not in task
    tid = task["id"]
    got = http.get(url + f"/v1/tasks/{tid}", params={"historyLength": "1"})
    assert got.status_code == 200 and len(got.json()["history"]) == 1
    slow = http.post(url + "/v1/message:send", json={
        **v03_send("slow"), "configuration": {"blocking": False}}).json()["task"]
    sid = slow["id"]
    create = {"parent": f"tasks/{sid}", "configId": "c1", "config": {
        "name": f"tasks/{sid}/pushNotificationConfigs/c1",
        "pushNotificationConfig": {"id": "c1", "url": "http://127.0.0.1:9/hook"}}}
    made = http.post(url + f"/v1/tasks/{sid}/pushNotificationConfigs", json=create)
    assert made.status_code == 200, made.text
    assert made.json() == {"name": f"tasks/{sid}/pushNotificationConfigs/c1",
                           "pushNotificationConfig": {"id": "c1",
                                                      "url": "http://127.0.0.1:9/hook"}}
    # the proto's own spelling of the create route, with the proto's body
    other = http.post(url + f"/v1/task/{sid}/pushNotificationConfigs", json={
        "name": f"tasks/{sid}/pushNotificationConfigs/c2",
        "pushNotificationConfig": {"url": "http://127.0.0.1:9/other"}})
    assert other.status_code == 200, other.text
    got_config = http.get(url + f"/v1/tasks/{sid}/pushNotificationConfigs/c1")
    assert got_config.json() == made.json()
    listed = http.get(url + f"/v1/tasks/{sid}/pushNotificationConfigs").json()
    assert sorted(c["pushNotificationConfig"]["id"] for c in listed["configs"]) == ["c1", "c2"]
    assert http.delete(url + f"/v1/tasks/{sid}/pushNotificationConfigs/c2").json() == {}
    canceled = http.post(url + f"/v1/tasks/{sid}:cancel", json={"name": f"tasks/{sid}"})
    assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELLED"
    again = http.post(url + f"/v1/tasks/{sid}:cancel")
    assert again.status_code == 409
    assert again.json()["type"] == "TaskNotCancelableError" and again.json()["message"]
    assert again.json()["code"] == -32002
    card = http.get(url + "/v1/card").json()
    assert card["name"] == "Worker" and card["protocolVersion"] == "0.3.0"


def test_v03_errors(url: str, http: httpx.Client) -> None:
    r = http.get(url + "/v1/tasks/nope")
    # the type for the Python SDK's reader, the v0.3 JSON-RPC code for the JavaScript SDK's
    assert r.status_code == 404
    assert r.json() == {"code": -32001, "message": r.json()["message"],
                        "type": "TaskNotFoundError"}
    r = http.post(url + "/v1/message:send", content=b"{nope",
                  headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    r = http.post(url + "/v1/message:send", json={"message": {"messageId": "m"}})
    assert r.status_code == 422
    r = http.post(url + "/v1/message:send", content=b"x", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    r = http.get(url + "/v1/tasks")  # v0.3 has no task listing
    assert r.status_code == 404 and r.json()["type"] == "MethodNotFoundError"
    r = http.get(url + "/v1/message:send")
    assert r.status_code == 405


def test_v03_stream_and_resubscribe(url: str, http: httpx.Client) -> None:
    with http.stream("POST", url + "/v1/message:stream", json=v03_send("2")) as s:
        text = s.read().decode()
    assert '"statusUpdate"' in text and '"final":true' in text and '"artifactUpdate"' in text
    task_id = text.split('"task":{"id":"', 1)[1].split('"', 1)[0]
    # subscribe on POST as the spec's prose says, to a finished task: the task as it ended
    with http.stream("POST", url + f"/v1/tasks/{task_id}:subscribe") as s:
        assert s.status_code == 200
        assert "TASK_STATE_COMPLETED" in s.read().decode()


def test_no_push_when_the_agent_has_none(http: httpx.Client) -> None:
    quiet = Agent("Quiet", "No push.", AGENT.executor)
    with live_agent(quiet) as u:
        tid = http.post(u + "/message:send", json=v1_send()).json()["task"]["id"]
        body = {"url": "https://hook.example/x"}
        r = http.post(u + f"/tasks/{tid}/pushNotificationConfigs", json=body)
        assert status_of(r) == (400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
        r = http.post(u + f"/v1/tasks/{tid}/pushNotificationConfigs",
                      json={"pushNotificationConfig": body})
        assert r.status_code == 501


# ----------------------------------------------------------------------- card


def test_card_lists_http_json_and_answers_per_version(url: str, http: httpx.Client) -> None:
    hybrid = http.get(url + "/.well-known/agent-card.json")
    assert "a2a-version" in hybrid.headers["vary"].lower()
    doc = hybrid.json()
    assert {(i["protocolBinding"], i["protocolVersion"], i["url"])
            for i in doc["supportedInterfaces"]} == {
        ("JSONRPC", "1.0", url + "/"), ("HTTP+JSON", "1.0", url),
        ("JSONRPC", "0.3", url + "/"), ("HTTP+JSON", "0.3", url)}
    assert {"url": url, "transport": "HTTP+JSON"} in doc["additionalInterfaces"]
    assert doc["url"] == url + "/" and doc["preferredTransport"] == "JSONRPC"
    v1 = http.get(url + "/.well-known/agent-card.json", headers={"A2A-Version": "1.0"})
    card = v1.json()
    assert not {"url", "preferredTransport", "protocolVersion", "additionalInterfaces"} & set(card)
    assert card["supportedInterfaces"] == doc["supportedInterfaces"]
    assert v1.headers["etag"] != hybrid.headers["etag"]
    # each validates against its own ETag
    again = http.get(url + "/.well-known/agent-card.json",
                     headers={"A2A-Version": "1.0", "If-None-Match": v1.headers["etag"]})
    assert again.status_code == 304
    stale = http.get(url + "/.well-known/agent-card.json",
                     headers={"If-None-Match": v1.headers["etag"]})
    assert stale.status_code == 200 and stale.content == hybrid.content
    for old in ("0.3", "0.2"):
        legacy = http.get(url + "/.well-known/agent-card.json", headers={"A2A-Version": old})
        assert legacy.content == hybrid.content


def test_streams_send_heartbeats_while_idle(http: httpx.Client) -> None:
    from interlingua.server.engine import EngineConfig

    with live_agent(AGENT, engine_config=EngineConfig(heartbeat_interval=0.2)) as u:
        task = http.post(u + "/message:send", json={**v1_send("slow"), "configuration": {
            "returnImmediately": True}}).json()["task"]
        seen = b""
        with http.stream("GET", u + f"/tasks/{task['id']}:subscribe") as s:
            for chunk in s.iter_raw():
                seen += chunk
                if seen.count(b": keep-alive") >= 2:
                    break
        assert b"id: " in seen and seen.count(b": keep-alive") >= 2
        http.post(u + f"/tasks/{task['id']}:cancel")


@pytest.mark.parametrize("prefix", ["", "/v1"])
def test_head_answers_as_get_does_without_its_body(url: str, http: httpx.Client,
                                                    prefix: str) -> None:
    """HEAD on a route that takes GET runs the GET and sends its head alone (RFC 9110
    §9.3.2), as the agent card's path does; a GET that opens a stream takes no HEAD."""
    task = http.post(url + "/message:send", json={"message": {
        "messageId": "head-1" + prefix, "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
    task_id = task.json()["task"]["id"]
    for path in (f"{prefix}/tasks/{task_id}", f"{prefix}/tasks/no-such-task"):
        got, head = http.get(url + path), http.head(url + path)
        assert head.status_code == got.status_code, (path, head.status_code)
        assert head.content == b""
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.headers["content-length"] == str(len(got.content))
    if not prefix:
        assert http.head(url + "/tasks").status_code == 200
    r = http.head(url + f"{prefix}/tasks/{task_id}:subscribe")
    assert r.status_code == 405 and r.headers["allow"] == "GET, POST"


def test_a_body_of_no_json_is_a_parse_error_and_a_byte_order_mark_is_read_past(
        url: str, http: httpx.Client) -> None:
    """As on JSON-RPC: a body that is not JSON at all is a parse error (v1.0: reason
    PARSE_ERROR; v0.3: JSONParseError), not params of the wrong shape; one that opens
    with a byte order mark (RFC 8259 §8.1) is read without it."""
    for body in (b"{", b"nul", b"\xef\xbb\xbf" * 2 + b"{}"):
        r = http.post(url + "/message:send", content=body,
                      headers={"content-type": "application/json"})
        assert status_of(r) == (400, "PARSE_ERROR"), r.text
        assert r.json()["error"]["message"].startswith("Parse error: the body is not valid JSON")
        r = http.post(url + "/v1/message:send", content=body,
                      headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["type"] == "JSONParseError", r.text
    # JSON of the wrong shape stays invalid params
    r = http.post(url + "/message:send", json={"message": 5})
    assert status_of(r) == (400, "INVALID_PARAMS")
    bom = b"\xef\xbb\xbf"
    sent = http.post(url + "/message:send", content=bom + msgspec.json.encode({"message": {
        "messageId": "bom-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
        headers={"content-type": "application/json"})
    assert sent.status_code == 200 and sent.json()["task"]["status"]["state"] == \
        "TASK_STATE_COMPLETED", sent.text
    old = http.post(url + "/v1/message:send", content=bom + msgspec.json.encode({"message": {
        "messageId": "bom-2", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}}),
        headers={"content-type": "application/json"})
    assert old.status_code == 200, old.text
    task_id = sent.json()["task"]["id"]
    canceled = http.post(url + f"/tasks/{task_id}:cancel", content=bom + b"{}",
                         headers={"content-type": "application/json"})
    assert status_of(canceled) == (400, "TASK_NOT_CANCELABLE"), canceled.text



def test_an_escaped_task_id_is_read_under_a_mount(http: httpx.Client) -> None:
    """Below ``/agents/{name}/`` the path's escapes are kept for the route as at the root:
    a task id holding "/" (a v0.1 client's) is one id there too."""
    agents = [Agent("One", "d", AGENT.executor), Agent("Two", "d", AGENT.executor)]
    with live_agent(agents) as base:
        made = http.post(base + "/agents/Two/", json={
            "jsonrpc": "2.0", "id": 1, "method": "tasks/send", "params": {
                "id": "mine/1%41", "message": {"role": "user",
                                               "parts": [{"type": "text", "text": "1"}]}}})
        assert made.json()["result"]["id"] == "mine/1%41", made.text
        for path in ("/agents/Two/tasks/mine%2F1%2541", "/agents/Two/v1/tasks/mine%2F1%2541"):
            got = http.get(base + path)
            assert got.status_code == 200 and got.json()["id"] == "mine/1%41", got.text
        # a mount's own name escaped is still the mount
        got = http.get(base + "/agents/%54wo/tasks/mine%2F1%2541")
        assert got.status_code == 200 and got.json()["id"] == "mine/1%41", got.text


def test_a_body_that_names_another_task_than_the_path_is_refused(
        url: str, http: httpx.Client) -> None:
    """An id in the path and one in the body must agree (docs/rest.md), on every route
    that reads a body: v1.0's subscribe and v0.3's cancel and subscribe went by the
    path and passed over a body naming another task (v0.3's cancel canceled it)."""
    def slow() -> str:
        sent = http.post(url + "/v1/message:send", json={
            **v03_send("slow"), "configuration": {"blocking": False}})
        return str(sent.json()["task"]["id"])

    a, b = slow(), slow()
    for route, body, expected in (
            (f"/tasks/{a}:subscribe", {"id": b}, (400, "INVALID_PARAMS")),
            (f"/v1/tasks/{a}:cancel", {"name": f"tasks/{b}"}, 422),
            (f"/v1/tasks/{a}:cancel", {"id": b}, 422),
            (f"/v1/tasks/{a}:subscribe", {"name": f"tasks/{b}"}, 422)):
        r = http.post(url + route, json=body)
        got = status_of(r) if isinstance(expected, tuple) else r.status_code
        assert got == expected, (route, body, r.text)
        assert "is not the path's" in r.text, r.text
    for task_id in (a, b):
        state = http.get(url + f"/tasks/{task_id}").json()["status"]["state"]
        assert state != "TASK_STATE_CANCELED", (task_id, state)
    taken = http.post(url + f"/v1/tasks/{a}:cancel", json={"name": f"tasks/{a}", "id": a})
    assert taken.json()["status"]["state"] == "TASK_STATE_CANCELLED", taken.text


INTEGER_TEXTS = ["2", "-1", "1.0", "1e2", "1E2", "100e-2", " 1", "1 ", "+1", "1.5", "0x10",
                 "1_0", "", "abc", "9" * 30, "1e400"]


@pytest.mark.parametrize("value", INTEGER_TEXTS)
def test_an_integer_in_the_query_has_the_verdict_it_has_over_jsonrpc(
        url: str, http: httpx.Client, value: str) -> None:
    """A query value is a number written as text: it is taken or refused as JSON-RPC
    takes or refuses the same text as a ProtoJSON number. Before, "1.0" and "1e2"
    were refused over HTTP+JSON and taken over JSON-RPC, " 1" the other way round."""
    tid = http.post(url + "/message:send", json=v1_send("2")).json()["task"]["id"]
    rest = http.get(url + f"/tasks/{tid}", params={"historyLength": value})
    rpc = http.post(url, headers={"A2A-Version": "1.0"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "GetTask",
        "params": {"id": tid, "historyLength": value}}).json()
    assert rest.status_code in (200, 400), rest.text
    assert (rest.status_code == 200) == ("result" in rpc), (rest.text, rpc)
    if "result" in rpc:
        assert rest.json() == rpc["result"]
    else:
        assert status_of(rest) == (400, "INVALID_PARAMS") and rpc["error"]["code"] == -32602
        assert "historyLength" in rest.json()["error"]["message"]


def test_v03_integer_query_values_are_checked_as_v10s(url: str, http: httpx.Client) -> None:
    tid = http.post(url + "/v1/message:send", json=v03_send("2")).json()["task"]["id"]
    for value in ("--1", "-", "1.5"):
        r = http.get(url + f"/v1/tasks/{tid}", params={"historyLength": value})
        assert r.status_code == 422, r.text
        assert "query parameter historyLength must be an integer" in r.json()["message"]


def test_a_v03_push_config_naming_another_task_than_the_path_is_refused(
        url: str, http: httpx.Client) -> None:
    """v0.3's create names its task in the path, the ``parent`` and the config's
    ``name``: they must agree, as v1.0's path and ``taskId`` must (one naming another
    task was registered on the path's task)."""
    mine = http.post(url + "/v1/message:send", json=v03_send("2")).json()["task"]["id"]
    other = http.post(url + "/v1/message:send", json=v03_send("2")).json()["task"]["id"]
    for body in ({"parent": f"tasks/{other}", "configId": "c1",
                  "config": {"pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}}},
                 {"name": f"tasks/{other}/pushNotificationConfigs/c1",
                  "pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}}):
        r = http.post(url + f"/v1/tasks/{mine}/pushNotificationConfigs", json=body)
        assert r.status_code == 422, r.text
        assert f"names task '{other}', not '{mine}'" in r.json()["message"]
    for task_id in (mine, other):
        listed = http.get(url + f"/v1/tasks/{task_id}/pushNotificationConfigs").json()
        assert listed["configs"] == [], listed
    # and the config named two ways (the request's configId and the config's name)
    r = http.post(url + f"/v1/tasks/{mine}/pushNotificationConfigs", json={
        "parent": f"tasks/{mine}", "configId": "asked",
        "config": {"name": f"tasks/{mine}/pushNotificationConfigs/named",
                   "pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}}})
    assert r.status_code == 422, r.text
    assert "names push notification config 'named', not 'asked'" in r.json()["message"]
    assert http.get(url + f"/v1/tasks/{mine}/pushNotificationConfigs").json()["configs"] == []
