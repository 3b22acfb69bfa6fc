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

Only news someone elsewhere needs is sent, so that a replica's cost per
request does not grow with the number of replicas:

* a write by the process running the task's turn (``runs_here``) matters only
  to readers of that task in other processes. Each process records in Redis
  which tasks it has readers of (a set per task, ``SADD``, kept alive by a
  TTL); the news is added by a script that first looks at that set, in one
  step inside Redis, and adds nothing when no other process reads the task;
* any other write (a cancel or a message served by another replica, a turn
  ended by policy) is news for every process: the one running the turn must
  hear of it.

A reader that begins to follow a task reads the store, then waits; the news
of a write committed between its read and the moment Redis records it as a
reader would be missed. So once Redis has recorded it, the process looks the
task up in the store again and wakes its readers if the log moved on.

No wake-up is lost either:

* news is sent by a background sender after the local readers were woken, so
  a write never waits for Redis; while Redis is unreachable, the newest seq of
  each task is kept and sent once it is back;
* the reader resumes the stream from the last entry it read, so news sent
  while it reconnected is read then;
* after Redis itself restarted (its stream, held in memory, is gone) news may
  have been lost: on every reconnection, each task someone here follows is
  looked up in the store (``attach_versions``), and its readers are woken if it
  moved on.

URL options: ``prefix`` (default ``interlingua``) names the keys, so
deployments can share a Redis; the rest is redis-py's (one it does not take is
refused when the URL is read).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import msgspec
import redis.asyncio as aioredis
from redis.exceptions import NoScriptError, RedisError

from ..core.model import Event
from ..core.task_log import Scope, StoredEvent
from .base import TaskVersion
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
#: how long Redis keeps a process's record that it reads a task, unless renewed
#: (a process killed without saying it stopped reading costs the others this
#: long of news nobody needs, no more)
FOLLOW_TTL = 60
_FOLLOW_RENEW = FOLLOW_TTL / 3
_GONE, _NEW, _RENEW = 0, 1, 2

# KEYS: the task's readers (a set of process ids), the news stream.
# ARGV: this process's id, the stream's length, then the entry's fields.
# Adds the entry only when a process other than this one reads the task; atomic
# in Redis, so a reader recorded before it runs gets the news, and one recorded
# after it finds the write in the store (it looks there once recorded).
_NEWS_IF_READ = """
local n = redis.call('SCARD', KEYS[1])
if n == 0 or (n == 1 and redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1) then
  return 0
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, 3))
return 1
"""
_BACKOFF = (0.05, 0.1, 0.2, 0.5, 1.0)


