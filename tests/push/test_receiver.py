"""The receiving side: token, signature against the agent's JWKS, dedupe, dialects, listen."""

from __future__ import annotations

import gzip
import io
from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest

from interlingua import Agent
from interlingua.cli.listen import event_line, listener_app
from interlingua.client import PushEvent, Receiver, register_receiver
from interlingua.core.errors import PushNotSupported, TaskNotFound
from interlingua.core.model import (
    Message,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
    TextPart,
)
from interlingua.host import create_app
from interlingua.server.push.headers import build_request, notification_id
from interlingua.server.push.payloads import event_body, task_body
from interlingua.stores import Scope

from .helpers import dev_settings, echo

AGENT = "http://agent.test"
JWKS = AGENT + "/.well-known/jwks.json"

TASK = Task(id="t-1", context_id="c-1", status=TaskStatus(
    state=TaskState.COMPLETED, timestamp="2025-03-15T18:30:00.000Z",
    message=Message(message_id="m", role=Role.AGENT, parts=[TextPart("Report ready.")])))


class Setup:
    def __init__(self, app: Any, http: httpx.AsyncClient) -> None:
        self.app = app
        self.http = http
        self.events: list[PushEvent] = []
        self.fail = False
        self.receiver = Receiver(self._take, token="tok", jwks_url=JWKS, http=http)
        self.hook = httpx.AsyncClient(transport=httpx.ASGITransport(app=self.receiver),
                                      base_url="http://hook.test")

    def _take(self, event: PushEvent) -> None:
        if self.fail:
            raise RuntimeError("downstream is down")
        self.events.append(event)

    @property
    def keys(self) -> Any:
        return self.app.state.engine.push.keys

    async def notify(self, body: bytes, *, seq: int = 1, dialect: str = "1.0",
                     token: str | None = "tok", sign_body: bytes | None = None,
                     nid: str | None = None, signed_nid: str | None = None) -> httpx.Response:
        nid = nid or notification_id("t-1", "cfg", seq, "n0nce")
        signature, _ = self.keys.sign(sign_body or body, notification_id=signed_nid or nid)
        req = build_request("http://hook.test/", dialect=dialect, token=token,
                            authentication=None, nid=nid,
                            signature=("X-A2A-Signature", signature))
        return await self.hook.post("/", content=body, headers=req.headers)


@pytest.fixture
async def setup() -> AsyncIterator[Setup]:
    app = create_app(echo, public_url=AGENT, push=dev_settings(dispatch=False))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=AGENT) as http:
        s = Setup(app, http)
        try:
            yield s
        finally:
            await s.hook.aclose()
            await s.receiver.jwks.aclose()  # type: ignore[union-attr]
            await app.state.engine.stop()


async def test_a_signed_notification_is_taken_once(setup: Setup) -> None:
    update = StatusUpdate(task_id="t-1", context_id="c-1", status=TASK.status)
    body = event_body(update)
    assert body is not None
    first = await setup.notify(body)
    assert first.status_code == 200 and first.json() == {"ok": True}
    again = await setup.notify(body)  # an at-least-once redelivery
    assert again.status_code == 200 and again.json() == {"duplicate": True}
    [event] = setup.events
    assert event.verified and event.kid == setup.keys.current.kid
    assert (event.dialect, event.task_id, event.state) == ("1.0", "t-1", "completed")
    assert event.item == update
    assert event.notification_id == "t-1:cfg:1:n0nce"


@pytest.mark.parametrize(("change", "why"), [
    ({"token": "wrong"}, "token"),
    ({"token": None}, "token"),
    ({"sign_body": b'{"statusUpdate": {}}'}, "bad signature"),
    ({"signed_nid": "t-1:cfg:999"}, "another notification id"),
])
async def test_forged_notifications_are_refused(setup: Setup, change: dict[str, Any],
                                                why: str) -> None:
    body = task_body("0.3", TASK)
    resp = await setup.notify(body, **change)
    assert resp.status_code == 401 and why in resp.json()["error"]
    assert setup.events == [] and setup.receiver.refused == 1


