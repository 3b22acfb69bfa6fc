"""How every command says an error: one line on stderr (``error: …``) and its exit
status; run with ``--json``, also one JSON object on stdout, ``{"error": {"message":
…}}`` with the error's ``code`` (and ``data``) where it has one, usage errors included.

The command line is read for ``--json`` before click parses it (``json_errors``), so
that an error click meets while parsing is said as JSON too."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, NoReturn

import click

from .output import error_json
from .safe_text import one_line

__all__ = ["cannot_listen", "fail", "file_in_the_way", "json_errors", "say_error"]

_JSON: ContextVar[bool] = ContextVar("interlingua_json_errors", default=False)


@contextlib.contextmanager
def json_errors(args: Sequence[str]) -> Iterator[None]:
    """While a command runs: whether its command line asks for ``--json`` (before a
    ``--``, after which everything is an argument)."""
    words = list(args)
    if "--" in words:
        words = words[:words.index("--")]
    token = _JSON.set("--json" in words)
    try:
        yield
    finally:
        _JSON.reset(token)


def say_error(message: str, *, as_json: bool = False, code: int | None = None,
              json_message: str | None = None, data: Any = None) -> None:
    """``message`` on stderr as one line; with ``--json`` (or ``as_json``), the error as
    JSON on stdout first (``json_message``: its message there, if not ``message``).

    A message may quote an agent, who may put line breaks and escape sequences in it:
    on stderr they are folded and escaped (``one_line``); the JSON keeps them, escaped."""
    if as_json or _JSON.get():
        click.echo(error_json(code, json_message or message, data).decode())
    click.echo(f"error: {one_line(message)}", err=True)


def fail(message: str, exit_code: int, **json: Any) -> NoReturn:
    """Say the error (``say_error``, with ``json``'s keywords) and exit with ``exit_code``."""
    say_error(message, **json)
    raise click.exceptions.Exit(exit_code)


def file_in_the_way(path: Path) -> str | None:
    """"DIR is a file, not a folder" when a folder on the way to ``path`` is a file
    (an OSError then says only "File exists" or "Not a directory"), else None."""
    blocker = next((p for p in [path.parent, *path.parent.parents]
                    if p.exists() and not p.is_dir()), None)
    return None if blocker is None else f"{blocker} is a file, not a folder"


def cannot_listen(host: str, port: int, exc: OSError, *, port_flag: str = "--port",
                  host_flag: str = "--host") -> str:
    """Why ``host:port`` cannot be listened on, naming the option at fault: ``--host``
    for an address that does not resolve or is not this machine's, else the port's
    option (a port taken, or one that needs privileges)."""
    import errno

    reason = exc.strerror or str(exc)
    where = f"{host}:{port}"
    if isinstance(exc, socket.gaierror) or exc.errno in (errno.EADDRNOTAVAIL,
                                                          errno.EAFNOSUPPORT):
        return f"{host_flag} {host}: cannot listen on {where}: {reason}"
    return f"{port_flag} {port}: cannot listen on {where}: {reason}"
