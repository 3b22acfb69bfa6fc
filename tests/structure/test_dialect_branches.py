"""No code outside ``core/dialects`` branches on a dialect's name.

What a dialect does differently is a trait its codec declares (``Codec`` in
``core/dialects/base.py``); code elsewhere asks the codec, so that a new dialect
is a codec and a registry entry, not a hunt for string checks. Flagged, in
``src/interlingua`` outside ``core/dialects``: a comparison or membership test
with a dialect's name (also inside a literal tuple, list or set, or a module-level
collection of names tested against), a dict key that is one, and a ``case`` on
one. A dialect's name is a name the codec registry knows, a ``str`` constant
of ``core/dialects`` that holds one, or the ``name``, ``dialect`` or ``family`` of
a codec held in a module-level constant (``MESH_CODEC.name``): a codec made once
for one dialect names that dialect as surely as its string does.
"""

from __future__ import annotations

import ast
from pathlib import Path

from interlingua.core import dialects

SRC = Path(__file__).resolve().parents[2] / "src" / "interlingua"
DIALECTS_DIR = SRC / "core" / "dialects"

# (path relative to src/interlingua, line text stripped) that may name dialects:
ALLOWED = {
    # The CLI's --dialect option lists the choices a user may type; the choice is
    # handed to the client as it is, so it is a list to show, not a branch.
    ("cli/main.py", 'type=click.Choice(["1.0", "0.3", "0.1"]),'),
}


def _names() -> set[str]:
    codecs = dialects.all_codecs()
    return set(codecs) | {codec.name for codec in codecs.values()}


def _constants(names: set[str]) -> set[str]:
    """Identifiers of ``core/dialects`` constants that hold a dialect's name."""
    found: set[str] = set()
    for path in DIALECTS_DIR.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and _is_name(node.value, names, set()):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


#: what a codec says of its dialect: each is one dialect's name
CODEC_NAMES = frozenset({"name", "dialect", "family"})


def _codec_constants() -> set[str]:
    """``CONSTANT.name`` (and ``.dialect``, ``.family``) of every module-level
    constant in ``src/interlingua`` bound to a codec made there (``MESH_CODEC =
    MeshCodec()``): classes deriving from ``Codec``, however many steps down, found
    by their names in the source."""
    trees = [ast.parse(path.read_text()) for path in SRC.rglob("*.py")]
    bases: dict[str, set[str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(
                    b.id if isinstance(b, ast.Name) else b.attr for b in node.bases
                    if isinstance(b, ast.Name | ast.Attribute))
    codecs = {"Codec"}
    while grown := {c for c, b in bases.items() if b & codecs} - codecs:
        codecs |= grown
    found: set[str] = set()
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and isinstance(node.value.func, ast.Name) and node.value.func.id in codecs:
                found.update(f"{t.id}.{attr}" for t in node.targets
                             if isinstance(t, ast.Name) for attr in CODEC_NAMES)
    return found


def _is_name(node: ast.AST | None, names: set[str], constants: set[str]) -> bool:
    """``constants``: identifiers, and ``CONSTANT.attribute`` for a codec's."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in names
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, ast.Attribute):
        return node.attr in constants or (
            isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in constants)
    return False


def _holds_name(node: ast.AST, names: set[str], constants: set[str]) -> bool:
    """``node`` is a dialect's name, or a literal collection holding one."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_name(e, names, constants) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in {"frozenset", "set", "tuple"} and node.args:
        return _holds_name(node.args[0], names, constants)
    if isinstance(node, ast.Dict):
        return any(k is not None and _is_name(k, names, constants) for k in node.keys)
    return _is_name(node, names, constants)


def _collections(tree: ast.Module, names: set[str], constants: set[str]) -> set[str]:
    """Module-level names bound to a literal collection of dialect names."""
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None \
                and not isinstance(node.value, ast.Constant) \
                and _holds_name(node.value, names, constants):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


def branches(source: str, names: set[str], constants: set[str]) -> list[tuple[int, str]]:
    """(line, what) of every branch on a dialect's name in ``source``."""
    tree = ast.parse(source)
    held = _collections(tree, names, constants)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_holds_name(o, names, constants) for o in operands):
                found.append((node.lineno, "comparison"))
            elif any(isinstance(op, ast.In | ast.NotIn) for op in node.ops) and any(
                    isinstance(o, ast.Name) and o.id in held for o in node.comparators):
                found.append((node.lineno, "membership test"))
        elif isinstance(node, ast.Dict):
            if any(k is not None and _is_name(k, names, constants) for k in node.keys):
                found.append((node.lineno, "dict key"))
        elif isinstance(node, ast.DictComp):
            if _is_name(node.key, names, constants):
                found.append((node.lineno, "dict key"))
        elif isinstance(node, ast.MatchValue):
            if _is_name(node.value, names, constants):
                found.append((node.lineno, "case"))
    return found


def _found_in_tree() -> list[str]:
    names = _names()
    constants = _constants(names) | _codec_constants()
    out: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(DIALECTS_DIR):
            continue
        rel = path.relative_to(SRC).as_posix()
        source = path.read_text()
        lines = source.splitlines()
        for line, what in branches(source, names, constants):
            if (rel, lines[line - 1].strip()) not in ALLOWED:
                out.append(f"{rel}:{line}: {what} on a dialect name: {lines[line - 1].strip()}")
    return out


def test_no_dialect_branch_outside_the_codecs() -> None:
    assert _found_in_tree() == []


def test_the_check_sees_each_kind_of_branch() -> None:
    names = {"1.0", "0.3", "sam"}
    constants = {"V1", "MESH.name"}
    source = '\n'.join([
        'KINDS = frozenset({"sam"})',
        'a = d == "1.0"',
        'b = d in ("0.3", "x")',
        'c = {"0.3": 1}',
        'e = d in KINDS',
        'f = d != V1',
        'g = {k: 1 for k in ()}',
        'match d:',
        '    case "sam":',
        '        pass',
        'h = get("1.0")',  # an argument is not a branch
        'i = d == "1.1"',
        'j = run.dialect != MESH.name',
        'k = run.name == other.name',  # not a codec constant's
    ])
    assert sorted(branches(source, names, constants)) == [
        (2, "comparison"), (3, "comparison"), (4, "dict key"), (5, "membership test"),
        (6, "comparison"), (9, "case"), (13, "comparison"),
    ]


def test_codec_constants_are_found() -> None:
    assert "MESH_CODEC.name" in _codec_constants()
