"""A request's headers as a read-only mapping over the ASGI scope's own list.

Nothing is decoded until it is asked for: a request reads a handful of
headers, and a running task keeps its request's headers (``ctx.request``), so
a dict of decoded copies would be made on every request and held by every
open stream, for a few header lookups. The first look-up indexes the raw
pairs by name in one ``dict`` call (in C, the last value of a name winning);
each look-up after it is one dict look-up, not a loop over every header.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

__all__ = ["RequestHeaders", "given_once"]

#: a name asked for -> the raw name it matches (the names asked for are few: the
#: code's own, and a deployment's tenant header); bounded all the same
_KEYS: dict[str, bytes] = {}
_MAX_KEYS = 256


class RequestHeaders(Mapping[str, str]):
    """Header names are matched case-insensitively; when a name repeats, the
    last value counts. The ASGI server gives the names in lower case."""

    __slots__ = ("_by_name", "_raw", "content_type")

    def __init__(self, raw: Iterable[tuple[bytes, bytes]] = ()) -> None:
        self._raw = raw if isinstance(raw, list) else list(raw)
        self._by_name: dict[bytes, bytes] | None = None
        #: the raw Content-Type, once ``framing`` has read it (reading the body does)
        self.content_type: bytes | None = None

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        # The lookup itself, not a call to a shared finder: a request reads a few
        # headers, each through here.
        key = _KEYS.get(name)
        if key is None:
            try:
                key = name.lower().encode("latin-1")
            except UnicodeEncodeError:
                return default  # no header can have that name
            if len(_KEYS) < _MAX_KEYS:
                _KEYS[name] = key
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = dict(self._raw)
        found = by_name.get(key)
        return default if found is None else found.decode("latin-1")

    def framing(self) -> tuple[bytes | None, str | None, bytes | None]:
        """The raw Content-Length, the Content-Encoding and the raw Origin: what
        reading the body needs, in one call (every request reads them); the raw
        Content-Type is kept as ``content_type`` on the way, for the body's reader."""
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = dict(self._raw)
        coding = by_name.get(b"content-encoding")
        self.content_type = by_name.get(b"content-type")
        return (by_name.get(b"content-length"),
                None if coding is None else coding.decode("latin-1"), by_name.get(b"origin"))

    def combined(self, name: bytes) -> str | None:
        """The header ``name`` (lower case), its values joined by ", " when it is given
        several times with different ones, as HTTP combines a repeated field (RFC 9110
        §5.3): for a header given once, whose reader then refuses the list (two
        ``Last-Event-ID`` or ``A2A-Version`` values: which one counts is not for the
        server to guess)."""
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = dict(self._raw)
        found = by_name.get(name)
        if found is None:
            return None
        # as many names as headers: none repeats (nearly every request), no list to scan
        if len(by_name) != len(self._raw):
            return self._joined(name)
        return found.decode("latin-1")

    def _joined(self, name: bytes) -> str:
        """``combined``'s answer for a name present, when some name repeats."""
        values = [v for k, v in self._raw if k == name]
        if len(set(values)) > 1:
            return ", ".join(v.decode("latin-1") for v in values)
        return values[0].decode("latin-1")

    def raw(self, name: bytes) -> bytes | None:
        """The raw value of the header ``name`` (lower case), or None."""
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = dict(self._raw)
        return by_name.get(name)

    def __getitem__(self, name: str) -> str:
        found = self.get(name) if isinstance(name, str) else None
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        seen: set[bytes] = set()
        for k, _ in self._raw:
            if k not in seen:
                seen.add(k)
                yield k.decode("latin-1")

    def __len__(self) -> int:
        return len({k for k, _ in self._raw})

    def __bool__(self) -> bool:
        # without it, truth would count the distinct names (``__len__``)
        return bool(self._raw)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self)!r})"


def given_once(headers: Mapping[str, str], name: str) -> str | None:
    """``headers[name]`` as ``RequestHeaders.combined`` reads it (a header given several
    times with different values is their list); another mapping's own value."""
    if isinstance(headers, RequestHeaders):
        return headers.combined(name.encode("latin-1"))
    return headers.get(name)
