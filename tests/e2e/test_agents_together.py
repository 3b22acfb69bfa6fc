"""Several agents on one server (``create_app([a, b])``, ``host/agents.py``): each at
``/agents/{name}/`` with its own card, store and HTTP bindings, a listing of them, the
client finding one by URL, and one gRPC port for all by the request's ``tenant``.
Over real HTTP and gRPC on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import grpc
import httpx
import pytest

from interlingua import Agent, Client, create_app
from interlingua.bindings.grpc import add_grpc
from interlingua.bindings.grpc.status import DETAILS_KEY
from interlingua.client.grpc_status import error_of
from interlingua.core.errors import InvalidParams, MethodNotFound, TaskNotFound
from interlingua.core.model import Task, TaskState
from interlingua.core.parts import new_id
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2_grpc as rpc03
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1
from interlingua.host.agents import bus_url_for, path_name, store_url_for
from interlingua.server.context import Context
from tests.client.agents import agent as assistant
from tests.live import live_server

V1 = {"A2A-Version": "1.0"}


async def _echo(ctx: Context) -> None:
    await ctx.complete(f"echoed {ctx.text}")


echo = Agent("Echo", "Says back what it is sent.", _echo)
NAMES = ("Test_assistant", "Echo")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, int]]:
    """Both agents on one loopback server (memory stores), gRPC on one port."""
    app = create_app([assistant, echo], store="memory://")
    hub = add_grpc(app, "127.0.0.1:0")
    with live_server(app) as base:
        assert hub.port
        yield base, hub.port


def test_the_listing_names_every_agent_with_its_urls(served: tuple[str, int]) -> None:
    base, _ = served
    for where in ("/", "/agents", "/agents/"):
        got = httpx.get(base + where, timeout=10)
        assert got.status_code == 200, where
        rows = got.json()["agents"]
        assert [(r["name"], r["path"]) for r in rows] == [("Test assistant", NAMES[0]),
                                                           ("Echo", NAMES[1])]
        for row in rows:
            assert row["url"] == f"{base}/agents/{row['path']}/"
            health = httpx.get(row["url"] + "healthz", timeout=10).json()
            assert health["agent"] == row["name"]
            assert row["card"] == f"{base}/agents/{row['path']}/.well-known/agent-card.json"
            assert httpx.get(row["card"], timeout=10).json()["name"] == row["name"]


def test_each_agent_has_its_own_card(served: tuple[str, int]) -> None:
    base, grpc_port = served
    for agent, name in ((assistant, NAMES[0]), (echo, NAMES[1])):
        card = httpx.get(f"{base}/agents/{name}/.well-known/agent-card.json", timeout=10).json()
        assert card["name"] == agent.name and card["description"] == agent.description
        assert card["url"] == f"{base}/agents/{name}/"
        by_binding = {(i["protocolBinding"], i["protocolVersion"]): i
                      for i in card["supportedInterfaces"]}
        assert by_binding["JSONRPC", "1.0"]["url"] == f"{base}/agents/{name}/"
        assert by_binding["HTTP+JSON", "1.0"]["url"] == f"{base}/agents/{name}"
        # one gRPC port for both: the agent is named by the tenant; v0.3 has no tenant
        grpc_ifaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
        assert grpc_ifaces == [{"url": f"dns:///127.0.0.1:{grpc_port}", "protocolBinding": "GRPC",
                                "tenant": name, "protocolVersion": "1.0"}]
    assert [s["id"] for s in httpx.get(f"{base}/agents/{NAMES[0]}/.well-known/agent-card.json",
                                       timeout=10).json()["skills"]] == ["greet", "echo"]


async def test_the_client_finds_each_agent_by_its_url(served: tuple[str, int]) -> None:
    base, _ = served
    async with Client(f"{base}/agents/Echo/") as client:
        task = await client.send("hi")
        assert task.status.message is not None
        assert task.status.message.parts[0].text == "echoed hi"  # type: ignore[union-attr]
    async with Client(f"{base}/agents/{NAMES[0]}") as client:  # no trailing slash
        task = await client.send("data")
        assert task.artifacts[0].name == "result"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest", "grpc"])
async def test_tasks_of_one_agent_are_never_seen_through_another(
        served: tuple[str, int], binding: str) -> None:
    base, _ = served
    async with Client(f"{base}/agents/Echo/", binding=binding) as echo_client, \
            Client(f"{base}/agents/{NAMES[0]}/", binding=binding) as other:
        assert echo_client.binding == other.binding == binding
        task = await echo_client.send("mine")
        assert (await echo_client.get_task(task.id)).id == task.id
        with pytest.raises(TaskNotFound):
            await other.get_task(task.id)
        with pytest.raises(TaskNotFound):
            await other.cancel(task.id)
        listed = await other.list_tasks(page_size=100)
        assert task.id not in {t.id for t in listed.tasks}
        assert task.id in {t.id for t in (await echo_client.list_tasks(page_size=100)).tasks}
        # a message naming the other agent's task does not continue it
        with pytest.raises(TaskNotFound):
            await other.send("more", task_id=task.id)
    # over HTTP+JSON too
    rest = f"{base}/agents/{NAMES[0]}/tasks/{task.id}"
    assert httpx.get(rest, headers=V1, timeout=10).status_code == 404
    assert httpx.get(f"{base}/agents/Echo/tasks/{task.id}", headers=V1,
                     timeout=10).status_code == 200


def _rest_send(url: str, text: str) -> httpx.Response:
    body = {"message": {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": text}]}}
    return httpx.post(url, json=body, headers=V1, timeout=10)


def test_the_rest_tenant_form_works_per_agent(served: tuple[str, int]) -> None:
    base, _ = served
    sent = _rest_send(f"{base}/agents/Echo/acme/message:send", "in acme")
    assert sent.status_code == 200, sent.text
    task_id = sent.json()["task"]["id"]
    assert httpx.get(f"{base}/agents/Echo/acme/tasks/{task_id}", headers=V1,
                     timeout=10).status_code == 200
    # another tenant of the same agent, and the same tenant of another agent: not there
    assert httpx.get(f"{base}/agents/Echo/tasks/{task_id}", headers=V1,
                     timeout=10).status_code == 404
    assert httpx.get(f"{base}/agents/{NAMES[0]}/acme/tasks/{task_id}", headers=V1,
                     timeout=10).status_code == 404


def test_an_agent_not_served_is_a_404_naming_those_that_are(served: tuple[str, int]) -> None:
    base, _ = served
    got = httpx.get(f"{base}/agents/Nobody/.well-known/agent-card.json", timeout=10)
    assert got.status_code == 404
    message = got.json()["error"]["message"]
    assert "'Nobody'" in message and "Echo" in message and NAMES[0] in message
    rpc = httpx.post(f"{base}/agents/Nobody/", json={"jsonrpc": "2.0", "id": 1,
                                                     "method": "SendMessage", "params": {}},
                     timeout=10)
    assert rpc.status_code == 404


def test_an_agent_not_served_is_refused_in_the_shape_of_the_binding_asked(
        served: tuple[str, int]) -> None:
    """Before: one generic body on every binding, no JSON-RPC envelope nor id, no
    ErrorInfo for v1.0's HTTP+JSON, no type for v0.3's; a client read no A2A error."""
    base, _ = served
    rpc = httpx.post(f"{base}/agents/Nobody/", json={"jsonrpc": "2.0", "id": "r7",
                                                     "method": "SendMessage", "params": {}},
                     timeout=10)
    assert rpc.status_code == 404
    body = rpc.json()
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", "r7", -32601)
    assert "'Nobody'" in body["error"]["message"] and "Echo" in body["error"]["message"]
    garbled = httpx.post(f"{base}/agents/Nobody", content=b"{no json", timeout=10)
    assert (garbled.status_code, garbled.json()["id"]) == (404, None)
    rest = httpx.get(f"{base}/agents/Nobody/tasks/x", headers=V1, timeout=10)
    assert rest.status_code == 404
    error = rest.json()["error"]
    assert error["status"] == "NOT_FOUND"
    assert [d["reason"] for d in error["details"]] == ["METHOD_NOT_FOUND"]
    old = httpx.get(f"{base}/agents/Nobody/v1/tasks/x", timeout=10)
    assert old.status_code == 404
    assert (old.json()["code"], old.json()["type"]) == (-32601, "MethodNotFoundError")


def test_a_batch_to_an_agent_not_served_is_answered_as_a_batch(served: tuple[str, int]) -> None:
    """A JSON-RPC batch gets an array, an error for each request with an id; a batch of
    notifications alone gets no body, as an agent answers them (it was one error, id
    null, for the whole batch)."""
    base, _ = served
    call = {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}}
    got = httpx.post(f"{base}/agents/Nobody/", timeout=10,
                     json=[{**call, "id": "b1"}, call, {**call, "id": 2}])
    assert got.status_code == 404
    assert [(a["id"], a["error"]["code"]) for a in got.json()] == [("b1", -32601), (2, -32601)]
    quiet = httpx.post(f"{base}/agents/Nobody/", json=[call, call], timeout=10)
    assert (quiet.status_code, quiet.content) == (204, b"")


def _jsonrpc_refusal(answer: httpx.Response, rid: str) -> str:
    """The message of a JSON-RPC 404 answering request ``rid`` (-32601, its id echoed)."""
    assert answer.status_code == 404, answer.text
    body = answer.json()
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", rid, -32601), body
    return str(body["error"]["message"])


def test_a_jsonrpc_call_to_the_servers_root_is_told_where_the_agents_are(
        served: tuple[str, int]) -> None:
    """The root is the URL a caller of a server that served one agent posts to: it got
    an HTTP+JSON 405 (no JSON-RPC envelope, no id, no word of the agents)."""
    base, _ = served
    call = {"jsonrpc": "2.0", "id": "r1", "method": "message/send", "params": {}}
    message = _jsonrpc_refusal(httpx.post(base + "/", json=call, timeout=10), "r1")
    assert "/agents/{name}/" in message and "Echo" in message and NAMES[0] in message
    # python-a2a's other names of the JSON-RPC URL, as an agent answers them
    _jsonrpc_refusal(httpx.post(base + "/tasks/send", json=call, timeout=10), "r1")
    # the listing stays; a POST that is no JSON-RPC call keeps its HTTP error
    assert httpx.get(base + "/", timeout=10).json()["agents"]
    for path in ("/agents", "/message:send"):
        rest = httpx.post(base + path, json=call, headers=V1, timeout=10)
        assert rest.status_code in (404, 405) and "jsonrpc" not in rest.json(), rest.text


def test_an_agent_not_served_is_refused_in_jsonrpc_at_its_rpc_path() -> None:
    """With another ``rpc_path`` the JSON-RPC URL of an agent is ``/agents/{name}/rpc``:
    there a JSON-RPC call to an agent not served got an HTTP+JSON 404."""
    app = create_app([Agent("Echo", "Says back.", _echo), Agent("Also", "Says back.", _echo)],
                     store="memory://", rpc_path="/rpc")
    call = {"jsonrpc": "2.0", "id": "r9", "method": "message/send", "params": {}}
    with live_server(app) as base:
        message = _jsonrpc_refusal(httpx.post(f"{base}/agents/Nobody/rpc", json=call,
                                              timeout=10), "r9")
        assert "'Nobody'" in message and "Echo, Also" in message
        assert "/agents/{name}/" in _jsonrpc_refusal(
            httpx.post(f"{base}/rpc", json=call, timeout=10), "r9")
        # the base URLs are no JSON-RPC URL here: HTTP errors, as an agent's answer there
        for path in ("/agents/Nobody/", "/"):
            answer = httpx.post(base + path, json=call, headers=V1, timeout=10)
            assert answer.status_code in (404, 405) and "jsonrpc" not in answer.json(), path


def test_a_host_the_listing_refuses_is_named_no_agent_by_a_404() -> None:
    """A 404 names the agents the listing names: not to a Host it refuses (a page of
    another origin, through DNS rebinding), which gets the listing's 400."""
    app = create_app([Agent("Echo", "Says back.", _echo), Agent("Also", "Says back.", _echo)],
                     store="memory://", allowed_hosts=["localhost", "127.0.0.1"])
    with live_server(app) as base, httpx.Client() as c:
        evil = {"Host": "evil.example"}
        assert c.get(base + "/agents", headers=evil).status_code == 400
        for missing in ("/agents/Nobody/", "/elsewhere"):
            answer = c.get(base + missing, headers=evil)
            assert answer.status_code == 400, answer.text
            assert "Echo" not in answer.text and "evil.example" in answer.text, answer.text
            assert "these are: Echo, Also" in c.get(base + missing).text


