"""A key set's URL that httpx cannot read is refused where it is configured, naming the
setting: the push receiver, the server's bearer tokens and the client's card checks
alike. Before, ``Receiver(jwks_url="http://[::1/jwks.json")`` was made, and every signed
notification then raised ``httpx.InvalidURL`` out of the endpoint (outside the
``httpx.HTTPError`` its fetch was ready for): a 500 and a traceback per notification;
``BearerAuth`` took it and refused every token as "cannot be checked now"."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from interlingua.client.push_receiver import JWKSCache, Receiver
from interlingua.client.security import CardVerifier
from interlingua.server.auth.jwt import BearerAuth

MAKERS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "receiver": ("jwks_url", lambda url: Receiver(jwks_url=url)),
    "jwks cache": ("jwks_url", lambda url: JWKSCache(url)),
    "bearer jwks": ("jwks_url", lambda url: BearerAuth(jwks_url=url, audience="me")),
    "bearer discovery": ("openid_config_url",
                         lambda url: BearerAuth(openid_config_url=url, audience="me")),
    "card verifier": ("jwks_url", lambda url: CardVerifier(jwks_url=url)),
}


@pytest.mark.parametrize("maker", list(MAKERS))
@pytest.mark.parametrize(("url", "said"), [
    ("http://[::1/jwks.json", "is not a URL"),
    ("not a url", "is not an http:// or https:// URL with a host"),
    ("ftp://keys.example/jwks.json", "is not an http:// or https:// URL with a host"),
    ("https:///jwks.json", "is not an http:// or https:// URL with a host"),
    ("https://keys.example:99999/jwks.json", re.escape("has no valid port (0-65535)")),
    ("https://ke\x00ys.example/jwks.json", "is not a URL: Invalid non-printable"),
    ("https://ke\u00e9ys..example/jwks.json", "is not a URL: Invalid IDNA hostname"),
])
def test_a_key_set_url_httpx_cannot_read_is_refused_where_it_is_set(
        maker: str, url: str, said: str) -> None:
    setting, make = MAKERS[maker]
    with pytest.raises(ValueError, match=f"^{setting} {re.escape(repr(url))} {said}"):
        make(url)


@pytest.mark.parametrize("maker", list(MAKERS))
@pytest.mark.parametrize("url", ["https://keys.example/.well-known/jwks.json",
                                 "http://127.0.0.1:8080/jwks.json", "http://[::1]:9/k"])
def test_a_key_set_url_is_taken_as_given(maker: str, url: str) -> None:
    setting, make = MAKERS[maker]
    made = make(url)
    held = made.jwks if isinstance(made, Receiver) else made
    assert getattr(held, "url", None) == url or getattr(held, setting, None) == url
