"""The core imports no adapter's framework; a missing extra is named, not a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

FRAMEWORKS = ("openai", "pydantic_ai", "mcp", "langgraph")


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)


def test_the_core_and_the_cli_import_no_framework() -> None:
    out = python("import sys, interlingua, interlingua.cli.main, interlingua.tools; "
                 f"print([m for m in {FRAMEWORKS!r} if m in sys.modules])")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("module", "framework", "extra"), [
    ("openai", "openai", "openai"),
    ("pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ("mcp", "mcp", "mcp"),
    ("langgraph", "langgraph", "langgraph"),
])
def test_a_missing_extra_is_named(module: str, framework: str, extra: str) -> None:
    out = python(f"import sys; sys.modules[{framework!r}] = None\n"
                 "try:\n"
                 f"    import interlingua.adapters.{module}\n"
                 "except ImportError as exc:\n"
                 "    print(exc)\n")
    assert f"pip install 'interlingua[{extra}]'" in out.stdout, out.stderr


def test_serve_names_the_missing_extra() -> None:
    out = python("import sys; sys.modules['openai'] = None\n"
                 "from interlingua.cli.main import main\n"
                 "main(['serve', '--openai-model', 'm'])")
    assert out.returncode == 2
    assert "pip install 'interlingua[openai]'" in out.stderr
    assert "Traceback" not in out.stderr
