"""A run's state is changed in ``server/run.py`` only.

``Run`` (a task's live state in this process) changes through its own methods
and those of its writer and its registry, all in ``server/run.py``; every other
module reads a run and calls those methods. So what a run's fields can hold,
and in which order they change, is read in one file.

Flagged, in ``src/interlingua`` outside ``server/run.py``: an assignment
(``=``, ``+=``, annotated, ``del``, also inside a tuple target) to an attribute
of a run, and ``setattr`` on one. A run is an expression whose last name is
``run`` or ends in ``_run`` (``run``, ``self._run``, ``new_run``), or a name
that, in the function (or module) it is used in, is annotated ``Run``, bound to
``Run(...)``, to a look-up in a registry of runs (``runs.get(...)``,
``runs.by_key.get(...)``, ``runs.by_message[...]``), or is the loop variable
over one (``for r in runs.all()``).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "interlingua"
OWNER = SRC / "server" / "run.py"

#: registries of runs: a look-up in one gives a run
REGISTRIES = frozenset({"runs", "by_key", "by_message", "_runs"})


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _names_a_run(annotation: ast.AST | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    return any(_last_name(n) == "Run" for n in ast.walk(annotation))


def _from_registry(node: ast.AST) -> bool:
    """``node`` looks a run up: ``runs.get(…)``, ``self.runs.by_key[…]``, ``runs.all()``…"""
    if isinstance(node, ast.Await):
        node = node.value
    if isinstance(node, ast.Call):
        if _last_name(node.func) == "Run":
            return True
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr in {"get", "all", "pop"} \
            and _last_name(func.value) in REGISTRIES
    if isinstance(node, ast.Subscript):
        return _last_name(node.value) in REGISTRIES
    return False


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        todo = list(node.targets)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        todo = [node.target]
    elif isinstance(node, ast.Delete):
        todo = list(node.targets)
    else:
        return []
    out: list[ast.AST] = []
    while todo:
        target = todo.pop()
        if isinstance(target, ast.Tuple | ast.List):
            todo.extend(target.elts)
        elif isinstance(target, ast.Starred):
            todo.append(target.value)
        else:
            out.append(target)
    return out


def _run_names(scope: ast.AST) -> set[str]:
    """Names that hold a run in ``scope`` (a function, or a module's top level)."""
    found: set[str] = set()
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        args = scope.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None and _names_a_run(arg.annotation):
                found.add(arg.arg)
    for node in ast.walk(scope):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and (_names_a_run(node.annotation)
                     or (node.value is not None and _from_registry(node.value))):
            found.add(node.target.id)
        elif isinstance(node, ast.Assign) and _from_registry(node.value):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.NamedExpr) and _from_registry(node.value):
            found.add(node.target.id)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) \
                and isinstance(node.target, ast.Name) and _from_registry(node.iter):
            found.add(node.target.id)
    return found


def _is_run(node: ast.AST, names: set[str]) -> bool:
    last = _last_name(node)
    if last is None:
        return False
    if last == "run" or last.endswith("_run"):
        return True
    return isinstance(node, ast.Name) and node.id in names


def changes(source: str) -> list[tuple[int, str]]:
    """(line, code) of every change to a run's attributes in ``source``."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    scopes: list[ast.AST] = [tree, *(n for n in ast.walk(tree) if isinstance(
        n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))]
    seen: set[tuple[int, str]] = set()
    for scope in scopes:
        names = _run_names(scope)
        for node in ast.walk(scope):
            for target in _targets(node):
                if isinstance(target, ast.Attribute) and _is_run(target.value, names):
                    seen.add((target.lineno, ast.unparse(target)))
            if isinstance(node, ast.Call) and _last_name(node.func) in {"setattr",
                                                                       "__setattr__"} \
                    and node.args and any(_is_run(a, names) for a in node.args[:2]):
                seen.add((node.lineno, ast.unparse(node)))
    found = sorted(seen)
    return found


def test_only_the_run_module_changes_a_run() -> None:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        if path == OWNER:
            continue
        rel = path.relative_to(SRC).as_posix()
        out += [f"{rel}:{line}: {code}" for line, code in changes(path.read_text())]
    assert out == []


def test_the_check_sees_each_kind_of_change() -> None:
    source = "\n".join([
        "def f(run, x):",
        "    run.task = x",                                   # 2
        "    run.pending, run.pending_state = [], x",         # 3
        "    self.run.version += 1",                          # 4
        "    setattr(run, 'lease', None)",                    # 5
        "def g(r: Run | None, other):",
        "    r.turn = None",                                  # 7
        "    other.turn = None",                              # not a run
        "    live = self.runs.by_message.get(key)",
        "    live.digest = b''",                              # 10
        "    for each in self.runs.all():",
        "        each.lease = None",                          # 12
        "    made = Run(writer, scope, task)",
        "    del made.inbox",                                 # 14
        "    self.version = 1",                               # not a run
        "def h(new_run: 'Run') -> None:",
        "    new_run.claims = False",                         # 17
        "    entry.version = 2",                              # not a run
    ])
    assert [line for line, _ in changes(source)] == [2, 3, 3, 4, 5, 7, 10, 12, 14, 17]
