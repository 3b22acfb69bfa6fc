"""The SSRF guard: refused at creation (every dialect) and again at connect time."""

from __future__ import annotations

import ipaddress

import httpx
import pytest

from interlingua.core.calls import GetTask, SendConfig, SendMessage
from interlingua.core.errors import InvalidParams, TaskNotFound
from interlingua.core.model import AuthInfo, PushConfig, Task
from interlingua.core.parts import user_message
from interlingua.host import create_app
from interlingua.server import RequestInfo
from interlingua.server.push import Attempt, Refused, UrlGuard
from interlingua.server.push.ssrf import address_refusal, literal_ip

from .helpers import Hook, LoopbackOnly, dev_settings, echo, send, serve_hook, start_engine, until


def resolver(table: dict[str, list[str]]):
    async def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError(f"unknown host {host}")
        return table[host]

    return resolve


# ---------------------------------------------------------------- spellings


@pytest.mark.parametrize(("host", "address"), [
    # the WHATWG URL / inet_aton forms of 127.0.0.1
    ("2130706433", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"),
    ("017700000001", "127.0.0.1"),
    ("0x7f000001", "127.0.0.1"),
    ("127.1", "127.0.0.1"),
    ("127.0.1", "127.0.0.1"),
    ("0177.0.0.01", "127.0.0.1"),
    ("127.0.0.1.", "127.0.0.1"),
    ("0xA9.0xFE.0xA9.0xFE", "169.254.169.254"),
    ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
    ("::1", "::1"),
    ("example.com", None),
    ("1.example", None),
    ("0x1g", None),  # not a number, so a domain name (WHATWG "ends in a number")
])
def test_literal_addresses_are_read_in_every_spelling(host: str, address: str | None) -> None:
    expected = None if address is None else ipaddress.ip_address(address)
    assert literal_ip(host) == expected


@pytest.mark.parametrize("host", ["1.2.3.999", "1.2.3.4.5", "1.2.3.0x100", "09.1.1.1", "4294967296"])
def test_invalid_numeric_hosts_are_refused(host: str) -> None:
    with pytest.raises(Refused, match="not a valid IPv4 address"):
        literal_ip(host)


@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("169.254.1.1", "link-local"),
    ("169.254.169.254", "cloud metadata"),
    ("224.0.0.1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("240.0.0.1", "reserved"),
    ("100.64.0.1", "non-public"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fe80::1", "link-local"),
    ("fc00::1", "private"),
    ("fec0::1", "site-local"),
    ("feff::1", "site-local"),
    ("ff02::1", "multicast"),
    ("fd00:ec2::254", "cloud metadata"),
    ("::ffff:127.0.0.1", "IPv4-embedding loopback"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("2002:7f00:1::", "IPv4-embedding loopback"),       # 6to4 of 127.0.0.1
    ("64:ff9b::a00:1", "IPv4-embedding private"),       # NAT64 of 10.0.0.1
    ("8.8.8.8", None),
    ("2606:4700:4700::1111", None),
])
def test_address_refusals_name_their_reason(address: str, reason: str | None) -> None:
    assert address_refusal(ipaddress.ip_address(address)) == reason


# ----------------------------------------------------------------- URL text

REFUSED = [
    ("http://hooks.example.com/a2a", "not https"),
    ("ftp://hooks.example.com/a2a", "not an https URL"),
    ("https://127.0.0.1/", "loopback"),
    ("https://2130706433/", "loopback"),
    ("https://0x7f.1/", "loopback"),
    ("https://017700000001/", "loopback"),
    ("https://[::1]/", "loopback"),
    ("https://[::ffff:127.0.0.1]/", "is an IPv4-embedding loopback address"),
    ("https://10.0.0.5/", "private"),
    ("https://192.168.0.1:8443/", "private"),
    ("https://169.254.169.254/latest/meta-data/", "cloud metadata"),
    ("https://[fe80::1]/", "link-local"),
    ("https://224.1.1.1/", "multicast"),
    ("https://0.0.0.0/", "is an unspecified address"),
    ("https://localhost/", "local host"),
    ("https://api.localhost/", "local host"),
    ("https://metadata.google.internal/", "metadata"),
    ("https://user:pw@hooks.example.com/", "credentials"),
    ("https:///nohost", "no host"),
    # httpx takes these as ports; no webhook can be called at one
    ("https://hooks.example.com:99999/", "no valid port"),
    ("https://hooks.example.com:0/", "no valid port"),
    ("https://hooks.example.com:-1/", "no valid port"),
    # names no resolver takes (they reached it, and its UnicodeError was a 500)
    ("https://" + "a" * 64 + ".example.com/", "no valid host name"),
    ("https://hooks..example.com/", "no valid host name"),
    ("https://xn--zz.example.com/", "no valid host name"),
]


@pytest.mark.parametrize(("url", "why"), REFUSED)
def test_url_text_is_refused_by_default(url: str, why: str) -> None:
    with pytest.raises(Refused, match=why):
        UrlGuard().check_url(url)


async def test_a_name_is_refused_when_it_resolves_to_a_refused_address() -> None:
    guard = UrlGuard(resolver=resolver({
        "hooks.example.com": ["93.184.215.14"],
        "evil.example.com": ["127.0.0.1"],
        "mixed.example.com": ["93.184.215.14", "10.0.0.1"],
        "empty.example.com": [],
    }))
    await guard.check_url_resolved("https://hooks.example.com/a2a")
    with pytest.raises(Refused, match=r"evil.example.com \(127.0.0.1\) is a loopback"):
        await guard.check_url_resolved("https://evil.example.com/a2a")
    with pytest.raises(Refused, match="private"):
        await guard.check_url_resolved("https://mixed.example.com/a2a")
    with pytest.raises(Refused, match="does not resolve"):
        await guard.check_url_resolved("https://empty.example.com/")
    with pytest.raises(Refused, match="does not resolve"):
        await guard.check_url_resolved("https://nowhere.example.com/")

    async def no_name(host: str, port: int) -> list[str]:
        raise UnicodeError("label empty or too long")  # as getaddrinfo's encoding does

    with pytest.raises(Refused, match="does not resolve"):
        await UrlGuard(resolver=no_name).resolve("hooks.example.com", 443)


@pytest.mark.parametrize("url", ["http://[::ffff:127.0.0.1]/", "http://2130706433/",
                                 "http://0x7f.1/", "http://017700000001/", "http://127.1:8080/"])
def test_allowing_http_still_refuses_loopback_in_any_spelling(url: str) -> None:
    with pytest.raises(Refused, match="loopback"):
        UrlGuard(allow_http=True).check_url(url)


async def test_localhost_is_refused_by_name_before_any_lookup() -> None:
    async def no_lookups(host: str, port: int) -> list[str]:
        raise AssertionError("looked up")

    with pytest.raises(Refused, match="local host"):
        await UrlGuard(allow_http=True, resolver=no_lookups).check_url_resolved(
            "http://localhost:9/")


def test_development_settings_open_what_they_say_and_no_more() -> None:
    dev = UrlGuard(allow_http=True, allow_private_networks=True)
    dev.check_url("http://127.0.0.1:8080/hook")
    dev.check_url("http://localhost:8080/hook")
    dev.check_url("https://10.0.0.1/")
    with pytest.raises(Refused, match="cloud metadata"):
        dev.check_url("http://169.254.169.254/")
    listed = UrlGuard(allow_hosts=["10.9.0.0/16", "hooks.internal", "169.254.169.254"])
    listed.check_url("https://10.9.3.4/")
    listed.check_url("https://hooks.internal/")
    listed.check_url("https://169.254.169.254/")  # named explicitly: allowed
    with pytest.raises(Refused, match="private"):
        listed.check_url("https://10.8.0.1/")
    with pytest.raises(Refused, match="not https"):
        listed.check_url("http://hooks.internal/")


@pytest.mark.parametrize("entry", ["10.0.0.0/99", "10.1.2.3/x", "", "  "])
def test_an_allowed_host_that_is_no_host_is_refused_at_once(entry: str) -> None:
    with pytest.raises(ValueError, match="neither a host name nor an IP address or network"):
        UrlGuard(allow_hosts=["hooks.internal", entry])


# ----------------------------------------------------------- at creation

def _rpc(method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


CREATE = {
    "1.0": lambda task, url: _rpc("CreateTaskPushNotificationConfig", {"taskId": task, "url": url}),
    "0.3": lambda task, url: _rpc("tasks/pushNotificationConfig/set",
                                  {"taskId": task, "pushNotificationConfig": {"url": url}}),
    "0.1": lambda task, url: _rpc("tasks/pushNotification/set",
                                  {"id": task, "pushNotificationConfig": {"url": url}}),
}


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
@pytest.mark.parametrize(("url", "why"), [
    ("http://2130706433/", "not https"),
    ("https://2130706433/", "loopback"),
    ("https://[::ffff:127.0.0.1]/", "loopback"),
    ("https://169.254.169.254/", "cloud metadata"),
    ("https://rebind.example/", "loopback"),
    ("https://" + "a" * 64 + ".example/", "no valid host name"),
])
async def test_each_dialect_refuses_at_creation_with_invalid_params(
    dialect: str, url: str, why: str
) -> None:
    app = create_app(echo, push=dev_settings(
        allow_http=False, allow_hosts=[], resolver=resolver({"rebind.example": ["127.0.0.1"]})))
    engine = app.state.engine
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
            headers = {"A2A-Version": "1.0"} if dialect == "1.0" else {}
            sent = await client.post("/", json=_rpc("tasks/send", {
                "id": "t-1", "message": {"role": "user", "parts": [{"type": "text", "text": "x"}]},
            }))
            assert "result" in sent.json()
            answer = (await client.post("/", json=CREATE[dialect]("t-1", url),
                                        headers=headers)).json()
    finally:
        await engine.stop()
    assert answer["error"]["code"] == -32602
    assert why in answer["error"]["message"]


async def test_refused_in_a_send_creates_no_task() -> None:
    engine = await start_engine(echo, dev_settings(allow_http=False, allow_hosts=[]))
    try:
        msg = user_message("x")
        with pytest.raises(InvalidParams, match="loopback"):
            await engine.handle(SendMessage(message=msg, config=SendConfig(
                push_config=PushConfig(url="https://127.0.0.1/")), client_task_id="t-9"),
                RequestInfo(dialect="0.1"))
        with pytest.raises(TaskNotFound):
            await engine.handle(GetTask(id="t-9"), RequestInfo())
    finally:
        await engine.stop()


# ------------------------------------------------------------ at connect time


async def test_dns_rebinding_is_refused_at_connect_time() -> None:
    answers = {"hooks.rebind.test": ["93.184.215.14"]}  # public when the config is made

    async def resolve(host: str, port: int) -> list[str]:
        return answers[host]

    network = LoopbackOnly()
    attempts: list[Attempt] = []
    engine = await start_engine(echo, dev_settings(
        allow_http=True, allow_hosts=[], resolver=resolve, network_backend=network,
        attempts=attempts, max_attempts=5))
    try:
        task = await engine.handle(send("x", "http://hooks.rebind.test:9/hook", blocking=False),
                                   RequestInfo())
        assert isinstance(task, Task)
        answers["hooks.rebind.test"] = ["127.0.0.1"]  # ... and loopback when it is called
        await until(lambda: any(a.outcome == "dead" for a in attempts))
    finally:
        await engine.stop()
    dead = next(a for a in attempts if a.outcome == "dead")
    assert dead.attempt == 1  # a refusal is final: no retries against it
    assert "refused" in (dead.error or "") and "loopback" in (dead.error or "")
    assert network.asked == []  # no connection was even attempted


async def test_a_redirect_to_the_metadata_address_is_not_followed() -> None:
    def respond(hook: Hook, headers: dict[str, str], body: bytes, path: str):
        return 307, [("location", "http://169.254.169.254/latest/meta-data/iam")]

    hook = Hook(respond)
    network = LoopbackOnly()
    attempts: list[Attempt] = []
    with serve_hook(hook) as url:
        engine = await start_engine(echo, dev_settings(network_backend=network,
                                                       attempts=attempts))
        try:
            await engine.handle(send("x", url + "/hook"), RequestInfo())
            await until(lambda: any(a.outcome == "dead" for a in attempts))
        finally:
            await engine.stop()
    dead = next(a for a in attempts if a.outcome == "dead")
    assert dead.attempt == 1 and "redirect refused" in (dead.error or "")
    assert "cloud metadata" in (dead.error or "")
    assert set(network.asked) == {"127.0.0.1"}


async def test_redirects_are_capped_and_credentials_stay_on_their_origin() -> None:
    hops: list[str] = []

    def other(hook: Hook, headers: dict[str, str], body: bytes, path: str) -> int:
        return 200

    target = Hook(other)
    with serve_hook(target) as target_url:
        def bounce(hook: Hook, headers: dict[str, str], body: bytes, path: str):
            hops.append(path)
            if path == "/start":
                return 308, [("location", "/same-origin")]
            return 307, [("location", target_url + "/moved")]

        first = Hook(bounce)
        with serve_hook(first) as first_url:
            engine = await start_engine(echo, dev_settings())
            try:
                auth = AuthInfo(schemes=["Bearer"], credentials="secret")
                await engine.handle(send("x", first_url + "/start", token="tok",
                                         authentication=auth), RequestInfo())
                assert await engine.push.idle(10)
            finally:
                await engine.stop()
    # /start -> /same-origin (credentials kept) -> the other origin (dropped)
    assert [r.path for r in first.requests[:2]] == ["/start", "/same-origin"]
    assert first.requests[1].headers["authorization"] == "Bearer secret"
    assert first.requests[1].headers["x-a2a-notification-token"] == "tok"
    moved = target.requests[0]
    assert moved.path == "/moved"
    assert "authorization" not in moved.headers
    assert "x-a2a-notification-token" not in moved.headers
    assert "x-a2a-signature" in moved.headers  # the signature is no secret


async def test_a_redirect_loop_is_cut_after_the_cap() -> None:
    def loop(hook: Hook, headers: dict[str, str], body: bytes, path: str):
        return 302, [("location", "/again")]

    hook = Hook(loop)
    attempts: list[Attempt] = []
    with serve_hook(hook) as url:
        engine = await start_engine(echo, dev_settings(max_redirects=3, attempts=attempts))
        try:
            await engine.handle(send("x", url + "/hook"), RequestInfo())
            await until(lambda: any(a.outcome == "dead" for a in attempts))
        finally:
            await engine.stop()
    dead = next(a for a in attempts if a.outcome == "dead")
    assert "more than 3 redirects" in (dead.error or "")
    assert len([r for r in hook.requests if r.nid == dead.notification_id]) == 4
