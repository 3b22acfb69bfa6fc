"""Authentication over real gRPC on loopback, held to what HTTP does: the challenges
of a rejected credential."""

from __future__ import annotations

import base64

import grpc
import httpx
import pytest

from interlingua import Agent, Context, create_app
from interlingua.bindings.grpc import add_grpc
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
