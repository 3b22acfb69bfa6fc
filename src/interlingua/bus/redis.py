"""The Redis bus (``redis://host:port/db``): news of committed events for every replica.

Each process keeps its in-process bus (``LocalBus``) for its own readers and
its own events. What crosses processes is the news "task K has events up to
seq N", appended to one Redis stream (``XADD``, trimmed to a bounded length)
that every process reads (``XREAD BLOCK``). A reader elsewhere is woken by it
and reads the events from the store, which stays the source of truth. A small
write's news also carries its committed events (up to ``CARRY_BYTES``
encoded): a process whose readers are up to the event before them hands them
over as if they had been written there, without reading them back from the
store; any other reader reads the store as before, so nothing can be lost by
carrying them or not.

No wake-up is lost either:

* news is sent by a background sender after the local readers were woken, so
  a write never waits for Redis; while Redis is unreachable, the newest seq of
  each task is kept and sent once it is back;
* the reader resumes the stream from the last entry it read, so news sent
  while it reconnected is read then;
* after Redis itself restarted (its stream, held in memory, is gone) news may
  have been lost: on every reconnection, each task someone here follows is
  looked up in the store (``attach_store``), and its readers are woken if it
  moved on.

URL options: ``prefix`` (default ``interlingua``) names the keys, so
deployments can share a Redis; the rest is redis-py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from ..core.model import Event
from ..stores.base import Scope, Store, StoredEvent
from .local import LocalBus, _Subscription

__all__ = ["RedisBus", "parse_redis_url", "ping"]

log = logging.getLogger("interlingua.bus")

#: news entries kept in the stream: enough for a reader that reconnects after
#: a few seconds; one further behind looks its tasks up in the store instead
STREAM_LENGTH = 100_000
_BLOCK_MS = 1_000
#: the most event bytes one news entry carries (msgpack); a larger write's news
#: is only its seq, and the readers elsewhere read its events from the store
CARRY_BYTES = 2_048
#: the most events one news entry carries
CARRY_EVENTS = 32
_BACKOFF = (0.05, 0.1, 0.2, 0.5, 1.0)


def parse_redis_url(url: str) -> tuple[str, str]:
    """(the URL redis-py connects with, the key prefix)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise ValueError("a Redis bus URL starts with redis://, rediss:// or unix://")
    prefix = "interlingua"
    passed: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "prefix":
            if not value or any(c in value for c in " \r\n"):
                raise ValueError("prefix= in the Redis bus URL: give a name without spaces")
            prefix = value
        else:
            passed.append((key, value))
    return urlunsplit(parts._replace(query=urlencode(passed))), prefix


async def ping(url: str) -> None:
    """Reach the Redis of ``url``; ``ConnectionError`` saying where, if it cannot be."""
    redis_url, _ = parse_redis_url(url)
    parts = urlsplit(redis_url)
    where = f"{parts.hostname or 'localhost'}:{parts.port or 6379}"
    client = aioredis.Redis.from_url(redis_url, socket_connect_timeout=5)
    try:
        await client.ping()
    except (RedisError, OSError) as exc:
        raise ConnectionError(f"cannot reach Redis at {where}: {exc}") from None
    finally:
        with contextlib.suppress(RedisError, OSError):
            await client.aclose()


class _Carried(msgspec.Struct, array_like=True):
    seq: int
    event: Event


_encode_carried = msgspec.msgpack.Encoder().encode
_decode_carried = msgspec.msgpack.Decoder(list[_Carried]).decode


def _split_key(key: str) -> tuple[Scope, str] | None:
    parts = key.split("\x00")
    if len(parts) != 3:
        return None
    return Scope(parts[0], parts[1]), parts[2]


