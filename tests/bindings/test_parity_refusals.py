"""Refusals every binding owes, on a real server on loopback, the mesh included: a
request over the size limit, an A2A version the server does not speak, a caller
without credentials whose request is not even readable, and, on the mesh, a caller
without credentials and a message id sent again.

Where each promise is held, per binding (``mqtt-sam``: the MQTT mesh):

============================  =====================================  =======================
promise                       JSON-RPC, HTTP+JSON, gRPC (1.0, 0.3)   mqtt-sam
============================  =====================================  =======================
invalid UTF-8                 test_parity.py (hostile input)         the same test
an oversized request          here                                   here
drain refusal                 test_parity_drain.py                   test_parity_drain.py
auth refusal                  test_parity.py (authentication);       here
                              here: before the request is read
a malformed bearer token      here                                   here
Basic credentials beyond      here (not gRPC: its metadata is ASCII) here
ASCII
version refusal               here                                   here
a version given more than     here                                   one property (below)
once
idempotent retry (both        test_parity.py (idempotent retry)      here
``message_ids`` modes)
============================  =====================================  =======================

Where a binding keeps a promise its own way: the mesh has no ``A2A-Version`` of its
own (SAM's requesters send none; its topics name ``a2a/v1``), but every user property
of a request is read as a header, so one named ``A2A-Version`` is held to the rule
HTTP's header is (one naming two versions included; but a user property given twice
reaches the agent as its last value: the broker layer reads them by name); the MQTT
driver reads no streams, so the mesh's refusal is checked on unary requests. gRPC's oversized message is refused by the gRPC library before any
handler reads it: RESOURCE_EXHAUSTED with the library's text (naming the limit),
without the A2A error details the binding's own refusals carry. On the mesh a
retry repeats its request's id too, since that id names the task.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from interlingua.server.auth import APIKeyAuth, AuthConfig

from .drivers import DRIVERS, MQTT, Driver, Refused, token
from .test_parity import ALICE, BOB, HOSTILE, on_every_binding, reference, send, shape

#: the size limit of the ``bounded`` server's requests
LIMIT = 16 * 1024


@pytest.fixture(scope="module")
def bounded() -> Iterator[tuple[str, str]]:
    """Every binding and the mesh, taking requests of up to ``LIMIT`` bytes."""
    with on_every_binding(max_body_bytes=LIMIT) as where:
        yield where


@pytest.fixture(scope="module")
def secured() -> Iterator[tuple[str, str]]:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"],
                                                  "bob": BOB["X-API-Key"]})})
    with on_every_binding(auth=auth) as where:
        yield where


@pytest.fixture(scope="module")
def strict() -> Iterator[tuple[str, str]]:
    with on_every_binding(message_ids="strict") as where:
        yield where


@contextlib.contextmanager
def opened(name: str, where: tuple[str, str], client: httpx.Client,
           **kw: Any) -> Iterator[Driver]:
    """The driver ``name`` for the agent at ``where`` (its URL, its mesh address)."""
    kind = HOSTILE[name]
    url, mesh = where
    d = kind(client, mesh if kind is MQTT else url, **kw)
    try:
        yield d
    finally:
        if isinstance(d, MQTT):
            d.close()


def send_in(context_id: str, text: str, *, streaming: bool = False) -> c.SendMessage:
    msg = m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text=text)],
                    context_id=context_id)
    return c.SendMessage(message=msg, streaming=streaming)


def ran_in(client: httpx.Client, url: str, context_id: str) -> int:
    """How many tasks were made in ``context_id``."""
    page = reference(client, url).call(c.ListTasks(context_id=context_id))
    assert isinstance(page, c.ListTasksResult)
    return len(page.tasks)


# ------------------------------------------------------------- oversized request

#: what each binding answers a request over ``max_body_bytes``
OVERSIZED: dict[str, tuple[Any, str]] = {
    "jsonrpc-1.0": (413, "-32600"), "jsonrpc-0.3": (413, "-32600"),
    "rest-1.0": (413, "INVALID_REQUEST"), "rest-0.3": (413, "InvalidRequestError"),
    "grpc-1.0": ("RESOURCE_EXHAUSTED", ""), "grpc-0.3": ("RESOURCE_EXHAUSTED", ""),
    "mqtt-sam": ("reply", "-32600"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_request_over_the_size_limit_is_refused(name: str, bounded: tuple[str, str],
                                                  client: httpx.Client) -> None:
    """A send a few KB over the limit is refused with the binding's answer naming the
    limit (on the mesh: an error on the reply topic, not silence), and nothing of it
    runs; a send under the limit is served after it."""
    over, under = new_id(), new_id()
    with opened(name, bounded, client) as d:
        refused = d.oversized(send_in(over, "1 0 " + "x" * (LIMIT + 2000)))
        assert refused is not None, "a request over the limit was taken"
        assert (refused.status, refused.reason) == OVERSIZED[name], refused
        assert str(LIMIT) in refused.message, refused.message
        task = d.call(send_in(under, "1 0 " + "x" * (LIMIT // 2)))
        assert isinstance(task, m.Task) and task.status.state is m.TaskState.COMPLETED
    assert ran_in(client, bounded[0], over) == 0
    assert ran_in(client, bounded[0], under) == 1


# -------------------------------------------------------------- version refusal

#: what each binding answers a request with an ``A2A-Version`` it does not speak
UNSUPPORTED_VERSION: dict[str, tuple[Any, str]] = {
    # v0.3 has no error of its own for it: an invalid request (as on the mesh), by its
    # code and its type alike on HTTP+JSON (the type said VersionNotSupportedError)
    "jsonrpc-1.0": (200, "-32009"), "jsonrpc-0.3": (200, "-32600"),
    "rest-1.0": (400, "VERSION_NOT_SUPPORTED"), "rest-0.3": (400, "InvalidRequestError"),
    "grpc-1.0": ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
    "grpc-0.3": ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
    "mqtt-sam": ("reply", "-32600"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_an_unsupported_version_is_refused(name: str, bounded: tuple[str, str],
                                           client: httpx.Client) -> None:
    """``A2A-Version: 9.9`` (a header; gRPC metadata; an MQTT user property): a send,
    streaming or not, and a read are refused with the binding's version error, which
    names the versions served; nothing runs."""
    ctx = new_id()
    with opened(name, bounded, client, headers={"A2A-Version": "9.9"}) as d:
        calls: list[c.Call] = [send_in(ctx, "1"), c.GetTask(id=new_id())]
        if not isinstance(d, MQTT):  # the driver reads no stream from the mesh
            calls.append(send_in(ctx, "1", streaming=True))
        for call in calls:
            with pytest.raises(Refused) as refused:
                if isinstance(call, c.SendMessage) and call.streaming:
                    d.stream(call)
                else:
                    d.call(call)
            assert (refused.value.status, refused.value.reason) == UNSUPPORTED_VERSION[name], \
                refused.value
            assert "'9.9'" in refused.value.message and "1.0, 0.3" in refused.value.message, \
                refused.value.message
    assert ran_in(client, bounded[0], ctx) == 0
    with opened(name, bounded, client) as d:  # without the header: served
        assert isinstance(d.call(send_in(ctx, "1")), m.Task)


def _twice(own: str, other: str) -> list[tuple[str, dict[str, str], list[tuple[str, str]],
                                                list[tuple[str, str]]]]:
    """Each way of giving ``A2A-Version`` more than once: (what the message quotes,
    headers, the same header once more, query parameters)."""
    line = [("A2A-Version", own)]
    return [
        (f"{own}, {other}", {"A2A-Version": own}, [("A2A-Version", other)], []),
        (f"{other}, {own}", {"A2A-Version": other}, line, []),
        (f"9.9, {own}", {"A2A-Version": "9.9"}, line, []),  # one it does not speak
        (f"{own}, {other}", {"A2A-Version": f"{own}, {other}"}, [], []),  # one line
        (f"{own}, {other}", {}, [], [("A2A-Version", own), ("A2A-Version", other)]),
    ]


@pytest.mark.parametrize("name", list(DRIVERS))
def test_a_version_given_more_than_once_is_refused(name: str, bounded: tuple[str, str],
                                                   client: httpx.Client) -> None:
    """``A2A-Version`` naming two versions: two header lines (gRPC: two metadata values),
    one comma-joined line (the same field, RFC 9110 §5.3), the query parameter twice
    (HTTP). A send and a read are refused as an unsupported version is, with a message
    that says so and quotes both; no version is picked, nothing runs. The same version
    twice is that version, and is served."""
    own = DRIVERS[name].version
    other = "1.1" if own == "1.0" else "1.0"
    ctx = new_id()
    for quoted, headers, again, query in _twice(own, other):
        if query and name.startswith("grpc"):
            continue  # gRPC has no query
        with opened(name, bounded, client, headers=headers, again=again) as d:
            if query:
                d.headers.pop("A2A-Version", None)  # a header would be read first
                d.query = query
            for call in (send_in(ctx, "1"), c.GetTask(id=new_id())):
                with pytest.raises(Refused) as refused:
                    d.call(call)
                got = refused.value
                assert (got.status, got.reason) == UNSUPPORTED_VERSION[name], (quoted, got)
                assert "more than once" in got.message and f"'{quoted}'" in got.message, \
                    got.message
    assert ran_in(client, bounded[0], ctx) == 0
    for headers, again in (({"A2A-Version": own}, [("A2A-Version", own)]),
                           ({"A2A-Version": f"{own}, {own}"}, [])):
        with opened(name, bounded, client, headers=headers, again=again) as d:
            assert isinstance(d.call(send_in(ctx, "1")), m.Task)


# ---------------------------------------------------------- the mesh's own rows


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_caller_without_credentials_is_refused_before_its_request_is_read(
        name: str, secured: tuple[str, str], client: httpx.Client) -> None:
    """Authentication comes before the request is read: a request that is not even
    valid UTF-8, from a caller without credentials, gets the refusal a valid one
    gets, not a parse error."""
    with opened(name, secured, client) as anonymous:
        with pytest.raises(Refused) as plain:
            anonymous.call(c.GetTask(id=token(1)))
        assert plain.value.status in (401, "UNAUTHENTICATED", "reply"), plain.value
        answers = dict(anonymous.corrupted(c.GetTask(id=token(1))))
    assert answers
    expected = (plain.value.status, plain.value.reason, plain.value.message)
    wrong = {where: (got.status, got.reason, got.message) if got else "taken"
             for where, got in answers.items()
             if got is None or (got.status, got.reason, got.message) != expected}
    assert not wrong, (expected, wrong)


#: the ``bearer`` server's one signing key
_BEARER_KEY: list[Any] = []


@pytest.fixture(scope="module")
def bearer() -> Iterator[tuple[str, str]]:
    from joserfc.jwk import ECKey

    from interlingua.server.auth import BearerAuth

    key = ECKey.generate_key("P-256", private=True, parameters={"kid": "k1"})
    _BEARER_KEY[:] = [key]
    auth = AuthConfig(schemes={"bearer": BearerAuth(audience="a2a", keys={"keys": [
        key.as_dict(private=False)]})})
    with on_every_binding(auth=auth) as where:
        yield where


def _b64(doc: object) -> str:
    import base64

    return base64.urlsafe_b64encode(msgspec.json.encode(doc)).rstrip(b"=").decode()


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_bearer_token_whose_header_the_jose_library_trips_on_is_refused(
        name: str, bearer: tuple[str, str], client: httpx.Client) -> None:
    """A token whose header has a ``crit`` that is no list of names (joserfc raises
    TypeError for it, not one of its own errors) is refused as a token with a bad
    signature is, not answered as a server failure; nothing runs."""
    claims = _b64({"sub": "mallory", "aud": "a2a", "exp": 4_000_000_000})
    ctx = new_id()
    for crit in (5, [5]):
        jwt = f"{_b64({'alg': 'ES256', 'kid': 'k1', 'crit': crit})}.{claims}.AAAA"
        with opened(name, bearer, client, headers={"Authorization": f"Bearer {jwt}"}) as d:
            with pytest.raises(Refused) as refused:
                d.call(send_in(ctx, "1"))
        assert refused.value.status in (401, "UNAUTHENTICATED", "reply"), refused.value
        assert "bearer token's header is not valid" in refused.value.message, \
            refused.value.message
    from joserfc import jwt as jose_jwt

    good = jose_jwt.encode({"alg": "ES256", "kid": "k1"},
                           {"sub": "alice", "aud": "a2a", "exp": 4_000_000_000}, _BEARER_KEY[0])
    page = reference(client, bearer[0], headers={"Authorization": f"Bearer {good}"}).call(
        c.ListTasks(context_id=ctx))
    assert isinstance(page, c.ListTasksResult) and page.tasks == []


@pytest.fixture(scope="module")
def basic() -> Iterator[tuple[str, str]]:
    from interlingua.server.auth import BasicAuth, hash_secret

    auth = AuthConfig(schemes={"basic": BasicAuth({"dave": hash_secret("pw", iterations=1000)})})
    with on_every_binding(auth=auth) as where:
        yield where


#: the bindings whose headers carry text beyond ASCII (gRPC's metadata does not)
_TEXT_HEADERS = [n for n in HOSTILE if not n.startswith("grpc")]


@pytest.mark.parametrize("name", _TEXT_HEADERS)
def test_basic_credentials_beyond_ascii_are_refused_as_credentials(
        name: str, basic: tuple[str, str], client: httpx.Client) -> None:
    """``Authorization: Basic`` with bytes beyond ASCII (no base64 at all) is a bad
    credential like any other: 401 with the scheme's words, not a server failure."""
    value = "Basic \u00e9\u00e9"
    header: Any = value if name == MQTT.name else value.encode()
    with opened(name, basic, client, headers={"Authorization": header}) as d:
        with pytest.raises(Refused) as refused:
            d.call(c.GetTask(id=token(1)))
    assert refused.value.status in (401, "reply"), refused.value
    assert "Basic credentials are not valid base64" in refused.value.message, refused.value


