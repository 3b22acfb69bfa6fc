"""``interlingua db upgrade``: bring a store's schema up to date, for operators
who migrate before they roll out (servers otherwise migrate when they start)."""

from __future__ import annotations

import asyncio

import click

from ..stores import shown_url
from .stores import StoreRefused, StoreUnreachable, store_problem

__all__ = ["db_group"]


@click.group("db")
def db_group() -> None:
    """Manage a store's database schema."""


@db_group.command("upgrade")
@click.option("--store", required=True, metavar="URL",
              help="The store to upgrade: postgresql://… or sqlite:///PATH.")
@click.argument("specs", metavar="[FILE_OR_MODULE[:ATTR]]...", nargs=-1)
def upgrade_command(store: str, specs: tuple[str, ...]) -> None:
    """Apply the schema migrations the store lacks (safe while servers run).

    Given the files of several agents, as 'interlingua serve a.py b.py --store URL'
    is, upgrade each agent's own store, derived from URL as serve derives it (a
    schema or a file per agent)."""
    stores = _stores_of(store, specs)
    for url in stores:
        before, after = _upgrade(url)
        # (each store named when there are several: which one a line is about)
        of = f" of {shown_url(url)}" if len(stores) > 1 else ""
        if before == after:
            click.echo(f"The schema{of} is up to date (version {after}).")
        elif before == 0:
            # said as what it is: a mistyped path or schema makes a store too (a store
            # made before the first rollout, to serve with migrate=0, is one)
            click.echo(f"Made the schema{of}, version {after}: no store was there.")
        else:
            click.echo(f"Upgraded the schema{of} from version {before} to {after}.")


def _stores_of(store: str, specs: tuple[str, ...]) -> list[str]:
    """The stores ``serve`` would open for ``specs`` on ``store``: ``store`` itself for
    one agent (or none), each agent's own for several (``host.agents.store_url_for``).
    Every file is loaded, one alone too: a file that is not there is refused, as
    ``serve`` refuses it, not passed over."""
    from ..host.agents import path_name, store_url_for
    from .serve import LoadError, load_agent

    try:
        agents = [load_agent(spec) for spec in specs]
    except LoadError as exc:
        raise click.UsageError(str(exc)) from None
    if len(agents) < 2:
        return [store]
    try:
        return [store_url_for(store, path_name(agent.name)) for agent in agents]
    except ValueError as exc:  # a URL the store's parser refuses
        raise click.UsageError(str(exc)) from None


def _upgrade(store: str) -> tuple[int, int]:
    """Upgrade one store: its (before, after) versions; one line when it cannot be."""
    scheme = store.partition("://")[0]
    try:
        if scheme in ("postgresql", "postgres"):
            try:
                from ..stores.postgres import upgrade
            except ImportError:
                raise click.UsageError(
                    "a postgresql:// store needs asyncpg: pip install 'interlingua[postgres]'"
                ) from None
            return asyncio.run(upgrade(store))
        if scheme == "sqlite":
            problem = store_problem(store)
            if problem is not None:
                raise click.UsageError(problem)
            return asyncio.run(_upgrade_sqlite(store))
        raise click.UsageError("db upgrade takes a postgresql:// or sqlite:/// store URL")
    except ValueError as exc:  # a malformed URL
        raise click.UsageError(str(exc)) from None
    except ConnectionError as exc:  # unreachable: exit 3, as serve says it
        raise StoreUnreachable(str(exc)) from None
    except RuntimeError as exc:  # a newer schema, a store its database refuses
        raise StoreRefused(str(exc)) from None  # exit 2, as serve says it


async def _upgrade_sqlite(url: str) -> tuple[int, int]:
    import sqlite3
    from urllib.parse import quote

    from ..stores.sqlite import SCHEMA_VERSION, SQLiteStore, parse_sqlite_url

    path = parse_sqlite_url(url).path
    before = 0
    if path != ":memory:":
        try:
            # (a URI: its path quoted, or a "?" or "#" in it would end the path)
            conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
            try:
                before = int(conn.execute("PRAGMA user_version").fetchone()[0])
            finally:
                conn.close()
        except sqlite3.OperationalError:
            before = 0  # no such file yet
    store = SQLiteStore(url)
    await store.open()  # migrates
    await store.close()
    return before, SCHEMA_VERSION
