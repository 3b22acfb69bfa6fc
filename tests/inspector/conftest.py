"""Fixtures of the inspector's tests: the agents, the inspector, one browser per module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from interlingua.inspector import inspector_app

from ..browser import chromium
from .servers import ReportAgent, Served, agent_app, gappy_app, secure_app


def _served(app: Any) -> Iterator[Served]:
    served = Served(app)
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="module")
def inspector() -> Iterator[Served]:
    yield from _served(inspector_app())


@pytest.fixture(scope="module")
def story() -> Iterator[Served]:
    yield from _served(agent_app("story"))


@pytest.fixture(scope="module")
def flights() -> Iterator[Served]:
    yield from _served(agent_app("flight_booking"))


@pytest.fixture(scope="module")
def files_agent() -> Iterator[Served]:
    yield from _served(agent_app("image_rotate"))


@pytest.fixture(scope="module")
def secure() -> Iterator[Served]:
    yield from _served(secure_app())


@pytest.fixture(scope="module")
def gappy() -> Iterator[Served]:
    yield from _served(gappy_app())


@pytest.fixture(scope="module")
def reports() -> Iterator[ReportAgent]:
    agent = ReportAgent().start(seconds=1.0)
    try:
        yield agent
    finally:
        agent.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's package) driven by Playwright; one per module."""
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any, inspector: Served) -> Iterator[Any]:
    """A fresh page (and so a fresh inspector session) on the inspector."""
    context = browser.new_context(accept_downloads=True)
    context.set_default_timeout(10_000)
    page = context.new_page()
    # the page's own failures: uncaught exceptions, and log entries it could not show
    failures: list[str] = []
    page.on("pageerror", lambda exc: failures.append(f"uncaught: {exc}"))
    page.on("console", lambda msg: failures.append(msg.text)
            if msg.type == "error" and msg.text.startswith("inspector:") else None)
    page.goto(inspector.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    try:
        yield page
    finally:
        context.close()
    assert not failures, failures
