"""``bare_url``: a URL as a third party is shown it, without what may hold credentials."""

from __future__ import annotations

from interlingua.core.urls import bare_url


def test_the_user_password_query_and_fragment_are_left_out() -> None:
    assert bare_url("http://alice:pw@h:8/a2a/?token=t#f") == "http://h:8/a2a/"
    assert bare_url("https://h/v1") == "https://h/v1"


def test_a_url_no_parser_reads_is_shown_as_none() -> None:
    assert bare_url("http://alice:pw@[::1/") == "(a URL that is not valid)"
    assert bare_url("no scheme") == "no scheme"


def test_a_password_holding_an_unescaped_slash_is_never_shown() -> None:
    """``u:pa/ss@h``: a parser reads ``u:pa`` as the host and port and the rest of the
    password as the path: both helpers showed ``pa/ss`` (bare_url the whole of it)."""
    from interlingua.stores import shown_url

    for url in ("postgresql://u:pa/ss@h/db", "http://u:pa?ss@h/x", "https://u:pa#ss@h/x"):
        assert "pa" not in bare_url(url).partition("://")[2], bare_url(url)
        assert "ss" not in bare_url(url) and "ss" not in shown_url(url)
        assert shown_url(url).startswith(url.partition("://")[0] + "://u:***@h")
    assert bare_url("postgresql://u:pa/ss@h/db") == "postgresql://h/db"
    # an @ of a path stays in a URL shown to a third party: the host is no user
    assert bare_url("https://host/users/@me") == "https://host/users/@me"
    # a store's password of digits alone, or holding an @, before an unescaped slash
    assert shown_url("postgresql://bob:1234/xy@db/app") == "postgresql://bob:***@db/app"
    assert shown_url("postgresql://bob:p@ss/w@db/app") == "postgresql://bob:***@db/app"
    assert shown_url("sqlite:///tmp/a@b.db") == "sqlite:///tmp/a@b.db"  # a path
