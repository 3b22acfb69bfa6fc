"""What a server asks of its callers, in one place: the card's declarations come from it.

    create_app(agent, auth=AuthConfig(
        schemes={"apiKey": APIKeyAuth({"alice": "..."}),
                 "bearer": BearerAuth(issuer=..., audience=..., jwks_url=...)},
        security=[{"apiKey": []}, {"bearer": ["tasks"]}],   # either one will do
        authorize=my_policy,
    ))

``security`` lists requirements the way the card does: any one entry must be
met, and an entry is met when every scheme it names authenticates the
caller (with the OAuth scopes listed, for bearer tokens). Without
``security``, any one scheme will do. The card's ``securitySchemes`` and
requirements are written from this config (each version in its shape), so
the card declares exactly what the server enforces.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

import msgspec

from ...core.model import Task
from .principal import Principal
from .schemes import Authenticator

__all__ = ["AuthConfig", "Operation", "Policy", "allow_owner"]


class Operation:
    """Operation names an authorization policy is asked about."""

    SEND = "send"
    GET = "get"
    LIST = "list"
    CANCEL = "cancel"
    SUBSCRIBE = "subscribe"
    PUSH_CONFIG = "push-config"
    EXTENDED_CARD = "extended-card"


#: ``async (principal, operation, task or None, skill id or None) -> allowed?``
Policy = Callable[[Principal, str, Task | None, str | None], Awaitable[bool]]


async def allow_owner(principal: Principal, operation: str, task: Task | None,
                      skill: str | None) -> bool:
    """The default policy: a caller may do anything with its own tasks.

    Ownership itself is enforced below any policy: tasks are stored under
    their owner, so another principal's task is never found (not-found, not
    forbidden, so its existence is not revealed either).
    """
    return True


class AuthConfig(msgspec.Struct, kw_only=True):
    #: scheme name (as the card names it) -> the authenticator that enforces it
    schemes: Mapping[str, Authenticator]
    #: requirements, any one of which must be met (default: any one scheme)
    security: Sequence[Mapping[str, Sequence[str]]] | None = None
    #: the realm named in WWW-Authenticate challenges
    realm: str = "a2a"
    #: False: the card at /.well-known/ needs credentials too
    public_card: bool = True
    #: asked before every operation; False answers 403
    authorize: Policy | None = None
    #: a header naming the tenant (besides v1.0's ``tenant`` request member)
    tenant_header: str | None = None
    #: the scheme whose principals owned the tasks of a store written before task
    #: owners were namespaced by scheme (needed only with several schemes)
    legacy_owner_scheme: str | None = None

    def __post_init__(self) -> None:
        if not self.schemes:
            raise ValueError("AuthConfig needs at least one scheme")
        for name, auth in self.schemes.items():
            if not isinstance(auth, Authenticator):
                raise TypeError(f"scheme {name!r} is a {type(auth).__name__}, not an Authenticator")
        for req in self.requirements():
            for name in req:
                if name not in self.schemes:
                    raise ValueError(f"security requirement names {name!r}, which is not "
                                     f"one of the schemes ({', '.join(self.schemes)})")

    def legacy_owner_of(self) -> Callable[[str], str]:
        """The owner (``Principal.owner``) of an owner id of a store from before owners
        were namespaced; ``RuntimeError`` when it cannot be told."""
        if self.legacy_owner_scheme is not None:
            if self.legacy_owner_scheme not in self.schemes:
                raise RuntimeError(
                    f"legacy_owner_scheme {self.legacy_owner_scheme!r} is not one of the "
                    f"schemes ({', '.join(self.schemes)})")
            return self.schemes[self.legacy_owner_scheme].owner_of
        if len(self.schemes) == 1:
            return next(iter(self.schemes.values())).owner_of
        raise RuntimeError(
            "the store holds tasks whose owners were recorded before owners were namespaced "
            f"by scheme, and several schemes are configured ({', '.join(self.schemes)}): "
            "name the one those owners authenticated with, "
            "AuthConfig(legacy_owner_scheme=NAME), to start")

    def grpc_refusal(self) -> str | None:
        """Why the gRPC binding cannot serve an agent of this configuration (None: it
        can): every requirement names a scheme whose credential gRPC does not carry (a
        client certificate), so no caller could meet one there, and the port would
        refuse every call."""
        unmet = [sorted(name for name in req if not self.schemes[name].over_grpc)
                 for req in self.requirements()]
        if not unmet or not all(unmet):
            return None
        names = ", ".join(dict.fromkeys(name for names in unmet for name in names))
        return (f"the agent's security needs a client certificate (mutual TLS: {names}) "
                "in every requirement, and the gRPC binding does not read client "
                "certificates: its gRPC port would refuse every call. Serve it without "
                "gRPC, or add a requirement gRPC can meet (an API key, a bearer token, "
                "Basic)")

    def requirements(self) -> list[dict[str, list[str]]]:
        if self.security is None:
            return [{name: []} for name in self.schemes]
        return [{k: list(v) for k, v in req.items()} for req in self.security]
