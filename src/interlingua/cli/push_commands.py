"""``interlingua listen`` and ``interlingua push …``: the two ends of push notifications."""

from __future__ import annotations

from typing import Any

import click
import msgspec

from ..stores import open_store, shown_url
from .answered_hosts import allow_host_option, answered_hosts
from .errors import cannot_listen, fail
from .safe_text import one_line
from .serve import LoadError, default_store_for, load_agent
from .stores import run_on_store, store_problem
from .urls import check_http_url

__all__ = ["listen_command", "push_group"]


@click.command("listen")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(1, 65535))
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--jwks", "jwks_url", default=None, metavar="URL", callback=check_http_url,
              help="The agent's JWKS (its /.well-known/jwks.json): require valid signatures.")
@click.option("--token", default=None, help="Require this X-A2A-Notification-Token.")
@click.option("--authorization", default=None, metavar="VALUE",
              help="Require this Authorization header value.")
@click.option("--json", "as_json", is_flag=True, help="Print each notification as a JSON line.")
@allow_host_option
def listen_command(port: int, host: str, jwks_url: str | None, token: str | None,
                   authorization: str | None, as_json: bool,
                   allowed_hosts: tuple[str, ...]) -> None:
    """Receive push notifications and print a line for each (JSON with --json)."""
    import socket

    from .listen import listen

    # bound before anything is said: a taken port is one line, as for serve and inspect
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET,
                         socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        fail(cannot_listen(host, port, exc), 2)
    click.echo(f"Listening for push notifications on http://{host}:{port}/ "
               f"({'signatures checked' if jwks_url else 'signatures not checked'})", err=True)
    try:
        listen(port=port, host=host, jwks_url=jwks_url, token=token,
               authorization=authorization, as_json=as_json, sock=sock,
               allowed_hosts=answered_hosts(host, None, allowed_hosts))
    except KeyboardInterrupt:
        pass


@click.group("push")
def push_group() -> None:
    """Inspect and manage an agent's push-notification outbox (on its store).

    These commands never upgrade the store's schema: a store that is behind this
    version is refused (run 'interlingua db upgrade --store URL' first)."""


def _resolve_store(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    agent_spec = ctx.meta.get("interlingua.agent_spec")
    if value and agent_spec:
        raise click.UsageError(
            "give --store or --agent, not both (--agent: the store the agent is served "
            "with by default; of agents served together from one --store URL, give the "
            "agent's own: its schema {schema}_{name}, lower-cased, or its {name}.db)")
    if not value and agent_spec:
        try:
            value = default_store_for(load_agent(agent_spec))
        except LoadError as exc:
            raise click.UsageError(str(exc)) from None
    if value:
        # a store these commands read: one that is not there is a typo, not a new store
        problem = store_problem(value, must_exist=True)
        if problem is not None:
            raise click.UsageError(problem)
        try:
            open_store(value)  # (not opened: the URL and its options read)
        except ValueError as exc:  # a URL no store takes, or a bad option in it
            raise click.UsageError(str(exc)) from None
        return value
    raise click.UsageError(
        "say whose outbox: --store URL (the agent's store), or --agent FILE "
        "(the agent served with the default store, ./.interlingua/<agent-name>.db)")


def _store_option(fn: Any) -> Any:
    fn = click.option("--store", default=None, callback=_resolve_store, metavar="URL",
                      help="The agent's store URL.")(fn)
    # is_eager: read first, so that --store's callback can see it
    return click.option("--agent", "agent_spec", default=None, is_eager=True,
                        metavar="FILE_OR_MODULE[:ATTR]", expose_value=False,
                        callback=_remember_agent,
                        help="The agent file whose default store to use.")(fn)


def _remember_agent(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    ctx.meta["interlingua.agent_spec"] = value


@push_group.command("dead")
@_store_option
@click.option("--task-id", default=None)
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--json", "as_json", is_flag=True, help="Print raw JSON.")
def dead_command(store: str, task_id: str | None, limit: int, as_json: bool) -> None:
    """Deliveries that gave up after their last attempt (the dead letters)."""
    from ..server.push.admin import dead_letters

    rows = run_on_store(dead_letters(store, task_id=task_id, limit=limit))
    if as_json:
        click.echo(msgspec.json.encode(rows).decode())
        return
    if not rows:
        click.echo("no dead deliveries")
    for d in rows:
        click.echo(one_line(f"#{d.id}  task {d.task_id}  config {d.config_id}  event {d.seq}  "
                            f"{d.attempts} attempts  last error: {d.last_error or '-'}"))


_json_option = click.option("--json", "as_json", is_flag=True, help="Print raw JSON.")


@push_group.command("redrive")
@_store_option
@click.argument("delivery_id", type=int)
@_json_option
def redrive_command(store: str, delivery_id: int, as_json: bool) -> None:
    """Queue a dead delivery again (the running agent sends it)."""
    from ..server.push.admin import redrive

    if not run_on_store(redrive(store, delivery_id)):
        raise click.ClickException(f"no dead delivery #{delivery_id}")
    if as_json:
        click.echo(msgspec.json.encode({"id": delivery_id, "queued": True}).decode())
    else:
        click.echo(f"delivery #{delivery_id} queued again")


@push_group.command("outbox")
@_store_option
@_json_option
def outbox_command(store: str, as_json: bool) -> None:
    """How many deliveries are pending and dead."""
    from ..server.push.admin import outbox_counts

    counts = run_on_store(outbox_counts(store))
    if as_json:
        click.echo(msgspec.json.encode(counts).decode())
        return
    for name, count in counts.items():
        click.echo(f"{name}: {count}")


@push_group.command("rotate-key")
@_store_option
@click.option("--alg", type=click.Choice(["ES256", "RS256"]), default="ES256", show_default=True)
@_json_option
def rotate_key_command(store: str, alg: str, as_json: bool) -> None:
    """Sign with a new key from now on; the old key stays published while it is needed."""
    from ..server.push.admin import key_path_for, rotate_signing_key

    path = key_path_for(store)
    if path is None:
        # (a store in memory is refused with --store; named as given: a PostgreSQL
        # store was called memory:// here) A store this command cannot take: exit 2.
        raise click.UsageError(
            f"a server on {shown_url(store)} keeps no key file, so there is none to rotate: "
            "PostgreSQL replicas sign with the key each is given (--push-signing-key): "
            "rotate it by giving them a new one")
    kid = rotate_signing_key(path, alg=alg)
    if as_json:
        click.echo(msgspec.json.encode({"kid": kid, "keyFile": str(path)}).decode())
    else:
        click.echo(f"new signing key {kid} in {path}")
