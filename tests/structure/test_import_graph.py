"""The package's import graph has no circles, type-only imports included, and
the client stands apart from the server.

A circle means two modules each need the other: neither can be understood,
tested or replaced alone. Every ``import`` and ``from … import`` in ``src/`` is
an edge (also under ``if TYPE_CHECKING:`` and inside functions); ``from pkg
import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.

The same holds between packages: no two siblings (``server`` and ``bindings``,
``server.push`` and ``server.auth``, a package and a module beside it such as
``server.auth`` and ``server.turns``) import each other, so each one sits below
or above the other. And the client (``interlingua.client``)
reaches nothing of the server's: neither ``server/`` nor ``bindings/`` (the
transports in front of the server), counting the packages an import runs
(``a.b.c`` runs ``a.b``); what both sides need lives in ``core`` or
``grpc_wire``.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target not in modules:
                continue
            submodules = {f"{target}.{a.name}" for a in node.names} & modules.keys()
            out.update(submodules)
            if len(submodules) < len(node.names):
                out.add(target)
    out.discard(name)
    return out


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _graph() -> tuple[dict[str, Path], dict[str, set[str]]]:
    modules = _modules()
    return modules, {name: _edges(name, path, modules) for name, path in modules.items()}


def _package_circles(graph: dict[str, set[str]], packages: set[str]) -> list[list[str]]:
    """Circles between siblings: for each package, its subpackages and its own
    modules (``server.auth`` beside ``server.turns``; ``tools`` at the top) are the
    nodes, and a module anywhere inside one importing a module inside another is
    an edge."""
    found: list[list[str]] = []
    for parent in sorted(packages):
        children = {p for p in packages if p.rpartition(".")[0] == parent}
        children |= {m for m in graph if m.rpartition(".")[0] == parent and m not in packages}

        def child_of(module: str, kids: set[str] = children) -> str | None:
            for kid in kids:
                if module == kid or module.startswith(kid + "."):
                    return kid
            return None

        folded: dict[str, set[str]] = {kid: set() for kid in children}
        for source, targets in graph.items():
            a = child_of(source)
            if a is None:
                continue
            for target in targets:
                b = child_of(target)
                if b is not None and b != a:
                    folded[a].add(b)
        found += _circles(folded)
    return found


def _reachable(graph: dict[str, set[str]], start: set[str]) -> dict[str, str]:
    """Every module importing ``start`` runs, each with the module that imports
    it: its imports, and the packages above each imported module but the root
    (``interlingua/__init__`` is the public front of both sides)."""
    seen = {name: "" for name in start}
    todo = sorted(start)
    while todo:
        here = todo.pop()
        parts = here.split(".")
        above = {".".join(parts[:i]) for i in range(2, len(parts))} & graph.keys()
        for nxt in sorted(graph[here] | above):
            if nxt not in seen:
                seen[nxt] = here
                todo.append(nxt)
    return seen


def _path(seen: dict[str, str], name: str) -> str:
    chain = [name]
    while seen[chain[-1]]:
        chain.append(seen[chain[-1]])
    return " <- ".join(chain)


ROOT = "interlingua"
#: the server's side: what the client must not import, even for types
SERVER_SIDE = ("interlingua.server", "interlingua.bindings")


def test_no_module_imports_itself_through_others() -> None:
    _, graph = _graph()
    assert _circles(graph) == []


def test_no_two_packages_import_each_other() -> None:
    modules, graph = _graph()
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    assert _package_circles(graph, packages) == []


def test_the_client_reaches_nothing_of_the_server() -> None:
    _, graph = _graph()
    client = {m for m in graph if m == "interlingua.client" or m.startswith("interlingua.client.")}
    seen = _reachable(graph, client)
    reached = [_path(seen, m) for m in sorted(seen)
               if any(m == s or m.startswith(s + ".") for s in SERVER_SIDE)]
    assert reached == []


def test_the_walker_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_walkers_fold_packages_and_follow_parents() -> None:
    graph = {"interlingua.p.x": {"interlingua.q.y"}, "interlingua.q.y": set(),
             "interlingua.q.z": {"interlingua.p"}, "interlingua.p": set(), "interlingua.q": set(),
             "interlingua.tools": {"interlingua.p.x"}}
    packages = {"interlingua", "interlingua.p", "interlingua.q"}
    assert _package_circles(graph, packages) == [["interlingua.p", "interlingua.q"]]
    del graph["interlingua.q.z"]
    assert _package_circles(graph, packages) == []
    # a package and a module beside it, in a package below the top
    graph.update({"interlingua.p.w": {"interlingua.p.s.v"}, "interlingua.p.s": set(),
                  "interlingua.p.s.v": {"interlingua.p.w"}})
    assert _package_circles(graph, packages | {"interlingua.p.s"}) == [
        ["interlingua.p.s", "interlingua.p.w"]]
    del graph["interlingua.p.w"], graph["interlingua.p.s"], graph["interlingua.p.s.v"]
    # importing q.y runs the package q too, and what q imports; never the root
    graph["interlingua.q"] = {"interlingua.tools"}
    graph["interlingua"] = {"interlingua.r"}
    assert set(_reachable(graph, {"interlingua.p.x"})) == {
        "interlingua.p.x", "interlingua.p", "interlingua.q.y", "interlingua.q", "interlingua.tools"}