def parse_redis_url(url: str) -> tuple[str, str]:
    """(the URL redis-py connects with, the key prefix)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise ValueError("a Redis bus URL starts with redis://, rediss:// or unix://")
    try:
        parts.port  # noqa: B018 (urllib checks the port when it is read)
    except ValueError:
        # (the URL is not shown: it may hold a password)
        raise ValueError("the Redis bus URL's port is not a number from 0 to 65535") from None
    prefix = "interlingua"
    passed: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "prefix":
            if not value or any(c in value for c in " \r\n"):
                raise ValueError("prefix= in the Redis bus URL: give a name without spaces")
            prefix = value
        else:
            passed.append((key, value))
    db = parts.path.strip("/")
    if parts.scheme != "unix" and not (db.isascii() and db.isdigit()) and db:
        # (redis-py would use database 0 instead)
        raise ValueError(f"the Redis bus URL's path /{db}: give a database number (/0)")
    redis_url = urlunsplit(parts._replace(query=urlencode(passed)))
    _refuse_bad_options(redis_url, parts.scheme)
    return redis_url, prefix


def _refuse_bad_options(redis_url: str, scheme: str) -> None:
    """``ValueError`` for an option redis-py does not take: it passes any on to
    its connections, which refuse one only when the first is made (a TypeError)."""
    try:
        pool = aioredis.ConnectionPool.from_url(redis_url)
        pool.connection_class(**pool.connection_kwargs)  # made, not connected: no I/O
    except TypeError as exc:
        named = re.search(r"argument '(\w+)'", str(exc))
        option = f"{named.group(1)}=" if named else "an option"
        raise ValueError(f"{option} in the Redis bus URL: not an option of a {scheme}:// "
                         "connection") from None
    except (ValueError, RedisError) as exc:
        raise ValueError(f"the Redis bus URL: {exc}") from None


async def ping(url: str) -> None:
    """Reach the Redis of ``url``; ``ConnectionError`` saying where, if it cannot be."""
    redis_url, _ = parse_redis_url(url)
    parts = urlsplit(redis_url)
    where = parts.path if parts.scheme == "unix" else \
        f"{parts.hostname or 'localhost'}:{parts.port or 6379}"
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


class _Following(LocalBus):
    """The local bus, telling when its first reader of a task comes and its last goes."""

    def __init__(self, changed: Callable[[str, bool], None]) -> None:
        super().__init__()
        self._changed = changed

    def subscribe(self, key: str, *, seen: int = 0) -> _Subscription:
        new = key not in self._topics
        sub = super().subscribe(key, seen=seen)
        if new:
            self._changed(key, True)
        return sub

    def _release(self, key: str, topic: Any) -> None:
        super()._release(key, topic)
        if key not in self._topics:
            self._changed(key, False)


class RedisBus:
    """Local fan-out plus news across processes through one Redis stream."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._redis_url, prefix = parse_redis_url(url)
        #: the key prefix of this deployment (shared limits use it too)
        self.prefix = prefix
        self._stream = f"{prefix}:news"
        self._readers_prefix = f"{prefix}:readers:"
        self._local = _Following(self._follow_changed)
        self._origin = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._client: aioredis.Redis | None = None
        self._reader: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        #: news not yet sent: the newest seq of each task
        self._unsent: dict[str, int] = {}
        #: the events of the unsent news, while they are few and contiguous
        self._carry: dict[str, list[StoredEvent]] = {}
        #: unsent news that every process must hear (not from the turn's own process)
        self._unsent_to_all: set[str] = set()
        #: records of the tasks read here to make in Redis (_NEW: then look the
        #: task up in the store; _RENEW) or to take back (_GONE)
        self._follow: dict[str, int] = {}
        self._renewal: asyncio.TimerHandle | None = None
        self._script: str | None = None  # the SHA1 of _NEWS_IF_READ once loaded
        #: look-ups of newly followed tasks under way (kept referenced until done)
        self._looking: set[asyncio.Task[None]] = set()
        self._wake_sender = asyncio.Event()
        self._version_of: TaskVersion | None = None
        self._closed = False
        #: called with (key, seq) for news from another process (the engine
        #: uses it to notice that a turn it runs was canceled elsewhere)
        self.on_remote: Callable[[str, int], None] | None = None
        #: whether a task's turn runs in this process (the engine sets it); its
        #: writes are then news only for readers elsewhere. Unset: every write
        #: is news for every process.
        self.runs_here: Callable[[str], bool] | None = None
        #: set while the reader is connected and reading
        self.connected = asyncio.Event()

    @property
    def redis_url(self) -> str:
        """The URL redis-py connects with (the bus's own options taken out)."""
        return self._redis_url

    # ------------------------------------------------------------------ life

    def attach_versions(self, version_of: TaskVersion) -> None:
        """How to look up where a task's log has got to (the store knows), after
        a reconnection."""
        self._version_of = version_of

    async def open(self) -> None:
        """Connect and start reading news (also done by the first use; after
        ``close``, only by ``open``)."""
        await ping(self.url)  # a Redis that is away is one clear error, at once
        self._closed = False
        self._start()
        try:
            async with asyncio.timeout(10):
                await self.connected.wait()
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
        for key in self._local.keys():
            self._follow[key] = _GONE
        await self._local.close()
        self._closed = True
        self._wake_sender.set()
        tasks = [t for t in (self._reader, self._sender, *self._looking) if t is not None]
        self._reader = self._sender = None
        for task in tasks:
            task.cancel()
        if tasks:
            # redis-py's own timeouts may swallow a cancellation (asyncio's
            # uncancel); the loops also end on _closed, within one read's block
            await asyncio.wait(tasks, timeout=_BLOCK_MS / 1000 + 1)
        await self._flush_once()
        await self._flush_follows()
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
        if self.runs_here is None or not self.runs_here(key):
            self._unsent_to_all.add(key)
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

    def _follow_changed(self, key: str, reading: bool) -> None:
        self._follow[key] = _NEW if reading else _GONE
        if not self._closed:
            self._start()
            self._wake_sender.set()

    async def _send(self) -> None:
        attempt = 0
        # a timer, not a timeout on each wait: the loop turns once per batch of news
        self._renew()
        try:
            while not self._closed:
                await self._wake_sender.wait()
                if self._closed:
                    return
                self._wake_sender.clear()
                if await self._flush_once() and await self._flush_follows():
                    attempt = 0
                else:
                    await asyncio.sleep(_BACKOFF[min(attempt, len(_BACKOFF) - 1)])
                    attempt += 1
                    self._wake_sender.set()
        finally:
            if self._renewal is not None:
                self._renewal.cancel()
                self._renewal = None

    def _renew(self) -> None:
        """The records of the tasks read here would expire: renew them all, and
        again in a third of their lifetime."""
        for key in self._local.keys():
            self._follow.setdefault(key, _RENEW)
        self._wake_sender.set()
        self._renewal = asyncio.get_running_loop().call_later(_FOLLOW_RENEW, self._renew)

    def _redis(self) -> aioredis.Redis:
        client = self._client
        if client is None:
            client = self._client = aioredis.Redis.from_url(self._redis_url)
        return client

    async def _flush_once(self) -> bool:
        """Send the news held; False (keeping it) when Redis cannot be reached."""
        if not self._unsent:
            return True
        news, self._unsent = self._unsent, {}
        carry, self._carry = self._carry, {}
        to_all, self._unsent_to_all = self._unsent_to_all, set()
        client = self._redis()
        try:
            if self._script is None and len(to_all) < len(news):
                self._script = await client.script_load(_NEWS_IF_READ)
            async with client.pipeline(transaction=False) as pipe:
                for key, seq in news.items():
                    fields: dict[Any, Any] = {"k": key.encode(), "s": seq, "o": self._origin}
                    events = carry.get(key)
                    if events and events[-1].seq == seq:
                        payload = _encode_carried([_Carried(e.seq, e.event) for e in events])
                        if len(payload) <= CARRY_BYTES:
                            fields["e"] = payload
                    if key in to_all:
                        pipe.xadd(self._stream, fields, maxlen=STREAM_LENGTH, approximate=True)
                    else:
                        args: list[Any] = [self._origin, STREAM_LENGTH]
                        for name, value in fields.items():
                            args += (name, value)
                        assert self._script is not None
                        pipe.evalsha(self._script, 2, self._readers_prefix + key,
                                     self._stream, *args)
                await pipe.execute()
        except Exception as exc:  # not only RedisError: a client closed under us raises others
            if isinstance(exc, NoScriptError):
                self._script = None  # a restarted Redis forgot it: load it again
            for key, seq in news.items():
                if seq > self._unsent.get(key, 0):
                    self._unsent[key] = seq
            self._unsent_to_all |= to_all & news.keys()
            log.warning("redis bus: cannot send news (%s); will retry", exc)
            return False
        return True

    async def _flush_follows(self) -> bool:
        """Record in Redis which tasks have readers here (and take back the
        records of those that no longer have); then look each newly recorded
        task up in the store, for writes whose news went out before."""
        if not self._follow:
            return True
        follow, self._follow = self._follow, {}
        client = self._redis()
        try:
            async with client.pipeline(transaction=False) as pipe:
                for key, what in follow.items():
                    name = self._readers_prefix + key
                    if what != _GONE:
                        pipe.sadd(name, self._origin)
                        pipe.expire(name, FOLLOW_TTL)
                    else:
                        pipe.srem(name, self._origin)
                answers = await pipe.execute()
        except Exception as exc:
            for key, what in follow.items():
                if self._follow.get(key, _RENEW) == _RENEW:
                    self._follow[key] = what
            log.warning("redis bus: cannot record the tasks read here (%s); will retry", exc)
            return False
        # A renewal that added its record again found it gone (Redis flushed, or its
        # keys evicted, with the connection up: no reconnection resynchronised it):
        # writes made meanwhile sent no news here, so the task is looked up as a new
        # record's is.
        answered = iter(answers)  # SADD's and EXPIRE's for a record, SREM's for one gone
        new = []
        for key, what in follow.items():
            if what == _GONE:
                next(answered)
                continue
            was_gone, _ = next(answered), next(answered)
            if ((what == _NEW or (what == _RENEW and was_gone))
                    and self._local.latest(key) is not None):
                new.append(key)
        if new:
            # store reads of their own: news keeps going out meanwhile
            looking = asyncio.get_running_loop().create_task(self._look_up(new))
            self._looking.add(looking)
            looking.add_done_callback(self._looking.discard)
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
        """After a reconnection news may be lost, and after a restart of Redis
        the records of who reads what too: record them again, and ask the store
        where each task followed here has got to."""
        for key in self._local.keys():
            self._follow[key] = _NEW  # looked up in the store once recorded again
        self._wake_sender.set()

    async def _look_up(self, keys: list[str]) -> None:
        version_of = self._version_of
        if version_of is None:
            return
        for key in keys:
            where = _split_key(key)
            if where is None:
                continue
            try:
                version = await version_of(where[0], where[1])
            except Exception:  # the store may be briefly away too; the next news wakes them
                log.warning("redis bus: could not look task %s up after reconnecting", where[1])
                continue
            if version is not None:
                self._local.announce(key, version)
