"""A route asked for with a verb it does not take, on every generation of HTTP+JSON's
routes (v1.0, v1.1, v0.3 under ``/v1``), on a real server on loopback: 405 with
``Allow``, and a body naming an error in the version's own words (docs/rest.md
§Errors), so that each version's SDKs can classify it. v0.3's is
``MethodNotFoundError`` (-32601), the error a wrong verb is a kind of; before, it was
a body with a message alone."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.parts import new_id
from tests.live import live_agent

from .drivers import DRIVERS, DRIVERS_11, REST, Refused
from .test_parity import AGENT, PUSH

RESTS: dict[str, type[REST]] = {
    name: d for name, d in {**DRIVERS, **DRIVERS_11}.items() if issubclass(d, REST)}

#: the error each generation names a wrong verb with (v1.x: ErrorInfo's reason, v0.3: type)
NAMED = {"1.0": "METHOD_NOT_ALLOWED", "1.1": "METHOD_NOT_ALLOWED", "0.3": "MethodNotFoundError"}


def _message() -> m.Message:
    return m.Message(message_id=new_id(), role=m.Role.USER, parts=[m.TextPart(text="1")])


#: one call of each route
CALLS: dict[str, c.Call] = {
    "send": c.SendMessage(message=_message()),
    "stream": c.SendMessage(message=_message(), streaming=True),
    "get task": c.GetTask(id="t1"),
    "list tasks": c.ListTasks(),
    "cancel": c.CancelTask(id="t1"),
    "subscribe": c.SubscribeToTask(id="t1"),
    "set config": c.SetPushConfig(task_id="t1", config=m.PushConfig(url="http://x.test/")),
    "get config": c.GetPushConfig(task_id="t1", config_id="c1"),
    "list configs": c.ListPushConfigs(task_id="t1"),
    "delete config": c.DeletePushConfig(task_id="t1", config_id="c1"),
    "extended card": c.GetExtendedCard(),
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_agent(AGENT, push=PUSH) as u:
        yield u


def _refused(driver: REST, verb: str, path: str) -> tuple[Refused, httpx.Response]:
    resp = driver.client.request(verb, driver._base() + path, headers=driver.headers)
    assert resp.status_code == 405, (verb, path, resp.text)
    return driver._refused(resp), resp


#: each generation's routes (v0.3 has none listing tasks)
CASES = [(name, route) for name in RESTS for route in CALLS
         if route != "list tasks" or RESTS[name].lists_tasks]


@pytest.mark.parametrize(("name", "route"), CASES)
def test_a_wrong_verb_is_405_naming_an_error(name: str, route: str, url: str,
                                             client: httpx.Client) -> None:
    driver = RESTS[name](client, url)
    _, path, _, _ = driver._route(CALLS[route])
    for verb in ("PUT", "PATCH"):
        refused, resp = _refused(driver, verb, path)
        assert refused.reason == NAMED[driver.version], (verb, path, refused.body)
        assert resp.headers["allow"], (verb, path)
        assert verb in refused.message


def test_v03s_singular_config_route_takes_a_post_alone(url: str, client: httpx.Client) -> None:
    """``/v1/task/{id}/pushNotificationConfigs`` (the v0.3 SDK's create route)."""
    driver = RESTS["rest-0.3"](client, url)
    refused, resp = _refused(driver, "GET", "/task/t1/pushNotificationConfigs")
    assert resp.headers["allow"] == "POST"
    assert (refused.reason, refused.body["code"]) == ("MethodNotFoundError", -32601)
