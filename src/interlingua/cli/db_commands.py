"""``interlingua db upgrade``: bring a store's schema up to date, for operators
who migrate before they roll out (servers otherwise migrate when they start)."""

from __future__ import annotations

import asyncio

import click

from .stores import StoreRefused, StoreUnreachable, store_problem

__all__ = ["db_group"]


@click.group("db")
def db_group() -> None:
    """Manage a store's database schema."""


@db_group.command("upgrade")
@click.option("--store", required=True, metavar="URL",
              help="The store to upgrade: postgresql://… or sqlite:///PATH.")
def upgrade_command(store: str) -> None:
    """Apply the schema migrations the store lacks (safe while servers run)."""
    scheme = store.partition("://")[0]
    try:
        if scheme in ("postgresql", "postgres"):
            try:
                from ..stores.postgres import upgrade
            except ImportError:
                raise click.UsageError(
                    "a postgresql:// store needs asyncpg: pip install 'interlingua[postgres]'"
                ) from None
            before, after = asyncio.run(upgrade(store))
        elif scheme == "sqlite":
            problem = store_problem(store)
            if problem is not None:
                raise click.UsageError(problem)
            before, after = asyncio.run(_upgrade_sqlite(store))
        else:
            raise click.UsageError("db upgrade takes a postgresql:// or sqlite:/// store URL")
    except ValueError as exc:  # a malformed URL
        raise click.UsageError(str(exc)) from None
    except ConnectionError as exc:  # unreachable: exit 3, as serve says it
        raise StoreUnreachable(str(exc)) from None
    except RuntimeError as exc:  # a newer schema, a store its database refuses
        raise StoreRefused(str(exc)) from None  # exit 2, as serve says it
    if before == after:
        click.echo(f"The schema is up to date (version {after}).")
    else:
        click.echo(f"Upgraded the schema from version {before} to {after}.")


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
