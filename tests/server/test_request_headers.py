"""Request headers read straight from the ASGI scope's list."""

from __future__ import annotations

import pytest

from interlingua.bindings.http.request_headers import RequestHeaders

RAW = [
    (b"host", b"example.test"),
    (b"a2a-version", b"1.0"),
    (b"x-tag", b"first"),
    (b"x-tag", b"second"),
    (b"x-name", "caf\u00e9".encode("latin-1")),
]


def test_lookups_ignore_case_and_a_repeated_name_gives_its_last_value() -> None:
    h = RequestHeaders(RAW)
    assert h["A2A-Version"] == "1.0"
    assert h.get("a2a-version") == "1.0"
    assert h["x-tag"] == "second"
    assert h["x-name"] == "caf\u00e9"  # values are latin-1, as on the wire
    assert "HOST" in h and "cookie" not in h and 3 not in h


def test_a_missing_header() -> None:
    h = RequestHeaders(RAW)
    assert h.get("authorization") is None
    assert h.get("authorization", "none") == "none"
    assert h.get("caf\u00e9-\u20ac") is None  # not even encodable as a header name
    with pytest.raises(KeyError):
        h["authorization"]


def test_it_is_a_mapping_of_distinct_names() -> None:
    h = RequestHeaders(RAW)
    assert list(h) == ["host", "a2a-version", "x-tag", "x-name"]
    assert len(h) == 4
    assert dict(h)["x-tag"] == "second"
    assert RequestHeaders(iter(RAW))["host"] == "example.test"
    assert len(RequestHeaders()) == 0


def test_truth_is_whether_there_are_headers_without_counting_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_counting(self: RequestHeaders) -> int:
        raise AssertionError("truth counted the distinct names")

    monkeypatch.setattr(RequestHeaders, "__len__", no_counting)
    assert RequestHeaders(RAW)
    assert not RequestHeaders()
