"""``interlingua inspect [URL]``: the web inspector, served on this machine."""

from __future__ import annotations

import socket
from typing import Any

import click

from .answered_hosts import LOOPBACK
from .errors import cannot_listen, fail
from .urls import check_http_url

__all__ = ["inspect_command"]


@click.command("inspect")
@click.argument("url", required=False, callback=check_http_url)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on (the inspector holds credentials: keep it local).")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
def inspect_command(url: str | None, host: str, port: int) -> None:
    """Open a web inspector for A2A agents (URL: the agent to start with).

    It shows an agent's card, chats with it, and shows each task's events, the
    raw HTTP frames, the agent's tasks and the push notifications it sends.
    """
    import uvicorn

    from ..host.hosts import AnsweredHosts
    from ..inspector import inspector_app
    from ..inspector.app import NotFramed
    from ..server.connections import uvicorn_connection_options
    from .prompt_server import PromptServer

    # on loopback, only loopback names: a page elsewhere whose name resolves here is
    # refused (DNS rebinding); read as serve reads Host, an IPv6 address in brackets
    app: Any = inspector_app(default_url=url)
    if host in LOOPBACK:
        # (its refusals not framed either: the app's own middleware is inside it)
        app = NotFramed(AnsweredHosts(app, LOOPBACK))
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        # as serve: one line naming the option, and the exit code of a usage error
        fail(cannot_listen(host, port, exc), 2)
    bound = sock.getsockname()[1]
    shown = host if host not in ("0.0.0.0", "::") else "localhost"
    if ":" in shown:
        shown = f"[{shown}]"
    # the URL is all a headless machine needs; no browser is started
    click.echo(f"interlingua inspector on http://{shown}:{bound}/", err=False)
    # (serve's default bounds on a connection; server/connections.py)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1,
                            **uvicorn_connection_options())
    PromptServer(config).run(sockets=[sock])
