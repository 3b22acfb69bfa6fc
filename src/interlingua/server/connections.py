"""Bounds on what one HTTP connection may cost, whichever uvicorn parser runs.

uvicorn caps a request head only with h11 (``h11_max_incomplete_event_size``;
httptools buffers any size), has no deadline for reading a head or a body,
and its only connection cap is global (``limit_concurrency``), so one client
with many slow connections locks every other client out. The protocol class
made here (uvicorn's own httptools or h11 protocol, subclassed) adds:

- a cap on the request head: more than ``max_head_bytes`` before the blank
  line that ends it is answered ``431`` and the connection closed;
- a head deadline: a connection that has not sent a complete head within
  ``head_timeout`` s of opening (or of the first byte of its next request) is
  answered ``408`` and closed;
- a body deadline: a request body not complete within ``body_timeout`` s of
  its head is cut off (``408`` when no response has started);
- a cap on open connections per peer IP address: connection number
  ``max_per_ip + 1`` from one address is answered ``503`` and closed.

Pass ``**uvicorn_connection_options(ConnectionLimits(...))`` to
``uvicorn.Config``; ``interlingua serve`` does.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

__all__ = ["ConnectionLimits", "guarded_protocol_class", "uvicorn_connection_options"]


class ConnectionLimits(msgspec.Struct, kw_only=True, frozen=True):
    #: the largest request head (request line and headers) accepted
    max_head_bytes: int = 64 * 1024
    #: seconds to send a complete request head
    head_timeout: float = 10.0
    #: seconds to send a request body once its head is in
    body_timeout: float = 30.0
    #: open connections one peer IP address may hold (None: no cap)
    max_per_ip: int | None = 512

    def __post_init__(self) -> None:
        # (0 bytes or 0 s would refuse every request; checked where they are given)
        if self.max_head_bytes < 1:
            raise ValueError(f"max_head_bytes must be at least 1, got {self.max_head_bytes!r}")
        for name in ("head_timeout", "body_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be above 0 seconds, got {getattr(self, name)!r}")
        if self.max_per_ip is not None and self.max_per_ip < 1:
            raise ValueError(f"max_per_ip must be at least 1 (or None: no cap), "
                             f"got {self.max_per_ip!r}")


def _response(status: int, reason: str, message: str) -> bytes:
    body = message.encode("ascii")
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode("ascii") + body


def _parser_base(http: str) -> type:
    if http in ("auto", "httptools"):
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

            return HttpToolsProtocol
        except ImportError:  # pragma: no cover - httptools comes with uvicorn[standard]
            if http == "httptools":
                raise
    if http not in ("auto", "h11"):
        raise ValueError(f"unknown HTTP parser {http!r}: auto, httptools or h11")
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol


def guarded_protocol_class(limits: ConnectionLimits, *, base: type | None = None,
                           http: str = "auto") -> type:
    """uvicorn's HTTP protocol (``base``, else the ``http`` parser's) bounded by ``limits``.

    Each call makes a class with its own per-address counts: use one per server."""
    parent: Any = base or _parser_base(http)
    open_by_ip: dict[str, int] = {}
    too_large = _response(431, "Request Header Fields Too Large",
                          f"The request head is larger than {limits.max_head_bytes} bytes.")
    too_slow_head = _response(408, "Request Timeout",
                              f"The request head did not arrive within {limits.head_timeout:g} s.")
    too_slow_body = _response(408, "Request Timeout",
                              f"The request body did not arrive within {limits.body_timeout:g} s.")
    too_many = _response(503, "Service Unavailable",
                         f"More than {limits.max_per_ip} open connections from this address.")

    class GuardedProtocol(parent):  # type: ignore[misc]
        _ip: str | None = None
        _head_bytes = 0
        _tail = b""
        _seen_cycle: Any = None
        _head_timer: asyncio.TimerHandle | None = None
        _body_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            peer = transport.get_extra_info("peername")
            ip = peer[0] if isinstance(peer, tuple) and peer else None
            if ip is not None and limits.max_per_ip is not None:
                if open_by_ip.get(ip, 0) >= limits.max_per_ip:
                    transport.write(too_many)
                    transport.close()
                    return
                open_by_ip[ip] = open_by_ip.get(ip, 0) + 1
                self._ip = ip
            self._start_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._ip is not None:
                left = open_by_ip.get(self._ip, 1) - 1
                if left > 0:
                    open_by_ip[self._ip] = left
                else:
                    open_by_ip.pop(self._ip, None)
                self._ip = None
            self._cancel_timers()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if not self._reading_body():
                if self._head_timer is None:  # the first byte of a next request
                    self._start_head_timer()
                room = limits.max_head_bytes - self._head_bytes
                if len(data) > room and not _head_ends(self._tail + data[:max(room, 0)]):
                    self._refuse(too_large)
                    return
                self._head_bytes += len(data)
                self._tail = (self._tail + data)[-3:]
            super().data_received(data)
            cycle = self.cycle
            if cycle is not self._seen_cycle:
                # a head was read (the parser made a request cycle): the next one counts anew
                self._seen_cycle = cycle
                self._head_bytes = 0
                self._tail = b""
                self._cancel(head=True)
                if cycle is not None and cycle.more_body and self._body_timer is None:
                    self._body_timer = self.loop.call_later(
                        limits.body_timeout, self._body_too_slow, cycle)
            if self._body_timer is not None and not self._reading_body():
                self._cancel(body=True)

        def _reading_body(self) -> bool:
            cycle = self.cycle
            return cycle is not None and cycle.more_body and cycle is self._seen_cycle

        def _start_head_timer(self) -> None:
            self._head_timer = self.loop.call_later(limits.head_timeout, self._head_too_slow)

        def _head_too_slow(self) -> None:
            self._head_timer = None
            if not self._reading_body():
                self._refuse(too_slow_head)

        def _body_too_slow(self, cycle: Any) -> None:
            self._body_timer = None
            if cycle is self.cycle and cycle.more_body:
                if getattr(cycle, "response_started", True):
                    self.transport.close()
                else:
                    self._refuse(too_slow_body)

        def _refuse(self, response: bytes) -> None:
            self._cancel_timers()
            if not self.transport.is_closing():
                self.transport.write(response)
                self.transport.close()

        def _cancel(self, *, head: bool = False, body: bool = False) -> None:
            if head and self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            if body and self._body_timer is not None:
                self._body_timer.cancel()
                self._body_timer = None

        def _cancel_timers(self) -> None:
            self._cancel(head=True, body=True)

    return GuardedProtocol


def _head_ends(buffer: bytes) -> bool:
    return b"\r\n\r\n" in buffer or b"\n\n" in buffer


def uvicorn_connection_options(limits: ConnectionLimits | None = None, *,
                               base: type | None = None, http: str = "auto") -> dict[str, Any]:
    """``uvicorn.Config`` keyword arguments that apply ``limits`` (defaults when None).

    ``base``: a protocol class to extend (``tls_protocol_class()``, say)."""
    limits = limits or ConnectionLimits()
    return {"http": guarded_protocol_class(limits, base=base, http=http),
            "h11_max_incomplete_event_size": limits.max_head_bytes}
