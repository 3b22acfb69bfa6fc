"""A PostgreSQL session stopped in the middle of a pipeline, as a paused process leaves one.

asyncpg always ends what it sends with a Sync, so this speaks the wire protocol
itself (trust authentication only, as the test database allows): it runs one
statement with Parse, Bind, Execute and Flush, and sends no Sync. The statement's
implicit transaction stays open with its locks, and PostgreSQL counts the session
as active (reading from its client), which ``idle_in_transaction_session_timeout``
does not cover.
"""

from __future__ import annotations

import asyncio
import struct
from urllib.parse import urlsplit

__all__ = ["StalledSession"]


def _message(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


def _cstr(text: str) -> bytes:
    return text.encode() + b"\x00"


class StalledSession:
    def __init__(self, url: str, application_name: str) -> None:
        self.url = url
        self.application_name = application_name
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _read(self) -> tuple[bytes, bytes]:
        assert self._reader is not None
        head = await self._reader.readexactly(5)
        (size,) = struct.unpack("!i", head[1:])
        return head[:1], await self._reader.readexactly(size - 4)

    async def open(self) -> None:
        parts = urlsplit(self.url.split("?")[0])
        self._reader, self._writer = await asyncio.open_connection(parts.hostname,
                                                                   parts.port or 5432)
        params = b"".join(_cstr(k) + _cstr(v) for k, v in (
            ("user", parts.username or "postgres"), ("database", parts.path.lstrip("/")),
            ("application_name", self.application_name)))
        body = struct.pack("!i", 196608) + params + b"\x00"
        self._writer.write(struct.pack("!i", len(body) + 4) + body)
        while True:
            kind, payload = await self._read()
            if kind == b"E":
                raise RuntimeError(f"PostgreSQL refused the session: {payload!r}")
            if kind == b"R" and payload[:4] != b"\x00\x00\x00\x00":
                raise RuntimeError("the test database asks for a password")
            if kind == b"Z":
                return

    async def stall_in(self, sql: str) -> None:
        """Run ``sql`` (no parameters) and stop before its Sync."""
        assert self._writer is not None
        self._writer.write(
            _message(b"P", _cstr("") + _cstr(sql) + struct.pack("!h", 0))
            + _message(b"B", _cstr("") + _cstr("") + struct.pack("!hhh", 0, 0, 0))
            + _message(b"E", _cstr("") + struct.pack("!i", 0))
            + _message(b"H", b""))
        while True:
            kind, payload = await self._read()
            if kind == b"E":
                raise RuntimeError(f"the statement failed: {payload!r}")
            if kind == b"C":  # CommandComplete: done, and no Sync follows
                return

    async def ended(self) -> bool:
        """Whether the server has closed the session (reads what is left)."""
        assert self._reader is not None
        try:
            while await self._reader.read(4096):
                pass
        except ConnectionError:
            pass
        return True

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except ConnectionError:
                pass