async def test_a_signed_body_carried_in_the_signature_verifies_no_other_body(
        setup: Setup) -> None:
    """A signature made for one body (a notification of the caller's own task) with
    that body put in its payload segment, sent with another body: refused. (The JOSE
    library checks a payload in the token in place of the one it is given: the forged
    body was taken as verified.)"""
    from interlingua.server.keyring import attach_payload

    own = task_body("0.3", msgspec.structs.replace(TASK, id="t-own"))
    nid = notification_id("t-1", "cfg", 1, "n0nce")
    signature, _ = setup.keys.sign(own, notification_id=nid)
    forged = task_body("0.3", msgspec.structs.replace(TASK, status=TaskStatus(
        state=TaskState.COMPLETED, message=Message(message_id="x", role=Role.AGENT,
                                                   parts=[TextPart("Forged.")]))))
    for sent in (attach_payload(signature, own), signature + ".extra"):
        req = build_request("http://hook.test/", dialect="0.3", token="tok",
                            authentication=None, nid=nid,
                            signature=("X-A2A-Signature", sent))
        resp = await setup.hook.post("/", content=forged, headers=req.headers)
        assert resp.status_code == 401, resp.text
        assert "not a detached JWS" in resp.json()["error"]
    assert setup.events == [] and setup.receiver.refused == 2
    # the detached signature of the body sent is still taken
    signature, _ = setup.keys.sign(forged, notification_id=nid)
    req = build_request("http://hook.test/", dialect="0.3", token="tok", authentication=None,
                        nid=nid, signature=("X-A2A-Signature", signature))
    assert (await setup.hook.post("/", content=forged, headers=req.headers)).status_code == 200


async def test_an_unsigned_or_stale_notification_is_refused(setup: Setup) -> None:
    body = task_body("0.3", TASK)
    resp = await setup.hook.post("/", content=body, headers={
        "X-A2A-Notification-Token": "tok", "X-A2A-Notification-Id": "t-1:cfg:1"})
    assert resp.status_code == 401 and "missing X-A2A-Signature" in resp.json()["error"]
    setup.receiver._clock = lambda: 4_000_000_000.0  # far past the signature's iat
    resp = await setup.notify(body)
    assert resp.status_code == 401 and "too old" in resp.json()["error"]


async def test_a_signature_whose_header_the_jose_library_trips_on_is_refused(
        setup: Setup) -> None:
    # a "crit" that is no list of names: joserfc raises TypeError, not a JoseError
    import base64

    body = task_body("0.3", TASK)
    nid = notification_id("t-1", "cfg", 1, "n0nce")
    good, _ = setup.keys.sign(body, notification_id=nid)
    head = msgspec.json.decode(base64.urlsafe_b64decode(good.split(".")[0] + "=="))
    for crit in (5, [5]):
        bent = base64.urlsafe_b64encode(msgspec.json.encode({**head, "crit": crit}))
        signature = bent.rstrip(b"=").decode() + good[good.index("."):]
        resp = await setup.hook.post("/", content=body, headers={
            "X-A2A-Notification-Token": "tok", "X-A2A-Notification-Id": nid,
            "X-A2A-Signature": signature})
        assert resp.status_code == 401 and "bad signature" in resp.json()["error"]
    assert setup.events == [] and setup.receiver.refused == 2


@pytest.mark.parametrize("jwks", [[], {"keys": "k1"}, {"keys": [1]},
                                  {"keys": [{"kty": "EC", "crv": "P-999", "x": "AA",
                                             "y": "AA", "kid": "k1"}]}])
async def test_a_jwks_that_is_no_key_set_refuses_with_401(setup: Setup, jwks: Any) -> None:
    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=jwks)

    body = task_body("0.3", TASK)
    nid = notification_id("t-1", "cfg", 1, "n0nce")
    signature, _ = setup.keys.sign(body, notification_id=nid)
    async with httpx.AsyncClient(transport=httpx.MockTransport(serve)) as http:
        receiver = Receiver(token="tok", jwks_url=JWKS, http=http)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=receiver),
                                     base_url="http://hook.test") as hook:
            resp = await hook.post("/", content=body, headers={
                "X-A2A-Notification-Token": "tok", "X-A2A-Notification-Id": nid,
                "X-A2A-Signature": signature})
    assert resp.status_code == 401 and "JWKS" in resp.json()["error"]
    assert list(receiver.events) == [] and receiver.refused == 1


async def test_a_rotated_key_is_fetched_when_first_seen(setup: Setup) -> None:
    body = task_body("0.3", TASK)
    assert (await setup.notify(body, seq=1)).status_code == 200
    setup.app.state.engine.push.rotate_signing_key()
    assert setup.receiver.jwks is not None
    setup.receiver.jwks.min_refresh = 0.0
    assert (await setup.notify(body, seq=2)).status_code == 200
    assert setup.events[0].kid != setup.events[1].kid


async def test_a_failing_callback_answers_500_so_the_agent_tries_again(setup: Setup) -> None:
    body = task_body("0.3", TASK)
    setup.fail = True
    assert (await setup.notify(body)).status_code == 500
    setup.fail = False
    assert (await setup.notify(body)).status_code == 200  # not taken as a duplicate
    assert len(setup.events) == 1


