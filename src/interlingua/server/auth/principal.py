"""Who is calling: the principal an authenticator vouches for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ...core.ids import id_fault

__all__ = ["ANONYMOUS", "Principal", "principal_fault"]


class Principal(msgspec.Struct, frozen=True, kw_only=True):
    """An authenticated caller.

    ``id`` owns the tasks it creates (the store scopes every call by it);
    ``scheme`` names the security scheme that vouched for it; ``tenants``
    are the tenants it may act in (None: any; the default tenant ``""`` is
    one like any other); ``scopes`` are OAuth scopes (or roles) it was
    granted; ``claims`` keep what the credential said (JWT claims, the
    client certificate's subject ...), for authorization policies.
    """

    id: str
    scheme: str = ""
    tenants: frozenset[str] | None = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = msgspec.field(default_factory=dict)

    @property
    def anonymous(self) -> bool:
        return self.id == ""

    @property
    def owner(self) -> str:
        """The key its tasks are stored under: the id, namespaced by the scheme that
        vouched for it (and by the issuer, for tokens), so that Basic user
        ``alice`` and the API key of principal ``alice`` never share tasks."""
        if not self.id:
            return ""
        return owner_key(self.scheme, self.id, str(self.claims.get("iss", "")))

    def may_use_tenant(self, tenant: str) -> bool:
        return self.tenants is None or tenant in self.tenants


#: the caller of a server that asks for no credentials
ANONYMOUS = Principal(id="")


def owner_key(scheme: str, principal_id: str, issuer: str = "") -> str:
    """``scheme:id`` (``bearer:issuer:id`` for tokens), as ``Principal.owner``.

    One key per principal: the scheme ends at the first ``:``, and a token's subject
    at the last, so ``%`` and ``:`` are escaped in those two (issuers, URLs, keep
    theirs). Keys without either character in them are as they always were."""
    if scheme == "bearer":
        return f"bearer:{issuer}:{_escaped(principal_id)}"
    return f"{_escaped(scheme or 'custom')}:{principal_id}"


def _escaped(text: str) -> str:
    return text.replace("%", "%25").replace(":", "%3A")


def principal_fault(principal: Principal) -> str | None:
    """What keeps ``principal`` from owning tasks (None: nothing): its id, and a
    token's issuer, go into its owner, which every store indexes and logs show, so
    both are held to the rules of ids a caller gives (``core.ids``)."""
    fault = id_fault(principal.id)
    if fault is None and principal.scheme == "bearer":
        fault = id_fault(str(principal.claims.get("iss", "")))
        return None if fault is None else f"its issuer {fault}"
    return None if fault is None else f"its id {fault}"
