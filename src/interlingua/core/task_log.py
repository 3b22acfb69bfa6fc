"""A task's scope and the events of its log: what the store keeps, and what
the bus hands from the writer to the readers (it needs no more of the store).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import msgspec

from .model import Event

__all__ = ["Scope", "StoredEvent"]

_T = TypeVar("_T")


class Scope(msgspec.Struct, frozen=True, gc=False, cache_hash=True):
    """Who a task belongs to. ``owner`` is the authenticated principal ("" = anonymous)."""

    tenant: str = ""
    owner: str = ""


class StoredEvent(msgspec.Struct, gc=False):
    seq: int
    event: Event
    #: the event encoded for the dialect ``encoded_for``, by the first reader
    #: that encoded it, so that every other reader of that dialect reuses the
    #: bytes; encodings for further dialects go to ``encoded``
    encoded_for: str | None = None
    encoded_once: bytes = b""
    encoded: dict[str, bytes] | None = None

    def encoding(self, key: str, encode: Callable[[_T], bytes], arg: _T) -> bytes:
        """``encode(arg)``, made once per ``key`` (a dialect, or a binding's
        serialization of it) for every reader of this event."""
        # Most events have readers of one key: one slot, no dict per event.
        if self.encoded_for == key:
            return self.encoded_once
        if self.encoded_for is None:
            data = self.encoded_once = encode(arg)
            self.encoded_for = key
            return data
        cache = self.encoded
        if cache is None:
            cache = self.encoded = {}
        found = cache.get(key)
        if found is None:
            found = cache[key] = encode(arg)
        return found
