"""A refused member named as its caller sent it, not by its path in JSON-RPC params.

The codecs name a refused member by its path in JSON-RPC ``params``: in their own
words (``params.message.messageId is required``) and in msgspec's (``Expected `int`
>= 0 - at `params.historyLength` ``). A caller of another binding sent other names:
an HTTP+JSON body's members (in either spelling ProtoJSON reads), a query parameter,
a gRPC request's proto fields, a v0.3 ProtoJSON message's ``content``. Its binding
rewrites the paths of a refusal with a renaming of its own (``renamed``), once the
request is refused: nothing is done on the usual path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import InvalidParams

__all__ = ["Path", "as_spelt", "joined", "renamed"]

#: a member's path from the params: names and ``[n]`` indexes (``["parts", "[0]", "text"]``)
Path = list[str]

_SEGMENTS = r"(?:\.[A-Za-z_]\w*|\[\d+\])"
# msgspec's words for a member left out, said as the codecs say it
_MISSING = re.compile(rf"Object missing required field `(\w+)` - at `params({_SEGMENTS}*)`")
# a path in msgspec's backquotes, or bare (``params.id``; not "Invalid params for")
_MEMBER = re.compile(rf"`params({_SEGMENTS}*)`|(?<![\w.`])params({_SEGMENTS}+)")
_SEGMENT = re.compile(r"\.([A-Za-z_]\w*)|(\[\d+\])")


def _split(text: str) -> Path:
    return [m.group(1) or m.group(2) for m in _SEGMENT.finditer(text)]


def joined(path: Path) -> str:
    """``["message", "parts", "[0]"]`` -> ``message.parts[0]``."""
    out = ""
    for seg in path:
        out += seg if seg.startswith("[") or not out else "." + seg
    return out


def renamed(exc: InvalidParams, rename: Callable[[Path], Path], *, root: str = "",
            whole: str = "params") -> InvalidParams:
    """``exc`` with each params path in its message ``rename``d: written under ``root``
    (``params`` keeps the JSON-RPC form), the params themselves as ``whole``. A member
    msgspec says is missing is said to be required, as the codecs say it."""
    message = _MISSING.sub(lambda m: f"params{m.group(2)}.{m.group(1)} is required",
                           exc.message)

    def sub(match: re.Match[str]) -> str:
        ticked = match.group(1) is not None
        path = rename(_split(match.group(1) if ticked else match.group(2)))
        text = joined([root, *path] if root else path) or whole
        return f"`{text}`" if ticked else text

    message = _MEMBER.sub(sub, message)
    if message == exc.message:
        return exc
    return type(exc)(message, data=exc.data)


def as_spelt(doc: Any, path: Path) -> Path:
    """``path`` (ProtoJSON's lowerCamelCase names) spelt as ``doc``, the document the
    caller sent, spells each member: ``if_generation_match`` where it sent that, the
    proto's name, which ProtoJSON readers take too."""
    out: Path = []
    node = doc
    for seg in path:
        if seg.startswith("["):
            index = int(seg[1:-1])
            node = node[index] if isinstance(node, list) and index < len(node) else None
        elif isinstance(node, dict):
            if seg not in node:
                snake = _snake(seg)
                if snake in node:
                    seg = snake
            node = node.get(seg)
        else:
            node = None
        out.append(seg)
    return out


_UPPER = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _snake(name: str) -> str:
    return _UPPER.sub(r"_\1", name).lower()
