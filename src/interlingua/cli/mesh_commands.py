"""``interlingua mesh agents``: the agents live on a mesh."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import msgspec

from .answered_hosts import allow_host_option, allow_origin_option, answered_hosts
from .errors import cannot_listen, fail
from .mesh_options import check_level, check_mesh_url
from .safe_text import one_line
from .seconds import Seconds
from .security_options import client_kwargs, tls_client_options

if TYPE_CHECKING:
    from ..mesh.topics import MeshURL

__all__ = ["gateway_command", "mesh_group"]


@click.group("mesh")
def mesh_group() -> None:
    """Agents on an MQTT 5 mesh (docs/mesh.md)."""


@mesh_group.command("agents")
@click.option("--mesh", "mesh_url", required=True, callback=check_mesh_url,
              metavar="mqtt://HOST[:PORT]", help="The broker.")
@click.option("--namespace", default=None, callback=check_level, metavar="NS",
              help="The mesh's namespace [default: the URL's path].")
@click.option("--mesh-profile", type=click.Choice(["sam", "emqx"]), default="sam",
              show_default=True,
              help="The topic layout: sam (under --namespace) or emqx (A2A over MQTT: the "
                   "cards retained for --org and --unit).")
@click.option("--org", default=None, callback=check_level, metavar="ORG",
              help="--mesh-profile emqx: the org [default: the URL's /ORG/UNIT].")
@click.option("--unit", default=None, callback=check_level, metavar="UNIT",
              help="--mesh-profile emqx: the unit.")
@click.option("--wait", type=Seconds(min=0), default=None, metavar="SECONDS",
              help="How long to listen for cards [default: 11, as SAM-layout agents publish "
                   "theirs every 10 s; 1 with --mesh-profile emqx, whose cards are retained].")
@click.option("--json", "as_json", is_flag=True, help="Print the agents as JSON.")
@tls_client_options
@click.option("--insecure", is_flag=True, help="mqtts://: do not check the broker's certificate.")
def agents_command(mesh_url: str, namespace: str | None, mesh_profile: str, org: str | None,
                   unit: str | None, wait: float | None, as_json: bool, insecure: bool) -> None:
    """List the agents whose cards are heard on the mesh."""
    from ..mesh.broker import MeshUnavailable
    from ..mesh.discovery import list_agents
    from ..mesh.topics import Topics

    url = _broker_url(mesh_url, insecure)
    if mesh_profile == "emqx":
        _registered(url, namespace, org, unit, 1.0 if wait is None else wait, as_json)
        return
    if org or unit:
        raise click.UsageError("--org and --unit go with --mesh-profile emqx")
    wait = 11.0 if wait is None else wait
    namespace = namespace or url.namespace
    if namespace is None:
        raise click.UsageError("name the namespace: --namespace NS (or mqtt://HOST/NS)")
    topics = Topics(namespace)
    try:
        found = asyncio.run(list_agents(url, topics, wait=wait))
    except MeshUnavailable as exc:
        fail(str(exc), 3)
    now = time.monotonic()
    rows = [{
        "name": a.name,
        "url": f"{url.broker}/{namespace}/{a.agent}",
        "request_topic": topics.request(a.agent),
        "instances": len(a.instances),
        "last_seen_seconds": round(now - a.last_seen, 1),
        "description": a.description,
    } for a in found]
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
        return
    if not rows:
        click.echo(f"no agents heard on {url.broker} in namespace {namespace} within {wait:g} s")
        return
    for row in rows:
        instances = row["instances"]
        click.echo(one_line(f"{row['name']}  {row['url']}  ({instances} instance"
                            f"{'s' if instances != 1 else ''})"))
        if row["description"]:
            click.echo(f"    {one_line(str(row['description']))}")


def _broker_url(mesh_url: str, insecure: bool) -> MeshURL:
    """The ``--mesh`` URL, with what ``--ca-bundle``, ``--client-cert``, ``--client-key``
    and ``--insecure`` say for an ``mqtts://`` broker (every connection to it uses them)."""
    from ..client.errors import ClientError
    from ..mesh.client_api import with_tls
    from ..mesh.topics import parse_mesh_url

    url = parse_mesh_url(mesh_url)
    options = client_kwargs(insecure)
    tls = {k: options[k] for k in ("verify", "cert") if k in options}
    if not url.tls:
        if tls:
            raise click.UsageError("--ca-bundle, --client-cert, --client-key and --insecure "
                                   "go with an mqtts:// broker")
        return url
    try:
        return with_tls(url, **tls)
    except ClientError as exc:
        raise click.UsageError(str(exc)) from None


