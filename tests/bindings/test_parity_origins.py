"""A browser's request from a page of another origin is refused on every HTTP binding
(core/origins.py), before its body is read, and makes nothing; the agent's own pages,
the origins it allows and every client that is no browser (no ``Origin``) are served.

Before, any web page the user visited could drive an agent reachable from the
browser (on ``localhost``, on an intranet): JSON-RPC took a ``text/plain`` POST, and
HTTP+JSON one whose body has no type, which a page sends without asking the server
first. gRPC and the mesh are no browser's to reach, and the Unix socket no page's.
Real servers on loopback; the push receiver, which takes POSTs too, the same way."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import msgspec
import pytest
from click.testing import CliRunner

from interlingua import Agent, create_app
from interlingua.cli.main import main
from interlingua.client.push_receiver import Receiver
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from interlingua.server.settings import ServiceSettings
from tests.live import live_agent, live_server

from .chunks_agent import write_chunks
from .drivers import DRIVERS, Refused

AGENT = Agent("Worker", "Writes in chunks.", write_chunks)
#: the HTTP bindings: the drivers of JSON-RPC and HTTP+JSON
HTTP = [name for name in DRIVERS if not name.startswith("grpc")]
EVIL = "https://evil.example"
APP = "https://app.example"
#: what a refused request is told
SAID = (f"Forbidden: a browser's request from a page of another origin ('{EVIL}') is "
        "refused; allow that origin with allowed_origins (interlingua serve --allow-origin "
        "ORIGIN)")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with live_agent(AGENT, allowed_origins=[APP]) as url:
        yield url


def send(text: str) -> c.SendMessage:
    return c.SendMessage(message=m.Message(message_id=new_id(), role=m.Role.USER,
                                           parts=[m.TextPart(text=text)]))


def listed(client: httpx.Client, url: str) -> int:
    result = DRIVERS["jsonrpc-1.0"](client, url).call(c.ListTasks(page_size=100))
    assert isinstance(result, c.ListTasksResult)
    return result.total_size


@pytest.mark.parametrize("name", HTTP)
def test_a_page_of_another_origin_is_refused_and_makes_nothing(server: str, name: str) -> None:
    with httpx.Client(timeout=30) as client:
        before = listed(client, server)
        for origin in (EVIL, "null", EVIL.upper()):
            driver = DRIVERS[name](client, server, headers={"Origin": origin})
            with pytest.raises(Refused) as refused:
                driver.call(send("from a page"))
            assert refused.value.status == 403, (origin, refused.value)
            # (v0.3's HTTP+JSON names no type for it: a message alone, as for credentials)
            assert refused.value.reason in ("-32600", "PERMISSION_DENIED", ""), refused.value
            assert refused.value.message.startswith(
                "Forbidden: a browser's request from a page of another origin"), refused.value
        assert listed(client, server) == before


@pytest.mark.parametrize("name", HTTP)
def test_its_own_pages_an_allowed_origin_and_other_clients_are_served(
        server: str, name: str) -> None:
    own = server.rstrip("/")
    with httpx.Client(timeout=30) as client:
        for headers in ({"Origin": own}, {"Origin": APP}, {}):
            task = DRIVERS[name](client, server, headers=headers).call(send("1"))
            assert isinstance(task, m.Task), headers
            assert task.status.state == m.TaskState.COMPLETED, headers


def test_what_a_page_sends_without_asking_is_refused_as_sent(server: str) -> None:
    # the requests a page makes with no preflight: text/plain, and a body of no type
    rpc = msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": new_id(), "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}]}}})
    rest = msgspec.json.encode({"message": {"messageId": new_id(), "role": "ROLE_USER",
                                            "parts": [{"text": "hi"}]}})
    with httpx.Client(timeout=30) as client:
        before = listed(client, server)
        plain = client.post(server, content=rpc,
                            headers={"Origin": EVIL, "Content-Type": "text/plain"})
        untyped = client.post(server.rstrip("/") + "/message:send", content=rest,
                              headers={"Origin": EVIL, "A2A-Version": "1.0"})
        assert (plain.status_code, plain.json()["error"]["message"]) == (403, SAID)
        assert (untyped.status_code, untyped.json()["error"]["message"]) == (403, SAID)
        assert listed(client, server) == before


def test_the_public_urls_origin_is_the_agents_own_behind_a_proxy() -> None:
    # a proxy passes the backend's Host on; the page is at the public URL's origin
    app = create_app(AGENT, public_url="https://agents.example/base", store="memory://")
    with live_server(app) as url, httpx.Client(timeout=30) as client:
        task = DRIVERS["rest-1.0"](client, url, headers={
            "Origin": "https://agents.example"}).call(send("1"))
        assert isinstance(task, m.Task)
        with pytest.raises(Refused):
            DRIVERS["rest-1.0"](client, url, headers={
                "Origin": "https://agents.example:8443"}).call(send("1"))


def test_a_trusted_proxys_forwarded_host_is_the_agents_own() -> None:
    # as the card's URLs: X-Forwarded-Host names the host the page asked, when trusted
    forwarded = {"Origin": "https://agents.example", "X-Forwarded-Host": "agents.example",
                 "X-Forwarded-Proto": "https"}
    with live_server(create_app(AGENT, store="memory://", trust_forwarded=True)) as url, \
            httpx.Client(timeout=30) as client:
        task = DRIVERS["jsonrpc-1.0"](client, url, headers=forwarded).call(send("1"))
        assert isinstance(task, m.Task)
    with live_server(create_app(AGENT, store="memory://")) as url, \
            httpx.Client(timeout=30) as client, pytest.raises(Refused):
        DRIVERS["jsonrpc-1.0"](client, url, headers=forwarded).call(send("1"))


def test_any_origin_when_every_one_is_allowed() -> None:
    with live_agent(AGENT, allowed_origins=["*"]) as url, httpx.Client(timeout=30) as client:
        task = DRIVERS["jsonrpc-0.3"](client, url, headers={"Origin": EVIL}).call(send("1"))
        assert isinstance(task, m.Task)


def test_the_push_receiver_refuses_a_page_of_another_origin() -> None:
    received = []
    receiver = Receiver(received.append)
    body = msgspec.json.encode({"id": "t1", "contextId": "c1", "kind": "task",
                                "status": {"state": "completed"}})
    with live_server(receiver) as url, httpx.Client(timeout=30) as client:
        refused = client.post(url, content=body, headers={"Origin": EVIL,
                                                          "Content-Type": "text/plain"})
        assert refused.status_code == 403 and refused.json()["error"] == SAID
        assert receiver.refused == 1 and not received
        taken = client.post(url, content=body, headers={"Content-Type": "application/json"})
        assert taken.status_code == 200 and len(received) == 1


@pytest.mark.parametrize("origin", ["not-an-origin", "ftp://files.example", "https://"])
def test_an_allowed_origin_that_is_none_is_refused_where_it_is_given(origin: str) -> None:
    with pytest.raises(ValueError, match="is not an http:// or https:// URL with a host"):
        ServiceSettings(allowed_origins=[origin])
    with pytest.raises(ValueError, match="a list of origins, not one string"):
        ServiceSettings(allowed_origins=APP)  # type: ignore[arg-type]
    for command in (["serve", "examples/echo.py"],
                    ["gateway", "--mesh", "mqtt://127.0.0.1:1883/ns"]):
        done = CliRunner().invoke(main, [*command, "--allow-origin", origin],
                                  prog_name="interlingua")
        assert done.exit_code == 2, (command, done.output)
        assert "is not an http:// or https:// URL with a host" in done.output, done.output


def test_an_allowed_pages_browser_may_read_the_answers(server: str) -> None:
    """A page of an allowed origin gets what CORS asks of a server: its preflight
    answered, and each answer (a stream's too) naming it, so the browser lets the page
    read it. Before, ``allowed_origins`` let its requests through, but no answer carried
    CORS's headers: the browser kept every answer from the page, and refused to send a
    JSON request at all (its preflight went unanswered)."""
    base = server.rstrip("/")
    ask = {"Origin": APP, "Access-Control-Request-Method": "POST",
           "Access-Control-Request-Headers": "content-type,a2a-version,authorization"}
    with httpx.Client(timeout=30) as client:
        for path in ("/", "/message:send", "/v1/message:send"):
            preflight = client.options(base + path, headers=ask)
            assert preflight.status_code == 200, (path, preflight.text)
            assert preflight.headers["access-control-allow-origin"] == APP
            assert "POST" in preflight.headers["access-control-allow-methods"]
            assert "authorization" in preflight.headers["access-control-allow-headers"]
            other = client.options(base + path, headers={**ask, "Origin": EVIL})
            assert other.status_code == 400
            assert "access-control-allow-origin" not in other.headers
        for name in HTTP:
            driver = DRIVERS[name](client, server, headers={"Origin": APP})
            assert isinstance(driver.call(send("1")), m.Task)
        answer = client.post(base + "/message:send", headers={"Origin": APP, "A2A-Version": "1.0"},
                             json={"message": {"messageId": new_id(), "role": "ROLE_USER",
                                               "parts": [{"text": "1"}]}})
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == APP
        with client.stream("POST", base + "/message:stream", headers={
                "Origin": APP, "A2A-Version": "1.0"}, json={"message": {
                    "messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": "2"}]}}) as sse:
            assert sse.headers["content-type"].startswith("text/event-stream")
            assert sse.headers["access-control-allow-origin"] == APP
            sse.read()
        refused = client.post(base + "/message:send", headers={"Origin": EVIL, "A2A-Version": "1.0"},
                              json={"message": {"messageId": new_id(), "role": "ROLE_USER",
                                                "parts": [{"text": "1"}]}})
        assert refused.status_code == 403
        assert "access-control-allow-origin" not in refused.headers


def test_a_server_that_allows_no_other_origin_sends_no_cors_headers() -> None:
    with live_agent(AGENT) as url, httpx.Client(timeout=30) as client:
        own = url.rstrip("/")
        answer = client.post(own + "/message:send", headers={"Origin": own, "A2A-Version": "1.0"},
                             json={"message": {"messageId": new_id(), "role": "ROLE_USER",
                                               "parts": [{"text": "1"}]}})
        assert answer.status_code == 200
        assert not [h for h in answer.headers if h.startswith("access-control-")]
        preflight = client.options(own + "/", headers={
            "Origin": APP, "Access-Control-Request-Method": "POST"})
        assert preflight.status_code == 405
