from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live import live_server

from .chat_server import ChatServer


@pytest.fixture(scope="module")
def chat_server() -> Iterator[tuple[ChatServer, str]]:
    """The stand-in chat-completions server on a loopback port; its API root."""
    server = ChatServer()
    with live_server(server.app) as url:
        yield server, url + "/v1"
