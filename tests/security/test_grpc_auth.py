"""Authentication over real gRPC on loopback, held to what HTTP does: the agents a
shared port names to a caller, the public card read without credentials (v0.3's
``GetAgentCard`` and its HTTP+JSON sibling ``GET /v1/card``, and ``interlingua card
grpc://``), and the challenges of a rejected credential."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import msgspec
import pytest
from click.testing import CliRunner

from interlingua import Agent, Context, create_app
from interlingua.bindings.grpc import add_grpc
from interlingua.cli.main import main
from interlingua.core.parts import new_id
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2_grpc as rpc03
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1
from interlingua.server.auth import APIKeyAuth, AuthConfig, BasicAuth, hash_secret
from tests.live import bind_loopback, live_server, url_of

KEY = "alice-" + "a" * 20
WRONG = "mallory-" + "m" * 20
PASSWORD = "correct horse battery staple"


async def _echo(ctx: Context) -> None:
    await ctx.complete(f"echoed {ctx.text}")


def _metadata(key: str | None) -> tuple[tuple[str, str], ...]:
    return (("x-api-key", key),) if key is not None else ()


def _headers(key: str | None) -> dict[str, str]:
    return {"X-API-Key": key} if key is not None else {}


def _challenges(err: grpc.RpcError) -> list[str]:
    return [v for k, v in err.trailing_metadata() or () if k == "www-authenticate"]


# ----------------------------------------------- agents named on a shared port


@pytest.fixture(scope="module")
def private_pair() -> Iterator[tuple[str, str]]:
    """Two agents whose cards are private, on one HTTP server and one gRPC port:
    (base URL, gRPC target)."""
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})}, public_card=False)
    with _pair(auth) as where:
        yield where


@contextlib.contextmanager
def _pair(auth: AuthConfig) -> Iterator[tuple[str, str]]:
    """Two agents (Probe, Other) on one HTTP server and one gRPC port: (base URL,
    gRPC target)."""
    app = create_app([Agent("Probe", "Says back.", _echo), Agent("Other", "Says back.", _echo)],
                     store="memory://", auth=auth)
    hub = add_grpc(app, "127.0.0.1:0")
    with live_server(app) as base:
        assert hub.port
        yield base, f"127.0.0.1:{hub.port}"


def _message(text: str) -> pb1.Message:
    return pb1.Message(message_id=new_id(), role=pb1.ROLE_USER, parts=[pb1.Part(text=text)])


def _port_refusals(target: str, key: str | None) -> list[grpc.RpcError]:
    """What the shared port answers a request that reaches no agent: no tenant, a
    tenant no agent has, a v0.3 request (which names none)."""
    out = []
    with grpc.insecure_channel(target) as channel:
        v1 = rpc1.A2AServiceStub(channel)
        for call in (lambda: v1.GetTask(pb1.GetTaskRequest(id="x"), metadata=_metadata(key)),
                     lambda: v1.GetTask(pb1.GetTaskRequest(id="x", tenant="zzz"),
                                        metadata=_metadata(key)),
                     lambda: rpc03.A2AServiceStub(channel).GetTask(
                         pb03.GetTaskRequest(name="tasks/x"), metadata=_metadata(key))):
            with pytest.raises(grpc.RpcError) as refused:
                call()
            out.append(refused.value)
    assert [e.code() for e in out] == [grpc.StatusCode.INVALID_ARGUMENT,
                                       grpc.StatusCode.NOT_FOUND,
                                       grpc.StatusCode.UNIMPLEMENTED], out
    return out


@pytest.mark.parametrize(("key", "listed"), [(None, []), (WRONG, []),
                                            (KEY, ["Probe", "Other"])])
def test_a_shared_grpc_port_names_only_the_agents_http_lists_to_the_caller(
        private_pair: tuple[str, str], key: str | None, listed: list[str]) -> None:
    """Private cards: the port's refusals name the agents to a caller that may read
    their cards, and to no other, as the HTTP listing does (one rule for both)."""
    base, target = private_pair
    shown = httpx.get(base + "/agents", headers=_headers(key)).json()["agents"]
    assert [a["name"] for a in shown] == listed
    for refused in _port_refusals(target, key):
        details = refused.details() or ""
        for name in ("Probe", "Other"):
            assert (name in details) == (name in listed), (refused.code(), details)
        # what the message still says: how to name an agent
        assert "tenant" in details, details
    # the agents themselves are served as before
    with grpc.insecure_channel(target) as channel:
        sent = rpc1.A2AServiceStub(channel).SendMessage(
            pb1.SendMessageRequest(message=_message("hi"), tenant="Probe"), metadata=_metadata(KEY))
        assert sent.task.status.state == pb1.TASK_STATE_COMPLETED


def test_a_shared_grpc_port_with_public_cards_names_its_agents_to_anyone() -> None:
    """Public cards: every caller is told the agents' names, credentials or not."""
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})})
    app = create_app([Agent("Probe", "Says back.", _echo), Agent("Other", "Says back.", _echo)],
                     store="memory://", auth=auth)
    hub = add_grpc(app, "127.0.0.1:0")
    with live_server(app):
        for key in (None, WRONG, KEY):
            for refused in _port_refusals(f"127.0.0.1:{hub.port}", key):
                assert "Probe, Other" in (refused.details() or ""), refused.details()


