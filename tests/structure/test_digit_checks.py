"""Every ``str.isdigit()`` in ``src/interlingua`` is paired with ``isascii()`` on the
same text, in one ``and``.

``"²".isdigit()`` is true and ``int("²")`` raises ``ValueError``; ``"١٢".isdigit()``
is true and ``int("١٢")`` is 12, which no protocol field means. A check of digits
guards an ``int()`` of text another party wrote (a header, a card, a URL, an event
id): alone, it let such text through to a traceback.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "interlingua"


def _method_of(node: ast.AST, name: str) -> str | None:
    """The receiver of ``<receiver>.name()``, dumped, if ``node`` is that call."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == name and not node.args):
        return ast.dump(node.func.value)
    return None


def unpaired(source: str) -> list[int]:
    """Lines of ``x.isdigit()`` calls with no ``x.isascii()`` in an ``and`` around them."""
    tree = ast.parse(source)
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    lines = []
    for node in ast.walk(tree):
        receiver = _method_of(node, "isdigit")
        if receiver is None:
            continue
        up: ast.AST | None = parents.get(node)
        paired = False
        while up is not None and not paired:
            if isinstance(up, ast.BoolOp) and isinstance(up.op, ast.And):
                paired = any(_method_of(v, "isascii") == receiver for v in up.values)
            up = parents.get(up)
        if not paired:
            lines.append(node.lineno)
    return lines


def test_every_isdigit_is_paired_with_isascii() -> None:
    found = {str(path.relative_to(SRC)): lines for path in sorted(SRC.rglob("*.py"))
             if (lines := unpaired(path.read_text()))}
    assert found == {}, f"isdigit() without isascii() on the same text: {found}"


def test_the_check_finds_a_lone_isdigit() -> None:
    assert unpaired("ok = v.isdigit()\n") == [1]
    assert unpaired("ok = w.isascii() and v.isdigit()\n") == [1]  # another text
    assert unpaired("ok = v.isascii() and v.isdigit() and int(v) < 9\n") == []
    assert unpaired("ok = not (v.strip().isascii() and v.strip().isdigit())\n") == []
