"""URL arguments and options: checked when the command line is read, one line each."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

import click

__all__ = ["check_http_url", "split_url"]


def split_url(value: str) -> SplitResult:
    """``urlsplit(value)``, or ``click.BadParameter`` naming ``value``."""
    try:
        return urlsplit(value)
    except ValueError as exc:  # ("Invalid IPv6 URL": a bracket left open)
        raise click.BadParameter(f"{value!r} is not a URL: {exc}") from None


def check_http_url(ctx: click.Context | None, param: click.Parameter | None,
                   value: str | None) -> str | None:
    """A click callback: ``value`` when it is an http(s):// URL with a valid port."""
    if value is None:
        return None
    parts = split_url(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise click.BadParameter(f"{value!r} is not an http:// or https:// URL")
    try:
        parts.port  # noqa: B018 - reading it checks the range
    except ValueError:
        raise click.BadParameter(f"{value!r} has no valid port (0-65535)") from None
    return value