async def test_grpc_serves_each_agent_by_its_tenant(served: tuple[str, int]) -> None:
    base, _ = served
    async with Client(f"{base}/agents/Echo/", binding="grpc") as client:
        task = await client.send("over grpc")
        assert client.endpoint is not None and client.endpoint.tenant == "Echo"
        assert task.status.message is not None
        assert task.status.message.parts[0].text == "echoed over grpc"  # type: ignore[union-attr]
    # the task is the agent's own: its HTTP routes see it, the other agent's gRPC does not
    async with Client(f"{base}/agents/Echo/") as client:
        assert (await client.get_task(task.id)).status.state is TaskState.COMPLETED
    async with Client(f"{base}/agents/{NAMES[0]}/", binding="grpc") as other:
        assert (await other.send("data")).artifacts[0].name == "result"
        with pytest.raises(TaskNotFound):
            await other.get_task(task.id)


def _message(text: str) -> pb1.Message:
    return pb1.Message(message_id=new_id(), role=pb1.ROLE_USER, parts=[pb1.Part(text=text)])


def test_grpc_requests_that_name_no_agent_are_refused_clearly(served: tuple[str, int]) -> None:
    _, port = served
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        v1 = rpc1.A2AServiceStub(channel)
        with pytest.raises(grpc.RpcError) as missing:
            v1.SendMessage(pb1.SendMessageRequest(message=_message("hi")))
        assert missing.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "tenant" in (missing.value.details() or "")
        assert "Echo" in (missing.value.details() or "")
        with pytest.raises(grpc.RpcError) as unknown:
            v1.GetTask(pb1.GetTaskRequest(id="x", tenant="Nobody"))
        assert unknown.value.code() is grpc.StatusCode.NOT_FOUND
        assert "'Nobody'" in (unknown.value.details() or "")
        assert "Echo" in (unknown.value.details() or "")
        # each with its ErrorInfo, as an agent's refusals: read by a client as what it
        # is (before: a bare NOT_FOUND, which a client reads as an unknown task)
        for refused, expected in ((missing, InvalidParams), (unknown, MethodNotFound)):
            err = refused.value
            details = dict(err.trailing_metadata() or ()).get(DETAILS_KEY)
            assert details, err
            read = error_of(err.code().name, err.details() or "", details, "the port")
            assert type(read) is expected, read
        sent = v1.SendMessage(pb1.SendMessageRequest(message=_message("raw"), tenant="Echo"))
        assert sent.task.status.state == pb1.TASK_STATE_COMPLETED
        streamed = list(v1.SendStreamingMessage(
            pb1.SendMessageRequest(message=_message("raw"), tenant="Echo")))
        assert streamed[-1].WhichOneof("payload") in ("task", "status_update")
        with pytest.raises(grpc.RpcError) as old:
            rpc03.A2AServiceStub(channel).GetTask(pb03.GetTaskRequest(name="tasks/x"))
        assert old.value.code() is grpc.StatusCode.UNIMPLEMENTED
        assert "v0.3" in (old.value.details() or "")
        assert dict(old.value.trailing_metadata() or ()).get(DETAILS_KEY)


