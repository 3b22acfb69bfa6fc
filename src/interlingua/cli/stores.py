"""Store URLs given on the command line: checked before a command uses them, and a store
that cannot be used said in one line, never a traceback."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import click

from .errors import file_in_the_way

__all__ = ["StoreRefused", "StoreUnreachable", "run_on_store", "store_problem"]

T = TypeVar("T")


def store_problem(store: str, *, must_exist: bool = False) -> str | None:
    """Why a SQLite store cannot be opened where its URL says (a folder that is a file,
    no permission; with ``must_exist``, for a command that reads a server's store, no
    database there yet, or a store in memory), or None."""
    # a store in memory is its process's alone: a command would read an empty one it made
    in_memory = (f"{store} is a store in one process's memory, which this command cannot "
                 "read: give the server's sqlite:/// or postgresql:// store")
    if must_exist and store.partition("://")[0] == "memory":
        return in_memory
    if not store.startswith("sqlite:///"):
        return None
    from ..stores.sqlite import parse_sqlite_url
    from ..stores.sqlite.connection import folder_refusal

    try:
        where = parse_sqlite_url(store).path  # (%-escapes decoded, as the store reads it)
    except ValueError as exc:
        return str(exc)
    if where == ":memory:":
        return in_memory if must_exist else None
    refused = folder_refusal(store, where)
    if refused is not None:  # said before anything is made there
        return refused
    path = Path(where)
    if must_exist and not path.exists():
        return f"no store at {path}: check the path (a command that reads a store makes none)"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path)
        try:
            # read, not only opened: a file that is no database says so here
            conn.execute("PRAGMA schema_version")
        finally:
            conn.close()
    except (OSError, sqlite3.OperationalError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return f"cannot open the store {store}: {file_in_the_way(path) or reason}"
    except sqlite3.DatabaseError as exc:  # ("file is not a database")
        return f"cannot use the store {store}: {exc}"
    return None


class StoreUnreachable(click.ClickException):
    """A store's database that cannot be reached: exit 3, as every command says what
    it cannot reach (``serve`` its store, ``send`` its agent)."""

    exit_code = 3


class StoreRefused(click.ClickException):
    """A store that cannot be used as it is (a newer schema, a table of another
    program's, an option its server refuses): exit 2, as ``serve`` says it, a value of
    ``--store`` this version cannot take."""

    exit_code = 2


def run_on_store(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(work)``, a command's work on a store whose URL was checked (a URL no
    store takes is a usage error of its option, ``open_store`` where it is read): a
    store that cannot be reached, opened or read is an error of one line."""
    from ..stores.base import StoreUnavailable

    try:
        return asyncio.run(work)
    except (StoreUnavailable, ConnectionError) as exc:
        raise StoreUnreachable(f"cannot use the store: {exc}") from None
    except RuntimeError as exc:  # SchemaMismatch, StoreUnusable
        raise StoreRefused(f"cannot use the store: {exc}") from None
    except (OSError, sqlite3.Error) as exc:
        raise click.ClickException(f"cannot use the store: {exc}") from None
    except ValueError as exc:  # a row the store holds that does not read back
        raise click.ClickException(f"cannot read the store: {exc}") from None
