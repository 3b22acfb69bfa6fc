"""``url_below``: a path below an agent's URL, its query kept; a URL no parser reads is
joined as it is (the HTTP client then says it is no URL), never a ValueError here."""

from __future__ import annotations

from interlingua.core.urls import url_below


def test_a_path_goes_below_the_urls_path_and_its_query_is_kept() -> None:
    assert url_below("http://h/a2a/", "/message:send") == "http://h/a2a/message:send"
    assert url_below("http://h/?code=k", "/tasks/t?historyLength=1") == \
        "http://h/tasks/t?code=k&historyLength=1"
    assert url_below("http://h/p#frag", "/x") == "http://h/p/x"


def test_a_url_no_parser_reads_is_joined_as_it_is() -> None:
    # (urlsplit raises for an open bracket: the client would have had a traceback)
    assert url_below("http://[bad?x=1", "/a") == "http://[bad?x=1/a"
