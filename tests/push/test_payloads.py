"""Webhook bodies per dialect and their headers, verified with an independent JOSE library."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jwt
import pytest

from interlingua import Agent, Context
from interlingua.core.model import AuthInfo
from interlingua.host import create_app
from interlingua.server.push import SIGNING_EXTENSION_URI
from interlingua.server.push.headers import auth_parts, check_authentication
from tests.dialects import v0_1_strategies as v01
from tests.dialects.v0_3_strategies import assert_valid

from .helpers import Hook, Received, dev_settings, serve_hook, until

SUMMARY = "Q1 sales report generated successfully."


async def _report(ctx: Context) -> None:
    await ctx.update("working on it")
    await ctx.complete(SUMMARY, artifact="# Q1\nrevenue: 2.1M", name="report.md")


reporter = Agent("Reports", "Writes reports.", _report, push_notifications=True)


class Agentish:
    """An app served in-process (ASGI), with a client for it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                        base_url="http://agent.test")

    async def rpc(self, method: str, params: dict[str, Any], version: str | None = None) -> Any:
        headers = {"A2A-Version": version} if version else {}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return (await self.client.post("/", json=body, headers=headers)).json()

    async def jwks(self) -> dict[str, Any]:
        resp = await self.client.get("/.well-known/jwks.json")
        assert resp.status_code == 200
        assert resp.headers["content-type"] == "application/jwk-set+json"
        doc: dict[str, Any] = resp.json()
        return doc


@pytest.fixture
async def agent() -> AsyncIterator[Agentish]:
    a = Agentish(create_app(reporter, public_url="http://agent.test", push=dev_settings()))
    try:
        yield a
    finally:
        await a.client.aclose()
        await a.app.state.engine.stop()


def verify(received: Received, jwks: dict[str, Any], body: bytes | None = None) -> dict[str, Any]:
    """Check the detached JWS with PyJWT against the served JWKS; its protected header."""
    signature = received.headers["x-a2a-signature"]
    protected, empty, sig = signature.split(".")
    assert empty == ""  # detached: no payload in the header
    payload = base64.urlsafe_b64encode(received.body if body is None else body).rstrip(b"=")
    token = f"{protected}.{payload.decode()}.{sig}"
    header = jwt.get_unverified_header(token)
    [key] = [k for k in jwks["keys"] if k["kid"] == header["kid"]]
    jwt.api_jws.decode(token, key=jwt.PyJWK(key), algorithms=["ES256", "RS256"])
    return header


SENDS = {
    "1.0": lambda url: ("SendMessage", {
        "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "Q1 please"}]},
        "configuration": {"returnImmediately": True, "taskPushNotificationConfig": {
            "url": url, "token": "tok-1", "authentication": {"scheme": "Bearer",
                                                             "credentials": "s3cret"}}}}),
    "0.3": lambda url: ("message/send", {
        "message": {"kind": "message", "messageId": "m-1", "role": "user",
                    "parts": [{"kind": "text", "text": "Q1 please"}]},
        "configuration": {"blocking": False, "pushNotificationConfig": {
            "url": url, "token": "tok-1",
            "authentication": {"schemes": ["Bearer"], "credentials": "s3cret"}}}}),
    "0.1": lambda url: ("tasks/send", {
        "id": "task-reportgen-aaa",
        "message": {"role": "user", "parts": [{"type": "text", "text": "Q1 please"}]},
        "pushNotification": {"url": url, "token": "tok-1",
                             "authentication": {"schemes": ["Bearer"], "credentials": "s3cret"}}}),
    # the v0.3 variants register configs as v0.3 does, and are pushed v0.3's Task
    "sam": lambda url: ("tasks/send", {
        "message": {"role": "user", "parts": [{"text": "Q1 please"}]},
        "configuration": {"blocking": False, "push_notification_config": {
            "url": url, "token": "tok-1",
            "authentication": {"schemes": ["Bearer"], "credentials": "s3cret"}}}}),
    "tutorial": lambda url: ("message/send", {
        "message": {"role": "user", "parts": [{"type": "text", "text": "Q1 please"}]},
        "configuration": {"blocking": False, "pushNotificationConfig": {
            "url": url, "token": "tok-1",
            "authentication": {"schemes": ["Bearer"], "credentials": "s3cret"}}}}),
}


def _task_id(dialect: str, result: dict[str, Any]) -> str:
    return str(result["task"]["id"] if dialect == "1.0" else result["id"])


