"""Authenticators: each checks one kind of credential and names a card security scheme.

An authenticator looks at a request (``Presented``: headers, query, cookies,
the client certificate) and answers:

* ``None`` — no credential of its kind was presented;
* a ``Principal`` — the credential is good;
* ``raise AuthenticationRequired`` — a credential was presented and is bad
  (wrong, expired, malformed). Its message is safe to send: it never repeats
  the credential.

``scheme()`` is what the card declares for it, and ``challenge()`` what a
401 answer puts in ``WWW-Authenticate``; both come from the same object
that enforces, so the card cannot promise what the server does not check.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from ...core.errors import AuthenticationRequired
from ...core.model import APIKeyScheme, HTTPAuthScheme, MutualTLSScheme, SecurityScheme
from .hashing import decoy_hash, is_hash, key_digest, verify_secret
from .principal import Principal, owner_key
from .tls import ClientCertificate

__all__ = [
    "APIKeyAuth",
    "Authenticator",
    "BasicAuth",
    "MutualTLSAuth",
    "Presented",
    "cookie_pairs",
]


class Presented:
    """What a request presents: headers (lower-case names), query, cookies, client
    certificate. ``grpc``: a gRPC call, whose headers are its metadata; it has no
    query string of its own. ``raw_headers``: every header as it came, names in lower
    case (``headers`` keeps one value a name); the cookies are read from all of them."""

    __slots__ = ("_cookies", "_query", "certificate", "grpc", "headers", "query_string",
                 "raw_headers")

    def __init__(self, headers: Mapping[str, str], query_string: bytes = b"",
                 certificate: ClientCertificate | None = None, *, grpc: bool = False,
                 raw_headers: Iterable[tuple[bytes, bytes]] | None = None) -> None:
        self.headers = headers
        self.query_string = query_string
        self.certificate = certificate
        self.grpc = grpc
        self.raw_headers = raw_headers
        self._query: dict[str, list[str]] | None = None
        self._cookies: dict[str, list[str]] | None = None

    def query(self, name: str) -> str | None:
        values = self.query_values(name)
        return values[0] if values else None

    def query_values(self, name: str) -> list[str]:
        """Every value of the query parameter ``name``, in order."""
        if self._query is None:
            self._query = _grouped(parse_qsl(self.query_string.decode("latin-1"),
                                             keep_blank_values=True))
        return self._query.get(name, [])

    def cookie(self, name: str) -> str | None:
        values = self.cookie_values(name)
        return values[0] if values else None

    def cookie_values(self, name: str) -> list[str]:
        """Every value of the cookie ``name``, in order, from every ``Cookie`` header
        (HTTP/2 and some clients send a request's cookies in several)."""
        if self._cookies is None:
            if self.raw_headers is None:
                texts = [self.headers.get("cookie", "")]
            else:
                texts = [v.decode("latin-1") for k, v in self.raw_headers if k == b"cookie"]
            self._cookies = _grouped(pair for text in texts for pair in cookie_pairs(text))
        return self._cookies.get(name, [])

    def authorization(self, scheme: str) -> str | None:
        """The credentials of an ``Authorization: <scheme> <credentials>`` header, if that scheme."""
        value = self.headers.get("authorization")
        if not value:
            return None
        given, _, rest = value.strip().partition(" ")
        if given.lower() != scheme.lower():
            return None
        return rest.strip()


def cookie_pairs(header: str) -> list[tuple[str, str]]:
    """The ``name=value`` pairs of one ``Cookie`` header (RFC 6265 §4.2.1: separated by
    ";"), in order. A piece with no "=" or no name is skipped (no user agent sends one);
    a value's enclosing double quotes are not part of it (§4.1.1)."""
    pairs = []
    for piece in header.split(";"):
        name, sep, value = piece.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            continue
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        pairs.append((name, value))
    return pairs


def _grouped(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in pairs:
        out.setdefault(name, []).append(value)
    return out


class Authenticator:
    """One kind of credential; subclasses fill in ``authenticate``, ``scheme``, ``challenge``."""

    #: the WWW-Authenticate auth-scheme of this authenticator
    auth_scheme = ""
    #: whether its credential can come over the gRPC binding (False: a client
    #: certificate, which the gRPC binding does not read)
    over_grpc = True

    async def authenticate(self, presented: Presented) -> Principal | None:
        raise NotImplementedError

    def scheme(self) -> SecurityScheme:
        raise NotImplementedError

    def challenge(self, realm: str, *, error: str | None = None) -> str:
        text = f'{self.auth_scheme} realm="{realm}"'
        if error:
            text += f', error="{error}"'
        return text

    def secrets(self) -> list[str]:
        """Secret values this authenticator holds in clear, if any (never put in a card)."""
        return []

    def credential_headers(self) -> list[str]:
        """The request headers its credentials come in (refused when sent twice)."""
        return ["authorization"] if self.auth_scheme else []

    def credential_metadata(self) -> list[str]:
        """The gRPC metadata entries its credentials come in (refused when sent twice)."""
        return self.credential_headers()

    def sent_twice(self, presented: Presented) -> str | None:
        """Where a credential of its kind came more than once outside a header of its
        own (``"query api_key"``), else None: refused, as a credential header sent
        twice is, since which one counts is not for the server to guess."""
        return None

    #: the ``Principal.scheme`` of the principals it vouches for
    principal_scheme = "custom"

    def owner_of(self, principal_id: str) -> str:
        """``Principal.owner`` of its principal ``principal_id``."""
        return owner_key(self.principal_scheme, principal_id)


# --------------------------------------------------------------------- API key


class APIKeyAuth(Authenticator):
    """An API key in a header, a query parameter or a cookie.

    ``keys`` maps each principal id to its key (kept only as a SHA-256
    digest) or to ``"sha256:<hex digest>"`` of it. ``tenants`` optionally
    limits principals to tenants.
    """

    auth_scheme = "ApiKey"
    principal_scheme = "apiKey"

    def __init__(self, keys: Mapping[str, str], *, name: str = "X-API-Key",
                 location: str = "header", description: str | None = None,
                 tenants: Mapping[str, frozenset[str] | set[str] | list[str]] | None = None
                 ) -> None:
        if location not in ("header", "query", "cookie"):
            raise ValueError(f"API key location must be header, query or cookie, not {location!r}")
        if not name:
            raise ValueError("an API key needs a name (the header, parameter or cookie)")
        self.name = name
        self.location = location
        self.description = description
        self._tenants = {k: frozenset(v) for k, v in (tenants or {}).items()}
        self._by_digest: dict[bytes, str] = {}
        self._hints: list[str] = []
        for principal, key in keys.items():
            if key.startswith("sha256:"):
                try:
                    digest = bytes.fromhex(key[7:])
                except ValueError:
                    raise ValueError(f"the key digest of {principal!r} is not hex") from None
            else:
                if len(key) < 16:
                    raise ValueError(f"the API key of {principal!r} is shorter than 16 characters")
                digest = key_digest(key)
                self._hints.append(key)
            self._by_digest[digest] = principal

    async def authenticate(self, presented: Presented) -> Principal | None:
        value, where = self._key_of(presented)
        if value is None:
            return None
        digest = key_digest(value)
        found = None
        # Compare against every digest so timing does not tell how many keys match a prefix.
        for known, principal in self._by_digest.items():
            if hmac.compare_digest(known, digest):
                found = principal
        if found is None:
            raise AuthenticationRequired(f"The API key in {where} {self.name!r} is not valid")
        return Principal(id=found, scheme="apiKey", tenants=self._tenants.get(found))

    def _key_of(self, presented: Presented) -> tuple[str | None, str]:
        """The key presented (None: none), and where it was."""
        if self.location == "header":
            return presented.headers.get(self.name.lower()), "header"
        if presented.grpc:
            # gRPC has no query string: a key of the query or a cookie comes as the
            # metadata entry of its name (lower-cased, as metadata names are), so the
            # one key works on every binding the card names; a cookie may still come
            # as a ``cookie`` entry (not both: ``sent_twice``)
            value = self._grpc_entry(presented)
            if value is not None or self.location == "query":
                return value, "metadata"
        if self.location == "query":
            return presented.query(self.name), "query"
        return presented.cookie(self.name), "cookie"

    def scheme(self) -> SecurityScheme:
        return APIKeyScheme(name=self.name, location=self.location, description=self.description)

    def credential_headers(self) -> list[str]:
        return [self.name] if self.location == "header" else []

    def credential_metadata(self) -> list[str]:
        return [self.name]  # over gRPC, wherever the key's location

    def _grpc_entry(self, presented: Presented) -> str | None:
        """Over gRPC, the metadata entry of the key's name (None: none; a cookie named
        "cookie" is only ever in a ``cookie`` entry)."""
        if self.location == "cookie" and self.name.lower() == "cookie":
            return None
        return presented.headers.get(self.name.lower())

    def sent_twice(self, presented: Presented) -> str | None:
        if self.location == "query" and not presented.grpc:  # (gRPC: its metadata entry)
            found = presented.query_values(self.name)
        elif self.location == "cookie":  # over gRPC too: its ``cookie`` entries
            found = presented.cookie_values(self.name)
            if found and presented.grpc and self._grpc_entry(presented) is not None:
                # its metadata entry and a cookie: two keys, which one counts unsaid
                return f"metadata {self.name.lower()} and cookie {self.name}"
        else:
            return None
        return f"{self.location} {self.name}" if len(found) > 1 else None

    def challenge(self, realm: str, *, error: str | None = None) -> str:
        text = f'ApiKey realm="{realm}", in="{self.location}", name="{self.name}"'
        if error:
            text += f', error="{error}"'
        return text

    def secrets(self) -> list[str]:
        return list(self._hints)


# ----------------------------------------------------------------------- Basic


class BasicAuth(Authenticator):
    """HTTP Basic with hashed passwords (``hash_secret``): plain passwords are refused.

    A good password is remembered (by a keyed digest, for ``cache_seconds``)
    so the slow hash runs once per client, not once per request.
    """

    auth_scheme = "Basic"
    principal_scheme = "basic"

    def __init__(self, users: Mapping[str, str], *, description: str | None = None,
                 tenants: Mapping[str, frozenset[str] | set[str] | list[str]] | None = None,
                 cache_seconds: float = 300.0, cache_size: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        for user, stored in users.items():
            if ":" in user:
                raise ValueError(f"a Basic user name cannot contain ':' ({user!r})")
            if not is_hash(stored):
                raise ValueError(
                    f"the password of {user!r} is not a hash: store "
                    "interlingua.server.auth.hash_secret(password), never the password")
        self._users = dict(users)
        # An unknown user costs a hash like the users' own, so timing does not tell
        # which users exist (a cheap decoy answered them ~500 times sooner).
        self._decoy = decoy_hash(next(iter(self._users.values()), None))
        self.description = description
        self._tenants = {k: frozenset(v) for k, v in (tenants or {}).items()}
        self._cache_key = os.urandom(32)
        self._cache: dict[bytes, tuple[str, float]] = {}
        self._cache_seconds = cache_seconds
        self._cache_size = cache_size
        self._clock = clock

    async def authenticate(self, presented: Presented) -> Principal | None:
        raw = presented.authorization("Basic")
        if raw is None:
            return None
        try:
            decoded = base64.b64decode(raw, validate=True).decode("utf-8")
        except ValueError:  # binascii.Error, UnicodeDecodeError, or a text not ASCII
            raise AuthenticationRequired("The Basic credentials are not valid base64 of user:password") from None
        user, sep, password = decoded.partition(":")
        if not sep:
            raise AuthenticationRequired("The Basic credentials are not user:password")
        memo = hmac.new(self._cache_key, decoded.encode("utf-8"), "sha256").digest()
        now = self._clock()
        hit = self._cache.get(memo)
        if hit is not None and hit[1] > now:
            return self._principal(hit[0])
        stored = self._users.get(user)
        ok = await asyncio.to_thread(verify_secret, stored or self._decoy, password)
        if stored is None or not ok:
            raise AuthenticationRequired("The Basic user name or password is not valid")
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        self._cache[memo] = (user, now + self._cache_seconds)
        return self._principal(user)

    def _principal(self, user: str) -> Principal:
        return Principal(id=user, scheme="basic", tenants=self._tenants.get(user))

    def scheme(self) -> SecurityScheme:
        return HTTPAuthScheme(scheme="basic", description=self.description)

    def challenge(self, realm: str, *, error: str | None = None) -> str:
        text = f'Basic realm="{realm}", charset="UTF-8"'
        if error:
            text += f', error="{error}"'
        return text


# ------------------------------------------------------------------ mutual TLS


def _common_name(cert: ClientCertificate) -> str | None:
    return cert.subject.get("commonName")


class MutualTLSAuth(Authenticator):
    """A client certificate, verified by the TLS layer against the server's client CA.

    The TLS handshake already refused certificates the CA did not sign (or
    that expired); this maps a verified certificate to a principal:
    ``principal_of(cert)`` (default: the subject's common name). With
    ``allowed`` given, only those principals are accepted.
    """

    auth_scheme = "MutualTLS"
    principal_scheme = "mutualTLS"
    over_grpc = False

    def credential_headers(self) -> list[str]:
        return []  # the credential is the TLS connection's certificate

    def __init__(self, *, principal_of: Callable[[ClientCertificate], str | None] = _common_name,
                 allowed: set[str] | frozenset[str] | None = None,
                 description: str | None = None,
                 tenants: Mapping[str, frozenset[str] | set[str] | list[str]] | None = None
                 ) -> None:
        self._principal_of = principal_of
        self._allowed = frozenset(allowed) if allowed is not None else None
        self.description = description
        self._tenants = {k: frozenset(v) for k, v in (tenants or {}).items()}

    async def authenticate(self, presented: Presented) -> Principal | None:
        cert = presented.certificate
        if cert is None:
            return None
        pid = self._principal_of(cert)
        if not pid or (self._allowed is not None and pid not in self._allowed):
            raise AuthenticationRequired("The client certificate is not accepted here")
        claims: dict[str, Any] = {"subject": dict(cert.subject), "issuer": dict(cert.issuer),
                                  "serial": cert.serial}
        return Principal(id=pid, scheme="mutualTLS", tenants=self._tenants.get(pid), claims=claims)

    def scheme(self) -> SecurityScheme:
        return MutualTLSScheme(description=self.description)

    def challenge(self, realm: str, *, error: str | None = None) -> str:
        text = f'MutualTLS realm="{realm}"'
        if error:
            text += f', error="{error}"'
        return text
