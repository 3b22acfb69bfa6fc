"""The bounds of core/bounds.py on every binding, on a real server on loopback: a
request field no other limit bounds (a push config's token, URL, schemes and
credentials; a message's referenced tasks and extensions; a send's output modes),
at its bound taken, one past it refused as the binding's invalid params naming the
field as that binding's caller sent it and saying the bound, and nothing kept.

One table (``CASES``), every binding: JSON-RPC, HTTP+JSON and gRPC in 1.0 and 0.3,
and the MQTT mesh (SAM's snake_case) for what a send carries there. A case a binding
cannot say is left out of it: v1.0's push authentication names one scheme, v0.3's
proto has no ``referenceTaskIds``, the mesh driver sets no push configs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from interlingua.core import bounds as b
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id

from .drivers import MQTT, Refused
from .test_parity import AGENT, HOSTILE, PUSH, TOO_DEEP, on_every_binding, reference
from .test_parity_refusals import opened, ran_in

URL = "http://127.0.0.1:9/hook"


@pytest.fixture(scope="module")
def anywhere() -> Iterator[tuple[str, str]]:
    """Every binding and the mesh, its webhooks allowed on loopback."""
    assert AGENT.push_notifications
    with on_every_binding(push=PUSH) as where:
        yield where


def _auth(schemes: list[str], credentials: str | None = None) -> m.PushConfig:
    return m.PushConfig(url=URL, id="cfg", authentication=m.AuthInfo(
        schemes=schemes, credentials=credentials))


def _message(ctx: str, *, refs: list[str] | None = None,
             extensions: list[str] | None = None) -> m.Message:
    return m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text="1")],
                     context_id=ctx, reference_task_ids=refs, extensions=extensions)


def _ext(i: int, size: int = 0) -> str:
    base = f"https://example.com/ext/{i}/"
    return base + "x" * max(0, size - len(base))


@dataclass(frozen=True)
class Case:
    """One bound: the request at ``n`` (a size in bytes, or a count), ``limit`` its bound."""

    #: the call at ``n``: a push config set on a task (``task``), else a send in ``ctx``
    call: Callable[[str, int], c.Call]
    limit: int
    #: the field's path in v1.0's params, v0.3 JSON-RPC's, and v0.3 ProtoJSON's
    paths: tuple[str, str, str]
    #: a count (the refusal says how many), else a size in bytes
    count: bool = False
    #: bindings that cannot say the field
    not_on: tuple[str, ...] = ()

    @property
    def sets(self) -> bool:
        """The call sets a push config on a task (the mesh driver sets none)."""
        return isinstance(self.call("t", 1), c.SetPushConfig)


def _set(config: Callable[[int], m.PushConfig]) -> Callable[[str, int], c.Call]:
    return lambda task, n: c.SetPushConfig(task_id=task, config=config(n))


def _send(message: Callable[[str, int], m.Message],
          config: Callable[[int], c.SendConfig] | None = None) -> Callable[[str, int], c.Call]:
    return lambda ctx, n: c.SendMessage(
        message=message(ctx, n), config=config(n) if config else c.SendConfig())


_V1 = ("jsonrpc-1.0", "rest-1.0", "grpc-1.0")
_PJ = ("rest-0.3", "grpc-0.3")
_PUSH_SET = "pushNotificationConfig."

CASES: dict[str, Case] = {
    "push token": Case(
        _set(lambda n: m.PushConfig(url=URL, id="cfg", token="t" * n)), b.MAX_PUSH_TOKEN_BYTES,
        ("token", _PUSH_SET + "token", "config." + _PUSH_SET + "token")),
    "push url": Case(
        _set(lambda n: m.PushConfig(url=URL + "?" + "u" * (n - len(URL) - 1), id="cfg")),
        b.MAX_URL_BYTES, ("url", _PUSH_SET + "url", "config." + _PUSH_SET + "url")),
    "push credentials": Case(
        _set(lambda n: _auth(["Bearer"], "k" * n)), b.MAX_CREDENTIALS_BYTES,
        ("authentication.credentials", _PUSH_SET + "authentication.credentials",
         "config." + _PUSH_SET + "authentication.credentials")),
    "push schemes": Case(
        _set(lambda n: _auth([f"S{i}" for i in range(n)])), b.MAX_SCHEMES,
        ("", _PUSH_SET + "authentication.schemes",
         "config." + _PUSH_SET + "authentication.schemes"), count=True, not_on=_V1),
    "push scheme": Case(
        _set(lambda n: _auth(["s" * n])), b.MAX_NAME_BYTES,
        ("authentication.scheme", _PUSH_SET + "authentication.schemes[0]",
         "config." + _PUSH_SET + "authentication.schemes[0]")),
    "push token in a send": Case(
        _send(lambda ctx, n: _message(ctx), lambda n: c.SendConfig(push_config=m.PushConfig(
            url=URL, id="cfg", token="t" * n))), b.MAX_PUSH_TOKEN_BYTES,
        ("configuration.taskPushNotificationConfig.token",
         "configuration.pushNotificationConfig.token", "configuration.pushNotification.token"),
        not_on=(MQTT.name,)),
    "reference task ids": Case(
        _send(lambda ctx, n: _message(ctx, refs=[f"ref-{i}" for i in range(n)])),
        b.MAX_REFERENCE_TASK_IDS, ("message.referenceTaskIds",) * 3, count=True, not_on=_PJ),
    "extensions": Case(
        _send(lambda ctx, n: _message(ctx, extensions=[_ext(i) for i in range(n)])),
        b.MAX_EXTENSIONS, ("message.extensions",) * 3, count=True),
    "an extension": Case(
        _send(lambda ctx, n: _message(ctx, extensions=[_ext(0, n)])), b.MAX_URL_BYTES,
        ("message.extensions[0]",) * 3),
    "output modes": Case(
        _send(lambda ctx, n: _message(ctx), lambda n: c.SendConfig(
            accepted_output_modes=[f"text/x{i}" for i in range(n)])), b.MAX_OUTPUT_MODES,
        ("configuration.acceptedOutputModes",) * 3, count=True),
    "an output mode": Case(
        _send(lambda ctx, n: _message(ctx), lambda n: c.SendConfig(
            accepted_output_modes=["text/" + "x" * (n - 5)])), b.MAX_NAME_BYTES,
        ("configuration.acceptedOutputModes[0]",) * 3),
}

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _snake(path: str) -> str:
    return _CAMEL.sub(r"_\1", path).lower()


def named(binding: str, case: Case) -> str:
    """The field as ``binding``'s caller sent it: JSON-RPC's params path, an HTTP+JSON
    body's member, a gRPC request's proto fields (v0.3's message is ``request``)."""
    v1, v03, pj = case.paths
    return {"jsonrpc-1.0": "params." + v1, "jsonrpc-0.3": "params." + v03, "rest-1.0": v1,
            "rest-0.3": pj, "grpc-1.0": _snake(v1),
            "grpc-0.3": re.sub(r"^message\.", "request.", _snake(pj)),
            MQTT.name: "params." + _snake(v03)}[binding]


def said(binding: str, case: Case, n: int) -> str:
    if case.count:
        return f"{named(binding, case)} has {n} entries; this agent accepts at most {case.limit}"
    return f"{named(binding, case)} is longer than {case.limit} bytes"


def _every() -> Iterator[tuple[str, str]]:
    for binding in HOSTILE:
        for case_name, case in CASES.items():
            if binding not in case.not_on and not (binding == MQTT.name and case.sets):
                yield binding, case_name


def _configs(client: httpx.Client, url: str, task: str) -> list[str]:
    listed = reference(client, url).call(c.ListPushConfigs(task_id=task))
    assert isinstance(listed, list)
    return [p.id or "" for p in listed]


@pytest.mark.parametrize(("name", "case_name"), list(_every()))
def test_a_field_past_its_bound_is_refused_naming_it(
        name: str, case_name: str, anywhere: tuple[str, str], client: httpx.Client) -> None:
    """One past the bound: the binding's invalid-params answer naming the field as sent
    and the bound, nothing made; at the bound: taken."""
    case = CASES[case_name]
    url = anywhere[0]
    setting = case.sets
    where = ""
    if setting:  # a task waiting for input, whose configs are set
        made = reference(client, url).call(c.SendMessage(message=m.Message(
            message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text="ask")])))
        assert isinstance(made, m.Task)
        where = made.id
    with opened(name, anywhere, client) as d:
        over = case.limit + 1
        ctx = where or new_id()
        with pytest.raises(Refused) as refused:
            d.call(case.call(ctx, over))
        assert (refused.value.status, refused.value.reason) == TOO_DEEP[name], refused.value
        assert said(name, case, over) in refused.value.message, refused.value.message
        if setting:
            assert _configs(client, url, where) == []
        else:
            assert ran_in(client, url, ctx) == 0
        ctx = where or new_id()
        taken = d.call(case.call(ctx, case.limit))
        if setting:
            assert isinstance(taken, m.PushConfig) and _configs(client, url, where) == ["cfg"]
        else:
            assert isinstance(taken, m.Task) and ran_in(client, url, ctx) == 1
    if setting:
        reference(client, url).call(c.CancelTask(id=where))

