"""The SSRF guard: webhook URLs may only lead to public HTTPS endpoints.

A webhook URL comes from a client, and the server then makes requests to it
from inside its own network. Without a guard a client could make the server
call its loopback admin ports, the private network, or a cloud's metadata
service (``169.254.169.254``) and read credentials.

Two checks, both on by default:

* when a config is created (and for every redirect target), the URL text:
  ``https`` only, no credentials in it, and a host that is not a refused
  address or name. IP addresses are read the way a browser or ``inet_aton``
  reads them, so ``2130706433``, ``0x7f.1``, ``017700000001`` and
  ``[::ffff:127.0.0.1]`` are all seen as ``127.0.0.1``. A host name is
  resolved and each of its addresses checked.
* when a connection is made, the name is resolved again inside the HTTP
  client's network backend, every address checked, and the connection made to
  the checked address itself. A name that resolved to a public address when
  the config was made and to ``127.0.0.1`` now (DNS rebinding) is refused at
  that moment.

Refused: loopback, private (RFC 1918, ULA), link-local, multicast,
unspecified, reserved, and any other address that is not globally routable
(shared address space, benchmarking, documentation ranges); IPv6 addresses
that embed one of those IPv4 addresses (IPv4-mapped, 6to4, Teredo, NAT64);
and cloud metadata addresses. ``allow_private_networks`` lets everything but
the metadata addresses through; ``allow_hosts`` lets named hosts, addresses
and networks through; ``allow_http`` accepts ``http://``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias

import httpcore
import httpx

from ...core.urls import masked_url
from .settings import Resolver

__all__ = [
    "AddressRefused",
    "GuardedBackend",
    "IPAddress",
    "Refused",
    "UrlGuard",
    "address_refusal",
    "literal_ip",
]

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata and host-agent endpoints: refused even when private networks
# are allowed (AWS, ECS, GCP, Azure, Alibaba, Oracle, AWS IPv6).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "168.63.129.16",
        "100.100.100.200",
        "192.0.0.192",
        "fd00:ec2::254",
    )
)
METADATA_NAMES = frozenset(
    {"metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"}
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_METADATA = "cloud metadata"


class Refused(ValueError):
    """A URL or address the guard does not allow; the message says why."""


class AddressRefused(httpcore.ConnectError):
    """A connection refused by the guard at connect time (final, not retried)."""


# ------------------------------------------------------------------ addresses


def address_refusal(ip: IPAddress) -> str | None:
    """Why ``ip`` is refused ("loopback", "private" ...), or None for a public address."""
    if ip in METADATA_ADDRESSES:
        return _METADATA
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            inner = address_refusal(embedded)
            if inner is not None:
                return inner if inner == _METADATA else f"IPv4-embedding {inner}"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        # fec0::/10, deprecated (RFC 3879) but still routed inside some networks;
        # Python counts it neither private nor reserved
        return "site-local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "non-public"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client's address
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def literal_ip(host: str) -> IPAddress | None:
    """The address a host literally names, in any spelling a resolver accepts;
    None for a domain name. Raises ``Refused`` for a host that looks like an
    IPv4 number but is not a valid one (``1.2.3.999``)."""
    h = host.strip("[]")
    if ":" in h:
        try:
            return ipaddress.IPv6Address(h)
        except ValueError:
            raise Refused(f"{host!r} is not a valid IPv6 address") from None
    return _ipv4_number(h)


def _ipv4_number(host: str) -> ipaddress.IPv4Address | None:
    # The WHATWG URL standard's IPv4 parser, which also matches inet_aton:
    # 1 to 4 parts, each decimal, octal (leading 0) or hex (0x); the last
    # part fills the remaining bytes. A host whose last label is a number is
    # an IPv4 address or invalid, never a domain name.
    parts = host.split(".")
    if parts and parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if not parts or not _is_number(parts[-1]):
        return None
    if len(parts) > 4:
        raise Refused(f"{host!r} is not a valid IPv4 address")
    values: list[int] = []
    for part in parts:
        value = _parse_number(part)
        if value is None:
            raise Refused(f"{host!r} is not a valid IPv4 address")
        values.append(value)
    if any(v > 255 for v in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        raise Refused(f"{host!r} is not a valid IPv4 address")
    number = values[-1]
    for i, v in enumerate(values[:-1]):
        number += v << (8 * (3 - i))
    return ipaddress.IPv4Address(number)


def _is_number(part: str) -> bool:
    if part.isdigit() and part.isascii():
        return True
    return part[:2].lower() == "0x" and all(c in "0123456789abcdefABCDEF" for c in part[2:])


def _parse_number(part: str) -> int | None:
    if not part:
        return None
    try:
        if part[:2].lower() == "0x":
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part[0] == "0":
            return int(part[1:], 8)
        return int(part, 10) if part.isascii() and part.isdigit() else None
    except ValueError:
        return None


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    out: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        addr = str(sockaddr[0])
        if addr not in out:
            out.append(addr)
    return out


# ------------------------------------------------------------------ the guard


class UrlGuard:
    """Decides which webhook URLs and addresses may be called."""

    def __init__(
        self,
        *,
        allow_http: bool = False,
        allow_private_networks: bool = False,
        allow_hosts: Sequence[str] = (),
        resolver: Resolver | None = None,
        resolve_timeout: float = 5.0,
    ) -> None:
        self.allow_http = allow_http
        self.allow_private_networks = allow_private_networks
        self._names: set[str] = set()
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allow_hosts:
            try:
                self._networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                if not entry.strip() or "/" in entry:
                    # e.g. a mistyped network: as a name it would never match
                    raise ValueError(f"allow_hosts: {entry!r} is neither a host name nor "
                                     "an IP address or network") from None
                self._names.add(_norm(entry))
        self._resolver = resolver or system_resolver
        self.resolve_timeout = resolve_timeout

    def check_url(self, url: str) -> httpx.URL:
        """The parsed URL when its text is acceptable; ``Refused`` otherwise.

        A host name is not resolved here (see ``check_url_resolved``).
        """
        # quoted as shown: its user and password never are
        shown = masked_url(url) if isinstance(url, str) else url
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            # the parser's reason quotes pieces of the URL: of a masked one, none
            reason = f" ({exc})" if shown == url else ""
            raise Refused(f"{shown!r} is not a valid URL{reason}") from None
        scheme = parsed.scheme
        if scheme != "https" and not (scheme == "http" and self.allow_http):
            if scheme == "http":
                raise Refused(f"{shown!r} is not https (plain http is refused: it would "
                              "send the notification and its credentials unencrypted)")
            raise Refused(f"{shown!r} is not an https URL")
        try:
            host = parsed.host
            host.encode("idna")  # (as the resolver is handed it)
        except UnicodeError:  # (an A-label that is no punycode, a label of 64 characters)
            raise Refused(f"{shown!r} has no valid host name (a label is empty, longer than "
                          "63 characters, or not IDNA)") from None
        if not host:
            raise Refused(f"{shown!r} has no host")
        if parsed.userinfo:
            raise Refused(f"{shown!r} carries credentials; give them in authentication instead")
        port = parsed.port
        # httpx reads any digits as a port (0, 99999, -1): none of those can be called
        if port is not None and not 0 < port < 65536:
            raise Refused(f"{shown!r} has no valid port (1-65535)")
        name = _norm(host)
        if name in self._names:
            return parsed
        ip = literal_ip(host)
        if ip is not None:
            self.check_address(host, ip)
            return parsed
        if name in METADATA_NAMES:
            raise Refused(f"{shown!r} names a cloud metadata service")
        if not self.allow_private_networks and (
            name == "localhost" or name.endswith(".localhost")
            or name == "localhost.localdomain"
        ):
            raise Refused(f"{shown!r} names the local host")
        return parsed

    async def check_url_resolved(self, url: str) -> httpx.URL:
        """``check_url``, then every address the host resolves to is checked."""
        parsed = self.check_url(url)
        host = parsed.host
        if _norm(host) not in self._names and literal_ip(host) is None:
            await self.resolve(host, parsed.port or (443 if parsed.scheme == "https" else 80))
        return parsed

    def check_address(self, host: str, ip: IPAddress) -> None:
        """``Refused`` unless ``host`` may be reached at ``ip``."""
        if _norm(host) in self._names or any(ip in n for n in self._networks):
            return
        reason = address_refusal(ip)
        if reason is None or (self.allow_private_networks and reason != _METADATA):
            return
        shown = host if host.strip("[]") == str(ip) else f"{host} ({ip})"
        article = "an" if reason[:1].lower() in "aeiou" or reason.startswith("IPv") else "a"
        raise Refused(f"{shown} is {article} {reason} address, which webhooks may not use")

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The checked addresses of ``host``; ``Refused`` if it does not resolve
        or any of its addresses is refused (a name that mixes public and
        private addresses could be steered to the private one)."""
        ip = literal_ip(host)
        if ip is not None:
            self.check_address(host, ip)
            return [ip]
        try:
            async with asyncio.timeout(self.resolve_timeout):
                raw = await self._resolver(host, port)
        except (OSError, TimeoutError, UnicodeError) as exc:  # (Unicode: no name a resolver takes)
            raise Refused(f"the host {host} does not resolve ({exc or 'timed out'})") from None
        if not raw:
            raise Refused(f"the host {host} does not resolve")
        addresses: list[IPAddress] = []
        for text in raw:
            try:
                addr = ipaddress.ip_address(text.split("%", 1)[0])
            except ValueError:
                raise Refused(f"the host {host} resolved to {text!r}, not an address") from None
            self.check_address(host, addr)
            addresses.append(addr)
        return addresses


def _norm(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


# ---------------------------------------------------------- connect-time check


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that resolves and checks every connection.

    The connection is made to the checked address, not to the name, so the
    name cannot resolve differently between the check and the connect. TLS
    still verifies the certificate against the URL's host name (httpcore
    passes it as the server name when it starts TLS).
    """

    def __init__(self, guard: UrlGuard, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.guard = guard
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self.guard.resolve(host, port)
        except Refused as exc:
            raise AddressRefused(str(exc)) from None
        last: Exception | None = None
        for ip in addresses:
            try:
                return await self.inner.connect_tcp(
                    str(ip), port, timeout=timeout, local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AddressRefused("webhooks cannot be delivered to Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)
