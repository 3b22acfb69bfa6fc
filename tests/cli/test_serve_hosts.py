"""``interlingua serve``, ``interlingua gateway`` and ``interlingua listen`` on this machine only (the default
``127.0.0.1``) answer to their own names (and to those ``--allow-host`` gives): a web
page whose name is made to resolve to 127.0.0.1 (DNS rebinding) would otherwise be the
agent's own origin to the browser, and could drive it past the check of ``Origin``
(core/origins.py), or post notifications to ``listen``. Before, all answered any ``Host``. A server listening on every
interface answers every name, as ``create_app`` does, unless ``--allow-host`` names
some. The names are matched as a Host header writes them: an IPv6 address in brackets
(the inspector's ``::1`` never matched ``[::1]:PORT`` before)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from interlingua.cli.answered_hosts import answered_hosts
from interlingua.host.hosts import HostNotAllowed, HostPolicy
from tests.e2e.procs import Process

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    proc = Process()
    proc.launch([sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
                 "--port", str(proc.port), "--store", "memory://", "--log-level", "warning",
                 "--public-url", f"http://agents.example:{proc.port}",
                 "--allow-host", "*.internal.example"])
    try:
        proc.wait_ready()
        yield proc.url
    finally:
        proc.stop()


def ask(url: str, host: str) -> httpx.Response:
    return httpx.post(url + "/", headers={"Host": host}, timeout=30, json={
        "jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "nothing"}})


def test_a_loopback_server_answers_its_own_names_and_its_public_urls(served: str) -> None:
    port = served.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}",
                 f"agents.example:{port}", f"a2a.internal.example:{port}"):
        answer = ask(served, host)
        assert answer.status_code == 200, (host, answer.text)
        assert answer.json()["error"]["code"] == -32001, host  # task not found: served


def test_a_loopback_server_refuses_a_name_rebound_to_it(served: str) -> None:
    port = served.rsplit(":", 1)[1]
    answer = ask(served, f"rebound.evil.example:{port}")
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == (
        f"Invalid Request: Host 'rebound.evil.example:{port}' is not one this server "
        "answers for")


def test_a_server_listening_everywhere_answers_every_name_unless_told() -> None:
    assert answered_hosts("0.0.0.0") is None
    assert answered_hosts("::", "https://agents.example") is None
    assert answered_hosts("0.0.0.0", "https://agents.example", ["a2a.example"]) == [
        "a2a.example", "agents.example"]
    assert answered_hosts("127.0.0.1") == ["127.0.0.1", "localhost", "::1"]
    assert answered_hosts("127.0.0.1", None, ["*"]) is None


async def test_a_loopback_gateway_refuses_a_name_rebound_to_it() -> None:
    from interlingua.mesh.gateway import Gateway
    from interlingua.mesh.topics import parse_mesh_url

    gateway = Gateway(parse_mesh_url("mqtt://127.0.0.1:1883/ns"), "ns",
                      allowed_hosts=answered_hosts("127.0.0.1"))
    transport = httpx.ASGITransport(app=gateway)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as http:
        own = await http.get("/agents")
        assert own.status_code == 200 and own.json() == {"agents": []}
        rebound = await http.get("/agents/echo/", headers={"Host": "rebound.evil.example"})
        assert rebound.status_code == 400
        assert rebound.json()["error"]["message"] == (
            "Host 'rebound.evil.example' is not one this server answers for")


def test_an_ipv6_name_is_matched_as_a_host_header_writes_it() -> None:
    policy = HostPolicy(["::1", "[fe80::1]"])
    policy.check("[::1]:8000")
    policy.check("[fe80::1]")
    with pytest.raises(HostNotAllowed):
        policy.check("[::2]:8000")


def test_a_loopback_listener_refuses_a_name_rebound_to_it() -> None:
    proc = Process()
    proc.launch([sys.executable, "-m", "interlingua.cli.main", "listen",
                 "--port", str(proc.port), "--allow-host", "hooks.internal.example"])
    try:
        proc.wait_ready()
        notification = {"kind": "status-update", "taskId": "t-1", "contextId": "c-1",
                         "status": {"state": "working"}, "final": False}

        def post(host: str) -> httpx.Response:
            return httpx.post(proc.url + "/", headers={"Host": host}, json=notification,
                              timeout=30)

        for host in (f"127.0.0.1:{proc.port}", f"localhost:{proc.port}",
                     f"hooks.internal.example:{proc.port}"):
            answer = post(host)
            assert answer.status_code == 200 and answer.json() == {"ok": True}, host
        answer = post(f"rebound.evil.example:{proc.port}")
        assert answer.status_code == 400
        assert answer.json() == {"error": f"Host 'rebound.evil.example:{proc.port}' is not "
                                          "one this server answers for"}
    finally:
        proc.stop()


@pytest.mark.parametrize("public", [False, True])
def test_several_agents_listing_refuses_a_name_rebound_to_it(public: bool) -> None:
    # (each agent's routes refused it; the listing at / and /agents answered any
    # Host, with every agent's name and description)
    proc = Process()
    proc.launch([sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
                 "examples/flight_booking.py", "--port", str(proc.port), "--store",
                 "memory://", "--log-level", "warning",
                 *(["--public-url", "https://agents.example"] if public else [])])
    try:
        proc.wait_ready("/agents")
        for path in ("/", "/agents", "/agents/", "/agents/Echo/.well-known/agent-card.json"):
            own = httpx.get(proc.url + path, timeout=30)
            assert own.status_code == 200, (path, own.text)
            rebound = httpx.get(proc.url + path, headers={"Host": "rebound.evil.example"},
                                timeout=30)
            assert rebound.status_code == 400, (path, rebound.text)
            assert "rebound.evil.example" in rebound.text and "Echo" not in rebound.text
    finally:
        proc.stop()

