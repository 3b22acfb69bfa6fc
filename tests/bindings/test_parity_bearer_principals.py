"""Bearer tokens of any issuer (``BearerAuth(issuer=None)``), on every binding:

- two callers whose issuer and subject only joined alike (``https://idp/a`` +
  ``victim:1``, ``https://idp/a:victim`` + ``1``) are two owners: neither gets,
  nor lists, the other's task;
- a token whose principal claim (or issuer) is no valid id (a NUL, another control
  character, over 256 bytes) is refused as a bad token (401, ``invalid_token``),
  not answered as a server failure, on the memory store and on PostgreSQL, which
  cannot hold a NUL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.server.auth import APIKeyAuth, AuthConfig, BearerAuth
from tests.live import live_grpc_agent
from tests.services import new_name, with_option

from .drivers import DRIVERS, Refused
from .test_parity import AGENT, send_task

KEY = ECKey.generate_key("P-256", private=True, parameters={"kid": "k1"})


def bearer(iss: str, sub: str) -> dict[str, str]:
    """The headers of a caller with a token ``KEY`` signed for ``iss`` and ``sub``."""
    # made at import, so valid for a day: a slow run reaches these tests long after
    claims = {"iss": iss, "sub": sub, "aud": "a2a", "exp": int(time.time()) + 86_400}
    return {"Authorization": "Bearer " + jwt.encode({"alg": "ES256", "kid": "k1"}, claims, KEY)}


def serve(store: str) -> Any:
    auth = AuthConfig(schemes={"bearer": BearerAuth(audience="a2a", keys={"keys": [
        KEY.as_dict(private=False)]})})
    return live_grpc_agent(AGENT, auth=auth, store=store)


@pytest.fixture(scope="module", params=["memory", "postgresql"])
def any_issuer(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every binding behind bearer tokens of any issuer, on the store named."""
    store = "memory://"
    if request.param == "postgresql":
        store = with_option(request.getfixturevalue("pg_database"), f"schema={new_name('t')}")
    with serve(store) as (url, _):
        yield url


@pytest.fixture(scope="module")
def on_memory() -> Iterator[str]:
    with serve("memory://") as (url, _):
        yield url


VICTIM = bearer("https://idp.example/tenant-a", "victim:1")
OTHER = bearer("https://idp.example/tenant-a:victim", "1")


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_an_issuer_and_a_subject_joined_alike_are_two_owners(kind: str, on_memory: str) -> None:
    url = on_memory
    with httpx.Client(timeout=30) as client:
        victim = DRIVERS[kind](client, url, headers=VICTIM)
        other = DRIVERS[kind](client, url, headers=OTHER)
        task = send_task(victim, "1")
        assert isinstance(victim.call(c.GetTask(id=task.id)), m.Task)
        with pytest.raises(Refused) as foreign:
            other.call(c.GetTask(id=task.id))
        assert foreign.value.status == {"jsonrpc": 200, "rest": 404, "grpc": "NOT_FOUND"}[
            kind.partition("-")[0]], foreign.value
        if victim.lists_tasks:  # (the victim's tasks of the other bindings' runs too)
            page = other.call(c.ListTasks(page_size=50))
            assert isinstance(page, c.ListTasksResult) and page.tasks == []
            page = victim.call(c.ListTasks(page_size=50))
            assert isinstance(page, c.ListTasksResult) and task.id in {t.id for t in page.tasks}


#: principal claims (and issuers) that are no valid id: (iss, sub)
NOT_IDS = {
    "nul": ("https://id.test", "a\x00b"),
    "line feed": ("https://id.test", "a\nb"),
    "too long": ("https://id.test", "s" * 257),
    "nul in the issuer": ("https://id\x00.test", "alice"),
}


@pytest.mark.parametrize("kind", list(DRIVERS))
@pytest.mark.parametrize("claims", list(NOT_IDS))
def test_a_token_naming_no_valid_id_is_refused_as_a_bad_token(
        kind: str, claims: str, any_issuer: str) -> None:
    with httpx.Client(timeout=30) as client:
        d = DRIVERS[kind](client, any_issuer, headers=bearer(*NOT_IDS[claims]))
        for call in (c.ListTasks(page_size=10), c.GetTask(id="t")) if d.lists_tasks \
                else (c.GetTask(id="t"),):
            with pytest.raises(Refused) as refused:
                d.call(call)
            assert refused.value.status == (
                "UNAUTHENTICATED" if kind.startswith("grpc") else 401), refused.value
            assert "not a valid id" in refused.value.message, refused.value
            assert refused.value.challenge is not None
            assert 'error="invalid_token"' in refused.value.challenge, refused.value.challenge
        with pytest.raises(Refused):
            send_task(d, "1")
        # a valid caller is served after them
        good = DRIVERS[kind](client, any_issuer, headers=bearer("https://id.test", "alice"))
        assert send_task(good, "1").status.state is m.TaskState.COMPLETED


#: API keys of principals named with no valid id (a server's own names: held alike)
BAD_NAMES = {"a\x00b": "nul-key-" + "n" * 20, "l" * 300: "long-key-" + "l" * 20}


@pytest.fixture(scope="module")
def badly_named() -> Iterator[str]:
    auth = AuthConfig(schemes={"key": APIKeyAuth(BAD_NAMES)})
    with live_grpc_agent(AGENT, auth=auth) as (url, _):
        yield url


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_any_scheme_naming_no_valid_id_is_refused(kind: str, badly_named: str) -> None:
    with httpx.Client(timeout=30) as client:
        for key in BAD_NAMES.values():
            d = DRIVERS[kind](client, badly_named, headers={"X-API-Key": key})
            with pytest.raises(Refused) as refused:
                send_task(d, "1")
            assert refused.value.status == (
                "UNAUTHENTICATED" if kind.startswith("grpc") else 401), refused.value
            assert "not a valid id" in refused.value.message, refused.value
            assert 'error="invalid_token"' in (refused.value.challenge or "")
