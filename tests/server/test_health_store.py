"""``/healthz`` says when the server cannot reach its store: once its lease has gone
unrenewed for the lease timeout (the others may take it then), 503 with a body that
says so, and ``interlingua_lease_held`` 0, and gRPC health checking says ``NOT_SERVING``;
at the next heartbeat the store takes, 200, 1 and ``SERVING`` again. The store is the machine's PostgreSQL through a TCP proxy the test cuts;
real HTTP on loopback."""

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

LEASE_TIMEOUT = 3.0  # (long enough for a busy machine's first heartbeats)


async def _echo(ctx: Context) -> None:
    await ctx.complete("ok")


AGENT = Agent("Echo", "Says ok.", _echo)


@pytest.fixture
def proxy() -> Iterator[TcpProxy]:
    with TcpProxy(PG_PORT) as p:
        yield p


def through(url: str, proxy: TcpProxy) -> str:
    return url.replace(f":{PG_PORT}/", f":{proxy.port}/", 1)


def lease_held(client: httpx.Client, url: str) -> int:
    metrics = client.get(url + "/metrics").text
    [line] = [x for x in metrics.splitlines() if x.startswith("interlingua_lease_held ")]
    return int(float(line.split()[1]))


def wait_for(client: httpx.Client, url: str, status: int, within: float) -> httpx.Response:
    deadline = time.monotonic() + within
    while True:
        r = client.get(url + "/healthz")
        if r.status_code == status or time.monotonic() > deadline:
            return r
        time.sleep(0.05)


def test_healthz_is_503_while_the_store_is_out_of_reach(pg_url: str, proxy: TcpProxy) -> None:
    from interlingua.bindings.grpc import add_grpc
    from interlingua.host import create_app
    from interlingua.server import EngineConfig

    sock = bind_loopback()
    store = through(pg_url, proxy) + "&command_timeout=1"
    app = create_app(AGENT, public_url=url_of(sock), store=store, metrics=True,
                     engine_config=EngineConfig(lease_interval=0.2, lease_timeout=LEASE_TIMEOUT))
    served = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url, httpx.Client(timeout=10) as client:
        target = f"127.0.0.1:{served.port}"
        r = client.get(url + "/healthz")
        assert r.status_code == 200 and r.json()["status"] == "ok", r.text
        assert lease_held(client, url) == 1
        assert grpc_health(target) == SERVING
        proxy.cut()
        cut_at = time.monotonic()
        r = wait_for(client, url, 503, LEASE_TIMEOUT + 5)
        assert r.status_code == 503, r.text
        # within the lease timeout and a heartbeat or two of the cut
        assert time.monotonic() - cut_at < LEASE_TIMEOUT + 3.0
        body = r.json()
        assert body["status"] == "store_unreachable", body
        assert "store" in body["error"] and "password" not in r.text, body
        assert lease_held(client, url) == 0
        assert wait_for_grpc_health(target, NOT_SERVING, 2) == NOT_SERVING
        proxy.restore()
        r = wait_for(client, url, 200, 10)
        assert r.status_code == 200 and r.json()["status"] == "ok", r.text
        assert lease_held(client, url) == 1
        assert wait_for_grpc_health(target, SERVING, 2) == SERVING
