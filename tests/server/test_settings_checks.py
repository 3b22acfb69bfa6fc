"""Settings a server cannot use as given are refused where they are given, naming the
setting: ``public_url`` that is no http(s) URL with a host (it was taken, and every card
named it; ``http://[::1`` raised from deep in the first request), a host or origin list
given as one string (iterated by character: every name refused), a store that is
neither a URL nor a Store (an AttributeError on start)."""

from __future__ import annotations

from typing import Any

import pytest

from interlingua import Agent, create_app

AGENT = Agent("Echo", "Echoes.", lambda text: text)


@pytest.mark.parametrize(("options", "said"), [
    ({"public_url": "not a url"}, "public_url 'not a url' is not an http:// or https:// URL "
                                  "with a host"),
    ({"public_url": "ftp://files.example"}, "public_url 'ftp://files.example' is not an"),
    ({"public_url": "https:///base"}, "public_url 'https:///base' is not an"),
    ({"public_url": "http://[::1"}, "public_url 'http://[::1' is not a URL: Invalid IPv6 URL"),
    ({"public_url": "http://agents.example:99999"}, "public_url 'http://agents.example:99999' "
                                                    "has no valid port (0-65535)"),
    ({"allowed_hosts": "agents.example"}, "allowed_hosts is a list of host names, not one"),
    ({"allowed_origins": "https://app.example"}, "allowed_origins is a list of origins, not"),
    ({"store": 123}, "store must be a store URL or a Store, not int"),
])
def test_a_setting_no_server_can_use_is_refused_naming_it(options: dict[str, Any],
                                                          said: str) -> None:
    options.setdefault("store", "memory://")
    with pytest.raises(ValueError) as refused:
        create_app(AGENT, **options)
    assert str(refused.value).startswith(said), refused.value


@pytest.mark.parametrize("url", ["https://agents.example/base", "http://127.0.0.1:8000",
                                 "http://[::1]:8000/a2a"])
def test_a_public_url_is_taken(url: str) -> None:
    create_app(AGENT, public_url=url, store="memory://")


@pytest.mark.parametrize("name", ["", "   ", None])
def test_an_agent_without_a_name_is_refused(name: Any) -> None:
    # its card's one required name: it was served as "", listed so, and addressed on
    # the mesh and under /agents/ by a name made up for it
    with pytest.raises(ValueError, match="an agent needs a name"):
        Agent(name, "Echoes.", lambda text: text)