def _done(hook: Hook, dialect: str) -> bool:
    for r in hook.delivered():
        body = r.json()
        if dialect == "1.0":
            state = body.get("statusUpdate", {}).get("status", {}).get("state")
            if state == "TASK_STATE_COMPLETED":
                return True
        elif body.get("status", {}).get("state") == "completed":
            return True
    return False


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1", "sam", "tutorial"])
async def test_body_and_headers_per_dialect(agent: Agentish, dialect: str) -> None:
    hook = Hook()
    with serve_hook(hook) as url:
        method, params = SENDS[dialect](url + "/webhook")
        answer = await agent.rpc(method, params, "1.0" if dialect == "1.0" else None)
        task_id = _task_id(dialect, answer["result"])
        await until(lambda: _done(hook, dialect))
        assert await agent.app.state.engine.push.idle(10)
    jwks = await agent.jwks()
    delivered = hook.delivered()
    seqs = [r.seq for r in delivered]
    assert seqs == sorted(set(seqs))  # in order, once each

    for r in delivered:
        assert r.path == "/webhook"
        assert r.headers["authorization"] == "Bearer s3cret"
        assert r.headers["x-a2a-notification-token"] == "tok-1"
        task_part, config_part, seq, nonce = r.nid.split(":")
        assert task_part == task_id and int(seq) == r.seq and config_part
        assert len(nonce) == 32 and int(nonce, 16) >= 0  # 128 random bits, in hex
        header = verify(r, jwks)
        assert header["alg"] == "ES256" and header["nid"] == r.nid and header["typ"]
        expected = "application/a2a+json" if dialect == "1.0" else "application/json"
        assert r.headers["content-type"] == expected
        assert r.headers.get("a2a-version") == ("1.0" if dialect == "1.0" else None)

    # a tampered body no longer verifies
    with pytest.raises(jwt.InvalidSignatureError):
        verify(delivered[-1], jwks, body=delivered[-1].body.replace(b"Q1", b"Q2"))

    bodies = [r.json() for r in delivered]
    last = bodies[-1]
    if dialect == "1.0":
        # one StreamResponse per event: the created task, the status, the artifact, the end
        assert all(len(b) == 1 for b in bodies)
        assert bodies[0]["task"]["id"] == task_id
        kinds = [next(iter(b)) for b in bodies]
        assert kinds == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
        assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert "final" not in last["statusUpdate"]
    elif dialect in ("0.3", "sam", "tutorial"):
        for b in bodies:
            assert_valid(b, "Task", "v0.3.0")
            assert b["kind"] == "task" and b["id"] == task_id
        assert last["status"]["state"] == "completed"
        assert last["artifacts"][0]["parts"][0]["text"] == "# Q1\nrevenue: 2.1M"
        # v0.3's own spelling, whatever the variant wrote: parts tagged by kind alone
        assert all(set(p) == {"kind", "text"} for p in last["artifacts"][0]["parts"])
    else:
        # seed 004 §9.4: eventType, taskId, status, summary; plus the task itself
        assert set(last) == {"eventType", "taskId", "status", "summary", "task"}
        assert last["eventType"] == "taskUpdate" and last["taskId"] == "task-reportgen-aaa"
        assert last["status"]["state"] == "completed"
        assert last["summary"] == SUMMARY
        v01.assert_valid(last["task"], "Task")
        assert last["task"]["status"] == last["status"]
        assert last["task"]["artifacts"][0]["parts"][0]["type"] == "text"


async def test_the_card_names_the_jwks_and_the_jwks_has_the_signing_key(agent: Agentish) -> None:
    card = (await agent.client.get("/.well-known/agent-card.json")).json()
    assert card["capabilities"]["pushNotifications"] is True
    [ext] = [e for e in card["capabilities"]["extensions"] if e["uri"] == SIGNING_EXTENSION_URI]
    assert ext["params"]["jwksUrl"] == "http://agent.test/.well-known/jwks.json"
    assert ext["params"]["header"] == "X-A2A-Signature"
    jwks = await agent.jwks()
    [key] = jwks["keys"]
    assert (key["kty"], key["crv"], key["alg"], key["use"]) == ("EC", "P-256", "ES256", "sig")
    assert "d" not in key  # public only
    assert key["kid"] == agent.app.state.engine.push.keys.current.kid


async def test_without_push_there_is_no_extension_and_no_jwks() -> None:
    async def quiet(text: str) -> str:
        return text

    app = create_app(Agent("Quiet", "No push.", quiet), public_url="http://agent.test")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://agent.test") as client:
        card = (await client.get("/.well-known/agent-card.json")).json()
        assert card["capabilities"].get("pushNotifications") is False
        assert not [e for e in card["capabilities"].get("extensions", [])
                    if e["uri"] == SIGNING_EXTENSION_URI]
        assert (await client.get("/.well-known/jwks.json")).status_code == 404
        for method, params, code in [
            ("CreateTaskPushNotificationConfig", {"taskId": "t", "url": "https://x.example/"},
             -32003),
            ("tasks/pushNotificationConfig/get", {"id": "t"}, -32003),
            ("tasks/pushNotification/set",
             {"id": "t", "pushNotificationConfig": {"url": "https://x.example/"}}, -32003),
        ]:
            got = (await client.post("/", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                                "params": params},
                                     headers={"A2A-Version": "1.0"} if method[0].isupper()
                                     else {})).json()
            assert got["error"]["code"] == code, method
    await app.state.engine.stop()


