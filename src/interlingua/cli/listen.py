"""``interlingua listen``: a local webhook that prints the push notifications it gets.

Each accepted notification is printed as one JSON line::

    {"notificationId": "...", "dialect": "1.0", "taskId": "...", "state": "completed",
     "verified": true, "body": {...}}

With ``jwks_url`` (the agent's ``/.well-known/jwks.json``, named in its card's
push-signing extension) every notification must carry a valid signature;
with ``token`` it must carry that notification token. Refused ones get a 401
and are not printed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

import msgspec

from ..server.push.receiver import PushEvent, Receiver

__all__ = ["event_line", "listen", "listener_app"]


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


def listener_app(
    *,
    jwks_url: str | None = None,
    token: str | None = None,
    authorization: str | None = None,
    output: TextIO | None = None,
    on_event: Callable[[PushEvent], None] | None = None,
) -> Receiver:
    """The receiver ``listen`` serves: prints each notification to ``output``
    (stdout by default), then calls ``on_event``."""

    def show(event: PushEvent) -> None:
        out = output or sys.stdout
        out.write(event_line(event) + "\n")
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
) -> None:
    """Serve the webhook on ``host:port`` (any path) until interrupted.

    The URL to register with an agent is ``http://{host}:{port}/``; an agent
    accepts a plain-http or loopback webhook only when its push settings allow
    it (``allow_http``, ``allow_private_networks`` or ``allow_hosts``).
    """
    import uvicorn

    app = listener_app(jwks_url=jwks_url, token=token, authorization=authorization,
                       output=output)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False,
                lifespan="on")
