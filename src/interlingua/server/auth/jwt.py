"""HTTP Bearer with JSON Web Tokens: signature, issuer, audience, expiry.

Keys come from a fixed set (``keys``: a JWKS, PEMs, joserfc keys), from a
JWKS URL, or from an OpenID Connect discovery document (its ``jwks_uri`` and
``issuer``). A fetched JWKS is kept for ``jwks_cache_seconds``; a token
signed by a key the cached set does not have makes one early refetch (keys
rotate), at most once per ``refetch_interval`` so that tokens with made-up
``kid`` values cannot make the server hammer the key host.

Only asymmetric algorithms are accepted by default: with HMAC, anyone who
can verify a token can also mint one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx
import msgspec
from joserfc import jwt
from joserfc.errors import ExpiredTokenError, InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jwt import JWTClaimsRegistry

from ...core.card_signing import KeysLike, load_keys
from ...core.errors import AuthenticationRequired
from ...core.fetching import fetch_document, fetchable_url
from ...core.model import HTTPAuthScheme, OpenIdConnectScheme, SecurityScheme
from .principal import Principal, owner_key
from .schemes import Authenticator, Presented

__all__ = ["BearerAuth", "Fetch"]

#: ``async (url) -> body``: how key sets and discovery documents are fetched
Fetch = Callable[[str], Awaitable[bytes]]


#: seconds a key set or discovery document may take, its whole answer
FETCH_TIMEOUT = 10.0


async def _httpx_fetch(url: str) -> bytes:
    # the whole answer in FETCH_TIMEOUT, 1 MiB at most
    async with httpx.AsyncClient(timeout=FETCH_TIMEOUT) as client:
        return await fetch_document(client, url, timeout=FETCH_TIMEOUT)


_KEYS_UNAVAILABLE = "The token cannot be checked now (the signing keys could not be fetched)"


class BearerAuth(Authenticator):
    """``Authorization: Bearer <JWT>``, validated locally.

    The principal is the ``principal_claim`` (``sub``); its scopes come from
    ``scope`` (space-separated) or ``scp`` (a list); its tenants, when
    ``tenants_claim`` is set, from that claim (a string or a list).
    """

    auth_scheme = "Bearer"
    principal_scheme = "bearer"

    def owner_of(self, principal_id: str) -> str:
        return owner_key("bearer", principal_id, self.issuer or "")

    def __init__(
        self,
        *,
        issuer: str | None = None,
        audience: str | Sequence[str] | None = None,
        keys: KeysLike | None = None,
        jwks_url: str | None = None,
        openid_config_url: str | None = None,
        algorithms: Sequence[str] = ("RS256", "ES256", "PS256", "EdDSA"),
        leeway: int = 30,
        principal_claim: str = "sub",
        tenants_claim: str | None = None,
        require_audience: bool = True,
        jwks_cache_seconds: float = 300.0,
        refetch_interval: float = 30.0,
        description: str | None = None,
        fetch: Fetch | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if keys is None and jwks_url is None and openid_config_url is None:
            raise ValueError("BearerAuth needs keys, a jwks_url or an openid_config_url")
        if require_audience and not audience:
            raise ValueError("BearerAuth needs an audience (or require_audience=False): "
                             "a token minted for another service must not be accepted")
        if any(a.startswith("HS") or a == "none" for a in algorithms):
            raise ValueError("BearerAuth accepts asymmetric algorithms only (no HS*, no none)")
        self.issuer = issuer
        self.audiences = [audience] if isinstance(audience, str) else list(audience or [])
        self._static = load_keys(keys) if keys is not None else None
        self.jwks_url = None if jwks_url is None else fetchable_url(jwks_url, "jwks_url")
        self.openid_config_url = None if openid_config_url is None \
            else fetchable_url(openid_config_url, "openid_config_url")
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self.principal_claim = principal_claim
        self.tenants_claim = tenants_claim
        self.description = description
        self._fetch = fetch or _httpx_fetch
        self._clock = clock
        self._cache_seconds = jwks_cache_seconds
        self._refetch_interval = refetch_interval
        self._fetched: KeySet | None = None
        self._fetched_at = float("-inf")
        #: the last attempt to fetch the keys (whatever came of it), and how many ended
        self._tried_at = float("-inf")
        self._attempts = 0
        self._unavailable = _KEYS_UNAVAILABLE
        self._discovered = False
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------------ keys

    async def _discover(self) -> None:
        if self._discovered or self.openid_config_url is None:
            return
        try:
            doc = msgspec.json.decode(await self._fetch(self.openid_config_url))
        except Exception as exc:
            raise AuthenticationRequired(
                "The token cannot be checked now (the identity provider's configuration "
                "could not be read)") from exc
        if not isinstance(doc, dict) or not isinstance(doc.get("jwks_uri"), str):
            raise AuthenticationRequired(
                "The token cannot be checked now (the identity provider names no jwks_uri)")
        found_issuer = doc.get("issuer")
        if self.issuer is None and isinstance(found_issuer, str):
            self.issuer = found_issuer
        self.jwks_url = self.jwks_url or doc["jwks_uri"]
        self._discovered = True

    async def _keys(self, *, refetch: bool = False) -> KeySet | None:
        if self.jwks_url is None and self.openid_config_url is None:
            return None
        seen = self._attempts
        async with self._lock:
            # One fetch for all who waited on it: a request that queued behind an
            # attempt takes its outcome, so a key host that hangs costs one timeout
            # at a time, not one per waiting request in turn.
            if self._attempts == seen and self._due(refetch):
                await self._refresh()
            if self._fetched is None:
                raise AuthenticationRequired(self._unavailable)
            return self._fetched

    def _due(self, refetch: bool) -> bool:
        if self._fetched is None:
            return True
        now = self._clock()
        if now - self._tried_at < self._refetch_interval:
            # tried lately, and failed or fetched: the keys in hand serve meanwhile
            return False
        return refetch or now - self._fetched_at >= self._cache_seconds

    async def _refresh(self) -> None:
        now = self._clock()
        self._tried_at = now
        try:
            await self._discover()
            assert self.jwks_url is not None
            doc = msgspec.json.decode(await self._fetch(self.jwks_url))
            self._fetched = load_keys(doc)
            self._fetched_at = now
        except AuthenticationRequired as exc:  # the discovery document's fault
            self._unavailable = str(exc)
        except Exception:
            # keep the keys we had: a key host hiccup must not lock everyone out
            self._unavailable = _KEYS_UNAVAILABLE
        finally:  # counted once ended: whoever came in meanwhile takes this outcome
            self._attempts += 1

    # ------------------------------------------------------------ validation

    async def authenticate(self, presented: Presented) -> Principal | None:
        token = presented.authorization("Bearer")
        if token is None:
            return None
        if not token or token.count(".") != 2:
            raise AuthenticationRequired("The bearer token is not a JWT")
        decoded = await self._decode(token)
        claims = decoded.claims
        self._validate(claims)
        pid = claims.get(self.principal_claim)
        if not isinstance(pid, str) or not pid:
            raise AuthenticationRequired(
                f"The bearer token has no {self.principal_claim!r} claim naming the caller")
        # (the id and the issuer are held to the rules of ids where every scheme's
        # principal is: Security, with principal_fault)
        return Principal(id=pid, scheme="bearer", tenants=self._tenants(claims),
                         scopes=_scopes(claims), claims=claims)

    async def _decode(self, token: str) -> Any:
        tried_refetch = False
        while True:
            key_sets = [k for k in (self._static, await self._keys(refetch=tried_refetch)) if k]
            for key_set in key_sets:
                try:
                    return jwt.decode(token, key_set, algorithms=self.algorithms)
                except (InvalidKeyIdError, ValueError):
                    continue  # no key with that kid in this set
                except JoseError:
                    raise AuthenticationRequired("The bearer token's signature is not valid") from None
                except Exception:
                    # joserfc raises TypeError and KeyError too for some headers a caller
                    # writes (a "crit" that is no list of names): a refusal, not a 500
                    raise AuthenticationRequired("The bearer token's header is not valid") from None
            if tried_refetch or (self.jwks_url is None and self.openid_config_url is None):
                raise AuthenticationRequired("The bearer token is signed by an unknown key")
            tried_refetch = True

    def _validate(self, claims: dict[str, Any]) -> None:
        options: dict[str, Any] = {"exp": {"essential": True}}
        if self.issuer is not None:
            options["iss"] = {"essential": True, "value": self.issuer}
        if self.audiences:
            options["aud"] = {"essential": True, "values": self.audiences}
        registry = JWTClaimsRegistry(now=lambda: int(self._clock()), leeway=self.leeway,
                                     **options)
        try:
            registry.validate(claims)
        except ExpiredTokenError:
            raise AuthenticationRequired("The bearer token has expired") from None
        except JoseError as exc:
            claim = getattr(exc, "claim", None)
            what = f" ({claim})" if claim else ""
            raise AuthenticationRequired(
                f"The bearer token's claims are not valid here{what}") from None

    def _tenants(self, claims: dict[str, Any]) -> frozenset[str] | None:
        if self.tenants_claim is None:
            return None
        value = claims.get(self.tenants_claim)
        if isinstance(value, str):
            return frozenset([value])
        if isinstance(value, list):
            return frozenset(str(v) for v in value)
        return frozenset()

    # ------------------------------------------------------------------ card

    def scheme(self) -> SecurityScheme:
        if self.openid_config_url is not None:
            return OpenIdConnectScheme(url=self.openid_config_url, description=self.description)
        return HTTPAuthScheme(scheme="bearer", bearer_format="JWT", description=self.description)

    def challenge(self, realm: str, *, error: str | None = None) -> str:
        text = f'Bearer realm="{realm}"'
        if error:
            text += f', error="{error}"'
        return text


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return frozenset(str(s) for s in scp)
    if isinstance(scp, str):
        return frozenset(scp.split())
    return frozenset()