# ---------------------------------------------- the public card over gRPC v0.3


def _extended(base: Any, principal: Any) -> Any:
    return msgspec.structs.replace(base, description=f"extended for {principal.id}")


@contextlib.contextmanager
def served(*, public_card: bool = True, extended: bool = False) -> Iterator[tuple[str, str]]:
    """One agent behind an API key, on HTTP and gRPC: (base URL, gRPC target)."""
    sock = bind_loopback()
    agent = Agent("Probe", "Says back.", _echo, extended_card=_extended if extended else None)
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})}, public_card=public_card)
    app = create_app(agent, public_url=url_of(sock), store="memory://", auth=auth)
    server = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        assert server.port
        yield url, f"127.0.0.1:{server.port}"


def _rest_v03_card(url: str, key: str | None) -> httpx.Response:
    """v0.3's HTTP+JSON sibling of GetAgentCard: ``GET /v1/card``."""
    return httpx.get(url + "/v1/card", headers=_headers(key))


def _v03_card(target: str, key: str | None) -> pb03.AgentCard:
    with grpc.insecure_channel(target) as channel:
        return rpc03.A2AServiceStub(channel).GetAgentCard(pb03.GetAgentCardRequest(),
                                                          metadata=_metadata(key))


@pytest.mark.parametrize("extended", [False, True])
def test_a_public_card_is_read_over_grpc_without_credentials(extended: bool) -> None:
    """v0.3's GetAgentCard gives an anonymous caller the public card, as HTTP's
    well-known card does; a caller with credentials gets what it got before (its
    extended card, when the agent has one); a rejected credential is refused, as
    HTTP's extended-card route refuses it."""
    with served(extended=extended) as (url, target):
        public = httpx.get(url + "/.well-known/agent-card.json")
        assert public.status_code == 200
        card = _v03_card(target, None)
        assert card.name == "Probe" and card.description == "Says back."
        assert card.url == url + "/"
        own = _v03_card(target, KEY)
        assert own.description == ("extended for alice" if extended else "Says back.")
        with pytest.raises(grpc.RpcError) as refused:
            _v03_card(target, WRONG)
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert any('error="invalid_token"' in c for c in _challenges(refused.value))
        # and its HTTP+JSON sibling alike (it refused the anonymous caller with 401)
        rest = _rest_v03_card(url, None)
        assert rest.status_code == 200, rest.text
        assert rest.json()["name"] == "Probe" and rest.json()["description"] == "Says back."
        rest = _rest_v03_card(url, KEY)
        assert rest.json()["description"] == own.description, rest.text
        rest = _rest_v03_card(url, WRONG)
        assert rest.status_code == 401, rest.text
        assert 'error="invalid_token"' in rest.headers["www-authenticate"]
        http = httpx.get(url + "/agent/authenticatedExtendedCard", headers=_headers(WRONG))
        assert http.status_code == 401, http.text
        # v1.0 has the extended card only: it still needs credentials
        with grpc.insecure_channel(target) as channel, pytest.raises(grpc.RpcError) as v1:
            rpc1.A2AServiceStub(channel).GetExtendedAgentCard(
                pb1.GetExtendedAgentCardRequest())
        assert v1.value.code() is grpc.StatusCode.UNAUTHENTICATED


