"""What the README says is backed by the repository: the files it cites are in git, the
extras it lists are the ones declared and used, its CLI table is the CLI's ``--help``."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from interlingua.cli.main import main
from tests.ci import unavailable

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DOCS = {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}

#: what a repository path looks like when a document names one in backticks
_PATH = re.compile(r"`((?:src|docs|examples|benchmarks|scripts|tests)/[A-Za-z0-9_./-]+)`")
_LINK = re.compile(r"\]\(((?!https?:|#|mailto:)[^)#\s]+)")


#: distributions whose module is named otherwise
IMPORT_NAMES = {"pydantic-ai-slim": "pydantic_ai", "grpcio": "grpc", "protobuf": "google.protobuf",
                "grpcio-health-checking": "grpc_health", "grpcio-reflection": "grpc_reflection",
                "opentelemetry-api": "opentelemetry", "opentelemetry-sdk": "opentelemetry.sdk",
                "opentelemetry-exporter-otlp-proto-http": "opentelemetry.exporter.otlp.proto.http"}

def _tracked() -> set[str]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        unavailable("not a git checkout (git ls-files lists the tracked files)")
    files = set(out.splitlines())
    return files | {str(Path(f).parent.as_posix()) for f in files} | {
        p.as_posix() for f in files for p in Path(f).parents}


def cited_paths(text: str, source: str) -> set[str]:
    """Repository paths a document names: its relative links and backticked paths."""
    base = Path(source).parent
    found = {m.rstrip("/.") for m in _PATH.findall(text)}
    for link in _LINK.findall(text):
        found.add((base / link).as_posix() if base.as_posix() != "." else link.rstrip("/"))
    return {Path(p).as_posix() for p in found}


@pytest.mark.parametrize("source", ["README.md", *DOCS])
def test_every_cited_file_is_tracked(source: str) -> None:
    text = README if source == "README.md" else DOCS[source]
    tracked = _tracked()
    missing = sorted(p for p in cited_paths(text, source)
                     if p not in tracked and _normal(p) not in tracked)
    assert not missing, f"{source} cites files that are not in git: {missing}"


def _normal(path: str) -> str:
    parts: list[str] = []
    for piece in path.split("/"):
        if piece == "..":
            if parts:
                parts.pop()
        elif piece not in ("", "."):
            parts.append(piece)
    return "/".join(parts)


def test_the_check_catches_an_untracked_file() -> None:
    cited = cited_paths("Every table is in `benchmarks/results/nowhere.md`.", "README.md")
    assert cited == {"benchmarks/results/nowhere.md"}
    assert "benchmarks/results/nowhere.md" not in _tracked()


def _extras() -> dict[str, list[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {k: v for k, v in project.get("optional-dependencies", {}).items() if k != "dev"}


def test_declared_extras_are_used_by_the_code() -> None:
    source = "\n".join(p.read_text() for p in (ROOT / "src").rglob("*.py"))
    for extra, requirements in _extras().items():
        for requirement in requirements:
            distribution = re.split(r"[<>=\[; ]", requirement, maxsplit=1)[0]
            module = IMPORT_NAMES.get(distribution, distribution.replace("-", "_"))
            assert re.search(rf"^\s*(?:import|from) {module}\b", source, re.M), (
                f"extra {extra!r} installs {requirement}, which no code imports")


def test_readme_lists_the_declared_extras() -> None:
    section = README[README.index("## Dependencies"):]
    section = section[: section.index("\n## ", 4)]
    extras = section[section.index("Extras:"):] if "Extras:" in section else ""
    named = set(re.findall(r"`([\w-]+)`", extras)) - {"dev"}
    assert named == set(_extras()), section


# ------------------------------------------------------------------ the CLI table


def _cli_table() -> dict[str, str]:
    section = README[README.index("## The CLI"):]
    section = section[: section.index("\n## ", 4)]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        if line.startswith("| `interlingua"):
            # a subcommand is a word; "--…" after the command is one of its options
            for command in re.findall(r"`interlingua ([a-z][a-z-]*(?: [a-z][a-z-]*)?)",
                                      line.split("|")[1]):
                rows[command] = line
    return rows


def _commands() -> dict[str, str]:
    """Every command and subcommand, with its --help text."""
    runner = CliRunner()
    out: dict[str, str] = {}
    for name, command in main.commands.items():  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for sub in subcommands:
                out[f"{name} {sub}"] = runner.invoke(main, [name, sub, "--help"]).output
        else:
            out[name] = runner.invoke(main, [name, "--help"]).output
    return out


def test_readme_cli_table_has_every_command() -> None:
    listed = _cli_table()
    missing = [c for c in _commands() if c not in listed and c.split()[0] not in listed]
    assert not missing, f"the README's CLI table leaves out: {missing}"


def test_readme_cli_table_options_exist() -> None:
    commands = _commands()
    rows: dict[str, list[str]] = {}
    for command, row in _cli_table().items():
        rows.setdefault(row, []).append(command)
    for row, named in rows.items():
        helps = [h for c, h in commands.items()
                 if any(c == n or c.startswith(n + " ") for n in named)]
        assert len(helps) >= len(named), f"the README lists commands that do not exist: {named}"
        for option in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", row.split("|")[1]):
            assert any(re.search(rf"(?<![\w-]){re.escape(option)}\b", h) for h in helps), (
                f"the README gives {named} the option {option}, which --help does not list")


def test_readme_figures_come_from_the_committed_results() -> None:
    """The README's benchmark block is what benchmarks/readme_figures.py makes of
    benchmarks/results/latest.json: the two cannot drift apart."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "readme_figures.py"),
                           "--check"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