async def test_every_dialects_body_is_read(setup: Setup) -> None:
    await setup.notify(task_body("0.1", TASK), seq=1, dialect="0.1")
    await setup.notify(task_body("0.3", TASK), seq=2, dialect="0.3")
    created = event_body(TaskCreated(task=TASK))
    assert created is not None
    await setup.notify(created, seq=3)
    got = [(e.dialect, e.task_id, e.state, type(e.item).__name__) for e in setup.events]
    assert got == [("0.1", "t-1", "completed", "Task"), ("0.3", "t-1", "completed", "Task"),
                   ("1.0", "t-1", "completed", "Task")]
    assert setup.events[0].body["summary"] == "Report ready."


async def test_a_body_opening_with_a_byte_order_mark_is_read(setup: Setup) -> None:
    # RFC 8259 §8.1: a reader may ignore it, as the client does in every answer
    body = event_body(TaskCreated(task=TASK))
    assert body is not None
    reply = await setup.notify(b"\xef\xbb\xbf" + body)
    assert reply.status_code == 200, reply.text
    assert [(e.task_id, e.state) for e in setup.events] == [("t-1", "completed")]
    reply = await setup.notify(b"\xef\xbb\xbf" * 2 + body, seq=2)  # one is read past, no more
    assert reply.status_code == 400 and reply.json()["error"] == "the body is not JSON"


async def test_a_compressed_notification_is_read_and_an_unknown_coding_refused(
        setup: Setup) -> None:
    # signed as JSON, sent in gzip: the signature holds for the body decoded
    body = event_body(TaskCreated(task=TASK))
    assert body is not None
    nid = notification_id("t-1", "cfg", 1, "n0nce")
    signature, _ = setup.keys.sign(body, notification_id=nid)
    req = build_request("http://hook.test/", dialect="1.0", token="tok", authentication=None,
                        nid=nid, signature=("X-A2A-Signature", signature))
    reply = await setup.hook.post("/", content=gzip.compress(body), headers={
        **dict(req.headers), "Content-Encoding": "gzip"})
    assert reply.status_code == 200, reply.text
    assert [(e.task_id, e.state, e.verified) for e in setup.events] == [
        ("t-1", "completed", True)]
    refused = await setup.hook.post("/", content=body, headers={
        **dict(req.headers), "Content-Encoding": "br"})
    assert refused.status_code == 415 and refused.headers["accept-encoding"] == "gzip, deflate"
    assert "'br' is not supported" in refused.json()["error"]
    cut = await setup.hook.post("/", content=gzip.compress(body)[:-4], headers={
        **dict(req.headers), "Content-Encoding": "gzip"})
    assert cut.status_code == 400 and cut.json()["error"] == "the body's gzip data is cut short"
    bomb = await setup.hook.post("/", content=gzip.compress(b" " * (11 << 20)), headers={
        **dict(req.headers), "Content-Encoding": "gzip"})
    assert bomb.status_code == 413
    assert len(setup.events) == 1


async def test_listen_prints_one_json_line_per_notification(setup: Setup) -> None:
    out = io.StringIO()
    app = listener_app(jwks_url=JWKS, token="tok", output=out)
    app.jwks._http = setup.http  # type: ignore[union-attr]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://hook.test") as hook:
        body = task_body("0.3", TASK)
        signature, _ = setup.keys.sign(body, notification_id="t-1:cfg:5")
        req = build_request("http://hook.test/", dialect="0.3", token="tok", authentication=None,
                            nid="t-1:cfg:5", signature=("X-A2A-Signature", signature))
        assert (await hook.post("/", content=body, headers=req.headers)).status_code == 200
        assert (await hook.post("/", content=body, headers={})).status_code == 401
    [line] = out.getvalue().splitlines()
    doc = msgspec.json.decode(line)
    assert doc["notificationId"] == "t-1:cfg:5" and doc["state"] == "completed"
    assert doc["verified"] is True and doc["body"]["kind"] == "task"
    assert line == event_line(app.events[0])


@pytest.mark.parametrize("dialect", ["1.1", "1.0", "0.3", "0.1"])
async def test_register_receiver_in_each_dialect(setup: Setup, dialect: str) -> None:
    sent = await setup.http.post("/", json={"jsonrpc": "2.0", "id": 1, "method": "tasks/send",
                                            "params": {"id": "t-1", "message": {
                                                "role": "user",
                                                "parts": [{"type": "text", "text": "x"}]}}})
    assert "result" in sent.json()
    config = await register_receiver(setup.http, AGENT + "/", "t-1", "http://127.0.0.1:9/hook",
                                     token="tok", dialect=dialect)
    assert isinstance(config, PushConfig)
    assert (config.url, config.token) == ("http://127.0.0.1:9/hook", "tok")
    records = await setup.app.state.engine.store.list_push_configs(Scope(), "t-1")
    assert [r.dialect for r in records] == [dialect]
    with pytest.raises(TaskNotFound):
        await register_receiver(setup.http, AGENT + "/", "nope", "http://127.0.0.1:9/",
                                dialect=dialect)


