"""The examples the golden tests take from the published texts, kept as data under
``extracted/``.

Each fixture is what one reader below finds in one text of the shared folder: the
tests read the fixture, so they run in a clone anywhere; where the shared folder is
present, ``tests/reference/test_extracted.py`` checks each fixture is still exactly
what its reader finds in the text. After a change to a reader (or to the texts),
rewrite the fixtures with

    python -m tests.reference.extract

(``INTERLINGUA_SHARED`` names the shared folder when it is not beside the repository).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.reference import REFERENCE, shared, shared_dir

EXTRACTED = REFERENCE / "extracted"


def _seed(number: str) -> str:
    (path,) = sorted(shared("seeds").glob(f"{number}_*.txt"))
    return path.read_text()


# ------------------------------------------------------ comments in JSON examples


def strip_comments(text: str) -> str:
    """Remove ``// …`` and ``/* … */`` outside JSON strings."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\":
                out.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


# ----------------------------------------- seed 000: the v0.2/v0.3 data objects

_HEADING = re.compile(r"^[A-Za-z ]+(Object|Enum|Part)$")
_FIELD = re.compile(r"^(\w+)(\?)?:\s*(.*?);?$")
_ENUM = re.compile(r'^(\w+)\s*=\s*"([^"]+)",?$')


def seed_000_blocks(text: str) -> dict[str, list[list[Any]]]:
    """Heading -> [[field, optional, type text]] for every ``{ … }`` block of seed 000
    (its examples are TypeScript-style object literals, not JSON)."""
    lines = [line.strip() for line in text.splitlines()]
    blocks: dict[str, list[list[Any]]] = {}
    i = 0
    while i < len(lines):
        if lines[i] != "{":
            i += 1
            continue
        heading = next(lines[j] for j in range(i - 1, -1, -1) if _HEADING.match(lines[j]))
        fields: list[list[Any]] = []
        depth, k = 1, i + 1
        while depth:
            line = lines[k]
            if depth == 1:
                if m := _FIELD.match(line):
                    fields.append([m.group(1), m.group(2) == "?", m.group(3)])
                elif m := _ENUM.match(line):
                    fields.append([m.group(1), False, f'"{m.group(2)}"'])
            depth += line.count("{") - line.count("}")
            k += 1
        blocks[heading] = fields
        i = k
    return blocks


# ------------------------- seeds 002 and 003: Solace Agent Mesh's and a tutorial's


def _strip_line_comments(text: str) -> str:
    """Remove ``// …`` to the end of the line, outside JSON strings (these seeds have
    no ``/* */``)."""
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _depth_change(line: str) -> int:
    depth = 0
    in_string = escaped = False
    for ch in line:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return depth


def json_blocks(text: str) -> list[str]:
    """The text of every top-level ``{ … }`` block that starts on a line of its own."""
    lines = text.splitlines()
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "{":
            i += 1
            continue
        depth, k = 0, i
        while True:
            depth += _depth_change(_strip_line_comments(lines[k]))
            k += 1
            if depth == 0:
                break
        blocks.append("\n".join(lines[i:k]))
        i = k
    return blocks


def json_examples(text: str) -> list[Any]:
    """Every block of ``json_blocks``, parsed once its ``//`` comments are removed (a
    member whose value was only a comment is left as ``{}``)."""
    return [json.loads(_strip_line_comments(b)) for b in json_blocks(text)]


# ---------------------------------------------- seed 004: the v0.1.0 specification


def _block_end(text: str) -> int:
    """The index just past the ``}`` matching the ``{`` text starts with.

    Braces inside strings and comments do not count.
    """
    depth = 0
    i, n = 0, len(text)
    in_string = False
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif text.startswith("//", i):
            i = text.index("\n", i)
            continue
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise AssertionError("unbalanced block")


