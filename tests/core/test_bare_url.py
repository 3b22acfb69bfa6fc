"""``bare_url``: a URL as a third party is shown it, without what may hold credentials."""

from __future__ import annotations

from interlingua.core.urls import bare_url


def test_the_user_password_query_and_fragment_are_left_out() -> None:
    assert bare_url("http://alice:pw@h:8/a2a/?token=t#f") == "http://h:8/a2a/"
    assert bare_url("https://h/v1") == "https://h/v1"


def test_a_url_no_parser_reads_is_shown_as_none() -> None:
    assert bare_url("http://alice:pw@[::1/") == "(a URL that is not valid)"
    assert bare_url("no scheme") == "no scheme"
