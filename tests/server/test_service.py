"""A service's bindings start and stop around its engine, in order, whether the
service runs under an ASGI server (the app's lifespan) or alone (``async with``);
a start-up that fails stops what it had started."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlingua import Agent, Client, create_app
from interlingua.bindings.base import BaseBinding
from interlingua.core.model import AgentInterface
from interlingua.server.service import Service
from interlingua.server.settings import ServiceSettings
from tests.live import bind_loopback, live_server, url_of


async def _echo(text: str) -> str:
    return text


class Recorder(BaseBinding):
    name = "recorder"

    def __init__(self, label: str, log: list[str], fail: str | None = None) -> None:
        self.label, self.log, self.fail = label, log, fail
        self.service: Service | None = None

    def _note(self, what: str) -> None:
        engine = self.service.engine if self.service is not None else None
        state = "on" if engine is not None and engine.started else "off"
        self.log.append(f"{self.label} {what} (engine {state})")
        if self.fail == what:
            raise RuntimeError(f"{self.label} cannot {what}")

    async def prepare(self, service: Service) -> None:
        self.service = service
        self._note("prepare")

    async def start(self) -> None:
        self._note("start")

    async def stop(self) -> None:
        self._note("stop")


async def test_bindings_run_around_the_engine_in_order() -> None:
    log: list[str] = []
    sock = bind_loopback()
    app = create_app(Agent("Echo", "Echoes.", _echo), public_url=url_of(sock), freeze_gc=False,
                     bindings=[Recorder("first", log), Recorder("second", log)])
    with live_server(app, sock=sock) as url:
        async with Client(url) as client:
            await client.send("hi")
        assert log == ["first prepare (engine off)", "second prepare (engine off)",
                       "first start (engine on)", "second start (engine on)"]
    # stopped last first, before the engine stops
    assert log[4:] == ["second stop (engine on)", "first stop (engine on)"]


async def test_what_was_prepared_is_stopped_when_the_engine_cannot_start(
        tmp_path: Path) -> None:
    log: list[str] = []
    # a directory where the database file should be: the store cannot open
    (tmp_path / "tasks.db").mkdir()
    app = create_app(Agent("Echo", "Echoes.", _echo), store=f"sqlite:///{tmp_path}/tasks.db",
                     freeze_gc=False)
    app.state.service.add_binding(Recorder("grpc", log))
    with pytest.raises(Exception):  # noqa: B017 - whichever error the store gives
        async with app.router.lifespan_context(app):
            pass
    assert log == ["grpc prepare (engine off)", "grpc stop (engine off)"]


async def test_a_binding_that_cannot_start_stops_the_service() -> None:
    log: list[str] = []
    service = Service(Agent("Echo", "Echoes.", _echo), ServiceSettings(freeze_gc=False),
                      bindings=[Recorder("a", log), Recorder("b", log, fail="start")])
    with pytest.raises(RuntimeError, match="b cannot start"):
        async with service:
            pass
    assert log == ["a prepare (engine off)", "b prepare (engine off)",
                   "a start (engine on)", "b start (engine on)",
                   "b stop (engine on)", "a stop (engine on)"]
    assert not service.engine.started and not service.started


async def test_a_binding_that_cannot_prepare_leaves_the_engine_alone() -> None:
    log: list[str] = []
    service = Service(Agent("Echo", "Echoes.", _echo), ServiceSettings(freeze_gc=False),
                      bindings=[Recorder("a", log), Recorder("b", log, fail="prepare")])
    with pytest.raises(RuntimeError, match="b cannot prepare"):
        await service.start()
    assert log == ["a prepare (engine off)", "b prepare (engine off)",
                   "b stop (engine off)", "a stop (engine off)"]
    assert not service.engine.started


class Declaring(BaseBinding):
    name = "plain"

    def interfaces(self, base_url: str) -> list[AgentInterface]:
        return [AgentInterface(url=base_url + "/plain", binding="PLAIN", protocol_version="1.0")]


def test_the_card_lists_what_the_bindings_declare() -> None:
    service = Service(Agent("Echo", "Echoes.", _echo),
                      ServiceSettings(public_url="http://agent.example"))
    assert service.card.card.interfaces == []
    service.add_binding(Declaring())
    assert [(i.url, i.binding) for i in service.card.card.interfaces] == [
        ("http://agent.example/plain", "PLAIN")]
    # behind the HTTP host: JSON-RPC first, each binding's v1.0 entries before the v0.3 ones
    app = create_app(Agent("Echo", "Echoes.", _echo), public_url="http://agent.example",
                     bindings=[Declaring()])
    assert [(i.binding, i.protocol_version)
            for i in app.state.service.card.card.interfaces] == [
        ("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("PLAIN", "1.0"),
        ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")]
    assert app.state.service.binding("plain") is not None
    assert app.state.service.binding("grpc") is None


async def test_no_binding_is_added_once_started() -> None:
    service = Service(Agent("Echo", "Echoes.", _echo), ServiceSettings(freeze_gc=False))
    async with service:
        with pytest.raises(RuntimeError, match="after the service started"):
            service.add_binding(Declaring())


def test_create_app_refuses_a_keyword_that_is_no_setting() -> None:
    with pytest.raises(TypeError, match="create_app\\(\\) got an unexpected keyword argument "
                                        "'stor'"):
        create_app(Agent("Echo", "Echoes.", _echo), stor="memory://")  # type: ignore[call-arg]
    # the documented keywords override the settings given
    app = create_app(Agent("Echo", "Echoes.", _echo), ServiceSettings(max_batch_items=5),
                     max_answer_bytes=1000)
    assert app.state.service.settings.max_batch_items == 5
    assert app.state.service.settings.max_answer_bytes == 1000
    with pytest.raises(ValueError, match="max_batch_items must be at least 1"):
        create_app(Agent("Echo", "Echoes.", _echo), max_batch_items=0)
    # a limit of no bytes would refuse every request with a body
    with pytest.raises(ValueError, match="max_body_bytes must be at least 1"):
        create_app(Agent("Echo", "Echoes.", _echo), max_body_bytes=0)
    with pytest.raises(ValueError, match="young_gc_threshold must be at least 1"):
        create_app(Agent("Echo", "Echoes.", _echo), young_gc_threshold=-1)
    with pytest.raises(ValueError, match="long_poll_max_wait must not be negative"):
        ServiceSettings(long_poll_max_wait=float("nan"))