def seed_004_examples(text: str) -> dict[str, list[dict[str, Any]]]:
    """The blocks that start on a line holding only ``{`` (comments kept, as the seed
    writes them) and the ``data:`` lines of its SSE stream, each with its line number."""
    lines = text.splitlines(keepends=True)
    blocks: list[dict[str, Any]] = []
    data_lines: list[dict[str, Any]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("data: "):
            data_lines.append({"line": i + 1, "raw": line[len("data: ") :].strip()})
        if line.rstrip() == "{":
            rest = "".join(lines[i:])
            raw = rest[: _block_end(rest)]
            blocks.append({"line": i + 1, "raw": raw})
            i += raw.count("\n") + 1
            continue
        i += 1
    return {"blocks": blocks, "data_lines": data_lines}


def seed_004_error_codes(text: str) -> dict[str, int]:
    """Error name -> code, from the tables of seed 004 §8."""
    section = text[text.index("8. Error Handling") : text.index("9. Common Workflows")]
    codes: dict[str, int] = {}
    for line in section.splitlines():
        if m := re.match(r"^(-320\d\d) (\w+Error) ", line):
            codes[m.group(2)] = int(m.group(1))
        elif m := re.match(
            r"^(-32[67]\d\d) (Parse error|Invalid Request|Method not found|Invalid params|Internal error) ",
            line,
        ):
            codes[m.group(2)] = int(m.group(1))
    return codes


# ------------------------------------------------------------------------ v1.0


def code_blocks(text: str) -> list[dict[str, Any]]:
    """Every fenced code block of a Markdown text: its line, language and text."""
    return [
        {"line": text[: mt.start()].count("\n") + 1, "lang": mt.group(1), "text": mt.group(2)}
        for mt in re.finditer(r"```(\w*)\n(.*?)```", text, re.S)
    ]


def _json_name(name: str) -> str:
    # protoc's rule: drop each underscore and upper-case the letter after it
    return re.sub(r"_([a-z0-9])", lambda mt: mt.group(1).upper(), name)


def _proto_blocks(text: str, keyword: str) -> list[tuple[str, str]]:
    out = []
    for mt in re.finditer(rf"\b{keyword}\s+(\w+)\s*\{{", text):
        depth, i = 1, mt.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append((mt.group(1), text[mt.end() : i - 1]))
    return out


_PROTO_FIELD = re.compile(
    r"(?:(repeated|optional)\s+)?(map<\s*\w+\s*,\s*([\w.]+)\s*>|[\w.]+)\s+(\w+)\s*=\s*\d+\s*(\[[^\]]*\])?\s*;"
)


def parse_proto(text: str) -> dict[str, Any]:
    """The messages (their fields by JSON name) and enums of a proto file, read here
    independently of the codec."""
    text = re.sub(r"//[^\n]*", "", text)
    messages: dict[str, dict[str, dict[str, Any]]] = {}
    for name, body in _proto_blocks(text, "message"):
        fields: dict[str, dict[str, Any]] = {}
        oneofs = {
            mt.start(): (mt.group(1), mt.end() + body[mt.end() :].index("}"))
            for mt in re.finditer(r"\boneof\s+(\w+)\s*\{", body)
        }
        for fm in _PROTO_FIELD.finditer(body):
            label, ftype, map_value, fname, options = fm.groups()
            group = next(
                (g for start, (g, end) in oneofs.items() if start < fm.start() < end), None
            )
            fields[_json_name(fname)] = {
                "name": fname,
                "json_name": _json_name(fname),
                "type": map_value or ftype,
                "repeated": label == "repeated",
                "map_value": map_value,
                "required": "REQUIRED" in (options or ""),
                "oneof": group,
            }
        messages[name] = fields
    enums = {
        name: {k: int(v) for k, v in re.findall(r"(\w+)\s*=\s*(\d+)\s*;", body)}
        for name, body in _proto_blocks(text, "enum")
    }
    return {"messages": messages, "enums": enums}


# ------------------------------------------------------------- the fixtures

#: fixture file -> (the text it is read from, in the shared folder; how it is read)
FIXTURES: dict[str, tuple[str, Callable[[], Any]]] = {
    "seed-000-blocks.json": ("seeds/000_*.txt", lambda: seed_000_blocks(_seed("000"))),
    "seed-002-examples.json": ("seeds/002_*.txt", lambda: json_examples(_seed("002"))),
    "seed-003-examples.json": ("seeds/003_*.txt", lambda: json_examples(_seed("003"))),
    "seed-004-examples.json": ("seeds/004_*.txt", lambda: seed_004_examples(_seed("004"))),
    "seed-004-error-codes.json": ("seeds/004_*.txt", lambda: seed_004_error_codes(_seed("004"))),
    "v1.0-specification-blocks.json": (
        "spec/v1.0/specification.md",
        lambda: code_blocks(shared("spec", "v1.0", "specification.md").read_text()),
    ),
    "v1.0-proto.json": (
        "spec/v1.0/a2a.proto",
        lambda: parse_proto(shared("spec", "v1.0", "a2a.proto").read_text()),
    ),
}


def load(name: str) -> Any:
    """The fixture ``name`` (a file of ``extracted/``), decoded."""
    return json.loads((EXTRACTED / name).read_text(encoding="utf-8"))


def render(data: Any) -> str:
    """A fixture's file text: stable, readable, diffable."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    if not shared_dir().is_dir():
        print(f"extract: {shared_dir()} is missing (set INTERLINGUA_SHARED)", file=sys.stderr)
        return 2
    EXTRACTED.mkdir(exist_ok=True)
    for name, (_, read) in FIXTURES.items():
        (EXTRACTED / name).write_text(render(read()), encoding="utf-8")
        print(f"extract: wrote {Path('tests/reference/extracted') / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