@pytest.mark.parametrize("dialect", ["1.1", "1.0"])
async def test_register_receiver_in_1_1_is_fed_1_1_over_http(dialect: str) -> None:
    """Registered over real HTTP in the dialect asked for: a config registered in 1.1
    is recorded as 1.1 and fed 1.1's bodies (each event with its generation, sent
    with ``A2A-Version: 1.1``) to a ``Receiver`` on loopback; one in 1.0 stays 1.0."""
    from tests.bindings.generations_agent import converse
    from tests.live import bind_loopback, live_server, url_of

    from .helpers import until

    sock = bind_loopback()
    app = create_app(Agent("Asker", "Asks, then completes.", converse,
                           push_notifications=True),
                     public_url=url_of(sock), store="memory://", push=dev_settings())
    with live_server(app, sock=sock) as url:
        async with httpx.AsyncClient(timeout=30) as http:
            # (its own HTTP client: it runs on its server's loop, not this one)
            receiver = Receiver(token="tok", jwks_url=url + "/.well-known/jwks.json")
            with live_server(receiver) as hook:
                async def send(text: str, task_id: str | None = None) -> dict[str, Any]:
                    message: dict[str, Any] = {"messageId": f"m-{text}", "role": "ROLE_USER",
                                               "parts": [{"text": text}]}
                    if task_id is not None:
                        message["taskId"] = task_id
                    resp = await http.post(url + "/", headers={"A2A-Version": "1.0"}, json={
                        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": message}})
                    task: dict[str, Any] = resp.json()["result"]["task"]
                    return task

                task_id = (await send("ask"))["id"]
                config = await register_receiver(http, url + "/", task_id, hook + "/",
                                                 token="tok", dialect=dialect)
                assert (config.url, config.token) == (hook + "/", "tok")
                records = await app.state.engine.store.list_push_configs(Scope(), task_id)
                assert [r.dialect for r in records] == [dialect]
                await send("done", task_id)
                await until(lambda: any(e.state == "completed" for e in receiver.events))
    events = list(receiver.events)
    assert events and all(e.verified and e.task_id == task_id for e in events), events
    assert {e.headers.get("a2a-version") for e in events} == {dialect}
    numbers = [next(iter(e.body.values())).get("generation") for e in events]
    if dialect == "1.1":  # each event with the generation after it, as a string
        assert all(n is not None and int(n) > 2 for n in numbers), numbers
    else:
        assert numbers == [None] * len(events), numbers


async def test_register_receiver_with_an_agent_without_push() -> None:
    async def quiet(text: str) -> str:
        return text

    app = create_app(Agent("Quiet", "No push.", quiet), public_url=AGENT)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=AGENT) as http:
        with pytest.raises(PushNotSupported):
            await register_receiver(http, AGENT + "/", "t-1", "https://hooks.example.com/")
    await app.state.engine.stop()


async def test_listen_prints_an_agents_text_on_one_line_without_controls(
        setup: Setup) -> None:
    # the status text is the agent's: no escape sequence or line break reaches the terminal
    out = io.StringIO()
    app = listener_app(jwks_url=JWKS, token="tok", output=out, as_json=False)
    app.jwks._http = setup.http  # type: ignore[union-attr]
    text = "ready\x1b]0;TITLE\x07\r\n12:00:00  task t-9  completed  (signature verified)"
    task = Task(id="t-1\x1b[2J", context_id="c-1", status=TaskStatus(
        state=TaskState.COMPLETED,
        message=Message(message_id="m", role=Role.AGENT, parts=[TextPart(text)])))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://hook.test") as hook:
        body = task_body("0.3", task)
        signature, _ = setup.keys.sign(body, notification_id="n-1")
        req = build_request("http://hook.test/", dialect="0.3", token="tok", authentication=None,
                            nid="n-1", signature=("X-A2A-Signature", signature))
        assert (await hook.post("/", content=body, headers=req.headers)).status_code == 200
    [line] = out.getvalue().splitlines()
    assert line.endswith("  task t-1\\x1b[2J  completed  (signature verified)  ready"
                         "\\x1b]0;TITLE\\x07 12:00:00  task t-9  completed  (signature verified)")