def test_the_shared_grpc_port_answers_health_checks(served: tuple[str, int]) -> None:
    """Health checking needs no tenant: a probe of the port sees it serve."""
    health_pb2 = pytest.importorskip("grpc_health.v1.health_pb2")
    from grpc_health.v1 import health_pb2_grpc

    _, port = served
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "lf.a2a.v1.A2AService"):
            got = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            assert got.status == health_pb2.HealthCheckResponse.SERVING, service


def test_two_agents_with_one_name_are_refused_when_built() -> None:
    twin = Agent("Echo", "Another echo.", _echo)
    with pytest.raises(ValueError, match=r"two agents would be served at /agents/Echo/"):
        create_app([echo, twin])
    # names that become the same path segment collide too
    with pytest.raises(ValueError, match=r"/agents/a_b/"):
        create_app([Agent("a b", "x", _echo), Agent("a_b", "y", _echo)])


def test_a_store_object_cannot_be_shared_by_several_agents() -> None:
    from interlingua.stores import open_store

    with pytest.raises(ValueError, match="as URLs"):
        create_app([echo, assistant], store=open_store("memory://"))


def test_each_agent_gets_a_store_of_its_own() -> None:
    assert path_name("Flight booker") == "Flight_booker"
    assert store_url_for("memory://", "a") == "memory://"
    assert store_url_for("sqlite:///tasks.db?synchronous=full", "a") == \
        "sqlite:///tasks.a.db?synchronous=full"
    assert store_url_for("sqlite:////data/agents/", "a") == "sqlite:////data/agents/a.db"
    assert store_url_for("sqlite:///:memory:", "a") == "sqlite:///:memory:"
    assert store_url_for("postgresql://u@h/db?schema=s", "Echo") == \
        "postgresql://u@h/db?schema=s_echo"
    assert store_url_for("postgresql://u@h/db", "a") == "postgresql://u@h/db?schema=interlingua_a"
    assert bus_url_for("local://", "a") == "local://"
    assert bus_url_for("redis://127.0.0.1:6379/0", "a") == "redis://127.0.0.1:6379/0?prefix=interlingua.a"
    assert bus_url_for("redis://h/0?prefix=p", "a") == "redis://h/0?prefix=p.a"