def test_the_mesh_refuses_a_caller_without_credentials(secured: tuple[str, str],
                                                       client: httpx.Client) -> None:
    """An agent with API keys reads them from a request's user properties on the
    mesh: without one, or with a wrong one, the request is refused on the reply
    topic; an owner's task made over the mesh is theirs on every binding."""
    ctx, url = new_id(), secured[0]
    for headers in ({}, {"X-API-Key": "nobody-" + "n" * 20}):
        with opened("mqtt-sam", secured, client, headers=headers) as anonymous:
            with pytest.raises(Refused) as refused:
                anonymous.call(send_in(ctx, "1"))
        # the refusal JSON-RPC over HTTP gives, on the reply topic
        with pytest.raises(Refused) as over_http:
            reference(client, url, headers=headers).call(send_in(ctx, "1"))
        assert over_http.value.status == 401
        assert (refused.value.status, refused.value.reason, refused.value.message) == \
            ("reply", over_http.value.reason, over_http.value.message), refused.value
    with opened("mqtt-sam", secured, client, headers=ALICE) as alice, \
            opened("mqtt-sam", secured, client, headers=BOB) as bob:
        task = alice.call(send_in(ctx, "1"))
        assert isinstance(task, m.Task)
        assert isinstance(alice.call(c.GetTask(id=task.id)), m.Task)
        with pytest.raises(Refused) as foreign:  # another owner's task does not exist
            bob.call(c.GetTask(id=task.id))
        assert (foreign.value.status, foreign.value.reason) == ("reply", "-32001")
    assert isinstance(reference(client, url, headers=ALICE).call(c.GetTask(id=task.id)),
                      m.Task)
    with pytest.raises(Refused):
        reference(client, url, headers=BOB).call(c.GetTask(id=task.id))
    page = reference(client, url, headers=ALICE).call(c.ListTasks(context_id=ctx))
    assert isinstance(page, c.ListTasksResult) and [t.id for t in page.tasks] == [task.id]


