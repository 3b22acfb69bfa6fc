"""The options of ``interlingua serve`` that put an agent on an MQTT 5 mesh."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..mesh import MeshSettings
from ..mesh.topics import check_name, parse_mesh_url
from .errors import fail
from .seconds import Seconds

__all__ = ["check_mesh_url", "mesh_serve_options", "mesh_settings", "need_mqtt"]

F = TypeVar("F", bound=Callable[..., object])


def need_mqtt() -> None:
    """One line and exit 2 when the mesh's extra is missing (not a traceback once
    the first connection imports it)."""
    from ..mesh.broker import MQTT_MISSING, available

    if not available():
        fail(MQTT_MISSING, 2)


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
                          "Mesh topic layout or another --mesh-profile (docs/mesh.md; needs "
                          "interlingua[mqtt])."),
        click.option("--mesh-profile", type=click.Choice(["sam", "emqx"]), default="sam",
                     show_default=True,
                     help="The topic layout: sam (Solace Agent Mesh, under --namespace) or "
                          "emqx (A2A over MQTT: $a2a/v1/.../ORG/UNIT/AGENT, with --org and "
                          "--unit)."),
        click.option("--org", default=None, callback=check_level, metavar="ORG",
                     help="--mesh-profile emqx: the org of the agent's topics."),
        click.option("--unit", default=None, callback=check_level, metavar="UNIT",
                     help="--mesh-profile emqx: the unit of the agent's topics."),
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
        click.option("--mesh-card-interval", type=Seconds(0.1, 3600), default=10.0,
                     show_default=True, metavar="SECONDS",
                     help="How often the card is published on the discovery topic; the card "
                          "says it, and consumers forget an instance six periods after its last "
                          "card (not within 60 s)."),
        click.option("--mesh-ca-bundle", default=None, metavar="PEM",
                     help="mqtts://: check the broker's certificate against these CAs "
                          "[default: the system's]."),
        click.option("--mesh-client-cert", default=None, metavar="PEM",
                     help="mqtts://: present this client certificate (with its key, or "
                          "--mesh-client-key) to a broker that asks for one."),
        click.option("--mesh-client-key", default=None, metavar="PEM",
                     help="mqtts://: the key of --mesh-client-cert."),
        click.option("--mesh-insecure", is_flag=True,
                     help="mqtts://: do not check the broker's certificate."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def mesh_settings(url: str | None, namespace: str | None, no_http: bool, name: str | None,
                  instance: str | None, group: str | None,
                  session_expiry: int, card_interval: float = 10.0, profile: str = "sam",
                  org: str | None = None, unit: str | None = None,
                  tls: dict[str, Any] | None = None) -> MeshSettings | None:
    """``tls``: ``MeshSettings``' TLS fields, from ``--mesh-ca-bundle`` and the others."""
    tls = {k: v for k, v in (tls or {}).items() if v}
    if url is None:
        if namespace or no_http or name or instance or group or org or unit or tls \
                or profile == "emqx":
            raise click.UsageError(
                "--namespace, --org, --unit, --no-http and --mesh-* go with --mesh URL")
        return None
    parsed = parse_mesh_url(url)
    if tls and not parsed.tls:
        raise click.UsageError("--mesh-ca-bundle, --mesh-client-cert, --mesh-client-key and "
                               "--mesh-insecure go with an mqtts:// broker")
    try:
        if profile == "emqx":
            return _emqx_settings(url, parsed.org, parsed.unit, org, unit, namespace,
                                  instance, group, session_expiry, no_http, tls)
        if org or unit:
            raise click.UsageError("--org and --unit go with --mesh-profile emqx")
        namespace = namespace or parsed.namespace
        if namespace is None:
            raise click.UsageError("--mesh needs --namespace NS (or mqtt://HOST/NS)")
        return MeshSettings(url=url, namespace=namespace, instance=instance, group=group,
                            session_expiry=session_expiry, card_interval=card_interval,
                            http=not no_http, **tls)
    except ValueError as exc:  # a CA bundle or certificate that cannot be read
        raise click.UsageError(str(exc)) from None


def _emqx_settings(url: str, url_org: str | None, url_unit: str | None, org: str | None,
                   unit: str | None, namespace: str | None, instance: str | None,
                   group: str | None, session_expiry: int, no_http: bool,
                   tls: dict[str, Any]) -> MeshSettings:
    """The A2A-over-MQTT profile's settings: org and unit from the options (or a
    ``mqtt://HOST/ORG/UNIT/…`` URL); SAM's namespace, instances and groups have no
    counterpart there."""
    if namespace or instance or group:
        raise click.UsageError("--namespace, --mesh-instance and --mesh-group are the SAM "
                               "layout's: --mesh-profile emqx takes --org and --unit")
    org, unit = org or url_org, unit or url_unit
    if org is None or unit is None:
        raise click.UsageError("--mesh-profile emqx needs --org ORG and --unit UNIT")
    return MeshSettings(url=url, namespace="", session_expiry=session_expiry,
                        http=not no_http, profile="emqx", org=org, unit=unit, **tls)