def test_a_host_that_is_no_host_name_is_a_400_at_v1_card() -> None:
    """A server with no public URL names itself by the request's Host: one that is no
    host name is the well-known card's 400 at ``GET /v1/card`` too, with or without
    credentials (it escaped as a 500)."""
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY})})
    app = create_app(Agent("Probe", "Says back.", _echo), store="memory://", auth=auth)
    with live_server(app) as url, httpx.Client() as client:
        odd = {"Host": "no_such host"}
        assert client.get(url + "/.well-known/agent-card.json", headers=odd).status_code == 400
        for key in (None, KEY):
            got = client.get(url + "/v1/card", headers={**odd, **_headers(key)})
            assert got.status_code == 400 and "not a host name" in got.text, (key, got.text)


def test_a_private_card_still_needs_credentials_over_grpc() -> None:
    with served(public_card=False) as (url, target):
        assert httpx.get(url + "/.well-known/agent-card.json").status_code == 401
        with pytest.raises(grpc.RpcError) as refused:
            _v03_card(target, None)
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert _challenges(refused.value)
        assert _v03_card(target, KEY).name == "Probe"
        rest = _rest_v03_card(url, None)
        assert rest.status_code == 401 and rest.headers["www-authenticate"], rest.text
        assert _rest_v03_card(url, KEY).json()["name"] == "Probe"


@pytest.mark.parametrize("public_card", [True, False])
def test_a_caller_refused_its_tenant_is_shown_a_public_card(public_card: bool) -> None:
    """v0.3's card calls (gRPC ``GetAgentCard``, HTTP+JSON ``GET /v1/card``) with a
    tenant the caller may not act in: a public card is shown to it, as to a caller with
    no credentials; a private one is refused with 403, as at the well-known URL."""
    sock = bind_loopback()
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY}, tenants={"alice": {"t1"}})},
                      tenant_header="X-Tenant", public_card=public_card)
    app = create_app(Agent("Probe", "Says back.", _echo, extended_card=_extended),
                     public_url=url_of(sock), store="memory://", auth=auth)
    server = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url, grpc.insecure_channel(
            f"127.0.0.1:{server.port}") as channel:
        stub = rpc03.A2AServiceStub(channel)
        for tenant, description in (("t1", "extended for alice"), ("t9", "Says back.")):
            metadata = (*_metadata(KEY), ("x-tenant", tenant))
            rest = httpx.get(url + "/v1/card", headers={**_headers(KEY), "X-Tenant": tenant})
            if not public_card and tenant == "t9":
                with pytest.raises(grpc.RpcError) as refused:
                    stub.GetAgentCard(pb03.GetAgentCardRequest(), metadata=metadata)
                assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
                assert rest.status_code == 403, rest.text
                assert "may not act in tenant 't9'" in rest.text
                continue
            card = stub.GetAgentCard(pb03.GetAgentCardRequest(), metadata=metadata)
            assert card.description == description
            assert rest.status_code == 200 and rest.json()["description"] == description, \
                rest.text


def test_the_card_command_reads_a_public_card_at_a_grpc_address() -> None:
    """``interlingua card grpc://…`` with no credentials: the card (exit 1 before)."""
    with served() as (url, target):
        done = CliRunner().invoke(main, ["card", f"grpc://{target}", "--json"],
                                  prog_name="interlingua")
        assert done.exit_code == 0, (done.output, done.stderr)
        raw = msgspec.json.decode(done.stdout)
        assert raw["name"] == "Probe" and raw["url"] == url + "/"
        shown = CliRunner().invoke(main, ["card", f"grpc://{target}"], prog_name="interlingua")
        assert shown.exit_code == 0, (shown.output, shown.stderr)
        assert f"Card: grpc://{target} (over gRPC: v0.3 GetAgentCard)" in shown.stdout
    with served(public_card=False) as (_, target):
        done = CliRunner().invoke(main, ["card", f"grpc://{target}"], prog_name="interlingua")
        assert done.exit_code == 1, (done.output, done.stderr)


