"""The PostgreSQL store (``postgresql://…``): one log shared by many replicas.

Rows are laid out as in the SQLite store (``sqlite.py``): a task row holds the
scalar projection, ``events`` holds runs of events as JSON, written once; the
task's own ids inside a payload are one-byte references. What differs is that
several processes write at once, each through a pool of connections:

* ``append`` locks the task row (``FOR UPDATE``) and compares its version, so
  of two concurrent writers the second finds the version moved on
  (``ConcurrentModification``) instead of overwriting;
* a write made under a lease takes a key-share lock on the lease row in its
  own transaction: a revocation (a ``DELETE`` of that row) waits for the write
  to commit, and a write after the revocation finds no row (``LeaseLost``);
* message ids are the primary key of ``messages``, so two replicas sending one
  message at once make one task;
* outbox heads are claimed with ``FOR UPDATE SKIP LOCKED``: replicas claiming
  together never take the same delivery, nor wait for each other.

Reads that need a task row and its events agree are one statement (one
snapshot) or one repeatable-read transaction.

The files: ``connection.py`` (the pool, transactions, migrations), ``store.py``
(tasks, logs, message ids, leases), ``outbox.py`` (push configs and deliveries),
``rows.py`` (the statements and conversions they share), ``schema.py``.
"""

from ..base import StoreUnavailable
from .connection import agents_stores, holds_store, upgrade
from .store import PostgresStore

__all__ = ["PostgresStore", "StoreUnavailable", "agents_stores", "holds_store", "upgrade"]