class RedisBus:
    """Local fan-out plus news across processes through one Redis stream."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._redis_url, prefix = parse_redis_url(url)
        #: the key prefix of this deployment (shared limits use it too)
        self.prefix = prefix
        self._stream = f"{prefix}:news"
        self._local = LocalBus()
        self._origin = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._client: aioredis.Redis | None = None
        self._reader: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        #: news not yet sent: the newest seq of each task
        self._unsent: dict[str, int] = {}
        #: the events of the unsent news, while they are few and contiguous
        self._carry: dict[str, list[StoredEvent]] = {}
        self._wake_sender = asyncio.Event()
        self._store: Store | None = None
        self._closed = False
        #: called with (key, seq) for news from another process (the engine
        #: uses it to notice that a turn it runs was canceled elsewhere)
        self.on_remote: Callable[[str, int], None] | None = None
        #: set while the reader is connected and reading
        self.connected = asyncio.Event()

    @property
    def redis_url(self) -> str:
        """The URL redis-py connects with (the bus's own options taken out)."""
        return self._redis_url

    # ------------------------------------------------------------------ life

    def attach_store(self, store: Store) -> None:
        """The store to look tasks up in after a reconnection."""
        self._store = store

    async def open(self) -> None:
        """Connect and start reading news (also done by the first use; after
        ``close``, only by ``open``)."""
        await ping(self.url)  # a Redis that is away is one clear error, at once
        self._closed = False
        self._start()
        try:
            await asyncio.wait_for(self.connected.wait(), 10)
        except TimeoutError:
            await self.close()
            raise ConnectionError("cannot reach Redis (no answer within 10 s)") from None

    def _start(self) -> None:
        if self._closed or (self._reader is not None and not self._reader.done()):
            return
        if self._client is None:
            self._client = aioredis.Redis.from_url(self._redis_url)
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read())
        self._sender = loop.create_task(self._send())

    async def close(self) -> None:
        """End the waits of the readers here; send what news is left; disconnect."""
        await self._local.close()
        self._closed = True
        self._wake_sender.set()
        tasks = [t for t in (self._reader, self._sender) if t is not None]
        self._reader = self._sender = None
        for task in tasks:
            task.cancel()
        if tasks:
            # redis-py's own timeouts may swallow a cancellation (asyncio's
            # uncancel); the loops also end on _closed, within one read's block
            await asyncio.wait(tasks, timeout=_BLOCK_MS / 1000 + 1)
        await self._flush_once()
        self.connected.clear()
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(RedisError, OSError):
                await client.aclose()

    # --------------------------------------------------------------- the bus

    async def publish(self, key: str, events: Sequence[StoredEvent], *,
                      created: bool = False) -> None:
        if not events:
            return
        await self._local.publish(key, events)
        if created:
            # Nobody elsewhere can wait for a task that did not exist: no news,
            # so a replica's cost per request does not grow with the replicas.
            return
        seq = events[-1].seq
        pending = self._unsent.get(key)
        if pending is None:
            if len(events) <= CARRY_EVENTS:
                self._carry[key] = list(events)
        else:
            carried = self._carry.get(key)
            if carried is not None and carried[-1].seq + 1 == events[0].seq \
                    and len(carried) + len(events) <= CARRY_EVENTS:
                carried.extend(events)
            else:
                self._carry.pop(key, None)
        if seq > (pending or 0):
            self._unsent[key] = seq
        if self._closed:
            # a write during shutdown (a turn ended by it): said at once
            await self._flush_once()
            return
        self._start()
        self._wake_sender.set()

    def subscribe(self, key: str, *, seen: int = 0) -> _Subscription:
        self._start()
        return self._local.subscribe(key, seen=seen)

    # --------------------------------------------------------------- sending

    async def _send(self) -> None:
        attempt = 0
        while not self._closed:
            await self._wake_sender.wait()
            if self._closed:
                return
            self._wake_sender.clear()
            if await self._flush_once():
                attempt = 0
            else:
                await asyncio.sleep(_BACKOFF[min(attempt, len(_BACKOFF) - 1)])
                attempt += 1
                self._wake_sender.set()

    async def _flush_once(self) -> bool:
        """Send the news held; False (keeping it) when Redis cannot be reached."""
        if not self._unsent:
            return True
        news, self._unsent = self._unsent, {}
        carry, self._carry = self._carry, {}
        client = self._client
        if client is None:
            client = self._client = aioredis.Redis.from_url(self._redis_url)
        try:
            async with client.pipeline(transaction=False) as pipe:
                for key, seq in news.items():
                    fields: dict[Any, Any] = {"k": key.encode(), "s": seq, "o": self._origin}
                    events = carry.get(key)
                    if events and events[-1].seq == seq:
                        payload = _encode_carried([_Carried(e.seq, e.event) for e in events])
                        if len(payload) <= CARRY_BYTES:
                            fields["e"] = payload
                    pipe.xadd(self._stream, fields, maxlen=STREAM_LENGTH, approximate=True)
                await pipe.execute()
        except Exception as exc:  # not only RedisError: a client closed under us raises others
            for key, seq in news.items():
                if seq > self._unsent.get(key, 0):
                    self._unsent[key] = seq
            log.warning("redis bus: cannot send news (%s); will retry", exc)
            return False
        return True

    # --------------------------------------------------------------- reading

    async def _read(self) -> None:
        last_id: bytes | str = "$"
        attempt = 0
        reconnected = False
        while not self._closed:
            client = self._client
            assert client is not None
            try:
                if last_id == "$":
                    # where the stream is now: news from before this process is not ours
                    info: Any = await client.xinfo_stream(self._stream) \
                        if await client.exists(self._stream) else None
                    last_id = info["last-generated-id"] if info else "0-0"
                self.connected.set()
                if reconnected:
                    reconnected = False
                    await self._resync()
                attempt = 0
                answer: Any = await client.xread({self._stream: last_id}, count=1000,
                                                 block=_BLOCK_MS)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                if self.connected.is_set():
                    log.warning("redis bus: lost Redis (%s); reconnecting", exc)
                self.connected.clear()
                reconnected = True
                await asyncio.sleep(_BACKOFF[min(attempt, len(_BACKOFF) - 1)])
                attempt += 1
                continue
            for _, entries in answer or ():
                for entry_id, fields in entries:
                    last_id = entry_id
                    self._news(fields)

    def _news(self, fields: dict[bytes, bytes]) -> None:
        if fields.get(b"o", b"").decode() == self._origin:
            return  # our own: the readers here had it from the local bus
        try:
            key, seq = fields[b"k"].decode(), int(fields[b"s"])
        except (KeyError, ValueError, UnicodeDecodeError):
            return  # not ours to read
        payload = fields.get(b"e")
        if payload is not None and self._local.latest(key) is not None:
            try:
                carried = _decode_carried(payload)
            except msgspec.DecodeError:
                carried = []
            if carried and carried[-1].seq == seq:
                self._local.deliver(key, [StoredEvent(c.seq, c.event) for c in carried])
            else:
                self._local.announce(key, seq)
        else:
            self._local.announce(key, seq)
        if self.on_remote is not None:
            self.on_remote(key, seq)

    async def _resync(self) -> None:
        """After a reconnection news may be lost: ask the store where each task
        followed here has got to."""
        store = self._store
        if store is None:
            return
        for key in self._local.keys():
            where = _split_key(key)
            if where is None:
                continue
            try:
                rec = await store.get_task(where[0], where[1], history_length=0,
                                           include_artifacts=False)
            except Exception:  # the store may be briefly away too; the next news wakes them
                log.warning("redis bus: could not look task %s up after reconnecting", where[1])
                continue
            if rec is not None:
                self._local.announce(key, rec.version)
