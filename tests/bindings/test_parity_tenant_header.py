"""The tenant header (``AuthConfig.tenant_header``) on every binding, the mesh too: it
names a call's tenant only where the call names none, agrees with the one it names
where both are given, and is held to the rules of an id as a tenant named in a call
or a path is (docs/security.md, Tenants)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from interlingua.server.auth import APIKeyAuth, AuthConfig

from .drivers import DRIVERS, MQTT, Driver, Refused
from .test_parity import ALICE, HOSTILE, on_every_binding
from .test_parity import TOO_DEEP as INVALID_PARAMS
from .test_parity_refusals import opened


@pytest.fixture(scope="module")
def tenanted() -> Iterator[tuple[str, str]]:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"]})},
                      tenant_header="X-Tenant")
    with on_every_binding(auth=auth) as where:
        yield where


def a_send() -> c.SendMessage:
    return c.SendMessage(message=m.Message(message_id=new_id(), role=m.Role.USER,
                                           parts=[m.TextPart(text="hi")]))


def refused(d: Driver, call: c.Call) -> Refused:
    with pytest.raises(Refused) as caught:
        d.call(call)
    assert (caught.value.status, caught.value.reason) == INVALID_PARAMS[d.name], caught.value
    return caught.value


@pytest.mark.parametrize("name", [n for n, d in DRIVERS.items() if d.has_tenants])
def test_a_header_that_names_another_tenant_than_the_call_is_refused(
        name: str, tenanted: tuple[str, str], client: httpx.Client) -> None:
    """The call's tenant (its member; over HTTP+JSON its path) and the header's must be
    the same: one that says two things is refused, on every binding that names
    tenants (the header was passed over on JSON-RPC and gRPC); the same tenant in both
    is taken."""
    with opened(name, tenanted, client, tenant="acme",
                headers={**ALICE, "X-Tenant": "globex"}) as d:
        answer = refused(d, a_send())
    assert "the x-tenant header names tenant 'globex', the request tenant 'acme'" \
        in answer.message, answer.message
    with opened(name, tenanted, client, tenant="acme",
                headers={**ALICE, "X-Tenant": "acme"}) as d:
        task = d.call(a_send())
    assert isinstance(task, m.Task)
    # made in acme: found there by the header alone, not in the default tenant
    with opened(name, tenanted, client, headers={**ALICE, "X-Tenant": "acme"}) as d:
        assert isinstance(d.call(c.GetTask(id=task.id)), m.Task)
    with opened(name, tenanted, client, headers=ALICE) as d, pytest.raises(Refused):
        d.call(c.GetTask(id=task.id))


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_header_tenant_is_held_to_the_rules_of_an_id(
        name: str, tenanted: tuple[str, str], client: httpx.Client) -> None:
    """A tenant named by the header alone is checked as one named in a call: past
    256 bytes it is refused, naming the header (it was taken as it came)."""
    with opened(name, tenanted, client, headers={**ALICE, "X-Tenant": "t" * 300}) as d:
        answer = refused(d, a_send())
    assert "the x-tenant header's tenant is longer than 256 bytes" in answer.message, \
        answer.message


@pytest.mark.parametrize("name", [n for n in HOSTILE if not n.startswith("grpc")])
def test_a_header_tenant_beyond_ascii_is_refused(
        name: str, tenanted: tuple[str, str], client: httpx.Client) -> None:
    """HTTP hands a header's bytes beyond ASCII over as they come: "café" in the
    header named another tenant than "café" in a call or a path. Such a tenant is
    refused in the header (gRPC's metadata carries ASCII only), and taken in the call."""
    header: Any = "caf\u00e9" if name == MQTT.name else "caf\u00e9".encode()
    with opened(name, tenanted, client, headers={**ALICE, "X-Tenant": header}) as d:
        answer = refused(d, a_send())
    assert "the x-tenant header's tenant holds characters beyond ASCII" in answer.message, \
        answer.message


@pytest.mark.parametrize("second", ["acme", "globex"])
@pytest.mark.parametrize("name", list(DRIVERS))
def test_a_tenant_header_sent_twice_is_refused(
        name: str, tenanted: tuple[str, str], client: httpx.Client, second: str) -> None:
    """Two ``X-Tenant`` headers (or metadata entries): invalid params in the caller's
    dialect, the same tenant twice too; the last one was taken, as the parser had it."""
    with opened(name, tenanted, client, headers={**ALICE, "X-Tenant": "acme"},
                again=[("X-Tenant", second)]) as d:
        answers = [refused(d, a_send()), refused(d, c.GetTask(id="whatever"))]
    for answer in answers:
        assert "the x-tenant header was sent twice" in answer.message, answer.message


@pytest.mark.parametrize("header", ["acme, acme", "acme,globex"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_tenant_header_folded_into_one_line_is_refused(
        name: str, tenanted: tuple[str, str], client: httpx.Client, header: str) -> None:
    """``X-Tenant: acme, acme`` is the header sent twice, folded into one line (RFC 9110
    §5.3; proxies fold so): refused as two lines are, not taken as the tenant
    "acme, acme"."""
    with opened(name, tenanted, client, headers={**ALICE, "X-Tenant": header}) as d:
        answers = [refused(d, a_send()), refused(d, c.GetTask(id="whatever"))]
    for answer in answers:
        assert "the x-tenant header has a comma" in answer.message, answer.message
