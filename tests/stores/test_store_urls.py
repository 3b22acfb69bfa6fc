"""open_store's docstring is the store URLs' reference (the API page of the docs site):
every option a store reads is named there, with the defaults the parsers use."""

from __future__ import annotations

import re

import pytest

from interlingua.stores import SUPPORTED_SCHEMES, open_store
from interlingua.stores.postgres.schema import PostgresSettings, parse_postgres_url
from interlingua.stores.sqlite import parse_sqlite_url

DOC = open_store.__doc__ or ""


def _bullet(scheme: str) -> str:
    """The docstring's bullet for one kind of store, joined onto one line."""
    found = re.search(rf"^\s*\* ``{re.escape(scheme)}.*?(?=^\s*\* |^\s*$)", DOC, re.M | re.S)
    assert found, f"open_store's docstring has no bullet for {scheme}"
    return " ".join(found[0].split())


def test_every_supported_scheme_has_a_bullet() -> None:
    for scheme in SUPPORTED_SCHEMES:
        _bullet(scheme.split("://")[0] + "://")


def test_every_sqlite_option_is_named_with_its_default() -> None:
    # the parser's refusal of an unknown option lists the ones it takes
    with pytest.raises(ValueError, match="takes") as caught:
        parse_sqlite_url("sqlite:///x.db?nope=1")
    taken = re.findall(r"\b[a-z_]+\b", str(caught.value).split("takes", 1)[1])
    options = [word for word in taken if word != "and"]
    assert options, caught.value
    text = _bullet("sqlite://")
    for option in options:
        assert f"``{option}=" in text, f"the docstring does not name ?{option}="
    default = parse_sqlite_url("sqlite:///relative/path.db")
    assert default.path == "relative/path.db"
    assert f"default ``{default.synchronous}``" in text
    assert f"(default {default.busy_timeout_ms})" in text
    assert parse_sqlite_url("sqlite:////absolute/path.db").path == "/absolute/path.db"
    assert parse_sqlite_url("sqlite:///:memory:").path == ":memory:"


def test_every_postgres_option_is_named_and_kept_from_the_driver() -> None:
    text = _bullet("postgresql://")
    defaults = parse_postgres_url("postgresql://user:password@host:5432/database")
    for option in PostgresSettings._fields:
        if option == "dsn":
            continue
        assert f"``{option}" in text, f"the docstring does not name {option}"
        # the store's own options are not passed on to the driver
        value = "0" if option == "migrate" else "a2a" if option == "schema" else "7"
        parsed = parse_postgres_url(f"postgresql://h/db?{option}={value}")
        assert option not in parsed.dsn
    assert "default 1 and 10" in text and (defaults.min_size, defaults.max_size) == (1, 10)
    assert "default 300" in text and defaults.max_inactive_lifetime == 300
    assert f"default ``{defaults.schema}``" in text
    assert "none by default" in text and defaults.command_timeout is None
    # anything else goes to the driver
    assert "sslmode=require" in parse_postgres_url("postgresql://h/db?sslmode=require").dsn
    assert parse_postgres_url("postgres://h/db").schema == defaults.schema
