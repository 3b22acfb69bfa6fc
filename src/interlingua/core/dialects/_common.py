"""Small pieces every dialect codec shares: timestamps, base64, error mapping."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import msgspec

from ..errors import (
    A2AError,
    ContentTypeNotSupported,
    ExtendedCardNotConfigured,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    PushNotSupported,
    RemoteError,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
)

__all__ = [
    "OUT_OF_RANGE",
    "FieldError",
    "TimestampOutOfRange",
    "b64decode",
    "b64encode",
    "check_utf8",
    "decode_error_member",
    "decode_params",
    "each_in",
    "encode_error_member",
    "field_in",
    "format_timestamp",
    "merge",
    "normalize_timestamp",
]

T = TypeVar("T")

_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$"
)


#: why a valid RFC 3339 instant is refused
OUT_OF_RANGE = "is out of range (UTC years 1 to 9999)"


class TimestampOutOfRange(InvalidParams):
    """A timestamp that names an instant no UTC date of years 1 to 9999 can hold."""


def format_timestamp(dt: datetime, *, ceil: bool = False) -> str:
    """``YYYY-MM-DDTHH:MM:SS.sssZ`` in UTC, the form every version accepts.

    Finer digits are dropped, or with ``ceil`` taken up to the next millisecond:
    a lower bound ("at or after") must not admit the millisecond before it.
    """
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)  # (OverflowError: an instant outside UTC's years 1-9999)
    if ceil and dt.microsecond % 1000:
        dt += timedelta(microseconds=1000 - dt.microsecond % 1000)
    # (not strftime: its %Y gives a year before 1000 without its leading zeros)
    return (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:"
            f"{dt.second:02d}.{dt.microsecond // 1000:03d}Z")


def normalize_timestamp(value: str, field: str = "timestamp", *, ceil: bool = False) -> str:
    """Any RFC 3339 / ISO 8601 timestamp (naive = UTC) -> our canonical form,
    digits finer than a millisecond dropped or, with ``ceil``, rounded up.

    Raises ``InvalidParams`` naming ``field`` when it is not a timestamp.
    """
    if len(value) == 24 and value[-1] == "Z" and value[10] == "T" and value[19] == ".":
        # already canonical, the common case: only its fields' ranges looked at, in C
        try:
            datetime.fromisoformat(value[:-1])
        except ValueError:
            raise InvalidParams(
                f"Invalid params: {field} is not a valid timestamp: {value!r}") from None
        return value
    if not _RFC3339.match(value):
        raise InvalidParams(f"Invalid params: {field} is not an RFC 3339 timestamp: {value!r}")
    text = value.replace("z", "Z").replace("t", "T").replace(" ", "T")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    # fromisoformat takes at most 6 fractional digits
    m = re.match(r"^(.*\.\d{6})(\d+)(.*)$", text)
    finer = False
    if m:
        text = m.group(1) + m.group(3)
        finer = m.group(2).strip("0") != ""
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidParams(
            f"Invalid params: {field} is not a valid timestamp: {value!r}"
        ) from None
    try:
        if ceil and finer:  # beyond the microsecond: past this millisecond too
            dt += timedelta(microseconds=1000 - dt.microsecond % 1000)
        return format_timestamp(dt, ceil=ceil)
    except OverflowError:  # a valid instant, outside years 1-9999 once in UTC
        raise TimestampOutOfRange(f"Invalid params: {field} {OUT_OF_RANGE}: {value!r}") \
            from None


def b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def b64decode(text: str, field: str = "bytes") -> bytes:
    """Standard or URL-safe base64, padding optional; ``InvalidParams`` if neither."""
    s = text.strip()
    pad = "=" * (-len(s) % 4)
    try:
        if "-" in s or "_" in s:
            return base64.urlsafe_b64decode(s + pad)
        return base64.b64decode(s + pad, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidParams(f"Invalid params: {field} is not valid base64") from None


def check_utf8(data: bytes, what: str = "the JSON") -> None:
    """``ParseError`` unless ``data`` is UTF-8 (RFC 8259 §8.1: JSON is).

    msgspec checks only the strings it decodes, and raises ``UnicodeDecodeError``
    for those: a member it skips is not checked at all. So the whole text is
    checked once, at the cost of a scan for the bytes that are not ASCII.
    """
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(
                f"Parse error: {what} is not valid UTF-8 (byte {exc.start})") from None


def decode_params(
    decoder: msgspec.json.Decoder[T],
    params: bytes | None,
    *,
    method: str,
    fallback: Callable[[Any], T] | None = None,
) -> T:
    """Decode ``params`` JSON with a typed decoder; map failures to ``InvalidParams``.

    ``fallback`` gets the generic JSON value when the typed decode fails and
    may accept it leniently (snake_case names, a bare Message, ...); it must
    raise ``InvalidParams`` itself when it cannot. Bytes that are not UTF-8 are a
    ``ParseError``, whichever binding brought them (an HTTP+JSON body is these
    params as they arrived).
    """
    if params is None:
        params = b"{}"
    elif not params.isascii():  # check_utf8's test, without a call for ASCII params
        check_utf8(params)
    try:
        try:
            return decoder.decode(params)
        except msgspec.ValidationError as exc:
            if fallback is not None:
                try:
                    doc = msgspec.json.decode(params)
                except msgspec.DecodeError:
                    doc = None
                if doc is not None:
                    return fallback(doc)
            raise InvalidParams(f"Invalid params for {method}: {_path(str(exc))}") from None
        except msgspec.DecodeError as exc:
            raise InvalidParams(f"Invalid params for {method}: {exc}") from None
    except RecursionError:
        # JSON nested deeper than the decoder (or a lenient reader) will go
        raise InvalidParams(f"Invalid params for {method}: nested too deeply") from None


def _path(message: str) -> str:
    return message.replace("`$.", "`params.").replace("`$`", "`params`")


def at_root(message: str, root: str) -> str:
    """A msgspec error message ("… - at `$.message.parts[0]`") naming the field
    from ``root`` ("… - at `result.message.parts[0]`")."""
    if " - at `$" not in message:
        return f"{message} - at `{root}`"
    return message.replace("`$.", f"`{root}.").replace("`$`", f"`{root}`")


class FieldError(Exception):
    """A value that decoded but breaks a rule of its dialect, with its field path.

    Callers prepend their own segment as the error unwinds (``at``), so building
    paths costs nothing on success.
    """

    def __init__(self, path: list[str] | str, reason: str) -> None:
        super().__init__(reason)
        self.path = path if isinstance(path, list) else [path] if path else []
        self.reason = reason

    def at(self, segment: str) -> FieldError:
        self.path.insert(0, segment)
        return self

    def describe(self, root: str) -> str:
        text = root
        for seg in self.path:
            text += seg if seg.startswith("[") else "." + seg
        return f"{text} {self.reason}"


def field_in(name: str, conv: Callable[[Any], T], value: Any) -> T:
    try:
        return conv(value)
    except FieldError as exc:
        exc.path.insert(0, name)
        raise


def each_in(name: str, items: list[Any], conv: Callable[[Any], T]) -> list[T]:
    out = []
    for i, item in enumerate(items):
        try:
            out.append(conv(item))
        except FieldError as exc:
            exc.path[:0] = [name, f"[{i}]"]
            raise
    return out


class _ErrorMember(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: Any = msgspec.UNSET


_error_encoder = msgspec.json.Encoder()

#: the codes of the v0.2/v0.3 family (also SAM's and the tutorial's), DIALECTS.md §f.1
V03_ERROR_CLASSES: dict[int, type[A2AError]] = {
    -32700: ParseError,
    -32600: InvalidRequest,
    -32601: MethodNotFound,
    -32602: InvalidParams,
    -32603: InternalError,
    -32001: TaskNotFound,
    -32002: TaskNotCancelable,
    -32003: PushNotSupported,
    -32004: UnsupportedOperation,
    -32005: ContentTypeNotSupported,
    -32006: InvalidAgentResponse,
    -32007: ExtendedCardNotConfigured,
}



def encode_error_member(code: int, message: str, data: Any = None) -> bytes:
    """A JSON-RPC ``error`` member ``{code, message, data?}``.

    ``data`` that cannot be written as JSON is left out rather than failing the
    reply.
    """
    if data is not None:
        try:
            return _error_encoder.encode(_ErrorMember(code, message, data))
        except (TypeError, ValueError, OverflowError):
            pass
    return _error_encoder.encode(_ErrorMember(code, message))


def decode_error_member(error: Any, table: Mapping[int, type[A2AError]]) -> A2AError:
    """A decoded JSON-RPC ``error`` member -> the canonical error ``table`` names
    for its code (a ``RemoteError`` keeping the code when it names none)."""
    if not isinstance(error, dict):
        return InvalidAgentResponse("Invalid agent response: the error member is not an object")
    code = error.get("code")
    message = error.get("message")
    data = error.get("data")
    if not isinstance(message, str):
        message = None
    if isinstance(code, bool) or not isinstance(code, int):
        return InvalidAgentResponse(
            "Invalid agent response: the error member has no integer code", data=error
        )
    cls = table.get(code)
    if cls is None:
        return RemoteError(code, message or f"Error {code}", data=data)
    return cls(message, data=data)


def merge(a: Any, b: Any) -> Any:
    """Deep-merge JSON objects: keys of both; for a key in both, objects merge
    and other values come from ``b``. Lists of objects merge item by item."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(a[k], v) if k in a else v
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(
        isinstance(x, dict) for x in a + b
    ):
        return [merge(x, y) for x, y in zip(a, b, strict=True)]
    return b
