"""What another party wrote, read leniently where a standard allows and strictly where a
number is meant: one leading byte order mark, integers of ASCII digits."""

from __future__ import annotations

from interlingua.core.reading import BOM, ascii_int, past_bom, without_bom


def test_one_leading_byte_order_mark_is_read_past() -> None:
    assert without_bom(BOM + b"{}") == b"{}"
    assert without_bom(BOM) == b""
    assert without_bom(b"{}") is None
    assert without_bom(BOM * 2 + b"{}") is None  # a loop of them is not read past
    assert without_bom(b"{}" + BOM) is None


def test_an_integer_is_ascii_digits_or_a_non_negative_int() -> None:
    assert [ascii_int(v) for v in (7, 0, " 12 ", "0")] == [7, 0, 12, 0]
    assert [ascii_int(v) for v in (-1, True, "\u00b2", "\u0661\u0662", "-1", "1.5", "",
                                   None, 1.0)] == [None] * 9


def test_past_bom_gives_the_data_itself_when_no_mark_is_read_past() -> None:
    assert past_bom(BOM + b"{}") == b"{}"
    assert past_bom(b"{}") == b"{}"
    assert past_bom(BOM * 2 + b"{}") == BOM * 2 + b"{}"  # a loop of them is not read past
