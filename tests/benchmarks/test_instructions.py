"""instructions.py's break-down by shared object, from callgrind_annotate's text."""

from __future__ import annotations

import collections

import instructions

ANNOTATED = """\
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
2,916,078,381 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                      file:function
--------------------------------------------------------------------------------
1,150,044 ( 0.04%)  ???:sqlite3Parser [/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6]
  900,000 ( 0.03%)  ???:sqlite3VdbeExec [/usr/lib/x86_64-linux-gnu/libsqlite3.so.0.8.6]
2,000,000 ( 0.07%)  /build/Python/ceval.c:_PyEval_EvalFrameDefault'2 [/opt/py/lib/libpython3.11.so.1.0]
    4,505 ( 0.00%)  /build/Include/object.h:_PyFrame_Clear
"""


def test_instructions_are_summed_by_the_file_name_of_their_object() -> None:
    found = instructions.objects_in(ANNOTATED)
    assert found == {"libsqlite3.so.0.8.6": 2_050_044, "libpython3.11.so.1.0": 2_000_000}


def test_the_table_is_per_unit_largest_first_with_small_objects_in_the_rest() -> None:
    one = collections.Counter({"libpython": 1_000, "libsqlite3": 500, "libc": 10})
    two = collections.Counter({"libpython": 4_000, "libsqlite3": 2_500, "libc": 12,
                               "_core.so": 600})
    table = instructions.per_object_table("unary", one, two, total=3_000, units=2)
    assert table.splitlines() == [
        "| unary: shared object | instructions | share |",
        "| --- | ---: | ---: |",
        "| libpython | 1,500 | 50% |",
        "| libsqlite3 | 1,000 | 33% |",
        "| _core.so | 300 | 10% |",
        "| the rest (and what callgrind names no object for) | 200 | 7% |",
    ]