async def test_postgresql_keeps_each_agent_in_a_schema_of_its_own() -> None:
    from tests.services import create_database, drop_database

    url = create_database()
    try:
        app = create_app([assistant, echo], store=url, freeze_gc=False)
        with live_server(app) as base:
            async with Client(f"{base}/agents/Echo/") as client:
                task = await client.send("in postgres")
            async with Client(f"{base}/agents/{NAMES[0]}/") as client:
                with pytest.raises(TaskNotFound):
                    await client.get_task(task.id)
        import asyncpg

        conn = await asyncpg.connect(url)
        try:
            schemas = {r[0] for r in await conn.fetch(
                "SELECT schema_name FROM information_schema.schemata")}
            counted = await conn.fetchval("SELECT count(*) FROM interlingua_echo.tasks")
            other = await conn.fetchval("SELECT count(*) FROM interlingua_test_assistant.tasks")
        finally:
            await conn.close()
        assert {"interlingua_echo", "interlingua_test_assistant"} <= schemas
        assert (counted, other) == (1, 0)
    finally:
        drop_database(url)


async def test_sqlite_stores_are_separate_files(tmp_path: Path) -> None:
    app = create_app([assistant, echo], store=f"sqlite:///{tmp_path}/tasks.db",
                     freeze_gc=False)
    with live_server(app) as base:
        async with Client(f"{base}/agents/Echo/") as client:
            task = await client.send("kept")
    assert sorted(p.name for p in tmp_path.glob("*.db")) == [
        "tasks.Echo.db", "tasks.Test_assistant.db"]
    # served again: each agent finds its own tasks, and only those
    app = create_app([assistant, echo], store=f"sqlite:///{tmp_path}/tasks.db",
                     freeze_gc=False)
    with live_server(app) as base:
        async with Client(f"{base}/agents/Echo/") as client:
            assert (await client.get_task(task.id)).status.state is TaskState.COMPLETED
        async with Client(f"{base}/agents/{NAMES[0]}/") as client:
            with pytest.raises(TaskNotFound):
                await client.get_task(task.id)


