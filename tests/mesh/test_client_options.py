"""``client_for(url, **options)`` takes the same keywords, and refuses the same ones,
whichever client the URL gets: a misspelt keyword was passed over silently by the mesh
clients (a TypeError from ``Client``), and headers the HTTP client refuses where they
are given (a line break, a value that is no text) failed on the mesh only at the
first publish, after the call's timeout, or with an encoder's words."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from interlingua import Client, client_for
from interlingua.mesh.client import MeshClient
from interlingua.mesh.emqx.client import EmqxClient

URLS = {
    "http": "http://127.0.0.1:9/",
    "grpc": "grpc://127.0.0.1:9",
    "sam": "mqtt://127.0.0.1:9/ns/Echo",
    "emqx": "mqtt://127.0.0.1:9/org/unit/Echo",
}


@pytest.fixture(params=list(URLS))
def url(request: pytest.FixtureRequest) -> str:
    return URLS[request.param]


def test_every_keyword_of_the_client_is_taken(url: str) -> None:
    for name, param in inspect.signature(Client.__init__).parameters.items():
        if param.kind is param.KEYWORD_ONLY:
            if name == "binding" and url.startswith("grpc"):
                continue  # (a gRPC address has that binding alone: checked elsewhere)
            client_for(url, **{name: param.default})


def test_each_url_gets_its_client() -> None:
    assert isinstance(client_for(URLS["sam"]), MeshClient)
    assert isinstance(client_for(URLS["emqx"]), EmqxClient)


def test_a_misspelt_keyword_is_refused(url: str) -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'timout'"):
        client_for(url, timout=5)


@pytest.mark.parametrize(("headers", "said"), [
    ({"X-Key": "a\nb"}, "the value of header X-Key must be printable ASCII text"),
    ({"X-Key": 5}, "the value of header X-Key must be printable ASCII text, not 5"),
    ({"X Key": "v"}, "header name 'X Key' is not an HTTP field name"),
    ({5: "v"}, "header name 5 is not an HTTP field name"),
    # (HTTP keeps no space at a value's ends: the first request failed as unreachable)
    ({"Authorization": "Bearer "}, "the value of header Authorization begins or ends"),
    ({"X-Key": " abc"}, "the value of header X-Key begins or ends with a space"),
])
def test_headers_are_checked_by_one_rule(url: str, headers: dict[Any, Any], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        client_for(url, headers=headers)
