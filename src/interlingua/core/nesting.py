"""How deep a JSON value nests, measured without recursion.

Every binding must carry every task, and gRPC's bounds the others: protobuf reads
a message no deeper than 100 levels, and each level of JSON inside a
``google.protobuf.Value`` takes two of them (the ``Value`` and its ``Struct`` or
``ListValue``). A value nested past about 45 levels can be sent over JSON-RPC but
not read back over gRPC; ``Limits.max_nesting`` refuses it where a message is
admitted, on every binding.
"""

from __future__ import annotations

from typing import Any

__all__ = ["deeper_than"]


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` (dicts, lists and scalars) nests more than ``limit`` levels:
    a scalar is 0 levels deep, ``{}`` and ``[]`` 1, ``{"a": [1]}`` 2.

    A loop, not recursion: a value nested deeper than the interpreter recurses is
    measured too, and a wide one costs no frame per member.
    """
    if not isinstance(value, dict | list):
        return False
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        found, depth = pending.pop()
        if depth > limit:
            return True
        members = found.values() if isinstance(found, dict) else found
        for member in members:
            if isinstance(member, dict | list):
                pending.append((member, depth + 1))
    return False
