"""How deep a JSON value nests, measured without recursion.

Every binding must carry every task, and gRPC's bounds the others: protobuf reads
a message no deeper than 100 levels, and each level of JSON inside a
``google.protobuf.Value`` takes two or three of them (the ``Value``, its ``Struct``
or ``ListValue``, and an object's map entry). Measured on both gRPC services: data
of nested objects is carried to 32 levels, of nested lists to 47. A value nested
deeper can be sent over JSON-RPC but not read back over gRPC; ``Limits.max_nesting``
(``CARRIED`` by default) refuses it where a message is admitted, on every binding,
and where an agent emits it (``core/output.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .model import DataPart, Message, Part, TextPart

__all__ = ["CARRIED", "ENCODED", "deeper_than", "message_too_deep"]

#: levels of nested objects every binding carries (gRPC's bound, see above)
CARRIED = 32
#: levels every store and every JSON encoder here takes (they recurse, within the
#: interpreter's recursion limit): an agent's output is held to it when
#: ``Limits.max_nesting`` is None
ENCODED = 512


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


def _parts_too_deep(parts: Sequence[Part], limit: int, where: str) -> str | None:
    for n, part in enumerate(parts):
        if part.metadata is None and type(part) is TextPart:
            continue  # nearly every part: no call
        if part.metadata is not None and deeper_than(part.metadata, limit):
            return f"{where}.parts[{n}].metadata"
        if type(part) is DataPart and deeper_than(part.data, limit):
            return f"{where}.parts[{n}].data"
    return None


def message_too_deep(message: Message, limit: int, where: str = "message") -> str | None:
    """What of ``message`` nests past ``limit`` (None: nothing), named from ``where``."""
    if message.metadata is not None and deeper_than(message.metadata, limit):
        return f"{where}.metadata"
    return _parts_too_deep(message.parts, limit, where)
