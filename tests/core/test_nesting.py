"""``deeper_than``: levels counted as JSON nests them, without recursion."""

from __future__ import annotations

from typing import Any

import pytest

from interlingua.core.nesting import deeper_than
from interlingua.server.auth.limits import Limits


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value] if levels % 2 else {"k": value}
    return value


@pytest.mark.parametrize(("value", "depth"), [
    (1, 0), ("text", 0), (None, 0), ({}, 1), ([], 1), ({"a": [1]}, 2),
    ([1, [2, [3]], {"b": {"c": None}}], 3), (nested(32), 32), (nested(33), 33),
])
def test_a_value_is_as_deep_as_its_deepest_member(value: Any, depth: int) -> None:
    assert not deeper_than(value, depth)
    assert deeper_than(value, depth - 1) == (depth > 0)


def test_a_value_deeper_than_the_interpreter_recurses_is_measured() -> None:
    assert deeper_than(nested(100_000), 32)
    assert not deeper_than([list(range(1000))] * 1000, 2)  # wide, not deep


def test_the_limit_is_checked_when_given() -> None:
    with pytest.raises(ValueError, match="max_nesting must be at least 1"):
        Limits(max_nesting=0)
    Limits(max_nesting=None)
