"""Task stores, chosen by URL: ``memory://``, ``sqlite:///path`` or ``postgresql://…``.

``open_store`` builds a store; ``await store.open()`` (or ``async with``)
connects it.
"""

from __future__ import annotations

from .base import (
    Lease,
    LeaseLost,
    MessageExists,
    MessageRecord,
    Scope,
    Store,
    StoredEvent,
    StoreUnavailable,
    TaskExists,
    TaskRecord,
    UnfinishedTask,
)
from .memory import MemoryStore
from .sqlite import SQLiteStore

__all__ = [
    "SUPPORTED_SCHEMES",
    "Lease",
    "LeaseLost",
    "MemoryStore",
    "MessageExists",
    "MessageRecord",
    "SQLiteStore",
    "Scope",
    "Store",
    "StoreUnavailable",
    "StoredEvent",
    "TaskExists",
    "TaskRecord",
    "UnfinishedTask",
    "open_store",
    "shown_url",
]

SUPPORTED_SCHEMES = ("memory://", "sqlite:///path", "postgresql://user@host/database")


def shown_url(url: str) -> str:
    """``url`` with its password (if any) replaced, fit for logs and /healthz."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    netloc, slash, tail = rest.partition("/")
    user, at, host = netloc.rpartition("@")
    if at and ":" in user:
        netloc = user.split(":", 1)[0] + ":***@" + host
    return f"{scheme}://{netloc}{slash}{tail}"


def open_store(url: str) -> Store:
    """The store for ``url``, not yet opened.

    Raises ``ValueError`` for a URL no store understands; the message names
    the supported schemes (and never repeats the URL, which may hold a password).
    """
    scheme, sep, _ = url.partition("://")
    if sep and scheme == "memory":
        return MemoryStore(url)
    if sep and scheme == "sqlite":
        return SQLiteStore(url)
    if sep and scheme in ("postgresql", "postgres"):
        # imported here: asyncpg is an optional dependency (the postgres extra)
        try:
            from .postgres import PostgresStore
        except ImportError:
            raise ValueError(
                "a postgresql:// store needs asyncpg: pip install 'interlingua[postgres]'"
            ) from None
        return PostgresStore(url)
    shown = f"{scheme}://" if sep else "a URL without a scheme"
    raise ValueError(
        f"unsupported store URL ({shown}): supported are {', '.join(SUPPORTED_SCHEMES)}"
    )