def _registered(url: Any, namespace: str | None, org: str | None, unit: str | None,
                wait: float, as_json: bool) -> None:
    """``mesh agents`` in the A2A-over-MQTT profile: the cards retained in ORG/UNIT."""
    from ..mesh.broker import MeshUnavailable
    from ..mesh.emqx.presence import list_registered
    from ..mesh.emqx.topics import Space, address

    if namespace:
        raise click.UsageError("--namespace is the SAM layout's: --mesh-profile emqx takes "
                               "--org and --unit")
    org, unit = org or url.org, unit or url.unit
    if org is None or unit is None:
        raise click.UsageError("--mesh-profile emqx needs --org ORG and --unit UNIT")
    space = Space(org, unit)
    try:
        found = asyncio.run(list_registered(url, space, wait=wait))
    except MeshUnavailable as exc:
        fail(str(exc), 3)
    rows = [{"name": card.name, "agent": agent, "url": address(url, org, unit, agent),
             "request_topic": space.request(agent), "status": status,
             "description": card.description} for agent, card, status in found]
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
        return
    if not rows:
        click.echo(f"no agent card is retained on {url.broker} for {org}/{unit}")
        return
    for row in rows:
        click.echo(one_line(f"{row['name']}  {row['url']}  ({row['status']})"))
        if row["description"]:
            click.echo(f"    {one_line(str(row['description']))}")


@click.command("gateway")
@click.option("--mesh", "mesh_url", required=True, callback=check_mesh_url,
              metavar="mqtt://HOST[:PORT]", help="The broker.")
@click.option("--namespace", default=None, callback=check_level, metavar="NS",
              help="The mesh's namespace [default: the URL's path].")
@click.option("--mesh-profile", type=click.Choice(["sam", "emqx"]), default="sam",
              show_default=True,
              help="The topic layout: sam (under --namespace) or emqx (A2A over MQTT, the "
                   "agents of --org and --unit).")
@click.option("--org", default=None, callback=check_level, metavar="ORG",
              help="--mesh-profile emqx: the org [default: the URL's /ORG/UNIT].")
