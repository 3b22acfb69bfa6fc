"""The host names a server started from the command line answers to, and the web
pages whose browsers may call it (``--allow-origin``, core/origins.py).

One listening on this machine only (``127.0.0.1``, ``localhost``, ``::1``) answers its
own names, its public URL's, and those given with ``--allow-host``: a web page whose
name is made to resolve to this machine (DNS rebinding) is the server's own origin
to the browser, and would otherwise get past the check of ``Origin``
(core/origins.py). One listening elsewhere answers every name unless ``--allow-host``
names some. ``--allow-host '*'``: every name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from ..core.origins import origin_of

__all__ = ["LOOPBACK", "allow_host_option", "allow_origin_option", "answered_hosts"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")

F = TypeVar("F", bound=Callable[..., Any])


def answered_hosts(host: str, public_url: str | None = None,
                   allowed: Sequence[str] = ()) -> list[str] | None:
    """``allowed_hosts`` for a server listening on ``host`` (None: every name)."""
    if "*" in allowed:
        return None
    names = list(allowed)
    if host in LOOPBACK:
        names += [name for name in LOOPBACK if name not in names]
    elif not names:
        return None
    public = urlsplit(public_url).hostname if public_url else None
    if public and public not in names:
        names.append(public)
    return names


def allow_host_option(f: F) -> F:
    return click.option(
        "--allow-host", "allowed_hosts", multiple=True, metavar="NAME",
        help="A host name to answer to (repeatable; *.example.com; '*': any) beside the "
             "server's own: listening on 127.0.0.1, it answers 127.0.0.1, localhost and "
             "::1 only (and its public URL's name), for DNS rebinding; elsewhere, any.")(f)


def _check_origins(ctx: click.Context, param: click.Parameter,
                   value: tuple[str, ...]) -> tuple[str, ...]:
    for origin in value:
        if origin != "*":
            try:
                origin_of(origin)
            except ValueError as exc:
                raise click.BadParameter(str(exc)) from None
    return value


def allow_origin_option(f: F) -> F:
    return click.option(
        "--allow-origin", "allowed_origins", multiple=True, metavar="ORIGIN",
        callback=_check_origins,
        help="A web page's origin (https://app.example) whose browsers may call the "
             "agent (repeatable; '*': any). Others are refused, but the agent's own "
             "(core/origins.py).")(f)

