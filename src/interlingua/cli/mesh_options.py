"""The options of ``interlingua serve`` that put an agent on an MQTT 5 mesh."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from ..mesh import MeshSettings
from ..mesh.topics import check_name, parse_mesh_url

__all__ = ["check_mesh_url", "mesh_serve_options", "mesh_settings", "need_mqtt"]

F = TypeVar("F", bound=Callable[..., object])


def need_mqtt() -> None:
    """One line and exit 2 when the mesh's extra is missing (not a traceback once
    the first connection imports it)."""
    from ..mesh.broker import MQTT_MISSING, available

    if not available():
        click.echo(f"error: {MQTT_MISSING}", err=True)
        raise click.exceptions.Exit(2)


def check_mesh_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        parse_mesh_url(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    need_mqtt()
    return value


def check_level(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return check_name(param.name or "name", value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def mesh_serve_options(f: F) -> F:
    options = [
        click.option("--mesh", "mesh_url", default=None, callback=check_mesh_url,
                     metavar="mqtt://HOST[:PORT]",
                     help="Also serve the agent on this MQTT 5 broker, in the Solace Agent "
                          "Mesh topic layout (docs/mesh.md; needs interlingua[mqtt])."),
        click.option("--namespace", default=None, callback=check_level, metavar="NS",
                     help="The mesh's namespace: the first level of its topics."),
        click.option("--no-http", is_flag=True,
                     help="Serve on the mesh only, with no HTTP listener."),
        click.option("--mesh-name", "mesh_agent_name", default=None, callback=check_level,
                     metavar="NAME",
                     help="The agent's name on the mesh [default: its name, with characters "
                          "a topic level cannot hold as _]."),
        click.option("--mesh-instance", default=None, callback=check_level, metavar="NAME",
                     help="This instance's name (its client id is NS-AGENT-NAME); the same name "
                          "on a restart resumes the session the broker kept, with the requests "
                          "queued for it. Refused while another process of this host holds it "
                          "[default: HOST-N, the lowest N no live instance of the agent on this "
                          "host holds]."),
        click.option("--mesh-group", default=None, callback=check_level, metavar="NAME",
                     help="The shared subscription group of the agent's instances "
                          "[default: the agent's name]."),
        click.option("--mesh-session-expiry", type=click.IntRange(0, 2**32 - 1), default=3600,
                     show_default=True, metavar="SECONDS",
                     help="How long the broker keeps an absent instance's session and its "
                          "queued requests."),
        click.option("--mesh-card-interval", type=click.FloatRange(0.1, 3600), default=10.0,
                     show_default=True, metavar="SECONDS",
                     help="How often the card is published on the discovery topic (consumers "
                          "forget an instance six periods after its last card by default)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def mesh_settings(url: str | None, namespace: str | None, no_http: bool, name: str | None,
                  instance: str | None, group: str | None,
                  session_expiry: int, card_interval: float = 10.0) -> MeshSettings | None:
    if url is None:
        if namespace or no_http or name or instance or group:
            raise click.UsageError("--namespace, --no-http and --mesh-* go with --mesh URL")
        return None
    parsed = parse_mesh_url(url)
    namespace = namespace or parsed.namespace
    if namespace is None:
        raise click.UsageError("--mesh needs --namespace NS (or mqtt://HOST/NS)")
    return MeshSettings(url=url, namespace=namespace, instance=instance, group=group,
                        session_expiry=session_expiry, card_interval=card_interval,
                        http=not no_http)
