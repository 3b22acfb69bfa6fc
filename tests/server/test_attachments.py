"""What is attached to an app (the gRPC server, the mesh) starts and stops around
its engine, through the app's lifespan as an ASGI server runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlingua import Agent, Client, create_app
from interlingua.server.attachments import Attachment
from tests.live import bind_loopback, live_server, url_of


async def _echo(text: str) -> str:
    return text


def _recorder(app, name: str, log: list[str]) -> Attachment:  # type: ignore[no-untyped-def]
    engine = app.state.engine

    def step(what: str):  # type: ignore[no-untyped-def]
        async def run() -> None:
            log.append(f"{name} {what} (engine {'on' if engine.started else 'off'})")

        return run

    return Attachment(name, prepare=step("prepare"), start=step("start"), stop=step("stop"))


async def test_attachments_run_around_the_engine_in_order() -> None:
    log: list[str] = []
    sock = bind_loopback()
    app = create_app(Agent("Echo", "Echoes.", _echo), public_url=url_of(sock), freeze_gc=False)
    for name in ("first", "second"):
        app.state.attachments.add(_recorder(app, name, log))
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
    app.state.attachments.add(_recorder(app, "grpc", log))
    with pytest.raises(Exception):  # noqa: B017 - whichever error the store gives
        async with app.router.lifespan_context(app):
            pass
    assert log == ["grpc prepare (engine off)", "grpc stop (engine off)"]