async def test_a_sqlite_folder_and_a_file_are_read_as_the_store_reads_them(
        tmp_path: Path) -> None:
    """The folder form and the file form, with a path the URL percent-encodes: each
    agent's database is where the store's own parser puts it; a URL the store refuses
    is refused when the app is built, with the store's reason."""
    for store, files in ((f"sqlite:///{quote(str(tmp_path))}/my%20data/?synchronous=full",
                          ["my data/Echo.db", "my data/Test_assistant.db"]),
                         (f"sqlite:///{quote(str(tmp_path))}/my%20file.db",
                          ["my file.Echo.db", "my file.Test_assistant.db"])):
        app = create_app([assistant, echo], store=store, freeze_gc=False)
        with live_server(app) as base:
            async with Client(f"{base}/agents/Echo/") as client:
                task = await client.send("kept")
                assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.db")) == files
        for p in tmp_path.rglob("*.db*"):
            p.unlink()
    assert store_url_for("sqlite:///a%20b/", "x") == "sqlite:///a%20b/x.db"
    # read as the store reads them: "data%2F" is the folder data/, "t%2Edb" the file t.db
    assert store_url_for("sqlite:///data%2F", "x") == "sqlite:///data/x.db"
    assert store_url_for("sqlite:///t%2Edb", "x") == "sqlite:///t.x.db"
    assert store_url_for("sqlite:////srv/tasks?busy_timeout=9", "x") == \
        "sqlite:////srv/tasks.x?busy_timeout=9"
    with pytest.raises(ValueError, match="starts with sqlite:///"):
        create_app([assistant, echo], store="sqlite://tasks.db")


