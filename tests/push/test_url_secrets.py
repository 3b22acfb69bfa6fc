"""A webhook URL refused at creation is named in the refusal without the credentials
it carries: over real HTTP on loopback, in every dialect, for every reason a URL is
refused (docs/security.md: secrets never appear in error messages)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua.server.push import PushSettings, UrlGuard
from interlingua.server.push.ssrf import Refused
from tests.live import live_agent

from .helpers import echo

SECRET = "SECRETPASS"

#: URLs that hold a secret where a user and password go, each refused for a reason of
#: its own (with http and private networks allowed, and without)
URLS = [
    f"http://user:{SECRET}@169.254.169.254/x",    # credentials (or: not https)
    f"http://user:{SECRET}@[::1",                 # no parser takes it
    f"ftp://user:{SECRET}@hooks.example.com/x",   # not http(s)
    f"https://user:{SECRET}@/x",                  # no host
    f"https://{SECRET}@hooks.example.com/",       # a token as the user
    f"https://user:{SECRET[:4]}/{SECRET[4:]}@hooks.example.com/",  # a '/' in it: no port
    f"HTTPS://user:{SECRET}@hooks.example.com:99999/",
]

#: the parts of the secret that must not be shown (a '/' splits one of them)
PIECES = [SECRET, SECRET[:4], SECRET[4:]]


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


CREATE = {
    "1.0": lambda task, url: _rpc("CreateTaskPushNotificationConfig",
                                  {"taskId": task, "url": url}),
    "0.3": lambda task, url: _rpc("tasks/pushNotificationConfig/set",
                                  {"taskId": task, "pushNotificationConfig": {"url": url}}),
    "0.1": lambda task, url: _rpc("tasks/pushNotification/set",
                                  {"id": task, "pushNotificationConfig": {"url": url}}),
}


@pytest.fixture(scope="module", params=["default", "open"])
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The agent with the default guard, and with http and private networks allowed."""
    push = PushSettings(dispatch=False) if request.param == "default" else PushSettings(
        allow_http=True, allow_private_networks=True, dispatch=False)
    with live_agent(echo, push=push) as base:
        yield base


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
@pytest.mark.parametrize("webhook", URLS)
def test_a_refused_webhook_url_is_named_without_its_credentials(
        url: str, dialect: str, webhook: str) -> None:
    task = f"t-{uuid.uuid4()}"
    with httpx.Client(timeout=20) as client:
        made = client.post(url + "/", json=_rpc("tasks/send", {
            "id": task, "message": {"role": "user", "parts": [{"type": "text", "text": "x"}]}}))
        assert "result" in made.json(), made.text
        headers = {"A2A-Version": "1.0"} if dialect == "1.0" else {}
        answer = client.post(url + "/", json=CREATE[dialect](task, webhook), headers=headers)
    error = answer.json()["error"]
    assert error["code"] == -32602, error
    assert "url refused" in error["message"], error
    for piece in PIECES:
        assert piece not in answer.text, answer.text
    # the URL is still named, its credentials masked
    assert "***@" in error["message"], error


@pytest.mark.parametrize("webhook", URLS)
def test_the_guard_s_refusals_hold_no_credentials(webhook: str) -> None:
    for guard in (UrlGuard(), UrlGuard(allow_http=True, allow_private_networks=True)):
        with pytest.raises(Refused) as refused:
            guard.check_url(webhook)
        for piece in PIECES:
            assert piece not in str(refused.value), refused.value