def test_the_mesh_answers_a_retry_with_the_task_it_made(bounded: tuple[str, str],
                                                        strict: tuple[str, str],
                                                        client: httpx.Client) -> None:
    """As over HTTP and gRPC (test_parity.py): a message id sent again with other
    content is a new message, each message's exact retry gets its task; in strict
    mode the other content is refused as invalid params. A retry on the mesh repeats
    its request's id, which names the task (SAM's requesters choose it): so a task
    made there is not the one a send of the same message over HTTP, which names no
    task, is answered with."""
    call = send("2")
    changed = c.SendMessage(message=msgspec.structs.replace(
        call.message, parts=[m.TextPart(text="1")]))
    with opened("mqtt-sam", bounded, client) as d:
        first, other = d.call(call), d.call(changed)
        assert isinstance(first, m.Task) and isinstance(other, m.Task)
        assert first.id != other.id
        assert shape(other) == shape(d.call(send("1")))
        for sent, task in ((call, first), (changed, other)):
            again = d.call(sent)
            assert isinstance(again, m.Task) and again.id == task.id
    with opened("mqtt-sam", strict, client) as d:
        first = d.call(call)
        assert isinstance(first, m.Task)
        with pytest.raises(Refused) as refused:
            d.call(changed)
        assert (refused.value.status, refused.value.reason) == ("reply", "-32602"), \
            refused.value
        assert "already used for a different message" in refused.value.message
        again = d.call(call)
        assert isinstance(again, m.Task) and again.id == first.id

