"""The SSRF guard's rules, each in the spellings and paths an attacker would try.

test_ssrf.py shows each rule once; here every rule meets its variants: IPv6
and numeric spellings of refused addresses, the metadata service behind
NAT64 or a redirect, names that resolve to refused addresses at connect time,
and credentials written into the URL in any form. Nothing here leaves the
machine: connections go through a loopback-only backend that records what it
was asked for.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

import httpcore
import pytest

from interlingua.server.push import Refused, UrlGuard
from interlingua.server.push.sender import WebhookSender
from interlingua.server.push.ssrf import AddressRefused, GuardedBackend

from .helpers import Hook, LoopbackOnly, serve_hook

#: a guard opened as far as a developer's settings go: http and private networks allowed
DEV = {"allow_http": True, "allow_private_networks": True}


def teredo(client: str, server: str = "65.54.227.120") -> str:
    """The Teredo address (2001::/32) that carries ``client`` (stored inverted)."""
    c = int(ipaddress.IPv4Address(client)) ^ 0xFFFFFFFF
    s = int(ipaddress.IPv4Address(server))
    return str(ipaddress.IPv6Address((0x20010000 << 96) | (s << 64) | (0x8000 << 48) | c))


# ------------------------------------------------------- the metadata service

METADATA_SPELLINGS = [
    "169.254.169.254",
    "2852039166",               # decimal
    "0xa9fea9fe",               # one hex number
    "0251.0376.43518",          # octal parts, a.b.c form
    "0251.0xfe.0xa9fe",         # octal and hex mixed
    "0xa9.0xfe.0xa9.0xfe",      # hex parts
    "169.254.43518",            # a.b.c form
    "169.16689662",             # a.b form
    "169.254.169.254.",         # trailing dot
    "[::ffff:169.254.169.254]",  # IPv4-mapped
    "[::ffff:a9fe:a9fe]",       # IPv4-mapped, hex
    "[64:ff9b::a9fe:a9fe]",     # NAT64
    "[64:ff9b::169.254.169.254]",
    "[2002:a9fe:a9fe::1]",      # 6to4
    f"[{teredo('169.254.169.254')}]",
    "[fd00:ec2::254]",          # the IPv6 one
    "[FD00:EC2:0:0:0:0:0:254]",
    "169.254.170.2",            # container credentials
    "168.63.129.16",            # another provider's host agent
    "100.100.100.200",
]


@pytest.mark.parametrize("host", METADATA_SPELLINGS)
def test_the_metadata_service_is_refused_in_every_spelling_even_on_private_networks(
        host: str) -> None:
    with pytest.raises(Refused, match="cloud metadata"):
        UrlGuard(**DEV).check_url(f"http://{host}/latest/meta-data/")


@pytest.mark.parametrize("name", ["metadata", "metadata.google.internal",
                                  "METADATA.Google.Internal.", "instance-data",
                                  "instance-data.ec2.internal"])
def test_metadata_names_are_refused_even_on_private_networks(name: str) -> None:
    with pytest.raises(Refused, match="metadata"):
        UrlGuard(**DEV).check_url(f"http://{name}/computeMetadata/v1/")


async def test_a_name_resolving_to_the_metadata_service_is_refused_at_connect_time() -> None:
    async def resolve(host: str, port: int) -> list[str]:
        return {"hooks.dev.test": ["10.0.0.7"], "sneaky.dev.test": ["::ffff:169.254.169.254"],
                "nat64.dev.test": ["64:ff9b::a9fe:a9fe"]}[host]

    network = LoopbackOnly()
    backend = GuardedBackend(UrlGuard(**DEV, resolver=resolve), network)
    for host in ("sneaky.dev.test", "nat64.dev.test"):
        with pytest.raises(AddressRefused, match="cloud metadata"):
            await backend.connect_tcp(host, 80)
    # a private address is allowed here: it gets as far as the (loopback-only) network
    with pytest.raises(httpcore.ConnectError, match="not loopback"):
        await backend.connect_tcp("hooks.dev.test", 80)
    assert network.asked == ["10.0.0.7"]


# ------------------------------------------------ other refused addresses

@pytest.mark.parametrize(("host", "why"), [
    # loopback
    ("[0:0:0:0:0:0:0:1]", "loopback"),
    ("[0::1]", "loopback"),
    ("[::0001]", "loopback"),
    ("[::ffff:7f00:1]", "loopback"),
    ("[::ffff:127.9.9.9]", "loopback"),
    ("[64:ff9b::7f00:1]", "loopback"),
    ("[64:FF9B::127.0.0.1]", "loopback"),
    ("[2002:7f00:1::]", "loopback"),
    (f"[{teredo('127.0.0.1')}]", "loopback"),
    ("127.255.255.254", "loopback"),
    ("0x7f.0.0.1", "loopback"),
    ("0177.1", "loopback"),
    ("0177.0.1", "loopback"),
    ("0x7F000001", "loopback"),
    # private: octal must not be read as decimal (012 is 10, not 12)
    ("012.1", "private"),
    ("167772161", "private"),
    ("0x0a000001", "private"),
    ("3232235521", "private"),
    ("0300.0250.1", "private"),
    ("[::ffff:10.0.0.1]", "private"),
    ("[64:ff9b::a00:1]", "private"),
    ("[64:ff9b::c0a8:101]", "private"),
    ("[2002:c0a8:101::]", "private"),
    ("[fd12:3456::1]", "private"),
    # the rest
    ("0", "unspecified"),
    ("0.0.0.0", "unspecified"),
    ("[::]", "unspecified"),
    ("[fe80::1]", "link-local"),
    ("[64:ff9b::a9fe:101]", "link-local"),
    ("[ff05::1]", "multicast"),
    ("[::ffff:224.0.0.1]", "multicast"),
])
def test_refused_addresses_in_ipv6_and_numeric_spellings(host: str, why: str) -> None:
    with pytest.raises(Refused, match=why):
        UrlGuard().check_url(f"https://{host}/hook")


@pytest.mark.parametrize("host", ["127.000.000.001", "012.0.0.1", "0251.0376.0251.0376",
                                  "0x7f.0.0.1.1", "127.0.0.256"])
def test_dotted_quads_with_leading_zeros_or_out_of_range_are_refused(host: str) -> None:
    # Read differently by different parsers (octal or decimal): never passed on.
    with pytest.raises(Refused):
        UrlGuard(**DEV).check_url(f"http://{host}/hook")


@pytest.mark.parametrize("host", ["134744072", "0x8080808", "8.8.2056", "[2606:4700::1111]"])
def test_public_addresses_pass_in_numeric_spellings(host: str) -> None:
    # The numeric forms are read, not refused outright.
    UrlGuard().check_url(f"https://{host}/hook")


@pytest.mark.parametrize(("answers", "why"), [
    (["::1"], "loopback"),
    (["::ffff:127.0.0.1"], "loopback"),
    (["64:ff9b::7f00:1"], "loopback"),
    (["fe80::1%eth0"], "link-local"),
    (["93.184.215.14", "10.0.0.1"], "private"),   # one bad answer spoils the name
    (["10.0.0.1", "93.184.215.14"], "private"),
    (["64:ff9b::a00:1"], "private"),
    ([], "does not resolve"),
    (["not-an-address"], "not an address"),
])
async def test_connect_time_resolution_refuses_before_connecting(
        answers: list[str], why: str) -> None:
    async def resolve(host: str, port: int) -> list[str]:
        return answers

    network = LoopbackOnly()
    backend = GuardedBackend(UrlGuard(resolver=resolve), network)
    with pytest.raises(AddressRefused, match=why):
        await backend.connect_tcp("hooks.example.test", 443)
    assert network.asked == []


async def test_a_checked_name_is_connected_to_by_the_checked_address() -> None:
    # Connecting by name would let a second lookup (DNS rebinding) pick another address.
    lookups: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    network = LoopbackOnly()
    backend = GuardedBackend(UrlGuard(allow_hosts=["127.0.0.0/8"], resolver=resolve), network)
    with serve_hook(Hook()) as url:
        port = int(url.rsplit(":", 1)[1])
        stream = await backend.connect_tcp("hooks.example.test", port)
        await stream.aclose()
    assert lookups == ["hooks.example.test"] and network.asked == ["127.0.0.1"]


async def test_unix_sockets_are_refused() -> None:
    backend = GuardedBackend(UrlGuard(**DEV), LoopbackOnly())
    with pytest.raises(AddressRefused, match="Unix sockets"):
        await backend.connect_unix_socket("/run/docker.sock")


# -------------------------------------------------------------- redirects

def redirecting_to(location: str) -> Hook:
    def respond(hook: Hook, headers: dict[str, str], body: bytes, path: str) -> Any:
        return 307, [("location", location)]

    return Hook(respond)


@pytest.mark.parametrize(("location", "why"), [
    ("http://2852039166/latest/meta-data/", "cloud metadata"),
    ("http://[::ffff:169.254.169.254]/", "cloud metadata"),
    ("http://[64:ff9b::a9fe:a9fe]/", "cloud metadata"),
    ("http://metadata.google.internal/computeMetadata/v1/", "metadata"),
    ("http://[::1]:9/", "loopback"),
    ("http://0x7f.2:9/", "loopback"),
    ("http://012.1/", "private"),
    ("http://localhost:9/", "local host"),
    ("http://user:pw@127.0.0.1:9/", "credentials"),
    ("file:///etc/passwd", "not an https URL"),
])
async def test_a_redirect_is_checked_like_the_url_it_replaces(location: str, why: str) -> None:
    hook = redirecting_to(location)
    network = LoopbackOnly()
    # The first hop is allowed by name (the hook on loopback); its redirect is not.
    sender = WebhookSender(UrlGuard(allow_http=True, allow_hosts=["127.0.0.1"]),
                           network_backend=network)
    try:
        with serve_hook(hook) as url:
            result = await sender.post(url + "/hook", [], b"{}")
    finally:
        await sender.aclose()
    assert result.final and "redirect refused" in (result.error or "")
    assert why in (result.error or "")
    assert len(hook.requests) == 1 and set(network.asked) == {"127.0.0.1"}


# ------------------------------------------------------------ credentials

@pytest.mark.parametrize("url", [
    "https://user:pw@hooks.example.com/",
    "https://user@hooks.example.com/",
    "https://user:@hooks.example.com/",
    "https://:pw@hooks.example.com/",
    "https://us%40er:p%3Aw@hooks.example.com/",
    "https://user:pw@hooks.example.com:8443/a?b=c",
    "http://user:pw@10.0.0.1/",
    "http://token@127.0.0.1:8080/",
])
@pytest.mark.parametrize("settings", [
    {},
    DEV,
    {"allow_hosts": ["hooks.example.com", "10.0.0.0/8", "127.0.0.1"], "allow_http": True},
], ids=["default", "dev", "allowed-host"])
def test_credentials_in_the_url_are_refused_whatever_else_is_allowed(
        url: str, settings: dict[str, Any]) -> None:
    with pytest.raises(Refused, match="credentials"):
        UrlGuard(**settings).check_url(url)


def _not_refused(guard: UrlGuard, urls: Iterable[str]) -> list[str]:
    out = []
    for url in urls:
        try:
            guard.check_url(url)
        except Refused:
            continue
        out.append(url)
    return out


def test_an_at_sign_outside_the_authority_is_no_credential() -> None:
    urls = ["https://hooks.example.com/a@b", "https://hooks.example.com/?to=a@b",
            "https://hooks.example.com/#x@y"]
    assert _not_refused(UrlGuard(), urls) == urls