def test_public_url_names_each_agent_under_it() -> None:
    app = create_app([assistant, echo], store="memory://",
                     public_url="https://agents.example.com/base")
    with live_server(app) as base:
        card = httpx.get(f"{base}/agents/Echo/.well-known/agent-card.json", timeout=10).json()
        assert card["url"] == "https://agents.example.com/base/agents/Echo/"
        rows = httpx.get(base + "/agents", timeout=10).json()["agents"]
        assert rows[1]["url"] == "https://agents.example.com/base/agents/Echo/"


async def test_each_agent_counts_its_own_metrics() -> None:
    app = create_app([assistant, echo], store="memory://", metrics=True)
    with live_server(app) as base:
        async with Client(f"{base}/agents/Echo/") as client:
            await client.send("counted")
        mine = httpx.get(f"{base}/agents/Echo/metrics", timeout=10).text
        other = httpx.get(f"{base}/agents/{NAMES[0]}/metrics", timeout=10).text
    sent = 'interlingua_requests_total{method="SendMessage",dialect="1.0",binding="jsonrpc",' \
        'outcome="ok"} 1'
    assert sent in mine
    assert 'method="SendMessage"' not in other


def test_a_huge_unknown_agent_name_is_refused_clearly_not_past_grpcs_metadata_limit(
        served: tuple[str, int]) -> None:
    """Before: the whole tenant was echoed in the refusal, past gRPC's 16 KiB metadata
    limit: the caller got RESOURCE_EXHAUSTED 'Stream removed', not NOT_FOUND."""
    base, port = served
    huge = "x" * 20000
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        with pytest.raises(grpc.RpcError) as unknown:
            rpc1.A2AServiceStub(channel).GetTask(pb1.GetTaskRequest(id="x", tenant=huge),
                                                 timeout=10)
    assert unknown.value.code() is grpc.StatusCode.NOT_FOUND
    details = unknown.value.details() or ""
    assert "(20000 characters)" in details and "Echo" in details and len(details) < 300
    got = httpx.get(f"{base}/agents/{huge}/", timeout=10)
    assert got.status_code == 404
    message = got.json()["error"]["message"]
    assert "(20000 characters)" in message and "Echo" in message and len(message) < 300