# ------------------------------------------------ the challenges of a rejection


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(("metadata", "rejected"), [
    ((("authorization", _basic("bob", "wrong")),), "basic"),
    ((("authorization", _basic("nobody", PASSWORD)),), "basic"),
    ((("x-api-key", WRONG),), "key"),
    ((), None),
])
def test_grpc_challenges_mark_the_rejected_scheme(metadata: tuple[tuple[str, str], ...],
                                                  rejected: str | None) -> None:
    """A rejected Basic credential is challenged with error="invalid_token", as a rejected
    API key is, in the trailers as in HTTP's WWW-Authenticate; the other schemes plainly."""
    auth = AuthConfig(schemes={
        "key": APIKeyAuth({"alice": KEY}),
        "basic": BasicAuth({"bob": hash_secret(PASSWORD, iterations=1000)})})
    sock = bind_loopback()
    app = create_app(Agent("Probe", "Says back.", _echo), public_url=url_of(sock),
                     store="memory://", auth=auth)
    server = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url, \
            grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.RpcError) as refused:
            rpc1.A2AServiceStub(channel).GetTask(pb1.GetTaskRequest(id="x"), metadata=metadata)
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
        key = 'ApiKey realm="a2a", in="header", name="X-API-Key"'
        basic = 'Basic realm="a2a", charset="UTF-8"'
        mark = ', error="invalid_token"'
        expected = [key + (mark if rejected == "key" else ""),
                    basic + (mark if rejected == "basic" else "")]
        assert _challenges(refused.value) == expected
        http = httpx.post(url + "/", headers={**dict(metadata), "A2A-Version": "1.0"},
                          json={"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                                "params": {"id": "x"}})
        assert http.status_code == 401
        assert http.headers.get_list("www-authenticate") == expected


# ------------------------------------------- the tenant header on a shared port


@pytest.fixture(scope="module")
def tenanted_pair() -> Iterator[tuple[str, str]]:
    """Two agents on one HTTP server and one gRPC port, the tenant named by the
    ``X-Tenant`` header; alice may act in the default tenant and ``team1`` alone:
    (base URL, gRPC target)."""
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY},
                                                  tenants={"alice": ["", "team1"]})},
                      tenant_header="X-Tenant")
    with _pair(auth) as where:
        yield where


def _tenant_metadata(tenant: str | None) -> tuple[tuple[str, str], ...]:
    return _metadata(KEY) + ((("x-tenant", tenant),) if tenant is not None else ())


