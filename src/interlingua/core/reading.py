"""Reading what another party wrote: one leading byte order mark passed over (RFC 8259
§8.1, the event-stream format), and integers in ASCII digits only.

``str.isdigit()`` also takes "²", which ``int()`` refuses, and "١٢", which ``int()``
reads as 12 though no protocol field means it; a check of digits on a hot path is
written inline, ``text.isascii() and text.isdigit()`` (``tests/structure``).
"""

from __future__ import annotations

import msgspec

__all__ = ["BOM", "ascii_int", "json_fault", "past_bom", "without_bom"]

#: a UTF-8 byte order mark
BOM = b"\xef\xbb\xbf"


def without_bom(data: bytes) -> bytes | None:
    """``data`` after the one byte order mark it opens with, or None when it opens with
    none (or with more than one: a loop of them is not read past)."""
    if data[:3] == BOM and data[3:6] != BOM:
        return data[3:]
    return None


def past_bom(data: bytes) -> bytes:
    """``data`` without the one byte order mark it may open with (``without_bom``'s
    rule), for a reader off the hot path: a hot one decodes first, and looks for a
    mark only when that fails."""
    unmarked = without_bom(data)
    return data if unmarked is None else unmarked


_TRUNCATED = "Input data was truncated"
# msgspec reads six bytes past a ``\uD800``-style escape for the pair's, and a body that
# ends sooner is "truncated" to it, whole as it is: read again with room, it says why
_ROOM = b" " * 8


def json_fault(data: bytes, exc: msgspec.DecodeError) -> str:
    """What is wrong with JSON that msgspec refused (``exc``), off the hot path: its
    words, but a lone UTF-16 surrogate escape near the end of a complete body is
    named as one rather than as truncation."""
    said = str(exc)
    if said != _TRUNCATED:
        return said
    try:
        msgspec.json.decode(data + _ROOM)
    except msgspec.DecodeError as again:
        if "surrogate" in str(again):  # (a body cut short elsewhere is truncated still)
            return str(again)
    except RecursionError:
        pass
    return said


def ascii_int(value: object) -> int | None:
    """A non-negative integer, or text of ASCII digits (spaces around them allowed), as
    an ``int``; None for anything else (a bool, a negative, "²", "١٢")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit():
            return int(text)
    return None
