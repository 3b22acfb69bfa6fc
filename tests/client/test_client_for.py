"""``client_for(url)`` picks the client by the URL's scheme; ``Client`` itself
is for HTTP and gRPC agents only and says where a mesh URL goes."""

from __future__ import annotations

import pytest

from interlingua import Client, client_for
from interlingua.mesh.client import MeshClient


async def test_http_and_grpc_urls_get_a_client() -> None:
    async with client_for("http://127.0.0.1:1/", dialect="1.0", timeout=5) as client:
        assert type(client) is Client
        assert client.dialect == "1.0"
    async with client_for("127.0.0.1:1", dialect="1.0", binding="grpc") as client:
        assert type(client) is Client


async def test_mesh_urls_get_a_mesh_client_with_the_options() -> None:
    client = client_for("mqtt://127.0.0.1:1/demo/Echo", timeout=3, headers={"x-a": "1"},
                        verify=False)
    assert type(client) is MeshClient
    assert (client.agent, client.timeout, client.headers) == ("Echo", 3, {"x-a": "1"})
    await client.aclose()


@pytest.mark.parametrize("url", ["mqtt://127.0.0.1:1883/demo/Echo", "mqtts://broker/demo/Echo"])
def test_client_refuses_a_mesh_url_and_names_the_factory(url: str) -> None:
    with pytest.raises(ValueError, match=r"client_for\(url\)"):
        Client(url)


def test_the_push_receiver_is_the_clients_and_still_importable_from_server_push() -> None:
    import interlingua.client
    import interlingua.server.push

    assert interlingua.server.push.Receiver is interlingua.client.Receiver
    assert interlingua.server.push.PushEvent is interlingua.client.PushEvent
    assert interlingua.client.Receiver.__module__ == "interlingua.client.push_receiver"


@pytest.mark.parametrize("url", ["http://127.0.0.1:1/", "grpc://127.0.0.1:1",
                                 "mqtt://127.0.0.1:1/demo/Echo",
                                 "mqtt://127.0.0.1:1/org/unit/Echo"])
@pytest.mark.parametrize("timeout", [0.0, -1.0, float("nan")])
def test_every_client_refuses_a_timeout_no_call_could_meet(url: str, timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout must be above 0 seconds"):
        client_for(url, timeout=timeout)

