"""The committed ``docs/interop.md`` is current, as far as this run can tell.

A test run never rewrites it (``scripts/interop-matrix`` does). What a run can check:
the document is what ``render`` writes of its own cells today (rows, columns, the
rows' notes, the prose), and every cell the interop tests of this process filled
(they run before these tests) reads as committed, symbol and notes. A cell this run
did not fill (a ``-k`` selection, ``-m "not interop"``, another xdist worker's share,
a peer that could not be installed and skipped) is taken from the document unchecked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import matrix
from .matrix import Cell, Note

DOC = Path(__file__).resolve().parents[2] / "docs" / "interop.md"
HINT = "regenerate it with scripts/interop-matrix and review the diff"


def _committed() -> str:
    return DOC.read_text(encoding="utf-8")


def test_the_committed_matrix_is_what_render_writes_of_its_cells() -> None:
    problems = matrix.stale(_committed(), {}, matrix.versions())
    assert not problems, f"docs/interop.md is not current ({HINT}):\n" + "\n".join(problems)


def test_the_cells_this_run_filled_read_as_committed() -> None:
    ran = matrix.results()
    problems = matrix.stale(_committed(), ran, matrix.versions())
    assert not problems, (
        f"docs/interop.md is not current for the {len(ran)} cells this run filled "
        f"({HINT}):\n" + "\n".join(problems))


def test_the_committed_matrix_has_every_cell() -> None:
    _, cells = matrix.parse(_committed())
    missing = [(r.direction, r.id, op) for r in matrix.ROWS for op in matrix.OPS
               if (r.direction, r.id, op) not in cells]
    assert not missing, f"not run when docs/interop.md was written: {missing}"


def test_a_cell_that_did_not_run_is_not_compared() -> None:
    # a peer that could not be installed skips its cells: they say nothing of the document
    _, cells = matrix.parse(_committed())
    key = next(iter(cells))
    skipped = Cell("skipped", [Note("info", "not run: the npm registry could not be reached")])
    assert matrix.stale(_committed(), {key: skipped}, matrix.versions()) == []


@pytest.mark.parametrize("change", ["outcome", "note", "new note", "prose", "row"])
def test_a_difference_is_seen(change: str) -> None:
    # what the check catches, on a copy of the committed document
    text = _committed()
    _, cells = matrix.parse(text)
    key = next(k for k, c in cells.items() if c.outcome == "passed" and c.notes)
    cell = cells[key]
    ran: dict[tuple[str, str, str], Cell] = {}
    if change == "outcome":
        ran[key] = Cell("failed", cell.notes)
    elif change == "note":
        ran[key] = Cell("passed", [Note(n.kind, n.text + " (changed)") for n in cell.notes])
    elif change == "new note":
        ran[key] = Cell("passed", [*cell.notes, Note("peer-quirk", "something new")])
    elif change == "prose":
        text = text.replace("do not edit by hand", "edit at will")
    else:
        row = matrix.ROWS[0]
        text = text.replace(f"| {row.peer} | {row.binding} |", "| another SDK | JSONRPC |", 1)
    assert matrix.stale(text, ran, matrix.versions())
