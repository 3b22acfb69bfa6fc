"""Operating push delivery from outside the server: for the ``interlingua`` CLI.

Each function opens the store by URL, does one thing and closes it, so it
works while the server runs (SQLite in WAL mode takes a second connection)
and while it is stopped. A revived delivery is sent by the running server's
dispatcher at its next look at the outbox (within its ``poll_interval``).

A key rotated here is used by a server from its next start; rotate through
``PushService.rotate_signing_key`` to switch a running server at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from ...stores import open_store, shown_url
from ...stores.base import Delivery, Scope, Store, StoreUnusable
from ..keyring import KeyRing
from .service import default_key_path

__all__ = [
    "dead_letters",
    "key_path_for",
    "outbox_counts",
    "redrive",
    "rotate_signing_key",
    "signing_keys",
]


@asynccontextmanager
async def _opened(store_url: str) -> AsyncIterator[Store]:
    """The store ``store_url`` names, opened; one that is not there is not made
    (``StoreUnusable``): a command that reads a store makes none (a SQLite path is
    checked where the command reads it; a PostgreSQL schema here, as it takes a
    connection to tell). Nor is its schema upgraded: one that is behind is refused
    (``SchemaMismatch``, saying to run ``interlingua db upgrade``), as operators
    choose when to migrate (a large store's upgrade holds its writes a while)."""
    if store_url.startswith(("postgresql://", "postgres://")):
        from ...stores.postgres import agents_stores, holds_store

        if not await holds_store(store_url):
            # the URL several agents were served from holds none: their schemas, named
            agents = await agents_stores(store_url)
            hint = (f"; the database holds the stores of agents served together from it, "
                    f"in the schemas {', '.join(agents)}: name one with schema= in the URL"
                    if agents else "")
            raise StoreUnusable(f"no store at {shown_url(store_url)}: check its database "
                                f"and schema (a command that reads a store makes none){hint}")
    store = open_store(store_url, migrate=False)
    await store.open()
    try:
        yield store
    finally:
        await store.close()


async def dead_letters(
    store_url: str,
    *,
    tenant: str | None = None,
    owner: str | None = None,
    task_id: str | None = None,
    limit: int = 100,
) -> list[Delivery]:
    """Dead deliveries (oldest first); ``tenant``/``owner`` narrow to one scope."""
    scope = None if tenant is None and owner is None else Scope(tenant or "", owner or "")
    async with _opened(store_url) as store:
        return await store.dead_deliveries(scope, task_id, limit)


async def redrive(store_url: str, delivery_id: int) -> bool:
    """Queue a dead delivery again; False if there is no such dead delivery."""
    async with _opened(store_url) as store:
        return await store.revive_delivery(delivery_id)


async def outbox_counts(store_url: str) -> dict[str, int]:
    """How many deliveries are pending and dead."""
    async with _opened(store_url) as store:
        return await store.outbox_counts()


def key_path_for(store_url: str) -> Path | None:
    """Where a server using ``store_url`` keeps its signing keys by default."""
    open_store(store_url)  # a URL no store understands is refused
    return default_key_path(store_url)


def rotate_signing_key(key_path: str | Path, *, alg: str = "ES256",
                       grace: float = 7 * 24 * 3600.0) -> str:
    """Make a new signing key in the key file; returns its kid. The old key
    stays published for ``grace`` seconds."""
    ring = KeyRing(alg=alg, path=key_path, grace=grace)
    ring.load()
    return ring.rotate(alg).kid


def signing_keys(key_path: str | Path) -> list[dict[str, object]]:
    """The keys of a key file, public parts only: kid, alg, created, retired."""
    ring = KeyRing(path=key_path)
    ring.load()
    return [
        {"kid": k.kid, "alg": k.alg, "created_at": k.created_at, "retired_at": k.retired_at,
         "signing": k is ring.current}
        for k in ring.all_keys()
    ]
