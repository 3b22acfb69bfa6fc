"""Headers given on the command line (``-H 'Name: value'``), checked as the client
checks them: a usage error naming the header, never a traceback from httpx."""

from __future__ import annotations

import click

from ..client.transport import checked_headers

__all__ = ["parse_headers"]


def parse_headers(values: tuple[str, ...]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in values:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise click.BadParameter(f"{item!r} is not 'Name: value'", param_hint="'--header'")
        headers[name.strip()] = value.strip()
    try:
        return checked_headers(headers)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--header'") from None
