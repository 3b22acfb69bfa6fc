"""Several agents on one server answer ``GET /healthz`` at the root, the check a load
balancer makes of a replica: 200 while every agent serves, 503 while any agent's store is
out of reach (the rule of one agent's ``/healthz``), each agent's status in the body; the
gRPC port they share says ``NOT_SERVING`` as the root ``/healthz`` says 503.
Real HTTP on loopback; the stores on the machine's PostgreSQL through a TCP proxy the
test cuts."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from interlingua import Agent, Context
from tests.grpc_health import NOT_SERVING, SERVING, grpc_health, wait_for_grpc_health
from tests.live import bind_loopback, live_server, url_of
from tests.services import PG_PORT
from tests.tcp_proxy import TcpProxy


async def _echo(ctx: Context) -> None:
    await ctx.complete("ok")


AGENTS = [Agent("Echo", "Says ok.", _echo), Agent("Flight booker", "Says ok too.", _echo)]


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    with TcpProxy(PG_PORT) as p:
        yield p


def _statuses(r: httpx.Response) -> dict[str, str]:
    return {row["path"]: row["status"] for row in r.json()["agents"]}


def test_the_root_healthz_of_several_agents(pg_url: str, proxy: TcpProxy) -> None:
    from interlingua.bindings.grpc import add_grpc
    from interlingua.host import create_app
    from interlingua.server import EngineConfig

    sock = bind_loopback()
    store = pg_url.replace(f":{PG_PORT}/", f":{proxy.port}/", 1) + "&command_timeout=1"
    app = create_app(AGENTS, public_url=url_of(sock), store=store,
                     engine_config=EngineConfig(lease_interval=0.2, lease_timeout=3.0))
    shared = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url, httpx.Client(timeout=10) as client:
        target = f"127.0.0.1:{shared.port}"
        assert grpc_health(target) == SERVING
        r = client.get(url + "/healthz")
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "ok"
        assert _statuses(r) == {"Echo": "ok", "Flight_booker": "ok"}
        proxy.cut()
        deadline = time.monotonic() + 10
        while (r := client.get(url + "/healthz")).status_code == 200:
            assert time.monotonic() < deadline, "the root /healthz stayed 200"
            time.sleep(0.05)
        assert r.status_code == 503 and r.json()["status"] == "store_unreachable", r.text
        assert wait_for_grpc_health(target, NOT_SERVING, 2) == NOT_SERVING
        proxy.restore()
        deadline = time.monotonic() + 10
        while (r := client.get(url + "/healthz")).status_code != 200:
            assert time.monotonic() < deadline, r.text
            time.sleep(0.05)
        assert _statuses(r) == {"Echo": "ok", "Flight_booker": "ok"}
        assert wait_for_grpc_health(target, SERVING, 2) == SERVING
        # one agent draining is the server draining
        app.state.services["Echo"].engine.draining = True
        r = client.get(url + "/healthz")
        assert r.status_code == 503 and r.json()["status"] == "draining", r.text
        assert _statuses(r) == {"Echo": "draining", "Flight_booker": "ok"}
        app.state.services["Echo"].engine.draining = False