def _http_send(base: str, tenant: str | None) -> httpx.Response:
    headers = {**_headers(KEY), "A2A-Version": "1.0",
               **({"X-Tenant": tenant} if tenant is not None else {})}
    return httpx.post(base + "/agents/Probe/", headers=headers, json={
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
            "messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})


def _http_task(base: str, task_id: str, tenant: str | None) -> httpx.Response:
    headers = {**_headers(KEY), **({"X-Tenant": tenant} if tenant is not None else {})}
    return httpx.get(base + f"/agents/Probe/tasks/{task_id}", headers=headers)


def _grpc_task(target: str, task_id: str, tenant: str | None) -> pb1.Task:
    """The task over the shared port, its request's tenant naming the agent."""
    with grpc.insecure_channel(target) as channel:
        return rpc1.A2AServiceStub(channel).GetTask(
            pb1.GetTaskRequest(id=task_id, tenant="Probe"), metadata=_tenant_metadata(tenant))


def test_the_tenant_header_names_the_tenant_on_a_shared_grpc_port(
        tenanted_pair: tuple[str, str]) -> None:
    """On a port several agents share, the request's tenant names the agent, and the
    tenant header names the tenant, as it does at the agent's HTTP routes: a task
    made in team1 over HTTP is read over gRPC with the header (it was refused, the
    request said to name tenant ''), and one made over gRPC is read over HTTP."""
    base, target = tenanted_pair
    made = _http_send(base, "team1")
    assert made.status_code == 200, made.text
    task_id = made.json()["result"]["task"]["id"]
    assert _grpc_task(target, task_id, "team1").id == task_id
    # not in the default tenant, there or here
    assert _http_task(base, task_id, None).status_code == 404
    with pytest.raises(grpc.RpcError) as missing:
        _grpc_task(target, task_id, None)
    assert missing.value.code() is grpc.StatusCode.NOT_FOUND, missing.value.details()
    # and the other way: made over gRPC in team1, read over HTTP in team1 alone
    with grpc.insecure_channel(target) as channel:
        sent = rpc1.A2AServiceStub(channel).SendMessage(
            pb1.SendMessageRequest(message=_message("hi"), tenant="Probe"),
            metadata=_tenant_metadata("team1"))
    assert _http_task(base, sent.task.id, "team1").status_code == 200
    assert _http_task(base, sent.task.id, None).status_code == 404
    with pytest.raises(grpc.RpcError) as missing:
        _grpc_task(target, sent.task.id, None)
    assert missing.value.code() is grpc.StatusCode.NOT_FOUND, missing.value.details()


def test_a_forbidden_header_tenant_is_refused_on_a_shared_grpc_port(
        tenanted_pair: tuple[str, str]) -> None:
    """A tenant the caller may not act in, named by the header, is refused as over
    HTTP: 403 there, PERMISSION_DENIED here."""
    base, target = tenanted_pair
    http = _http_send(base, "team2")
    assert http.status_code == 403, http.text
    with pytest.raises(grpc.RpcError) as refused:
        _grpc_task(target, "x", "team2")
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED, refused.value.details()
    assert "may not act in tenant 'team2'" in (refused.value.details() or "")


# ------------------------------------- an API key in the query or a cookie, over gRPC


def _http_with_key(url: str, location: str, where: str, key: str | None) -> httpx.Response:
    """``GetTask`` over JSON-RPC, the key given ``where``: "query", "cookie", "header"
    (a header of the key's name) or "none"."""
    params = {"API_Key": key} if where == "query" and key else {}
    headers = {"A2A-Version": "1.0"}
    if where == "cookie" and key:
        headers["Cookie"] = f"API_Key={key}"
    if where == "header" and key:
        headers["API_Key"] = key
    return httpx.post(url + "/", params=params, headers=headers, json={
        "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}})


@pytest.mark.parametrize("location", ["query", "cookie"])
def test_an_api_key_of_the_query_or_a_cookie_is_metadata_over_grpc(location: str) -> None:
    """gRPC has no query string and no cookies of its own: a key the card says is in
    the query (or a cookie) is read over gRPC from the metadata entry of its name,
    lower-cased, so the one key works on every binding its card names (every gRPC call
    was refused). Over HTTP nothing changed: the key where the card says, a header of
    its name counting for nothing."""
    sock = bind_loopback()
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": KEY}, name="API_Key",
                                                  location=location)})
    app = create_app(Agent("Probe", "Says back.", _echo), public_url=url_of(sock),
                     store="memory://", auth=auth)
    server = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url, \
            grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = rpc1.A2AServiceStub(channel)
        sent = stub.SendMessage(pb1.SendMessageRequest(message=_message("hi")),
                                metadata=(("api_key", KEY),))
        assert sent.task.status.state == pb1.TASK_STATE_COMPLETED
        challenge = f'ApiKey realm="a2a", in="{location}", name="API_Key"'
        for metadata, rejected in [((), False), ((("api_key", WRONG),), True),
                                   ((("x-api-key", KEY),), False)]:
            with pytest.raises(grpc.RpcError) as refused:
                stub.GetTask(pb1.GetTaskRequest(id=sent.task.id), metadata=metadata)
            assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED, metadata
            assert _challenges(refused.value) == [
                challenge + (', error="invalid_token"' if rejected else "")], metadata
        if location == "cookie":  # a cookie entry, as before
            assert stub.GetTask(pb1.GetTaskRequest(id=sent.task.id),
                                metadata=(("cookie", f"API_Key={KEY}"),)).id == sent.task.id
        # the entry twice says two things: refused, as a credential header sent twice is
        with pytest.raises(grpc.RpcError) as twice:
            stub.GetTask(pb1.GetTaskRequest(id=sent.task.id),
                         metadata=(("api_key", KEY), ("api_key", WRONG)))
        assert twice.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert "sent twice" in (twice.value.details() or ""), twice.value.details()
        # HTTP as before
        assert _http_with_key(url, location, location, KEY).json()["error"]["code"] == -32001
        assert _http_with_key(url, location, location, WRONG).status_code == 401
        assert _http_with_key(url, location, "none", None).status_code == 401
        assert _http_with_key(url, location, "header", KEY).status_code == 401


# ------------------------------------------- mutual TLS alone: no gRPC port for it


def _mtls_only(**kw: Any) -> AuthConfig:
    from interlingua.server.auth import MutualTLSAuth

    return AuthConfig(schemes={"mtls": MutualTLSAuth(), **kw.pop("schemes", {})}, **kw)


MTLS_ONLY = [
    _mtls_only(),
    # a key and a certificate together: still a certificate in every requirement
    _mtls_only(schemes={"key": APIKeyAuth({"alice": KEY})},
               security=[{"mtls": [], "key": []}]),
]


@pytest.mark.parametrize("auth", MTLS_ONLY, ids=["mtls alone", "mtls and a key"])
@pytest.mark.parametrize("several", [False, True])
def test_add_grpc_refuses_an_agent_that_takes_client_certificates_alone(
        auth: AuthConfig, several: bool) -> None:
    """gRPC reads no client certificate: an agent whose every requirement needs one
    would have a port refusing every call (UNAUTHENTICATED); add_grpc says so instead."""
    agents = [Agent("Probe", "Says back.", _echo)]
    if several:
        agents.append(Agent("Other", "Says back.", _echo))
    app = create_app(agents if several else agents[0], store="memory://", auth=auth)
    with pytest.raises(ValueError, match="the gRPC binding does not read client certificates"):
        add_grpc(app, "127.0.0.1:0")


def test_add_grpc_serves_an_agent_that_takes_a_key_beside_client_certificates() -> None:
    """A certificate or a key: the key is met over gRPC, the port is served."""
    auth = _mtls_only(schemes={"key": APIKeyAuth({"alice": KEY})})
    app = create_app(Agent("Probe", "Says back.", _echo), store="memory://", auth=auth)
    server = add_grpc(app, "127.0.0.1:0")
    with live_server(app), grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        sent = rpc1.A2AServiceStub(channel).SendMessage(
            pb1.SendMessageRequest(message=_message("hi")), metadata=_metadata(KEY))
        assert sent.task.status.state == pb1.TASK_STATE_COMPLETED


@pytest.mark.parametrize("grpc_on", [True, False])
def test_serve_with_grpc_refuses_an_agent_that_takes_client_certificates_alone(
        tmp_path: Any, grpc_on: bool) -> None:
    """``serve --grpc-port`` with mutual TLS alone: exit 2, saying why, before a port
    is opened; without gRPC the agent is served."""
    import subprocess
    import sys
    from pathlib import Path

    from tests.ports import free_port

    (tmp_path / "auth.py").write_text(
        "from interlingua.server.auth import AuthConfig, MutualTLSAuth\n\n"
        "auth = AuthConfig(schemes={'mtls': MutualTLSAuth()})\n")
    port = free_port()
    args = [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
            "--store", "memory://", "--port", str(port), "--auth", f"{tmp_path}/auth.py:auth",
            "--json", *(["--grpc-port", "0"] if grpc_on else [])]
    root = Path(__file__).resolve().parents[2]
    if grpc_on:
        done = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: the agent's security needs a client "
                                      "certificate (mutual TLS: mtls) in every requirement, "
                                      "and the gRPC binding does not read client "
                                      "certificates"), done.stderr
        assert "Traceback" not in done.stderr and "listen" not in done.stdout
        return
    proc = subprocess.Popen(args, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        info = msgspec.json.decode(proc.stdout.readline())
        assert httpx.get(info["card"], timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
