"""``interlingua listen``: a local webhook that prints the push notifications it gets.

Each accepted notification is printed as one line for people::

    12:04:05  task 0191...  completed  (signature verified)

or, with ``--json``, as one JSON line::

    {"notificationId": "...", "dialect": "1.0", "taskId": "...", "state": "completed",
     "verified": true, "body": {...}}

With ``jwks_url`` (the agent's ``/.well-known/jwks.json``, named in its card's
push-signing extension) every notification must carry a valid signature;
with ``token`` it must carry that notification token. Refused ones get a 401
and are not printed.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import msgspec
from starlette.types import ASGIApp

from ..client.push_receiver import PushEvent, Receiver
from ..core.model import TextPart
from ..host.hosts import AnsweredHosts
from ..server.connections import uvicorn_connection_options
from .safe_text import one_line

__all__ = ["event_line", "human_line", "listen", "listener_app"]


def event_line(event: PushEvent) -> str:
    """The JSON line ``listen`` prints for ``event``."""
    doc: dict[str, Any] = {
        "notificationId": event.notification_id,
        "dialect": event.dialect,
        "taskId": event.task_id,
        "state": event.state,
        "verified": event.verified,
        "body": event.body,
    }
    return msgspec.json.encode(doc).decode()


def human_line(event: PushEvent) -> str:
    """The line ``listen`` prints for ``event`` without ``--json``."""
    when = time.strftime("%H:%M:%S", time.localtime(event.received_at or time.time()))
    what = event.state or "update"
    check = "signature verified" if event.verified else "signature not checked"
    text = _status_text(event.item)
    # (the task's id and text are the agent's: one line, no controls)
    return one_line(f"{when}  task {event.task_id or '?'}  {what}  ({check})"
                    + (f"  {text}" if text else ""))


def _status_text(item: Any) -> str:
    status = getattr(item, "status", None)
    message = getattr(status, "message", None)
    if message is None:
        return ""
    texts = [p.text for p in message.parts if isinstance(p, TextPart)]
    return " ".join(texts)[:200]


def listener_app(
    *,
    jwks_url: str | None = None,
    token: str | None = None,
    authorization: str | None = None,
    output: TextIO | None = None,
    on_event: Callable[[PushEvent], None] | None = None,
    as_json: bool = True,
) -> Receiver:
    """The receiver ``listen`` serves: prints each notification to ``output``
    (stdout by default; a JSON line, or a line for people without ``as_json``),
    then calls ``on_event``."""
    line = event_line if as_json else human_line

    def show(event: PushEvent) -> None:
        out = output or sys.stdout
        out.write(line(event) + "\n")
        out.flush()
        if on_event is not None:
            on_event(event)

    return Receiver(show, token=token, jwks_url=jwks_url, authorization=authorization)


def listen(
    port: int = 8080,
    host: str = "127.0.0.1",
    jwks_url: str | None = None,
    token: str | None = None,
    *,
    authorization: str | None = None,
    output: TextIO | None = None,
    log_level: str = "warning",
    as_json: bool = True,
    sock: socket.socket | None = None,
    allowed_hosts: Sequence[str] | None = None,
) -> None:
    """Serve the webhook on ``host:port`` (any path) until interrupted; on ``sock``
    when given (bound already: a port that is taken was said by then).

    The URL to register with an agent is ``http://{host}:{port}/``; an agent
    accepts a plain-http or loopback webhook only when its push settings allow
    it (``allow_http``, ``allow_private_networks`` or ``allow_hosts``).
    ``allowed_hosts``: the names a request's ``Host`` may give (None: any).
    """
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from .prompt_server import PromptServer

    app: ASGIApp = listener_app(jwks_url=jwks_url, token=token,
                                authorization=authorization, output=output, as_json=as_json)
    if allowed_hosts is not None:
        app = AnsweredHosts(app, allowed_hosts)
    # (serve's default bounds on a connection: the head's size and deadlines, a cap
    # per address; server/connections.py)
    bounds = uvicorn_connection_options()
    if sock is not None:
        config = uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="on",
                                **bounds)
        PromptServer(config).run(sockets=[sock])
        return
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False,
                            lifespan="on", **bounds)
    server = PromptServer(config)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)  # as uvicorn.run: the port was taken, or no app
