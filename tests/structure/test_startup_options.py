"""No start-up function takes more than 12 options one by one: ``create_app``,
``serve`` and the CLI's serve command fill one settings object
(``ServiceSettings``) instead, taking the rest as one mapping (``**options``)
that becomes those settings. The CLI's option declarations stay as they are.

Read from the source (AST), so that a wrapper or decorator cannot hide a
parameter list."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "interlingua"
MOST = 12

#: (file, function) of every start-up function
STARTUP = [("host/app.py", "create_app"), ("host/app.py", "host_app"),
           ("cli/serve.py", "serve"), ("cli/main.py", "serve_command")]


def options(source: str, name: str) -> list[str]:
    """The parameters ``name`` takes one by one (``*args``/``**kwargs`` aside)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            a = node.args
            return [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
    raise LookupError(name)


@pytest.mark.parametrize(("path", "name"), STARTUP)
def test_a_startup_function_takes_few_options(path: str, name: str) -> None:
    taken = options((SRC / path).read_text(), name)
    assert len(taken) <= MOST, f"{path}: {name} takes {len(taken)} options: {taken}"


def test_the_count_sees_every_kind_of_parameter() -> None:
    source = "def f(a, /, b, *args, c, d=1, **kw): pass\n"
    assert options(source, "f") == ["a", "b", "c", "d"]
    many = "def g(" + ", ".join(f"p{i}" for i in range(MOST + 1)) + "): pass\n"
    assert len(options(many, "g")) > MOST


def test_create_apps_keywords_are_the_settings() -> None:
    """Every field of ``ServiceSettings`` is a keyword of ``create_app`` (typed by
    ``ServiceOptions``), and nothing else is."""
    import dataclasses

    from interlingua.server.settings import ServiceOptions, ServiceSettings

    assert set(ServiceOptions.__annotations__) == {
        f.name for f in dataclasses.fields(ServiceSettings)}
