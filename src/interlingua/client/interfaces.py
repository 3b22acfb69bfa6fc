"""What the client's credentials may follow from a card to its interfaces.

A card read over HTTPS vouches for its interfaces with the TLS of its host; an
interface it names on plain ``http://`` (or an insecure ``grpc://`` address) on
another host would carry the caller's headers, API key and messages in clear text:
a downgrade anyone on the path (or whoever wrote the card) can read. Such an
interface is passed over when the card names another this client can use, and
refused (``InsecureInterface``) when it names no other, unless the caller allows
it (``Client(allow_insecure_interfaces=True)``). A loopback host never leaves the
machine, and a card read over plain HTTP has crossed the network in clear already.

An agent URL given with an API key in its query (``?api_key=KEY``) whose card
declares that key (``apiKey``, ``in: query``, that name) carries it on to the
card's JSON-RPC and HTTP+JSON interfaces, whose URLs the card names without it.
Only the declared parameter goes; the rest of the query was for the URL given.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from ..core.model import AgentCard, APIKeyScheme
from .card import Endpoint
from .errors import InsecureInterface

__all__ = ["carry_query_keys", "is_loopback", "secure_only"]

#: bindings whose requests go to the interface's URL with its query (gRPC has none)
_QUERY_BINDINGS = frozenset({"JSONRPC", "HTTP+JSON"})


def is_loopback(host: str) -> bool:
    """``host`` (a name or an address, brackets and all) is this machine itself."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True  # (RFC 6761 §6.3: always the loopback)
    try:
        ip = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def in_clear(endpoint: Endpoint) -> bool:
    """Calls to ``endpoint`` cross the network unencrypted: plain HTTP or gRPC to a
    host other than this machine."""
    parts = urlsplit(endpoint.url)
    if parts.scheme.lower() not in ("http", "grpc"):
        return False
    return not is_loopback(parts.hostname or "")


def secure_only(found: list[Endpoint], card_url: str) -> list[Endpoint]:
    """``found`` without the endpoints a card read over HTTPS names in clear text;
    ``InsecureInterface`` when none is left."""
    if not card_url.lower().startswith("https://"):
        return found
    kept = [ep for ep in found if not in_clear(ep)]
    if kept:
        return kept
    named = ", ".join(dict.fromkeys(f"{ep.binding} at {ep.url}" for ep in found))
    raise InsecureInterface(
        f"the card at {card_url}, read over HTTPS, names only interfaces without TLS on "
        f"another host ({named}): the credentials and messages sent there would cross "
        "the network in clear text. Allow it with allow_insecure_interfaces=True (the "
        "CLI's --allow-insecure-interfaces) if that network is trusted")


def carry_query_keys(found: list[Endpoint], card: AgentCard, agent_url: str) -> list[Endpoint]:
    """``found`` with the API keys ``agent_url``'s query holds that ``card`` declares
    ``in: query`` added to the query of its JSON-RPC and HTTP+JSON endpoints (one that
    names the parameter already keeps its own)."""
    names = {s.name for s in card.security_schemes.values()
             if isinstance(s, APIKeyScheme) and s.location.lower() == "query"}
    if not names or "?" not in agent_url:
        return found
    # each as the caller wrote it (its escaping kept): the agent reads it as given
    given = [pair for pair in urlsplit(agent_url).query.split("&")
             if unquote_plus(pair.partition("=")[0]) in names]
    if not given:
        return found
    return [_with_pairs(ep, given) if ep.binding in _QUERY_BINDINGS else ep for ep in found]


def _with_pairs(endpoint: Endpoint, pairs: list[str]) -> Endpoint:
    parts = urlsplit(endpoint.url)
    own = {unquote_plus(p.partition("=")[0]) for p in parts.query.split("&") if p}
    added = [p for p in pairs if unquote_plus(p.partition("=")[0]) not in own]
    if not added:
        return endpoint
    query = "&".join(q for q in (parts.query, *added) if q)
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
    return Endpoint(endpoint.dialect, url, endpoint.binding, tenant=endpoint.tenant,
                    version=endpoint.version)
