"""Bearer tokens of any issuer (``BearerAuth(issuer=None)``), on every binding: two
callers whose issuer and subject only joined alike (``https://idp/a`` + ``victim:1``,
``https://idp/a:victim`` + ``1``) are two owners: neither gets, nor lists, the other's
task.
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
from interlingua.server.auth import AuthConfig, BearerAuth
from tests.live import live_grpc_agent

from .drivers import DRIVERS, Refused
from .test_parity import AGENT, send_task

KEY = ECKey.generate_key("P-256", private=True, parameters={"kid": "k1"})


def bearer(iss: str, sub: str) -> dict[str, str]:
    """The headers of a caller with a token ``KEY`` signed for ``iss`` and ``sub``."""
    claims = {"iss": iss, "sub": sub, "aud": "a2a", "exp": int(time.time()) + 600}
    return {"Authorization": "Bearer " + jwt.encode({"alg": "ES256", "kid": "k1"}, claims, KEY)}


def serve(store: str) -> Any:
    auth = AuthConfig(schemes={"bearer": BearerAuth(audience="a2a", keys={"keys": [
        KEY.as_dict(private=False)]})})
    return live_grpc_agent(AGENT, auth=auth, store=store)


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

