"""A credential sent twice, on every binding: an API key twice in the query string or
among the cookies (all of a request's ``Cookie`` headers read: HTTP/2 and some clients
split them) is refused with 401, never one of the two taken (docs/security.md,
Credential details)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.server.auth import APIKeyAuth, AuthConfig
from tests.live import live_grpc_agent

from .drivers import DRIVERS, Driver, Refused
from .test_parity import AGENT, ALICE, BOB, send_task

KEY, OTHER = ALICE["X-API-Key"], BOB["X-API-Key"]
HTTP = [n for n in DRIVERS if not n.startswith("grpc")]


@pytest.fixture(scope="module")
def keyed() -> Iterator[str]:
    """The agent taking an API key in the query string (``api_key``) or in a cookie
    (``session``)."""
    auth = AuthConfig(schemes={
        "query": APIKeyAuth({"alice": KEY, "bob": OTHER}, name="api_key", location="query"),
        "cookie": APIKeyAuth({"alice": KEY, "bob": OTHER}, name="session", location="cookie")})
    with live_grpc_agent(AGENT, auth=auth) as (url, _):
        yield url


def refused_twice(d: Driver, where: str) -> None:
    with pytest.raises(Refused) as refused:
        d.call(c.GetTask(id="whatever"))
    assert refused.value.status == (401 if not d.name.startswith("grpc")
                                    else "UNAUTHENTICATED"), refused.value
    assert f"Credentials were sent twice ({where})" in refused.value.message, refused.value
    assert KEY not in refused.value.message and OTHER not in refused.value.message


@pytest.mark.parametrize("values", [(KEY, KEY), (KEY, OTHER), (OTHER, KEY)])
@pytest.mark.parametrize("name", HTTP)
def test_a_query_key_sent_twice_is_refused(name: str, keyed: str, values: tuple[str, str]
                                           ) -> None:
    """``?api_key=…&api_key=…``: 401, whichever keys they are (the first or the last
    was taken, as the parser would have it)."""
    with httpx.Client(timeout=30, params=[("api_key", v) for v in values]) as twice:
        refused_twice(DRIVERS[name](twice, keyed), "query api_key")
    with httpx.Client(timeout=30, params={"api_key": KEY}) as once:
        assert isinstance(send_task(DRIVERS[name](once, keyed), "1"), m.Task)


@pytest.mark.parametrize("name", [n for n in DRIVERS if n.startswith("grpc")])
def test_a_query_key_sent_twice_over_grpc_is_refused(name: str, keyed: str,
                                                     client: httpx.Client) -> None:
    """gRPC has no query string: the key comes as metadata of its name, refused twice."""
    d = DRIVERS[name](client, keyed, headers={"api_key": KEY}, again=[("api_key", OTHER)])
    refused_twice(d, "metadata api_key")


@pytest.mark.parametrize("name", list(DRIVERS))
def test_cookies_are_read_from_every_cookie_header(name: str, keyed: str,
                                                   client: httpx.Client) -> None:
    """A key in the first of two ``Cookie`` headers is read (only the last was), past
    pieces that are no cookie."""
    d = DRIVERS[name](client, keyed, headers={"Cookie": f"theme=dark; flag; =x; session={KEY}"},
                      again=[("Cookie", "lang=en")])
    task = send_task(d, "1")
    assert isinstance(d.call(c.GetTask(id=task.id)), m.Task)


@pytest.mark.parametrize("cookies", [
    [f"session={KEY}", f"session={OTHER}"],
    [f"session={KEY}", f"theme=dark; session={KEY}"],
    [f"session={OTHER}; session={KEY}"],
    [f'session="{KEY}"; lang=en; session={KEY}'],
], ids=["two headers", "two headers, same key", "one header", "one quoted"])
@pytest.mark.parametrize("name", list(DRIVERS))
def test_a_cookie_key_sent_twice_is_refused(name: str, keyed: str, client: httpx.Client,
                                            cookies: list[str]) -> None:
    first, *more = cookies
    d = DRIVERS[name](client, keyed, headers={"Cookie": first},
                      again=[("Cookie", v) for v in more])
    refused_twice(d, "cookie session")


@pytest.mark.parametrize("values", [(KEY, KEY), (KEY, OTHER), (OTHER, KEY)])
@pytest.mark.parametrize("name", [n for n in DRIVERS if n.startswith("grpc")])
def test_a_cookie_key_sent_as_metadata_and_as_a_cookie_is_refused(
        name: str, keyed: str, client: httpx.Client, values: tuple[str, str]) -> None:
    """Over gRPC a cookie's key comes as the metadata entry of its name or in a
    ``cookie`` entry: in both it was sent twice, refused whichever keys they are (the
    entry was taken, the cookie passed over); either alone is taken."""
    entry, cookie = values
    d = DRIVERS[name](client, keyed, headers={"session": entry, "Cookie": f"session={cookie}"})
    refused_twice(d, "metadata session and cookie session")
    for alone in ({"session": KEY}, {"Cookie": f"session={KEY}"}):
        assert isinstance(send_task(DRIVERS[name](client, keyed, headers=alone), "1"), m.Task)


@pytest.mark.parametrize("name", HTTP)
def test_over_http_a_cookie_key_is_read_from_the_cookies_alone(
        name: str, keyed: str, client: httpx.Client) -> None:
    """Over HTTP a cookie's key is read only where the card says: a header of its name
    is no credential, so it is not a second one (nor a first)."""
    d = DRIVERS[name](client, keyed, headers={"session": OTHER, "Cookie": f"session={KEY}"})
    task = send_task(d, "1")
    assert isinstance(task, m.Task)
    # the cookie's key counted: the task is alice's, not bob's
    assert isinstance(DRIVERS[name](client, keyed, headers={"Cookie": f"session={KEY}"})
                      .call(c.GetTask(id=task.id)), m.Task)
    with pytest.raises(Refused) as refused:
        DRIVERS[name](client, keyed, headers={"session": KEY}).call(c.GetTask(id=task.id))
    assert refused.value.status == 401, refused.value