async def test_rs256_signatures_verify_with_the_served_rsa_key() -> None:
    a = Agentish(create_app(reporter, public_url="http://agent.test",
                            push=dev_settings(signing_alg="RS256")))
    hook = Hook()
    try:
        with serve_hook(hook) as url:
            method, params = SENDS["1.0"](url)
            await a.rpc(method, params, "1.0")
            await until(lambda: _done(hook, "1.0"))
        jwks = await a.jwks()
        assert [k["kty"] for k in jwks["keys"]] == ["RSA"]
        assert verify(hook.delivered()[0], jwks)["alg"] == "RS256"
    finally:
        await a.client.aclose()
        await a.app.state.engine.stop()


# ------------------------------------------------------------ Authorization


@pytest.mark.parametrize(("schemes", "credentials", "headers", "query", "cookie"), [
    (["Bearer"], "abc", [("Authorization", "Bearer abc")], [], None),
    (["bearer", "Basic"], "abc", [("Authorization", "Bearer abc")], [], None),
    (["Basic"], "user:pass", [("Authorization", "Basic dXNlcjpwYXNz")], [], None),
    (["Basic"], "dXNlcjpwYXNz", [("Authorization", "Basic dXNlcjpwYXNz")], [], None),
    (["ApiKey"], '{"in": "header", "name": "X-Client-Webhook-Key", "value": "k1"}',
     [("X-Client-Webhook-Key", "k1")], [], None),
    (["ApiKey"], '{"in": "query", "name": "key", "value": "k1"}', [], [("key", "k1")], None),
    (["ApiKey"], '{"in": "cookie", "name": "session", "value": "k1"}', [], [], "session=k1"),
    (["ApiKey"], "plain-key", [("Authorization", "ApiKey plain-key")], [], None),
    (["Digest"], "xyz", [("Authorization", "Digest xyz")], [], None),
    (["Bearer"], None, [], [], None),  # nothing to send without credentials
])
def test_authorization_mapping(schemes: list[str], credentials: str | None,
                               headers: list[tuple[str, str]], query: list[tuple[str, str]],
                               cookie: str | None) -> None:
    auth = AuthInfo(schemes=schemes, credentials=credentials)
    check_authentication(auth)
    parts = auth_parts(auth)
    assert (parts.headers, parts.query, parts.cookie) == (headers, query, cookie)


@pytest.mark.parametrize(("schemes", "credentials", "why"), [
    ([], "x", "at least one scheme"),
    (["Bear er"], "x", "not a valid HTTP auth scheme"),
    (["Bearer"], "line\r\nX-Evil: 1", "printable ASCII"),
    (["ApiKey"], '{"in": "body", "name": "k", "value": "v"}', "header, query or cookie"),
    (["ApiKey"], '{"in": "header", "name": "bad name", "value": "v"}', "not a valid header"),
    (["ApiKey"], '{"oops": 1}', "must be"),
])
def test_credentials_that_cannot_be_sent_are_refused(schemes: list[str], credentials: str,
                                                     why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_authentication(AuthInfo(schemes=schemes, credentials=credentials))


async def test_bad_token_or_credentials_are_invalid_params_at_creation(agent: Agentish) -> None:
    await agent.rpc("tasks/send", {"id": "t-1", "message": {
        "role": "user", "parts": [{"type": "text", "text": "x"}]}})
    got = await agent.rpc("CreateTaskPushNotificationConfig", {
        "taskId": "t-1", "url": "http://127.0.0.1:9/", "token": "a\nb"}, "1.0")
    assert got["error"]["code"] == -32602 and "token" in got["error"]["message"]
    got = await agent.rpc("tasks/pushNotificationConfig/set", {
        "taskId": "t-1", "pushNotificationConfig": {
            "url": "http://127.0.0.1:9/",
            "authentication": {"schemes": ["Bearer"], "credentials": "x\ny"}}})
    assert got["error"]["code"] == -32602 and "credentials" in got["error"]["message"]


async def test_a_config_registered_in_1_1_is_fed_1_1_bodies_and_a_1_0_one_stays_1_0(
        agent: Agentish) -> None:
    hook = Hook()
    with serve_hook(hook) as url:
        ids = {}
        for version in ("1.1", "1.0"):
            method, params = SENDS["1.0"](f"{url}/v{version}")
            params["message"]["messageId"] = f"m-{version}"
            ids[version] = _task_id("1.0", (await agent.rpc(method, params, version))["result"])
        await until(lambda: sum(_done(Hook.of(hook, path), "1.0")
                                for path in ("/v1.1", "/v1.0")) == 2)
        assert await agent.app.state.engine.push.idle(10)
    for version in ("1.1", "1.0"):
        delivered = [r for r in hook.delivered() if r.path == f"/v{version}"]
        assert {r.headers["a2a-version"] for r in delivered} == {version}
        bodies = [r.json() for r in delivered]
        assert [next(iter(b)) for b in bodies] == ["task", "statusUpdate", "artifactUpdate",
                                                   "statusUpdate"]
        assert all(next(iter(b.values()))["taskId" if "task" not in b else "id"]
                   == ids[version] for b in bodies)
        numbers = [next(iter(b.values())).get("generation") for b in bodies]
        # each event with the generation after it, as strings; none in a 1.0 body
        assert numbers == (["1", "2", "3", "4"] if version == "1.1" else [None] * 4), version