@click.option("--unit", default=None, callback=check_level, metavar="UNIT",
              help="--mesh-profile emqx: the unit.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@allow_host_option
@allow_origin_option
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option("--store", default="memory://", show_default=True, metavar="URL",
              help="Where the gateway keeps each agent's tasks and event logs: memory://, or "
                   "sqlite:///DIR for one SQLite file per agent in DIR.")
@click.option("--gateway-id", default=None, callback=check_level, metavar="NAME",
              help="This gateway's name in its reply topics and MQTT client id [default: "
                   "random]; one a live gateway of this host holds is refused.")
@click.option("--warmup", type=Seconds(0, 3600), default=None,
              metavar="SECONDS",
              help="After the start, an agent not heard yet is answered 503 with Retry-After "
                   "(not 404) for this long [default: 10, the agents' card interval; 1 with "
                   "--mesh-profile emqx, whose cards are retained].")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
@click.option("--json", "as_json", is_flag=True, help="Print where it listens as JSON.")
@tls_client_options
@click.option("--insecure", is_flag=True, help="mqtts://: do not check the broker's certificate.")
def gateway_command(mesh_url: str, namespace: str | None, mesh_profile: str, org: str | None,
                    unit: str | None, host: str, allowed_hosts: tuple[str, ...],
                    allowed_origins: tuple[str, ...], port: int, store: str,
                    gateway_id: str | None, warmup: float | None, log_level: str,
                    as_json: bool, insecure: bool) -> None:
    """Serve every agent heard on a mesh as an A2A agent over HTTP, at /agents/NAME/."""
    import secrets

    import uvicorn

    from ..mesh.broker import MeshUnavailable, ping
    from ..mesh.gateway import Gateway
    from ..mesh.instance import InstanceTaken
    from ..server.connections import uvicorn_connection_options
    from .prompt_server import PromptServer
    from .serve import bind

    url = _broker_url(mesh_url, insecure)
    gateway_id = gateway_id or secrets.token_hex(6)
    link, where = _gateway_link(url, namespace, mesh_profile, org, unit, gateway_id)
    if store != "memory://" and not store.startswith("sqlite:///"):
        raise click.BadParameter("memory:// or sqlite:///DIR", param_hint="'--store'")
    if store.startswith("sqlite:///"):
        from ..stores.sqlite import parse_sqlite_url

        try:  # (%-escapes decoded, options apart from the path: as serve reads it)
            folder = parse_sqlite_url(store).path
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--store'") from None
        _check_store_folder(Path(folder or "."))
    gateway = Gateway(url, namespace or url.namespace, store=store, gateway_id=gateway_id,
                      warmup=warmup, link=link,
                      allowed_hosts=answered_hosts(host, None, allowed_hosts),
                      allowed_origins=allowed_origins)
    try:
        # the id is the gateway's MQTT client id: one a live gateway of this host
        # holds would take that one's session, and it this one's, in turn
        gateway.hold()
    except InstanceTaken as exc:
        fail(f"--gateway-id: {exc}", 2)
    try:
        asyncio.run(ping(url))
    except MeshUnavailable as exc:
        fail(str(exc), 3)
    try:
        sock = bind(host, port)
    except OSError as exc:
        fail(cannot_listen(host, port, exc), 2)
    bound = sock.getsockname()[1]
    base = f"http://{host if host not in ('', '0.0.0.0', '::') else 'localhost'}:{bound}"
    info = {"listen": base, "agents": base + "/agents", "mesh": url.broker,
            **where, "gateway_id": gateway.gateway_id}
    if as_json:
        click.echo(msgspec.json.encode(info).decode())
    else:
        said = ", ".join(f"{k} {v}" for k, v in where.items())
        click.echo(f"Gateway to {url.broker} ({said}) on {base}")
        click.echo(f"  agents: {info['agents']}  (each at /agents/NAME/)")
    # (serve's default bounds on a connection: the head's size and deadlines, a cap
    # per address; server/connections.py)
    config = uvicorn.Config(gateway, log_level=log_level, access_log=False,
                            timeout_graceful_shutdown=5, lifespan="on",
                            **uvicorn_connection_options())
    try:
        PromptServer(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()


def _check_store_folder(folder: Path) -> None:
    """The gateway's ``sqlite:///DIR``: a folder it can write each agent's file in,
    checked before it serves (else every request to an agent was a 500)."""
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise click.BadParameter(
            f"{folder} is no folder the gateway can write in ({exc.strerror or exc}); "
            "sqlite:///DIR names the folder of one SQLite file per agent",
            param_hint="'--store'") from None


def _gateway_link(url: Any, namespace: str | None, profile: str, org: str | None,
                  unit: str | None, gateway_id: str) -> tuple[Any, dict[str, str]]:
    """How the gateway reaches the agents (None: SAM's layout, the gateway's own),
    and what the banner says of where."""
    if profile == "emqx":
        if namespace:
            raise click.UsageError("--namespace is the SAM layout's: --mesh-profile emqx "
                                   "takes --org and --unit")
        org, unit = org or url.org, unit or url.unit
        if org is None or unit is None:
            raise click.UsageError("--mesh-profile emqx needs --org ORG and --unit UNIT")
        from ..mesh.emqx.link import EmqxLink

        return EmqxLink(url, org, unit, gateway_id), {"org": org, "unit": unit}
    if org or unit:
        raise click.UsageError("--org and --unit go with --mesh-profile emqx")
    namespace = namespace or url.namespace
    if namespace is None:
        raise click.UsageError("name the namespace: --namespace NS (or mqtt://HOST/NS)")
    return None, {"namespace": namespace}
