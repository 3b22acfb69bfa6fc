"""The authorization hook, tenants, and the extended card for authenticated callers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Agent, Context
from interlingua.core.model import AgentCard, AgentSkill, Task
from interlingua.server.auth import APIKeyAuth, AuthConfig, Principal

from .helpers import FORBIDDEN, send_request, serve_agent

ADMIN = {"X-API-Key": "admin-" + "a" * 20}
USER = {"X-API-Key": "user-" + "u" * 20}
TENANTED = {"X-API-Key": "tenant-" + "t" * 20}
V1 = {"A2A-Version": "1.0"}

asked: list[tuple[str, str, str | None, str | None]] = []


async def policy(principal: Principal, operation: str, task: Task | None,
                 skill: str | None) -> bool:
    asked.append((principal.id, operation, task.id if task else None, skill))
    if skill == "admin" and principal.id != "admin":
        return False
    if operation == "extended-card" and principal.id == "tenanted":
        return False
    if operation == "push-config" and principal.id == "user":
        return False
    return not (operation == "cancel" and principal.id != "admin")


async def _work(ctx: Context) -> None:
    if ctx.text == "wait":
        await ctx.require_input("more?")
    else:
        await ctx.complete(f"{ctx.principal}@{ctx.request.tenant or '-'}")


def extended(base: AgentCard, principal: Principal) -> AgentCard:
    extra = AgentSkill(id=f"for-{principal.id}", name=f"Only for {principal.id}")
    return msgspec.structs.replace(base, skills=[*base.skills, extra])


def make_auth() -> AuthConfig:
    return AuthConfig(
        schemes={"key": APIKeyAuth(
            {"admin": ADMIN["X-API-Key"], "user": USER["X-API-Key"],
             "tenanted": TENANTED["X-API-Key"]},
            tenants={"tenanted": {"t1", "t2"}, "user": {""}})},
        authorize=policy, tenant_header="X-Tenant")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    agent = Agent("Guarded", "Asks a policy.", _work, extended_card=extended,
                  skills=[AgentSkill(id="public", name="Public")])
    with serve_agent(agent, auth=make_auth()) as base:
        yield base


@pytest.fixture
def c() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=20) as client:
        yield client


def rpc(c: httpx.Client, url: str, who: dict[str, str], method: str, params: Any,
        headers: dict[str, str] | None = None) -> httpx.Response:
    return c.post(url + "/", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                   "params": params}, headers={**who, **(headers or {})})


def v1_send(text: str, **extra: Any) -> dict[str, Any]:
    return {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": text}]}, **extra}


# --------------------------------------------------------------------- policy


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
def test_policy_denies_a_skill(c: httpx.Client, url: str, dialect: str) -> None:
    body, headers = send_request(dialect, "run it", metadata={"skill": "admin"})
    r = c.post(url + "/", json=body, headers={**USER, **headers})
    assert r.status_code == 403
    doc = r.json()
    assert doc["error"]["code"] == FORBIDDEN[dialect]
    assert doc["error"]["message"] == "user is not allowed to send with skill 'admin'"
    ok = c.post(url + "/", json=send_request(dialect, "run it", metadata={"skill": "admin"})[0],
                headers={**ADMIN, **headers})
    assert ok.status_code == 200 and "result" in ok.json()


def test_policy_sees_the_task_and_denies_cancel(c: httpx.Client, url: str) -> None:
    created = rpc(c, url, USER, "SendMessage", v1_send("wait"), V1).json()["result"]["task"]
    asked.clear()
    r = rpc(c, url, USER, "CancelTask", {"id": created["id"]}, V1)
    assert r.status_code == 403 and r.json()["error"]["code"] == -32600
    assert asked == [("user", "cancel", created["id"], None)]
    got = rpc(c, url, USER, "GetTask", {"id": created["id"]}, V1).json()
    assert got["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert asked[-1] == ("user", "get", created["id"], None)


def test_policy_is_asked_before_a_stream_opens(c: httpx.Client, url: str) -> None:
    # A streaming send with a skill the caller may not use: refused before any event.
    params = v1_send("run it", metadata={"skill": "admin"})
    r = rpc(c, url, USER, "SendStreamingMessage", params, V1)
    assert r.status_code == 403
    assert r.json()["error"]["message"] == "user is not allowed to send with skill 'admin'"
    assert not r.headers["content-type"].startswith("text/event-stream")
    # A subscription is asked about too, with the task it names.
    created = rpc(c, url, USER, "SendMessage", v1_send("wait"), V1).json()["result"]["task"]
    asked.clear()
    with c.stream("POST", url + "/", json={"jsonrpc": "2.0", "id": 2,
                                           "method": "SubscribeToTask",
                                           "params": {"id": created["id"]}},
                  headers={**USER, **V1}) as sub:
        assert sub.status_code == 200
    assert asked[0] == ("user", "subscribe", created["id"], None)


# -------------------------------------------------------------------- tenants


def test_tenant_member_and_header(c: httpx.Client, url: str) -> None:
    r = rpc(c, url, TENANTED, "SendMessage", v1_send("hi", tenant="t1"), V1)
    task = r.json()["result"]["task"]
    assert task["status"]["message"]["parts"][0]["text"] == "tenanted@t1"
    # same principal, other tenant: its t1 task is not there
    other = rpc(c, url, TENANTED, "GetTask", {"id": task["id"], "tenant": "t2"}, V1).json()
    assert other["error"]["code"] == -32001
    same = rpc(c, url, TENANTED, "GetTask", {"id": task["id"], "tenant": "t1"}, V1).json()
    assert same["result"]["id"] == task["id"]
    # v0.3 has no tenant member: the header names it
    body, _ = send_request("0.3", "hi")
    r03 = c.post(url + "/", json=body, headers={**TENANTED, "X-Tenant": "t2"})
    assert r03.json()["result"]["status"]["message"]["parts"][0]["text"] == "tenanted@t2"


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
def test_tenant_not_allowed(c: httpx.Client, url: str, dialect: str) -> None:
    body, headers = send_request(dialect, "hi")
    r = c.post(url + "/", json=body, headers={**TENANTED, **headers, "X-Tenant": "t3"})
    assert r.status_code == 403
    assert r.json()["error"]["code"] == FORBIDDEN[dialect]
    assert r.json()["error"]["message"] == "tenanted may not act in tenant 't3'"
    # a principal limited to the default tenant cannot pick another
    r2 = rpc(c, url, USER, "SendMessage", v1_send("hi", tenant="t1"), V1)
    assert r2.status_code == 403


# -------------------------------------------------------------- extended card


def test_extended_card_every_way(c: httpx.Client, url: str) -> None:
    public = c.get(url + "/.well-known/agent-card.json").json()
    assert public["capabilities"]["extendedAgentCard"] is True
    assert public["supportsAuthenticatedExtendedCard"] is True
    assert [s["id"] for s in public["skills"]] == ["public"]
    v1 = rpc(c, url, USER, "GetExtendedAgentCard", {}, V1).json()["result"]
    assert [s["id"] for s in v1["skills"]] == ["public", "for-user"]
    assert "supportedInterfaces" in v1
    v03 = rpc(c, url, ADMIN, "agent/getAuthenticatedExtendedCard", {}).json()["result"]
    assert [s["id"] for s in v03["skills"]] == ["public", "for-admin"]
    assert v03["protocolVersion"] == "0.3.0"
    v02 = c.get(url + "/agent/authenticatedExtendedCard", headers=USER)
    assert v02.status_code == 200
    assert [s["id"] for s in v02.json()["skills"]] == ["public", "for-user"]


def test_extended_card_asks_the_policy_every_way(c: httpx.Client, url: str) -> None:
    """A policy that refuses a caller the extended card is asked on every way to it,
    v0.2's own URL too (it handed the card over without asking). Where the call is the
    extended card alone, the caller is refused; v0.3's ``GET /v1/card`` is the caller's
    card, and gives it the public one (as it gives a caller with no credentials)."""
    asked.clear()
    who = {**TENANTED, "X-Tenant": "t1"}
    answers = {
        "jsonrpc-1.0": rpc(c, url, who, "GetExtendedAgentCard", {}, V1),
        "jsonrpc-0.3": rpc(c, url, who, "agent/getAuthenticatedExtendedCard", {}),
        "v0.2 url": c.get(url + "/agent/authenticatedExtendedCard", headers=who),
        "rest-1.0": c.get(url + "/extendedAgentCard", headers={**who, **V1}),
    }
    assert {k: r.status_code for k, r in answers.items()} == dict.fromkeys(answers, 403)
    assert all("tenanted is not allowed to extended-card" in r.text for r in answers.values())
    public = c.get(url + "/v1/card", headers=who)
    assert public.status_code == 200, public.text
    assert [s["id"] for s in public.json()["skills"]] == ["public"]
    assert [a for a in asked if a[1] == "extended-card"] == \
        [("tenanted", "extended-card", None, None)] * (len(answers) + 1)


def test_a_send_that_sets_a_push_config_asks_the_policy_about_it(c: httpx.Client) -> None:
    """A policy that refuses ``push-config`` refuses a send that carries one too: the
    send set the webhook the policy had refused to set (it was asked only ``send``)."""
    from interlingua.server.push.settings import PushSettings

    hook = {"url": "http://127.0.0.1:9/hook"}  # (the discard port: refused at once)
    agent = Agent("Pushing", "d", _work, push_notifications=True)
    push = PushSettings(allow_http=True, allow_private_networks=True, max_attempts=1)
    asked.clear()
    with serve_agent(agent, auth=make_auth(), push=push) as url:
        v1 = rpc(c, url, USER, "SendMessage",
                 v1_send("hi", configuration={"taskPushNotificationConfig": hook}), V1)
        v03 = rpc(c, url, USER, "message/send", {"message": {
            "kind": "message", "messageId": str(uuid.uuid4()), "role": "user",
            "parts": [{"kind": "text", "text": "hi"}]},
            "configuration": {"pushNotificationConfig": hook}})
        for answer in (v1, v03):
            assert answer.status_code == 403, answer.text
            assert "user is not allowed to push-config" in answer.json()["error"]["message"]
        assert [a[1] for a in asked] == ["send", "push-config"] * 2
        # without one, the same send is taken; and one the policy allows is kept
        assert "result" in rpc(c, url, USER, "SendMessage", v1_send("hi"), V1).json()
        kept = rpc(c, url, ADMIN, "SendMessage",
                   v1_send("wait", configuration={"taskPushNotificationConfig": hook}), V1)
        task_id = kept.json()["result"]["task"]["id"]
        configs = rpc(c, url, ADMIN, "ListTaskPushNotificationConfigs", {"taskId": task_id}, V1)
    assert [x["url"] for x in configs.json()["result"]["configs"]] == [hook["url"]], configs.text


def test_a_private_card_names_every_scheme_it_takes(c: httpx.Client) -> None:
    """A card refused for want of credentials carries one challenge per scheme, as
    every other refusal does (the card's routes kept only the last)."""
    from interlingua.server.auth import BasicAuth, hash_secret

    auth = AuthConfig(schemes={"key": APIKeyAuth({"user": USER["X-API-Key"]}),
                               "basic": BasicAuth({"dave": hash_secret("pw", iterations=1000)})},
                      public_card=False)
    agent = Agent("Hidden", "d", _work, extended_card=extended)
    with serve_agent(agent, auth=auth) as base:
        rpc_answer = rpc(c, base, {}, "GetTask", {"id": "x"}, V1)
        card = c.get(base + "/.well-known/agent-card.json")
        v02 = c.get(base + "/agent/authenticatedExtendedCard")
    expected = rpc_answer.headers.get_list("www-authenticate")
    assert len(expected) == 2, expected
    for r in (card, v02):
        assert r.status_code == 401
        assert sorted(r.headers.get_list("www-authenticate")) == sorted(expected)


def test_extended_card_needs_credentials(c: httpx.Client, url: str) -> None:
    r = c.get(url + "/agent/authenticatedExtendedCard")
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("ApiKey")
    r2 = rpc(c, url, {}, "GetExtendedAgentCard", {}, V1)
    assert r2.status_code == 401


def test_extended_card_not_configured() -> None:
    agent = Agent("Plain", "No extended card.", _work)
    with serve_agent(agent, auth=make_auth()) as base, httpx.Client() as c:
        # its card offers none: unsupported in v1.0 (§3.3.4), v0.3's -32007
        v1 = rpc(c, base, USER, "GetExtendedAgentCard", {}, V1).json()
        assert v1["error"]["code"] == -32004
        assert v1["error"]["data"][0]["reason"] == "UNSUPPORTED_OPERATION"
        v03 = rpc(c, base, USER, "agent/getAuthenticatedExtendedCard", {}).json()
        assert v03["error"]["code"] == -32007
        v02 = c.get(base + "/agent/authenticatedExtendedCard", headers=USER)
        assert v02.status_code == 404


def test_an_extended_card_hook_that_fails_is_a_500_in_json_on_every_route() -> None:
    """The agent's extended_card hook raising is the binding's internal error on
    every route; the v0.2 route answered Starlette's text/plain page instead of the
    JSON body its other refusals carry."""
    def failing(base: AgentCard, principal: Principal) -> AgentCard:
        raise RuntimeError("the directory is down")

    agent = Agent("Failing", "d", _work, extended_card=failing)
    with serve_agent(agent, auth=make_auth()) as base, httpx.Client() as c:
        v1 = rpc(c, base, USER, "GetExtendedAgentCard", {}, V1).json()
        v03 = rpc(c, base, USER, "agent/getAuthenticatedExtendedCard", {}).json()
        rest = c.get(base + "/extendedAgentCard", headers=USER)
        rest03 = c.get(base + "/v1/card", headers=USER)
        v02 = c.get(base + "/agent/authenticatedExtendedCard", headers=USER)
    assert v1["error"]["code"] == v03["error"]["code"] == -32603
    assert rest.status_code == rest03.status_code == v02.status_code == 500
    assert v02.headers["content-type"] == "application/json"
    assert v02.json() == {"error": {"code": 500, "message": "Internal error"}}
    assert "directory" not in v02.text + rest.text + rest03.text


def test_private_card() -> None:
    auth = make_auth()
    auth.public_card = False
    with serve_agent(Agent("Hidden", "d", _work), auth=auth) as base, httpx.Client() as c:
        assert c.get(base + "/.well-known/agent-card.json").status_code == 401
        ok = c.get(base + "/.well-known/agent-card.json", headers=USER)
        assert ok.status_code == 200 and ok.json()["name"] == "Hidden"
        assert ok.headers["cache-control"] == "private, max-age=300"


# ------------------------------------------------------------------ anonymous


def test_an_anonymous_caller_acts_in_the_tenant_it_names(c: httpx.Client) -> None:
    # No authentication: the request is made for no principal, in the tenant the
    # call names (the v1.0 ``tenant`` member), and its tasks are kept under it.
    agent = Agent("Open", "Says who asked, and where.", _work)
    with serve_agent(agent) as base:
        r = rpc(c, base, {}, "SendMessage", v1_send("hi", tenant="t9"), V1)
        task = r.json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["status"]["message"]["parts"][0]["text"] == "@t9"
        got = rpc(c, base, {}, "GetTask", {"id": task["id"], "tenant": "t9"}, V1).json()
        assert got["result"]["id"] == task["id"]
        other = rpc(c, base, {}, "GetTask", {"id": task["id"], "tenant": "t8"}, V1).json()
        assert "error" in other
