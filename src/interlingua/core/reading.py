"""Reading what another party wrote: one leading byte order mark passed over (RFC 8259
§8.1, the event-stream format), and integers in ASCII digits only.

``str.isdigit()`` also takes "²", which ``int()`` refuses, and "١٢", which ``int()``
reads as 12 though no protocol field means it; a check of digits on a hot path is
written inline, ``text.isascii() and text.isdigit()`` (``tests/structure``).
"""

from __future__ import annotations

__all__ = ["BOM", "ascii_int", "past_bom", "without_bom"]

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
