"""RFC 8785 JSON Canonicalization Scheme (JCS).

The canonical form of a JSON value is what gets signed (agent cards, A2A
v1.0 §8.4): object members sorted by the UTF-16 code units of their names,
no insignificant whitespace, strings escaped only where JSON requires it
(``"``, ``\\`` and control characters; everything else literal, UTF-8), and
numbers written the way ECMAScript's ``Number.prototype.toString`` writes an
IEEE 754 double.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["CanonicalizationError", "canonicalize"]

#: containers nested deeper than this are refused (a signed card is never this deep)
MAX_DEPTH = 100

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


class CanonicalizationError(ValueError):
    """The value has no canonical JSON form (NaN, a non-string key, too deep ...)."""


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 canonical JSON of ``value`` (dicts, lists, str, int, float, bool, None)."""
    out: list[str] = []
    _write(value, out, 0)
    return "".join(out).encode("utf-8")


def _write(value: Any, out: list[str], depth: int) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(_integer(value))
    elif isinstance(value, float):
        out.append(_number(value))
    elif isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise CanonicalizationError(f"nested deeper than {MAX_DEPTH} levels")
        for key in value:
            if not isinstance(key, str):
                raise CanonicalizationError(f"object member name {key!r} is not a string")
        out.append("{")
        first = True
        for key in sorted(value, key=_utf16_key):
            if not first:
                out.append(",")
            first = False
            out.append(_string(key))
            out.append(":")
            _write(value[key], out, depth + 1)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        if depth >= MAX_DEPTH:
            raise CanonicalizationError(f"nested deeper than {MAX_DEPTH} levels")
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out, depth + 1)
        out.append("]")
    else:
        raise CanonicalizationError(f"{type(value).__name__} is not a JSON value")


def _utf16_key(name: str) -> bytes:
    # Sorting by UTF-16BE bytes is sorting by UTF-16 code units (RFC 8785 §3.2.3).
    return name.encode("utf-16-be", "surrogatepass")


def _string(s: str) -> str:
    parts = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            parts.append(esc)
        elif ch < " ":
            parts.append(f"\\u{ord(ch):04x}")
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)


def _integer(n: int) -> str:
    # JSON numbers are doubles here: an integer beyond 2**53 is written as the
    # double it becomes, as an ECMAScript serializer would.
    if -(2**53) <= n <= 2**53:
        return str(n)
    return _number(float(n))


def _number(x: float) -> str:
    if math.isnan(x) or math.isinf(x):
        raise CanonicalizationError(f"{x} has no JSON form")
    if x == 0:
        return "0"  # also -0
    sign = "-" if x < 0 else ""
    # repr() gives the shortest digits that round-trip, as ECMAScript requires.
    text = repr(abs(x))
    mantissa, _, exp_text = text.partition("e")
    exp = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    # value = 0.<digits> x 10**n
    n = len(int_part) + exp if int_part != "0" else exp - (len(frac_part) - len(frac_part.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        e_text = ("+" if e >= 0 else "-") + str(abs(e))
        body = digits + "e" + e_text if k == 1 else digits[0] + "." + digits[1:] + "e" + e_text
    return sign + body
