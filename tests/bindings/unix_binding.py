"""A binding that lives in the test suite: line-delimited JSON over a Unix socket.

It shows what a new binding is: one module (a ``BaseBinding`` subclass, using the
codec registry and the front door's one entry, nothing else of the server) and
one registration (``create_app(agent, bindings=[UnixBinding()])`` or
``service.add_binding(UnixBinding())``).

Each line a client writes is one request, a JSON object::

    {"id": 7, "method": "SendMessage", "params": {...}, "headers": {"A2A-Version": "1.0"}}

``method`` and ``params`` are v1.0's (ProtoJSON, as on JSON-RPC); ``headers`` are
what HTTP headers would carry (``A2A-Version``, credentials, ``Last-Event-ID``,
``A2A-Extensions``). Each answer is a line:

- ``{"id": 7, "result": ...}``: a unary call's result;
- ``{"id": 7, "seq": 12, "result": ...}``: one item of a stream (``SendStreamingMessage``,
  ``SubscribeToTask``), ``seq`` its event id (what ``Last-Event-ID`` resumes after),
  and once the stream is over ``{"id": 7, "end": true}``;
- ``{"id": 7, "error": {"code": ..., "message": ..., "data": ...}, "status": 404}``: the
  A2A error, as v1.0's JSON-RPC writes it, with its HTTP status; it ends a stream.

A connection carries one request at a time; a stream's connection closed by the
client closes the stream. A line over ``max_body_bytes`` is refused and ends the
connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from interlingua.bindings.base import BaseBinding
from interlingua.core.dialects import Codec, get_codec
from interlingua.core.errors import (
    A2AError,
    InternalError,
    InvalidRequest,
    ParseError,
    ResourceUnavailable,
)
from interlingua.core.model import AgentInterface
from interlingua.server.dispatch import Entry, FrontDoor, Inbound, Items, Lagged, Unavailable

if TYPE_CHECKING:
    from interlingua.server.service import Service

__all__ = ["UNIX_BINDING", "UnixBinding"]

log = logging.getLogger("tests.unix_binding")

#: the card's name of this binding (``AgentInterface.binding``)
UNIX_BINDING = "JSONL+UNIX"


class _Request(msgspec.Struct):
    method: str
    id: Any = None
    params: msgspec.Raw = msgspec.Raw(b"{}")
    headers: dict[str, str] = {}


_read = msgspec.json.Decoder(_Request)
_enc = msgspec.json.encode


class UnixBinding(BaseBinding):
    """Line-delimited JSON on a Unix socket at ``path`` (default: one in a directory
    of its own, made as it starts and removed as it stops)."""

    name = "unix"

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self._own_dir: str | None = None
        self._server: asyncio.Server | None = None
        self._door: FrontDoor | None = None
        self._limit = 0
        self._codec: Codec = get_codec("1.0")
        self._connections: set[asyncio.Task[Any]] = set()

    def interfaces(self, base_url: str) -> Sequence[AgentInterface]:
        if self._server is None or self.path is None:
            return ()
        return (AgentInterface(url="unix://" + self.path, binding=UNIX_BINDING,
                               protocol_version="1.0"),)

    async def prepare(self, service: Service) -> None:
        self._door = service.door
        self._limit = service.settings.max_body_bytes
        if self.path is None:
            self._own_dir = tempfile.mkdtemp(prefix="il-")
            self.path = os.path.join(self._own_dir, "a2a.sock")
        # the line limit: a longer request is refused, not buffered
        self._server = await asyncio.start_unix_server(self._connected, self.path,
                                                       limit=self._limit + 1)
        service.card.render_again()  # the card names the socket

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            for task in list(self._connections):
                task.cancel()
            if self._connections:
                await asyncio.wait(set(self._connections), timeout=5)
            await server.wait_closed()
        if self._own_dir is not None:
            shutil.rmtree(self._own_dir, ignore_errors=True)
            self._own_dir = None
            self.path = None

    # --------------------------------------------------------------- requests

    async def _connected(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            pending: bytes | None = None
            while True:
                try:
                    line = pending if pending is not None else await reader.readline()
                except ValueError:  # over the limit: the rest of the line is not read
                    err = InvalidRequest(
                        f"Request line is larger than the limit of {self._limit} bytes")
                    await self._write(writer, self._error(None, err))
                    return
                pending = None
                if not line:
                    return
                if line.strip():
                    pending = await self._one(line, reader, writer)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, line: bytes, reader: asyncio.StreamReader,
                   writer: asyncio.StreamWriter) -> bytes | None:
        """Answer one request line; a stream's answer may end with the next line the
        client sent meanwhile, which is returned to be read next."""
        door = self._door
        assert door is not None
        codec = self._codec
        rid: Any = None
        try:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ParseError(f"Parse error: the line is not valid UTF-8 (byte {exc.start})") \
                    from None
            try:
                req = _read.decode(line)
            except msgspec.ValidationError as exc:
                raise InvalidRequest(f"Invalid Request: {exc}") from None
            except msgspec.DecodeError:
                raise ParseError("Parse error: the line is not valid JSON") from None
            rid = req.id
            headers = {k.lower(): v for k, v in req.headers.items()}
            streaming = req.method in codec.streaming_methods
            inbound = Inbound(binding=self.name, scope={"type": "unix"}, headers=headers,
                              codec=codec, method=req.method, payload=bytes(req.params),
                              raw_version=headers.get("a2a-version"), streaming=streaming,
                              last_event_id=headers.get("last-event-id"))
            result = await door.enter(inbound)
            if isinstance(result, Items):
                return await self._stream(rid, result, reader, writer)
            assert inbound.call is not None
            body = codec.encode_result(inbound.call, result)
            door.check_answer(len(body))
            answer = b'{"id":' + _enc(rid) + b',"result":' + body + b"}"
        except A2AError as exc:
            answer = self._error(rid, exc)
        except Exception:
            log.exception("internal error on the Unix socket")
            answer = self._error(rid, InternalError())
        await self._write(writer, answer)
        return None

    async def _stream(self, rid: Any, items: Items, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> bytes | None:
        """Write ``items`` until they end, or until the client closes the connection."""
        codec = self._codec
        head = b'{"id":' + _enc(rid)
        pump = asyncio.ensure_future(self._pump(head, items, writer))
        listen = asyncio.ensure_future(reader.readline())
        try:
            await asyncio.wait((pump, listen), return_when=asyncio.FIRST_COMPLETED)
            if not pump.done():
                if listen.exception() is not None or not listen.result():
                    pump.cancel()  # the client is gone: so is its stream
                    with contextlib.suppress(asyncio.CancelledError):
                        await pump
                    return None
                await pump  # a next request came: it waits for this stream's end
            error = pump.result()
            if error is not None:
                await self._write(writer, self._error(rid, error, codec))
            else:
                await self._write(writer, head + b',"end":true}')
            if not listen.done():
                return await listen
            return listen.result() if listen.exception() is None else None
        finally:
            items.close()
            if not listen.done():
                listen.cancel()

    async def _pump(self, head: bytes, items: Items,
                    writer: asyncio.StreamWriter) -> A2AError | None:
        """The stream's items, one line each; the error it ended with (None: none)."""
        codec = self._codec
        try:
            async for got in items:
                lines = []
                for out in got:
                    if type(out) is Entry:
                        lines.append(b'%b,"seq":%d,"result":%b}\n' % (
                            head, out.seq, codec.encode_stream_item(out.item)))
                    elif type(out) is Lagged:
                        return ResourceUnavailable(
                            f"This stream fell too far behind; ask again with "
                            f"Last-Event-ID: {out.seq} to continue from the log",
                            data={"lastEventId": out.seq, "resumable": True})
                    elif type(out) is Unavailable:
                        return ResourceUnavailable(
                            out.message, data={"lastEventId": out.after, "resumable": False})
                    # heartbeats: nothing to say on a socket
                if lines:
                    writer.write(b"".join(lines))
                    await writer.drain()
        except A2AError as exc:
            return exc
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception:
            log.exception("a stream on the Unix socket failed")
            return InternalError()
        return None

    def _error(self, rid: Any, err: A2AError, codec: Codec | None = None) -> bytes:
        codec = codec or self._codec
        door = self._door
        refused = door.refusal(err) if door is not None else None
        status = refused[0] if refused is not None else codec.http_status(err)
        return (b'{"id":' + _enc(rid) + b',"error":' + codec.encode_error(err)
                + b',"status":%d}' % status)

    @staticmethod
    async def _write(writer: asyncio.StreamWriter, line: bytes) -> None:
        writer.write(line + b"\n")
        await writer.drain()
