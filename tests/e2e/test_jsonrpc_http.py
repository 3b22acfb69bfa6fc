"""The JSON-RPC endpoint over real HTTP: both dialects, bad input, cards, limits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import jsonschema
import pytest

from interlingua import Agent, Context
from tests.live import live_agent
from tests.reference import SPEC

from .sse_client import V1, rpc, v03_message, v1_message

SCHEMA_03 = SPEC / "v0.3.0" / "a2a.json"


async def _agent(ctx: Context) -> None:
    if ctx.text == "ask":
        await ctx.require_input("What else?")
    elif ctx.text == "slow":
        await ctx.update("working")
        import asyncio

        await asyncio.sleep(30)
    else:
        await ctx.complete(artifact=f"echo: {ctx.text}")


AGENT = Agent("Test", "Test agent", _agent)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_agent(AGENT, max_body_bytes=64 * 1024) as base:
        yield base


@pytest.fixture
def c() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


def post(c: httpx.Client, url: str, body: Any, headers: dict[str, str] | None = None,
         ) -> httpx.Response:
    if isinstance(body, (bytes, str)):
        return c.post(url + "/", content=body, headers={"content-type": "application/json",
                                                        **(headers or {})})
    return c.post(url + "/", json=body, headers=headers or {})


def test_v1_send_get_list_cancel(c: httpx.Client, url: str) -> None:
    r = post(c, url, rpc("SendMessage", {"message": v1_message("hi")}, "a"), V1)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    body = r.json()
    assert body["id"] == "a" and body["jsonrpc"] == "2.0"
    task = body["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "echo: hi"}]
    got = post(c, url, rpc("GetTask", {"id": task["id"], "historyLength": 0}), V1).json()
    assert got["result"]["id"] == task["id"] and "history" not in got["result"]
    listed = post(c, url, rpc("ListTasks", {"pageSize": 1}), V1).json()["result"]
    assert listed["pageSize"] == 1 and listed["totalSize"] >= 1 and "nextPageToken" in listed
    # a finished task cannot be canceled
    err = post(c, url, rpc("CancelTask", {"id": task["id"]}), V1).json()["error"]
    assert err["code"] == -32002
    # a running task can
    running = post(c, url, rpc("SendMessage", {"message": v1_message("slow"),
                                               "configuration": {"returnImmediately": True}}),
                   V1).json()["result"]["task"]
    canceled = post(c, url, rpc("CancelTask", {"id": running["id"]}), V1).json()["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


def test_v03_send_get_cancel_validate_against_schema(c: httpx.Client, url: str) -> None:
    import msgspec

    schema = msgspec.json.decode(SCHEMA_03.read_bytes())
    def check(doc: Any, definition: str) -> None:
        jsonschema.validate(doc, {**schema, "$ref": f"#/definitions/{definition}"})

    r = post(c, url, rpc("message/send", {"message": v03_message("hi")}, 5)).json()
    check(r, "SendMessageSuccessResponse")
    assert r["result"]["kind"] == "task" and r["result"]["status"]["state"] == "completed"
    got = post(c, url, rpc("tasks/get", {"id": r["result"]["id"]})).json()
    check(got, "GetTaskSuccessResponse")
    err = post(c, url, rpc("tasks/cancel", {"id": r["result"]["id"]})).json()
    check(err, "JSONRPCErrorResponse")
    assert err["error"]["code"] == -32002
    missing = post(c, url, rpc("tasks/get", {"id": "nope"})).json()
    check(missing, "JSONRPCErrorResponse")
    assert missing["error"]["code"] == -32001


def test_multi_turn_in_both_dialects(c: httpx.Client, url: str) -> None:
    t = post(c, url, rpc("SendMessage", {"message": v1_message("ask")}), V1).json()["result"]["task"]
    assert t["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    t2 = post(c, url, rpc("SendMessage", {"message": v1_message("more", taskId=t["id"])}),
              V1).json()["result"]["task"]
    assert t2["status"]["state"] == "TASK_STATE_COMPLETED"
    # the same task read in the other dialect
    same = post(c, url, rpc("tasks/get", {"id": t["id"]})).json()["result"]
    assert same["status"]["state"] == "completed"
    assert [p["text"] for p in same["artifacts"][0]["parts"]] == ["echo: more"]
    # v0.3 multi-turn
    t = post(c, url, rpc("message/send", {"message": v03_message("ask")})).json()["result"]
    assert t["status"]["state"] == "input-required"
    t2 = post(c, url, rpc("message/send", {"message": v03_message(
        "more", taskId=t["id"], contextId=t["contextId"])})).json()["result"]
    assert t2["status"]["state"] == "completed"
    # continuing a finished task is refused
    err = post(c, url, rpc("message/send", {"message": v03_message(
        "again", taskId=t["id"])})).json()["error"]
    assert err["code"] == -32004
    err = post(c, url, rpc("message/send", {"message": v03_message(
        "x", taskId=t["id"], contextId="wrong")})).json()["error"]
    assert err["code"] == -32602


@pytest.mark.parametrize(
    ("body", "code", "rid"),
    [
        (b"{not json", -32700, None),
        (b"", -32700, None),
        (b'{"jsonrpc":"2.0","id":1}', -32600, 1),
        (b'{"jsonrpc":"1.0","id":"x","method":"GetTask"}', -32600, "x"),
        (b'{"id":2,"method":"GetTask"}', -32600, 2),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":3,"method":7}', -32600, 3),
        (b'{"jsonrpc":"2.0","id":4,"method":"no/such/method"}', -32601, 4),
        (b'{"jsonrpc":"2.0","id":5,"method":"tasks/list","params":{}}', -32601, 5),
        (b'{"jsonrpc":"2.0","id":6,"method":"GetTask","params":{"id":"missing"}}', -32001, 6),
        (b'{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{}}', -32602, 7),
        (b'{"jsonrpc":"2.0","id":8,"method":"GetTask","params":{"id":5}}', -32602, 8),
        (b'{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{}}', -32602, 9),
        (b'{"jsonrpc":"2.0","id":10,"method":"SendMessage","params":{"message":'
         b'{"messageId":"m","role":"ROLE_USER","parts":[]}}}', -32602, 10),
        (b'{"jsonrpc":"2.0","id":11,"method":"SendMessage","params":{"message":'
         b'{"role":"ROLE_USER","parts":[{"text":"x"}]}}}', -32602, 11),
        (b'{"jsonrpc":"2.0","id":12,"method":"ListTasks","params":{"pageSize":500}}', -32602, 12),
        (b'{"jsonrpc":"2.0","id":13,"method":"ListTasks","params":{"pageToken":"bogus"}}',
         -32602, 13),
        (b'{"jsonrpc":"2.0","id":14,"method":"ListTasks","params":{"status":"DONE"}}', -32602, 14),
        (b'{"jsonrpc":"2.0","id":15,"method":"GetTask","params":{"id":"x","historyLength":-1}}',
         -32602, 15),
        (b'{"jsonrpc":"2.0","id":16,"method":"message/send","params":{"message":'
         b'{"kind":"message","messageId":"m","role":"robot","parts":[{"kind":"text","text":"x"}]}}}',
         -32602, 16),
        # the card offers no extended card: unsupported (v1.0 §3.3.4); v0.3 has -32007
        (b'{"jsonrpc":"2.0","id":17,"method":"GetExtendedAgentCard"}', -32004, 17),
        (b'{"jsonrpc":"2.0","id":18,"method":"agent/getAuthenticatedExtendedCard"}', -32007, 18),
    ],
)
def test_bad_input_gets_the_right_error(c: httpx.Client, url: str, body: bytes, code: int,
                                        rid: Any) -> None:
    r = post(c, url, body, V1)
    assert r.status_code == 200
    doc = r.json()
    assert doc["jsonrpc"] == "2.0" and doc["id"] == rid and "result" not in doc
    assert doc["error"]["code"] == code
    assert isinstance(doc["error"]["message"], str) and doc["error"]["message"]
    assert "Traceback" not in r.text


def test_invalid_params_message_names_the_field(c: httpx.Client, url: str) -> None:
    r = post(c, url, rpc("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER",
                                                     "parts": [{"text": 5}]}}), V1).json()
    assert r["error"]["code"] == -32602
    assert "parts[0]" in r["error"]["message"]


def test_body_over_the_limit_is_refused_before_parsing(c: httpx.Client, url: str) -> None:
    big = b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":"' + b"a" * 70_000 + b'"}}'
    r = post(c, url, big, V1)
    assert r.status_code == 413
    doc = r.json()
    assert doc["error"]["code"] == -32600 and "limit" in doc["error"]["message"]


def test_notification_gets_no_body(c: httpx.Client, url: str) -> None:
    r = post(c, url, {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}}, V1)
    assert r.status_code == 204 and r.content == b""


def test_batch_is_answered_as_an_array(c: httpx.Client, url: str) -> None:
    body = [rpc("SendMessage", {"message": v1_message("one")}, 1),
            {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}},  # notification
            rpc("GetTask", {"id": "missing"}, 2),
            5,
            rpc("SendStreamingMessage", {"message": v1_message("s")}, 3)]
    r = post(c, url, body, V1)
    assert r.status_code == 200
    out = r.json()
    assert isinstance(out, list) and len(out) == 4
    by_id = {d["id"]: d for d in out}
    assert by_id[1]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert by_id[2]["error"]["code"] == -32001
    assert by_id[3]["error"]["code"] == -32600
    assert by_id[None]["error"]["code"] == -32600


def test_version_header(c: httpx.Client, url: str) -> None:
    ok = post(c, url, rpc("GetTask", {"id": "x"}), {"A2A-Version": "1.0.3"}).json()
    assert ok["error"]["code"] == -32001  # the version was fine
    bad = post(c, url, rpc("GetTask", {"id": "x"}), {"A2A-Version": "9.1"}).json()
    assert bad["error"]["code"] == -32009
    assert "9.1" in bad["error"]["message"]
    # the v0.3 dialect has no VersionNotSupported code
    bad03 = post(c, url, rpc("tasks/get", {"id": "x"}), {"A2A-Version": "banana"}).json()
    assert bad03["error"]["code"] == -32600
    # lenient default: a v1.0 method without the header is served
    none = post(c, url, rpc("GetTask", {"id": "x"})).json()
    assert none["error"]["code"] == -32001
    # the query parameter form
    q = c.post(url + "/?A2A-Version=7.0", json=rpc("GetTask", {"id": "x"})).json()
    assert q["error"]["code"] == -32009


def test_strict_versions() -> None:
    with live_agent(AGENT, strict_versions=True) as base, httpx.Client() as c:
        missing = c.post(base + "/", json=rpc("GetTask", {"id": "x"})).json()
        assert missing["error"]["code"] == -32009
        mixed = c.post(base + "/", json=rpc("GetTask", {"id": "x"}),
                       headers={"A2A-Version": "0.3"}).json()
        assert mixed["error"]["code"] == -32009
        good = c.post(base + "/", json=rpc("GetTask", {"id": "x"}), headers=V1).json()
        assert good["error"]["code"] == -32001
        # each dialect takes its own versions: SAM's peers send any of v0.1 to v0.3
        sam = {"message": {"role": "user", "parts": [{"text": "hi"}]}}
        for version in ("0.1", "0.3"):
            ok = c.post(base + "/", json=rpc("tasks/send", sam),
                        headers={"A2A-Version": version}).json()
            assert "result" in ok, (version, ok)
        old = c.post(base + "/", json=rpc("message/send", {"message": {
            "kind": "message", "messageId": "m-1", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}]}}), headers={"A2A-Version": "0.1"}).json()
        assert old["error"]["code"] == -32600  # v0.3 has no code of its own for it


@pytest.mark.parametrize(("method", "params", "accepted"), [
    ("tasks/send", {"message": {"role": "user", "parts": [{"text": "hi"}]}}, "0.1, 0.2, 0.3"),
    ("message/send", {"message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}},
     "0.2, 0.3"),
    ("tasks/send", {"id": "t-1", "message": {"role": "user",
                                             "parts": [{"type": "text", "text": "hi"}]}}, "0.1"),
    ("message/send", {"message": v03_message("hi")}, "0.2, 0.3"),
])
def test_strict_versions_refusal_names_the_versions_the_method_takes(
        method: str, params: dict[str, Any], accepted: str) -> None:
    with live_agent(AGENT, strict_versions=True) as base, httpx.Client() as c:
        err = c.post(base + "/", json=rpc(method, params),
                     headers={"A2A-Version": "1.0"}).json()["error"]
    assert err["code"] == -32600, err
    assert err["message"].endswith(f"versions accepted for this method: {accepted}"), err
    assert err["data"] == {"supportedVersions": accepted.split(", ")}, err


def test_card_at_both_paths_readable_by_both_generations(c: httpx.Client, url: str) -> None:
    import msgspec

    a = c.get(url + "/.well-known/agent-card.json")
    b = c.get(url + "/.well-known/agent.json")
    assert a.status_code == b.status_code == 200 and a.content == b.content
    card = a.json()
    # v1.0 readers
    ifaces = card["supportedInterfaces"]
    assert {(i["protocolBinding"], i["protocolVersion"]) for i in ifaces} >= {
        ("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0"), ("HTTP+JSON", "0.3")}
    # JSON-RPC at the agent URL; HTTP+JSON routes hang off the base URL
    assert all(i["url"] == (url + "/" if i["protocolBinding"] == "JSONRPC" else url)
               for i in ifaces)
    # v0.3 readers: the card validates against the v0.3 schema
    assert card["url"] == url + "/" and card["preferredTransport"] == "JSONRPC"
    assert card["protocolVersion"].startswith("0.3")
    schema = msgspec.json.decode(SCHEMA_03.read_bytes())
    jsonschema.validate(card, {**schema, "$ref": "#/definitions/AgentCard"})
    assert "0.0.0.0" not in a.text


def test_card_never_names_0_0_0_0() -> None:
    from interlingua.cli.serve import public_url_for

    assert public_url_for("0.0.0.0", 8000) == "http://localhost:8000"
    assert public_url_for("::", 9) == "http://localhost:9"
    assert public_url_for("10.1.2.3", 80) == "http://10.1.2.3:80"


def test_healthz(c: httpx.Client, url: str) -> None:
    r = c.get(url + "/healthz")
    assert r.status_code == 200 and r.json()["status"] == "ok"


def test_healthz_reports_the_sqlite_settings_in_effect(tmp_path: Path) -> None:
    agent = Agent("Echo", "Echoes", _agent)
    with live_agent(agent, store=f"sqlite:///{tmp_path}/h.db") as base:
        health = httpx.get(base + "/healthz").json()
    assert health["store"] == f"sqlite:///{tmp_path}/h.db"
    settings = health["store_settings"]
    assert settings["journal_mode"] == "wal" and settings["synchronous"] == "normal"
    assert settings["page_size"] == 2048 and settings["busy_timeout_ms"] == 5000
    assert settings["cache_size_kib"] == 65536 and settings["foreign_keys"] is True


def test_healthz_never_shows_a_password_given_as_an_option(pg_url: str) -> None:
    """Before: ``?password=`` (an option asyncpg takes) was shown whole, to any caller,
    where a password before the host was masked."""
    from interlingua.stores import shown_url

    url = f"{pg_url}&password=S3cret%21"  # (trust: any password)
    with live_agent(Agent("Echo", "Echoes", _agent), store=url) as base:
        shown = httpx.get(base + "/healthz").json()["store"]
    assert "S3cret" not in shown and "password=***" in shown, shown
    assert shown_url("redis://h/0?x=1&sslpassword=a;Token=b#f") == \
        "redis://h/0?x=1&sslpassword=***;Token=***#f"
    # no path: the query follows the host (it was taken as part of the host, unmasked)
    assert shown_url("redis://cache:6379?password=hunter2") == "redis://cache:6379?password=***"
    assert shown_url("postgresql://u:pw@db?password=x&sslmode=require") == \
        "postgresql://u:***@db?password=***&sslmode=require"


def test_healthz_names_the_socket_directory_given_as_host(pg_url: str) -> None:
    """Before: a server given by ``?host=`` (here a Unix socket's directory) was
    said to be localhost:5432."""
    parts = urlsplit(pg_url)
    if not Path("/var/run/postgresql/.s.PGSQL.5432").exists():
        pytest.skip("no PostgreSQL socket in /var/run/postgresql")
    url = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[0] + "@",
                                    query=parts.query + "&host=/var/run/postgresql"))
    with live_agent(Agent("Echo", "Echoes", _agent), store=url) as base:
        settings = httpx.get(base + "/healthz").json()["store_settings"]
    assert settings["database"] == f"/var/run/postgresql:5432{parts.path}"


def _wrong_verb(r: httpx.Response, path: str) -> None:
    """The JSON-RPC URL's 405, as HTTP+JSON answers ``GET /tasks/send``: Allow: POST
    and a JSON error body a client reads (not Starlette's plain text)."""
    assert r.status_code == 405 and r.headers["allow"] == "POST", r.text
    assert r.headers["content-type"].startswith("application/")
    error = r.json()["error"]
    assert error["code"] == 405 and error["details"][0]["reason"] == "METHOD_NOT_ALLOWED"
    assert error["message"] == f"Method not allowed: {r.request.method} '{path}' (allowed: POST)"


def test_wrong_http_method(c: httpx.Client, url: str) -> None:
    for verb in ("GET", "PUT", "DELETE"):
        _wrong_verb(c.request(verb, url + "/"), "/")
    # the same answer as on its python-a2a names (HTTP+JSON's)
    alias = c.get(url + "/tasks/send")
    _wrong_verb(alias, "/tasks/send")
    assert c.get(url + "/").json() == {**alias.json(), "error": {
        **alias.json()["error"], "message": "Method not allowed: GET '/' (allowed: POST)"}}


@pytest.mark.parametrize("rest", [True, False], ids=["with HTTP+JSON", "JSON-RPC alone"])
def test_wrong_http_method_without_or_beside_other_apps(c: httpx.Client, rest: bool) -> None:
    # GET /inspector/ is the inspector's still
    with live_agent(AGENT, rest=rest, inspector=True) as base:
        _wrong_verb(c.get(base + "/"), "/")
        _wrong_verb(c.get(base + "/tasks/sendSubscribe"), "/tasks/sendSubscribe")
        page = c.get(base + "/inspector/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]


def test_a_body_opening_with_a_byte_order_mark_is_read_in_each_dialect(
        c: httpx.Client, url: str) -> None:
    """As HTTP+JSON reads it (tests/bindings/test_rest_http.py): one leading byte order
    mark is passed over (RFC 8259 §8.1), two are a parse error."""
    import msgspec

    bom = b"\xef\xbb\xbf"
    for body, headers in ((rpc("SendMessage", {"message": v1_message("x")}), V1),
                          (rpc("message/send", {"message": v03_message("x")}), {})):
        raw = msgspec.json.encode(body)
        r = c.post(url + "/", content=bom + raw,
                   headers={"content-type": "application/json", **headers})
        assert r.status_code == 200 and "result" in r.json(), r.text
        r = c.post(url + "/", content=bom * 2 + raw,
                   headers={"content-type": "application/json", **headers})
        assert r.json()["error"]["code"] == -32700, r.text


def test_wrong_http_method_on_the_card_and_health_paths(c: httpx.Client) -> None:
    """The app's own routes refuse a wrong verb with the 405 every other route answers
    (a JSON error body), not Starlette's plain text."""
    with live_agent(AGENT) as base:
        for path in ("/.well-known/agent-card.json", "/healthz"):
            r = c.put(base + path)
            assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD", r.text
            error = r.json()["error"]
            assert error["details"][0]["reason"] == "METHOD_NOT_ALLOWED"
            assert error["message"] == f"Method not allowed: PUT '{path}' (allowed: GET, HEAD)"
            assert c.head(base + path).status_code == 200


def test_wrong_http_method_on_an_agent_served_beside_others(c: httpx.Client) -> None:
    other = Agent("Other", "Another agent", _agent)
    with live_agent([AGENT, other]) as base:
        listing = c.get(base + "/")  # GET / lists the agents
        assert listing.status_code == 200 and listing.json()["agents"]
        _wrong_verb(c.get(base + "/agents/Test/"), "/agents/Test/")  # as the caller sent it


def test_streaming_turned_off_is_an_error_in_each_dialect() -> None:
    quiet = Agent("Quiet", "Does not stream", _agent, streaming=False)
    with live_agent(quiet) as base, httpx.Client() as c:
        card = c.get(base + "/.well-known/agent-card.json").json()
        assert card["capabilities"]["streaming"] is False
        r = c.post(base + "/", headers=V1, json=rpc("SendStreamingMessage",
                                                     {"message": v1_message("x")}))
        assert r.headers["content-type"] == "application/json"
        assert r.json()["error"]["code"] == -32004
        r = c.post(base + "/", json=rpc("message/stream", {"message": v03_message("x")}))
        assert r.json()["error"]["code"] == -32004
        assert "stream" in r.json()["error"]["message"]
