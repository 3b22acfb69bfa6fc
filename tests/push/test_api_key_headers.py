"""An ApiKey config's header never doubles a header the server sends: refused when the
config is set (tests/bindings/test_parity.py, every binding), and a config stored before
that rule, naming one, is a dead letter saying why, not a request sent with two."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from interlingua import Agent, Context
from interlingua.core.calls import SetPushConfig
from interlingua.core.errors import InvalidParams
from interlingua.core.model import AuthInfo, PushConfig, Task
from interlingua.server import RequestInfo
from interlingua.server.push import Attempt
from interlingua.stores import Scope

from .helpers import Hook, dev_settings, send, serve_hook, start_engine, until

V1 = RequestInfo(dialect="1.0")


def api_key(name: str, value: str = "k3y") -> AuthInfo:
    return AuthInfo(schemes=["ApiKey"], credentials=msgspec.json.encode(
        {"in": "header", "name": name, "value": value}).decode())


def waiting_agent() -> tuple[Agent, asyncio.Event]:
    """An agent whose tasks wait for the event, then complete."""
    release = asyncio.Event()

    async def waits(ctx: Context) -> None:
        await ctx.update("waiting")
        await release.wait()
        await ctx.complete("done")

    return Agent("Waits", "Waits.", waits, push_notifications=True), release


@pytest.mark.parametrize("name", ["Transfer-Encoding", "content-length", "Host",
                                  "Keep-Alive", "Upgrade", "TE", "Trailer", "Expect",
                                  "Content-Encoding", "Proxy-Connection",
                                  "X-A2A-Notification-Token", "x-a2a-anything",
                                  "Traceparent"])
async def test_a_reserved_api_key_header_is_refused_in_every_dialect(name: str) -> None:
    agent, release = waiting_agent()
    engine = await start_engine(agent, dev_settings(dispatch=False))
    try:
        for dialect in ("1.0", "0.3", "0.1"):
            task = await engine.handle(send("x", "http://127.0.0.1:9/h", blocking=False),
                                       RequestInfo(dialect=dialect))
            assert isinstance(task, Task)
            with pytest.raises(InvalidParams, match=f"ApiKey header {name!r}"):
                await engine.handle(SetPushConfig(task_id=task.id, config=PushConfig(
                    url="http://127.0.0.1:9/h", id="k", authentication=api_key(name))),
                    RequestInfo(dialect=dialect))
            # in a send's config too
            with pytest.raises(InvalidParams, match=f"ApiKey header {name!r}"):
                await engine.handle(send("x", "http://127.0.0.1:9/h", authentication=api_key(
                    name)), RequestInfo(dialect=dialect))
        release.set()
    finally:
        await engine.stop()


async def test_a_stored_config_naming_a_header_the_server_sends_is_a_dead_letter() -> None:
    """Configs stored before the rule (put in the store as it then took them): their
    notifications die at once, naming the header, and nothing is sent with it; a
    config with a header of its own is delivered, its key sent once."""
    agent, release = waiting_agent()
    attempts: list[Attempt] = []
    hook = Hook()
    owned = ["X-A2A-Notification-Id", "Transfer-Encoding", "Content-Length", "host"]
    with serve_hook(hook) as url:
        engine = await start_engine(agent, dev_settings(attempts=attempts,
                                                              max_attempts=3))
        try:
            task = await engine.handle(send("x", url + "/first", blocking=False), V1)
            assert isinstance(task, Task)
            for i, name in enumerate([*owned, "X-API-Key"]):
                await engine.store.put_push_config(
                    Scope(), task.id, PushConfig(url=f"{url}/{i}", id=f"c{i}",
                                                 authentication=api_key(name, f"v{i}")),
                    dialect="0.3", now="2025-01-01T00:00:00Z")
            release.set()
            await until(lambda: engine.runs.by_key == {})
            assert await engine.push.idle(10)
            dead = await engine.push.dead_letters()
        finally:
            await engine.stop()
    paths = {r.path for r in hook.requests}
    assert not paths & {f"/{i}" for i in range(len(owned))}, hook.requests
    kept = [r for r in hook.delivered() if r.path == f"/{len(owned)}"]
    assert kept and all(r.headers["x-api-key"] == f"v{len(owned)}" for r in kept)
    assert {d.config_id for d in dead} == {f"c{i}" for i in range(len(owned))}
    for d in dead:
        name = owned[int(d.config_id[1:])]
        assert d.attempts == 1, d  # final: not tried again
        assert d.last_error is not None and f"ApiKey header {name!r}" in d.last_error, d
    assert all(a.outcome == "dead" for a in attempts if a.config_id != f"c{len(owned)}"
               and a.config_id.startswith("c"))


def cookie_key(value: str) -> AuthInfo:
    return AuthInfo(schemes=["ApiKey"], credentials=msgspec.json.encode(
        {"in": "cookie", "name": "session", "value": value}).decode())


@pytest.mark.parametrize("value", ["a; admin=1", "a b", 'a"b', "a,b", "a\\b"])
async def test_a_cookie_key_that_would_end_its_cookie_is_refused(value: str) -> None:
    """(It was sent as it was: ``session=a; admin=1`` is two cookies to the receiver.)"""
    agent, release = waiting_agent()
    engine = await start_engine(agent, dev_settings(dispatch=False))
    try:
        task = await engine.handle(send("x", "http://127.0.0.1:9/h", blocking=False), V1)
        assert isinstance(task, Task)
        with pytest.raises(InvalidParams, match="cookie-octets"):
            await engine.handle(SetPushConfig(task_id=task.id, config=PushConfig(
                url="http://127.0.0.1:9/h", id="k", authentication=cookie_key(value))), V1)
        release.set()
    finally:
        await engine.stop()


async def test_a_stored_cookie_key_that_would_end_its_cookie_is_a_dead_letter() -> None:
    agent, release = waiting_agent()
    hook = Hook()
    with serve_hook(hook) as url:
        engine = await start_engine(agent, dev_settings(max_attempts=3))
        try:
            task = await engine.handle(send("x", url + "/first", blocking=False), V1)
            assert isinstance(task, Task)
            for name, value in (("bad", "a; admin=1"), ("good", "s3cr3t-v4lue")):
                await engine.store.put_push_config(
                    Scope(), task.id, PushConfig(url=f"{url}/{name}", id=name,
                                                 authentication=cookie_key(value)),
                    dialect="1.0", now="2025-01-01T00:00:00Z")
            release.set()
            await until(lambda: engine.runs.by_key == {})
            assert await engine.push.idle(10)
            dead = await engine.push.dead_letters()
        finally:
            await engine.stop()
    assert not [r for r in hook.requests if r.path == "/bad"]
    good = [r for r in hook.delivered() if r.path == "/good"]
    assert good and all(r.headers["cookie"] == "session=s3cr3t-v4lue" for r in good)
    assert dead and {(d.config_id, d.attempts) for d in dead} == {("bad", 1)}  # final
    assert all(d.last_error is not None and "cookie-octets" in d.last_error for d in dead)
