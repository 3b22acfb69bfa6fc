"""Parts are joined by what they offer, not by replacing each other's insides.

- Nothing in ``src/interlingua`` assigns an app's ``lifespan_context``: what
  starts and stops with an app (gRPC, the mesh) is a binding of its service.
- Nothing in ``observability/`` patches an object at run time: no ``setattr``,
  and no assignment to an attribute of anything but ``self`` (a module, a
  class, an object it was handed; logging's documented ``propagate`` aside).
  It registers on the hook points instead.

Both are AST checks; each is also run on a planted snippet, so that a check
that could never fail would show.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "interlingua"


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def _flat(targets: list[ast.expr]) -> Iterator[ast.expr]:
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List):
            yield from _flat(list(target.elts))
        elif isinstance(target, ast.Starred):
            yield from _flat([target.value])
        else:
            yield target


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def _setattr_calls(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("setattr", "delattr"):
            yield node


def lifespan_assignments(source: str) -> list[int]:
    """Lines that assign (or ``setattr``) a ``lifespan_context``."""
    tree = ast.parse(source)
    found = [node.lineno for node in ast.walk(tree) for target in _flat(_targets(node))
             if isinstance(target, ast.Attribute) and target.attr == "lifespan_context"]
    found += [call.lineno for call in _setattr_calls(tree)
              if len(call.args) > 1 and isinstance(call.args[1], ast.Constant)
              and call.args[1].value == "lifespan_context"]
    return sorted(found)


#: attributes that are another library's documented way to configure it
#: (``logging.Logger.propagate`` has no setter method)
_DOCUMENTED = {"propagate"}


def patches(source: str) -> list[int]:
    """Lines that set an attribute of anything but ``self``, or call ``setattr``."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        for target in _flat(_targets(node)):
            if isinstance(target, ast.Attribute) and target.attr not in _DOCUMENTED:
                root = _root(target)
                if not (isinstance(root, ast.Name) and root.id == "self"):
                    found.append(node.lineno)
    found += [call.lineno for call in _setattr_calls(tree)]
    return sorted(found)


def _files(under: Path) -> list[Path]:
    return sorted(under.rglob("*.py"))


def test_the_checks_find_what_is_planted() -> None:
    assert lifespan_assignments("app.router.lifespan_context = wrapped\n") == [1]
    assert lifespan_assignments("setattr(app.router, 'lifespan_context', wrapped)\n") == [1]
    assert lifespan_assignments("async with app.router.lifespan_context(app):\n    pass\n") \
        == []
    planted = ("door.call = observed\n"
               "engine.writer._write = observed\n"
               "x, Metrics.count = 1, 2\n"
               "setattr(door, 'call', observed)\n"
               "self.calls = 0\n"
               "self.seen[key] = 1\n")
    assert patches(planted) == [1, 2, 3, 4]


def test_no_lifespan_context_is_assigned() -> None:
    found = {str(path.relative_to(PACKAGE)): lines for path in _files(PACKAGE)
             if (lines := lifespan_assignments(path.read_text()))}
    assert found == {}, "an app's lifespan is not replaced: register a Binding " \
                        "on its service (service.add_binding, server/service.py)"


def test_observability_patches_nothing() -> None:
    found = {str(path.relative_to(PACKAGE)): lines
             for path in _files(PACKAGE / "observability")
             if (lines := patches(path.read_text()))}
    assert found == {}, "observability registers on the hook points (interlingua/hooks.py)" \
                        " instead of setting attributes of other objects"
