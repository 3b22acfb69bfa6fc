"""The security of one running server: who is calling, may they, and how often.

``Security`` is built once per app from an ``AuthConfig`` (or none), the
``Limits`` and the card signer. The JSON-RPC endpoint asks it to *admit* a
request (authenticate, rate-limit) before anything is dispatched and to
resolve the tenant; the engine asks it to *authorize* each operation, to
check messages against the limits, and to run executors within the cap and
the time limits. With no AuthConfig and no rate limit, admitting costs one
attribute check.

Refusals are ``A2AError``s that ``refusal()`` turns into an HTTP status and
headers: 401 + ``WWW-Authenticate`` (one challenge per scheme), 403, 429 +
``Retry-After``. Their messages never repeat a credential.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from ...core.calls import (
    Call,
    CancelTask,
    DeletePushConfig,
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    ListTasks,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from ...core.errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    ExtendedCardNotConfigured,
    InvalidParams,
    RateLimitExceeded,
    ResourceUnavailable,
    quoted,
)
from ...core.ids import id_fault
from ...core.model import AgentCard, Message, SecurityScheme
from ...signals import DONE
from ..cards.signer import CardSigner
from ..context import RequestInfo
from ..ports import TaskLookup
from ..turns import ExecutorGate
from .config import AuthConfig, Operation
from .limits import Limits, RateLimited, RateLimiter
from .principal import ANONYMOUS, Principal, principal_fault
from .schemes import Presented
from .tls import client_certificate

if TYPE_CHECKING:
    from .shared_limits import SharedRateLimiter

__all__ = [
    "AuthenticatedRequest",
    "Forbidden",
    "Security",
    "Unauthenticated",
    "identity_of",
    "refusal",
    "shown_agents",
]

log = logging.getLogger("interlingua.auth")

#: where the endpoint leaves the admitted principal for the request's scope
PRINCIPAL_SCOPE_KEY = "interlingua.principal"


class Unauthenticated(AuthenticationRequired):
    """401: no acceptable credential; ``challenges`` go into WWW-Authenticate.
    ``rejected``: a credential was presented and refused (False: none was given)."""

    def __init__(self, message: str, *, challenges: Sequence[str],
                 rejected: bool = True) -> None:
        super().__init__(message)
        self.challenges = list(challenges)
        self.rejected = rejected


class Forbidden(AuthorizationFailed):
    """403; ``challenge`` (RFC 6750 ``insufficient_scope``) when scopes were missing."""

    def __init__(self, message: str, *, challenge: str | None = None) -> None:
        super().__init__(message)
        self.challenge = challenge


class AuthenticatedRequest(RequestInfo):
    """``RequestInfo`` with the whole principal (claims, scopes, tenants), not only its id."""

    __slots__ = ("identity",)

    def __init__(self, *, identity: Principal, **kwargs: Any) -> None:
        super().__init__(principal=identity.id, owner=identity.owner, **kwargs)
        self.identity = identity


def identity_of(request: RequestInfo) -> Principal:
    identity = getattr(request, "identity", None)
    if isinstance(identity, Principal):
        return identity
    return Principal(id=request.principal) if request.principal else ANONYMOUS


def refusal(exc: A2AError) -> tuple[int, list[tuple[bytes, bytes]]] | None:
    """The HTTP status and headers an auth or rate refusal is answered with (None: HTTP 200)."""
    # The status is the error's own (errors.py keeps one table of them).
    if isinstance(exc, AuthenticationRequired):
        challenges = exc.challenges if isinstance(exc, Unauthenticated) else []
        return exc.http_status, [
            (b"www-authenticate", c.encode("latin-1", "replace")) for c in challenges]
    if isinstance(exc, AuthorizationFailed):
        if isinstance(exc, Forbidden) and exc.challenge:
            return exc.http_status, [
                (b"www-authenticate", exc.challenge.encode("latin-1", "replace"))]
        return exc.http_status, []
    if isinstance(exc, RateLimitExceeded):
        headers = []
        if isinstance(exc, RateLimited):
            headers.append((b"retry-after", str(exc.retry_after).encode()))
        return exc.http_status, headers
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(exc, ResourceUnavailable) and retry_after is not None:
        # a draining server: another replica, or this one a moment later, takes it
        return 503, [(b"retry-after", str(retry_after).encode())]
    return None


def _client_key(scope: Mapping[str, Any]) -> str:
    client = scope.get("client")
    return f"addr:{client[0]}" if client else "addr:?"


def _rate_key(principal: Principal, scope: Mapping[str, Any]) -> str:
    """Whose tokens a request spends: its principal's, an anonymous caller's address's."""
    return f"id:{principal.owner}" if principal.id else _client_key(scope)


