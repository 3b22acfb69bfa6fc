"""URL arguments and options: checked when the command line is read, one line each."""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

import click

from ..core.urls import http_url, lower_scheme, space_fault

__all__ = ["check_agent_url", "check_http_url", "split_url"]


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
    try:
        http_url(value)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} {exc}") from None
    return value


def _binding_of(ctx: click.Context) -> str | None:
    """The command's ``--binding``, kept in ``ctx.meta`` or among its parameters."""
    binding = ctx.meta.get("interlingua.binding", ctx.params.get("binding"))
    return binding.lower() if isinstance(binding, str) else None


#: a bare HOST:PORT[/PATH] (a name, an IPv4 or a bracketed IPv6 address)
_HOST_PORT = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d{1,5}(?:/\S*)?")


def check_agent_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """An agent's URL: http(s)://, mqtt(s)://HOST/NAMESPACE/AGENT on a mesh, or a
    gRPC address, grpc(s)://HOST:PORT (or dns:///HOST:PORT, as cards name it, and a bare
    HOST:PORT with --binding grpc: plain text)."""
    fault = space_fault(value)
    if fault is not None:  # (checked first: urllib would strip a leading space)
        raise click.BadParameter(f"{value!r} {fault}")
    value = lower_scheme(value)
    if "://" not in value and value[:4].lower() != "dns:" and _binding_of(ctx) == "grpc":
        # as the client takes it with binding="grpc" (--binding is read first: eager)
        value = "grpc://" + value
    if value[:4].lower() == "dns:":
        from ..grpc_wire.address import dns_target

        value = "grpc://" + dns_target(value)
    if value.startswith(("grpc://", "grpcs://")):
        fault = space_fault(value)
        if fault is not None:  # (a dns:/// target's host, in its path until now)
            raise click.BadParameter(f"{value!r} {fault}")
        parts = split_url(value)
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None:
            raise click.BadParameter(f"{value!r}: a gRPC address is grpc://HOST:PORT")
        return value
    if value.startswith(("mqtt://", "mqtts://")):
        from ..mesh.topics import parse_mesh_url
        from .mesh_options import need_mqtt

        try:
            mesh = parse_mesh_url(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
        if mesh.agent is None:
            raise click.BadParameter(f"{value!r}: a mesh agent is mqtt://HOST[:PORT]/NAMESPACE/AGENT"
                                     " (or /ORG/UNIT/AGENT in the A2A-over-MQTT profile)")
        need_mqtt()
        return value
    parts = split_url(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        # HOST:PORT, as curl takes it: named, not guessed (it may be gRPC's, or https)
        hint = f"; did you mean 'http://{value}'?" if _HOST_PORT.fullmatch(value) else ""
        raise click.BadParameter(
            f"{value!r} is not an agent URL: http(s)://HOST[:PORT][/PATH], a gRPC address "
            "grpc(s)://HOST:PORT, or a mesh agent mqtt(s)://HOST[:PORT]/NAMESPACE/AGENT "
            f"(/ORG/UNIT/AGENT in the A2A-over-MQTT profile){hint}")
    checked = check_http_url(ctx, param, value)
    assert checked is not None
    return checked