def test_grpc_acts_in_the_header_tenant_inside_the_named_agent() -> None:
    """A gRPC call's tenant names the agent (docs/several-agents.md); the tenant header
    names the tenant inside it, as at the agent's HTTP routes, and a principal is
    checked against that tenant, the one the call acts in (the header was refused as
    a second tenant, and every call acted in the default one)."""
    from interlingua.server.auth import APIKeyAuth, AuthConfig

    keys = {"alice": "alice-" + "a" * 20, "carol": "carol-" + "c" * 20}
    auth = AuthConfig(schemes={"key": APIKeyAuth(keys, tenants={"carol": {"acme"}})},
                      tenant_header="X-Tenant")
    app = create_app([Agent("Echo", "Says back.", _echo)], store="memory://", auth=auth)
    hub = add_grpc(app, "127.0.0.1:0")
    with live_server(app) as base, grpc.insecure_channel(f"127.0.0.1:{hub.port}") as channel:
        v1 = rpc1.A2AServiceStub(channel)

        def send(key: str, *header: tuple[str, str]) -> Any:
            return v1.SendMessage(pb1.SendMessageRequest(message=_message("hi"), tenant="Echo"),
                                  metadata=(("x-api-key", keys[key]), *header))

        def seen(key: str, task_id: str, tenant: str | None) -> int:
            headers = {"X-API-Key": keys[key], **V1,
                       **({"X-Tenant": tenant} if tenant is not None else {})}
            return httpx.get(f"{base}/agents/Echo/tasks/{task_id}",
                             headers=headers).status_code

        for who, tenant in (("carol", "acme"), ("alice", "foo")):
            task = send(who, ("x-tenant", tenant)).task
            # made in that tenant: the agent's HTTP routes see it there alone
            assert (seen(who, task.id, tenant), seen("alice", task.id, None)) == (200, 404)
        for header in ((), (("x-tenant", "globex"),)):
            with pytest.raises(grpc.RpcError) as denied:
                send("carol", *header)
            assert denied.value.code() is grpc.StatusCode.PERMISSION_DENIED, denied.value
        task = send("alice", ("x-tenant", "")).task
        # an empty header names none: made in the agent's default tenant
        assert seen("alice", task.id, None) == 200


def test_an_agent_with_a_private_card_is_listed_only_to_whom_its_card_is_shown() -> None:
    """The listing shows part of each card: agents whose card is private are listed
    to a caller with credentials, and named to no other caller (nor in a 404)."""
    from interlingua.server.auth import APIKeyAuth, AuthConfig

    key = {"X-API-Key": "alice-" + "a" * 20}
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": key["X-API-Key"]})},
                      public_card=False)
    app = create_app([Agent("Hidden", "Says back.", _echo), Agent("Also", "Says back.", _echo)],
                     store="memory://", auth=auth)
    with live_server(app) as base, httpx.Client() as c:
        for path in ("/", "/agents"):
            assert c.get(base + path).json()["agents"] == []
            shown = c.get(base + path, headers=key).json()["agents"]
            assert [a["name"] for a in shown] == ["Hidden", "Also"], shown
            wrong = c.get(base + path, headers={"X-API-Key": "x" * 26}).json()["agents"]
            assert wrong == []
        for missing in ("/agents/Nobody/", "/elsewhere"):
            answer = c.get(base + missing)
            assert answer.status_code == 404
            assert "Hidden" not in answer.text and "Also" not in answer.text, answer.text
            assert "(GET /agents/)" in answer.text, answer.text
            # to a caller the listing shows them to, a 404 names them as it does
            # (it named the agents of public cards alone, whoever asked)
            answer = c.get(base + missing, headers=key)
            assert "these are: Hidden, Also" in answer.text, answer.text