class Security:
    """Authentication, authorization and limits of one server."""

    def __init__(self, auth: AuthConfig | None = None, limits: Limits | None = None,
                 signer: CardSigner | None = None) -> None:
        self.auth = auth
        self.limits = limits or Limits()
        self.signer = signer
        self.rate = (RateLimiter(self.limits.rate_limit, clock=self.limits.clock)
                     if self.limits.rate_limit is not None else None)
        #: buckets shared by every replica (set by share_limits), used instead of ``rate``
        self.shared_rate: SharedRateLimiter | None = None
        self.executors = ExecutorGate(self.limits)
        self.policy = auth.authorize if auth is not None else None
        self._requirements = auth.requirements() if auth is not None else []
        self._tenant_header = auth.tenant_header.lower() if auth and auth.tenant_header else None
        #: the request headers that carry credentials (each may appear once)
        self._credential_headers = frozenset(
            name.lower().encode("latin-1")
            for authenticator in (auth.schemes.values() if auth is not None else ())
            for name in authenticator.credential_headers())
        #: the gRPC metadata entries that carry credentials (each may appear once)
        self._credential_metadata = frozenset(
            name.lower().encode("latin-1")
            for authenticator in (auth.schemes.values() if auth is not None else ())
            for name in authenticator.credential_metadata())
        #: False: admitting a request has nothing to do
        self.active = auth is not None or self.rate is not None
        self._warned_undeclared = False

    # ------------------------------------------------------------ admitting

    async def admit(self, scope: MutableMapping[str, Any], headers: Mapping[str, str]) -> Principal:
        """The caller, authenticated and within its rate; raises the refusal otherwise."""
        principal = ANONYMOUS
        if self.auth is not None:
            try:
                principal = await self.authenticate(scope, headers)
            except (AuthenticationRequired, AuthorizationFailed):
                # Failed attempts are counted against the address, so guessing costs.
                if self.rate is not None:
                    await self._check_rate(_client_key(scope))
                raise
        if self.rate is not None:
            await self._check_rate(_rate_key(principal, scope))
        scope[PRINCIPAL_SCOPE_KEY] = principal
        return principal

    def spend(self, scope: Mapping[str, Any]) -> Awaitable[None]:
        """One more request of a caller ``admit`` let in (``scope`` holds it): a
        token of its rate, as ``admit`` spends one (a JSON-RPC batch's requests after
        the first); raises the refusal when none is left. No rate limit: nothing to do."""
        if self.rate is None:
            return DONE
        return self._check_rate(_rate_key(self.principal_of(scope), scope))

    async def _check_rate(self, key: str) -> None:
        if self.shared_rate is not None:
            await self.shared_rate.check(key)
        elif self.rate is not None:
            self.rate.check(key)

    def share_limits(self, redis_url: str, prefix: str) -> None:
        """Count rate limits in the Redis at ``redis_url``, for every replica together."""
        if self.limits.rate_limit is not None:
            from .shared_limits import SharedRateLimiter

            self.shared_rate = SharedRateLimiter(self.limits.rate_limit, redis_url, prefix)

    async def aclose(self) -> None:
        if self.shared_rate is not None:
            await self.shared_rate.aclose()

    async def authenticate(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> Principal:
        assert self.auth is not None
        schemes = self.auth.schemes
        self._refuse_repeated_credentials(scope)
        presented = Presented(headers, scope.get("query_string", b""), client_certificate(scope),
                              grpc=scope.get("type") == "grpc",
                              raw_headers=scope.get("headers", ()))
        for authenticator in schemes.values():
            where = authenticator.sent_twice(presented)
            if where is not None:
                raise self._sent_twice(where)
        found: dict[str, Principal] = {}
        failed: dict[str, AuthenticationRequired] = {}
        for name, authenticator in schemes.items():
            try:
                principal = await authenticator.authenticate(presented)
            except AuthenticationRequired as exc:
                failed[name] = exc
                continue
            fault = None if principal is None else principal_fault(principal)
            if fault is not None:  # a custom scheme's, a certificate's name: held as tokens are
                failed[name] = AuthenticationRequired(
                    f"The credentials name a principal that is not a valid id ({fault})")
            elif principal is not None:
                found[name] = principal
        short_scopes: list[str] = []
        for req in self._requirements:
            if not all(name in found for name in req):
                continue
            missing = [s for name, scopes in req.items() for s in scopes
                       if s not in found[name].scopes]
            if missing:
                short_scopes.extend(missing)
                continue
            return found[next(iter(req))] if req else ANONYMOUS
        if short_scopes:
            need = " ".join(dict.fromkeys(short_scopes))
            raise Forbidden(
                f"The credentials lack the scope this agent requires ({need})",
                challenge=f'Bearer realm="{self.auth.realm}", error="insufficient_scope", '
                          f'scope="{need}"')
        challenges = [
            auth.challenge(self.auth.realm, error="invalid_token" if name in failed else None)
            for name, auth in schemes.items()
        ]
        if failed:
            first = next(iter(failed.values()))
            raise Unauthenticated(first.message, challenges=challenges)
        accepted = " or ".join(" + ".join(req) for req in self._requirements)
        raise Unauthenticated(f"Authentication required: this agent accepts {accepted}",
                              challenges=challenges, rejected=False)

    def _refuse_repeated_credentials(self, scope: Mapping[str, Any]) -> None:
        # With a credential header sent twice, which one counts would depend on
        # the parser (today: the last); a request that says two things is refused.
        grpc = scope.get("type") == "grpc"
        names = self._credential_metadata if grpc else self._credential_headers
        seen: set[bytes] = set()
        for name, _ in scope.get("headers", ()):
            name = name.lower()
            if name in names:
                if name in seen:
                    raise self._sent_twice(
                        f"{'metadata' if grpc else 'header'} {name.decode('latin-1')}")
                seen.add(name)

    def _sent_twice(self, where: str) -> Unauthenticated:
        """The refusal of a credential sent twice (``where``: "header x-api-key")."""
        assert self.auth is not None
        return Unauthenticated(f"Credentials were sent twice ({where}): send them once",
                               challenges=[a.challenge(self.auth.realm)
                                           for a in self.auth.schemes.values()])

    def principal_of(self, scope: Mapping[str, Any]) -> Principal:
        found = scope.get(PRINCIPAL_SCOPE_KEY)
        return found if isinstance(found, Principal) else ANONYMOUS

    def tenant(self, principal: Principal, requested: str | None,
               headers: Mapping[str, str], scope: Mapping[str, Any] | None = None) -> str:
        """The tenant a call acts in: the one it names (``requested``: its ``tenant``
        member, its path's, the agent's a gRPC tenant named), else the tenant header's.
        ``scope``: the request's, whose headers tell a tenant header sent twice."""
        header = self._tenant_header_of(headers, scope)
        tenant = self._header_tenant(requested, header) if header else requested or ""
        if self.auth is not None and not principal.may_use_tenant(tenant):
            raise Forbidden(f"{principal.id} may not act in tenant {tenant!r}")
        return tenant

    def _tenant_header_of(self, headers: Mapping[str, str],
                          scope: Mapping[str, Any] | None) -> str | None:
        """The tenant header's value (None: not given, or none configured). One sent
        twice (as ``scope``'s headers tell) is refused: which one counts would be the
        parser's choice (the last), not the caller's. So is one with a comma: that is
        two lines folded into one (RFC 9110 §5.3; proxies fold so), not one tenant."""
        name = self._tenant_header
        header = headers.get(name) if name is not None else None
        if header is not None and scope is not None:
            key = name.encode("latin-1") if name is not None else b""
            if sum(1 for k, _ in scope.get("headers", ()) if k.lower() == key) > 1:
                raise InvalidParams(f"Invalid params: the {name} header was sent twice: "
                                    "name one tenant, once")
        if header is not None and "," in header:
            raise InvalidParams(
                f"Invalid params: the {name} header has a comma ({quoted(header)}), as one "
                "sent twice and folded into one line has: name one tenant, once (a tenant "
                "whose id has a comma, in the request alone)")
        return header

    def _header_tenant(self, requested: str | None, header: str) -> str:
        """The tenant of a call whose tenant header says ``header``: held to an id's
        rules as a tenant named anywhere else is, and to the one the call names."""
        name = self._tenant_header
        if requested is not None:
            if header != requested:
                raise InvalidParams(
                    f"Invalid params: the {name} header names tenant {quoted(header)}, "
                    f"the request tenant {quoted(requested)}: name one, or the same")
            return requested
        # HTTP carries a header's bytes beyond ASCII as they come (read as Latin-1
        # here), gRPC none: one name, one tenant, only where its text is sure
        fault = "holds characters beyond ASCII (name such a tenant in the request)" \
            if not header.isascii() else id_fault(header)
        if fault is not None:
            raise InvalidParams(f"Invalid params: the {name} header's tenant {fault}")
        return header

    def request_info(self, principal: Principal, **kwargs: Any) -> RequestInfo:
        if principal.anonymous:
            return RequestInfo(**kwargs)
        return AuthenticatedRequest(identity=principal, **kwargs)

    def request_of(self, scope: Mapping[str, Any], requested: str | None,
                   headers: Mapping[str, str], *, extensions: Sequence[str], dialect: str,
                   streaming: bool, binding: str) -> RequestInfo:
        """The ``RequestInfo`` of an admitted request: ``principal_of``, ``tenant``
        (the tenant ``requested``, else the header's; None: the call names none) and
        ``request_info`` in one,
        as every request needs all three."""
        found = scope.get(PRINCIPAL_SCOPE_KEY)
        principal = found if isinstance(found, Principal) else ANONYMOUS
        if self.auth is None:  # no principal's tenants to check: tenant's rule, in place
            header = self._tenant_header_of(headers, scope) if self._tenant_header else None
            tenant = self._header_tenant(requested, header) if header else requested or ""
        else:
            tenant = self.tenant(principal, requested, headers, scope)
        if not principal.id:  # anonymous
            # by position: a class called with keywords makes a dict of them first
            return RequestInfo("", tenant, headers, extensions, dialect, streaming, None,
                               binding)
        return AuthenticatedRequest(identity=principal, tenant=tenant, headers=headers,
                                    extensions=extensions, dialect=dialect,
                                    streaming=streaming, binding=binding)

    # ------------------------------------------------------------ authorizing

    def authorize(self, call: Call, request: RequestInfo,
                  lookup: TaskLookup) -> Awaitable[None]:
        """Ask the policy about ``call``; ``Forbidden`` when it says no. Awaited for
        every call: with no policy, nothing to ask and no coroutine."""
        return DONE if self.policy is None else self._ask(call, request, lookup)

    async def _ask(self, call: Call, request: RequestInfo, lookup: TaskLookup) -> None:
        assert self.policy is not None
        operation, task_id, skill = describe(call)
        task = await lookup(request, task_id) if task_id else None
        principal = identity_of(request)
        if not await self.policy(principal, operation, task, skill):
            who = principal.id or "an anonymous caller"
            what = f" on task {task_id}" if task is not None else ""
            what += f" with skill {skill!r}" if skill else ""
            raise Forbidden(f"{who} is not allowed to {operation}{what}")
        if type(call) is SendMessage and call.config.push_config is not None:
            # a send that sets a push config sets one: asked as CreateTask...Config is
            if not await self.policy(principal, Operation.PUSH_CONFIG, task, None):
                who = principal.id or "an anonymous caller"
                what = f" on task {task_id}" if task is not None else ""
                raise Forbidden(f"{who} is not allowed to {Operation.PUSH_CONFIG}{what} "
                                "(the send sets a push notification config)")

    def admission(self, message: Message, metadata: dict[str, Any] | None = None
                  ) -> contextlib.AbstractContextManager[None] | None:
        """Around a send: the message (and the send's ``metadata``) is within the
        limits and its turn has a place (None: no place is held, nothing to enter)."""
        self.limits.check_message(message, metadata)
        return self.executors.admission()

    # ------------------------------------------------------------ the card

    def public_card_instead(self, exc: A2AError) -> bool:
        """Whether a caller refused with ``exc`` is still shown the public card (a call
        that answers with the caller's card: v0.3's gRPC ``GetAgentCard`` and HTTP+JSON
        ``GET /v1/card``): the card is public, as at ``/.well-known/agent-card.json``,
        and the caller presented no credential, or was authenticated and is not allowed
        more (a tenant or scope it lacks: 403). A credential that was presented and
        rejected stays refused, as on the extended card's routes. (A caller the policy
        refuses the extended card gets the public one from the engine, card public or
        not: it was admitted.)"""
        if self.auth is not None and not self.auth.public_card:
            return False
        if isinstance(exc, Unauthenticated):
            return not exc.rejected
        return isinstance(exc, AuthorizationFailed)

    async def card_refusal(self, scope: MutableMapping[str, Any],
                           headers: Mapping[str, str]) -> A2AError | None:
        """None when this agent's card may be shown to the caller: it is public, or the
        caller is admitted (in the tenant its headers name); else why not (the refusal,
        401, 403 or 429). What a private card's agent is named to: ``shown_agents``."""
        if self.auth is None or self.auth.public_card:
            return None
        try:
            principal = await self.admit(scope, headers)
            self.tenant(principal, None, headers, scope)
        except A2AError as exc:
            return exc
        return None

    def declare(self, card: AgentCard) -> AgentCard:
        """``card`` declaring the configured schemes and requirements."""
        if self.auth is None:
            # said once: the card is rendered again for each host it is asked for at
            if card.security_schemes and not self._warned_undeclared:
                self._warned_undeclared = True
                log.warning("the card declares security schemes (%s) that this server does "
                            "not enforce: pass auth=AuthConfig(...) to create_app",
                            ", ".join(card.security_schemes))
            return card
        declared: dict[str, SecurityScheme] = {
            name: auth.scheme() for name, auth in self.auth.schemes.items()}
        for name, scheme in card.security_schemes.items():
            if declared.get(name) != scheme:
                raise ValueError(
                    f"the agent declares security scheme {name!r} that the server's "
                    "AuthConfig does not enforce (as declared); declare schemes in AuthConfig only")
        return msgspec.structs.replace(card, security_schemes=declared,
                                       security=self.auth.requirements())

    def check_card(self, document: bytes) -> None:
        """Refuse a card that would publish a secret the server holds."""
        if self.auth is None:
            return
        text = document.decode("utf-8", "replace")
        for name, auth in self.auth.schemes.items():
            for secret in auth.secrets():
                if secret and secret in text:
                    raise ValueError(
                        f"the agent card would publish a secret of scheme {name!r} "
                        "(a credential appears in the card's text); remove it")

    def extended_card(self, ext: Any, base: AgentCard | None, request: RequestInfo) -> AgentCard:
        """The extended card for this caller (``Agent.extended_card`` given the principal)."""
        if ext is None or base is None:
            raise ExtendedCardNotConfigured(
                "No extended agent card is configured for this agent")
        base = msgspec.structs.replace(base, signatures=[])
        if callable(ext):
            card = ext(base, identity_of(request)) if _takes_two(ext) else ext(base)
        else:
            card = ext
        if not isinstance(card, AgentCard):
            raise TypeError(f"the extended card hook returned {type(card).__name__}, "
                            "not an AgentCard")
        return self.signer.sign(card) if self.signer is not None else card


async def shown_agents(agents: Mapping[str, Security], scope: MutableMapping[str, Any],
                       headers: Mapping[str, str]) -> list[str]:
    """Of agents served together (each name with its ``Security``), those named to this
    caller: the agents whose card it may read (``Security.card_refusal``). The one rule
    for HTTP's listing of them and for the shared gRPC port's refusals: an agent whose
    card is private is not named to a caller its card is not shown to."""
    return [name for name, security in agents.items()
            if await security.card_refusal(scope, headers) is None]


def _takes_two(fn: Any) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def describe(call: Call) -> tuple[str, str | None, str | None]:
    """(operation, task id, skill id) of a call, for the policy."""
    if isinstance(call, SendMessage):
        return Operation.SEND, call.message.task_id or call.client_task_id, _skill(call)
    if isinstance(call, GetTask):
        return Operation.GET, call.id, None
    if isinstance(call, CancelTask):
        return Operation.CANCEL, call.id, None
    if isinstance(call, SubscribeToTask):
        return Operation.SUBSCRIBE, call.id, None
    if isinstance(call, ListTasks):
        return Operation.LIST, None, None
    if isinstance(call, (SetPushConfig, GetPushConfig, ListPushConfigs, DeletePushConfig)):
        return Operation.PUSH_CONFIG, call.task_id, None
    if isinstance(call, GetExtendedCard):
        return Operation.EXTENDED_CARD, None, None
    return type(call).__name__, None, None


def _skill(call: SendMessage) -> str | None:
    for meta in (call.metadata, call.message.metadata):
        if meta:
            for key in ("skill", "skillId", "skill_id"):
                value = meta.get(key)
                if isinstance(value, str) and value:
                    return value
    return None
