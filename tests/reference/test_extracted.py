"""Each fixture of ``extracted/`` is exactly what its reader finds in its published text
today: the golden tests that read the fixtures check the texts themselves.

These read the shared folder: marked ``needs_shared``, they run where it exists
(and under CI, where its absence fails them).
"""

from __future__ import annotations

import pytest

from tests.reference import extract


@pytest.mark.needs_shared
@pytest.mark.parametrize("name", list(extract.FIXTURES))
def test_the_fixture_is_what_its_text_says(name: str) -> None:
    source, read = extract.FIXTURES[name]
    assert extract.load(name) == read(), (
        f"tests/reference/extracted/{name} differs from what is read from {source}: "
        "rewrite it with `python -m tests.reference.extract` and review the diff"
    )


def test_every_fixture_file_has_its_reader() -> None:
    files = {p.name for p in extract.EXTRACTED.glob("*.json")}
    assert files == set(extract.FIXTURES)


def test_fixture_files_are_as_the_extractor_writes_them() -> None:
    # the files are data the script writes; one edited by hand would show here
    for name in extract.FIXTURES:
        text = (extract.EXTRACTED / name).read_text(encoding="utf-8")
        assert text == extract.render(extract.load(name)), name
