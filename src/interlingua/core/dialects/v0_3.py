"""The v0.2/v0.3 JSON-RPC dialect (``message/send``, ``kind`` discriminators, camelCase).

v0.2.x and v0.3.0 are one wire family (DIALECTS.md §a.3, §b); v0.3.0 only adds
``agent/getAuthenticatedExtendedCard``, card fields and error -32007. Its objects
are the family's own (``_family``): this module holds its table and its agent card.

Leniency on input (DIALECTS.md §i): a bare Message as ``message/send`` params
(seed 000 calls params "a Message"), parts tagged ``type`` instead of ``kind``
(v0.1 style), any ISO 8601 timestamp, and DataParts wrapped as
``{"value": X}`` with ``metadata.data_part_compat`` (§i.27) unwrapped. Everything
the schema requires otherwise stays required: a message without ``messageId``
is refused here.

The agent card helpers render and read the v0.2/v0.3 card shape
(``url`` + ``preferredTransport`` + ``additionalInterfaces``); the card this
dialect answers with is the hybrid document (``encode_card_hybrid``), whose
signatures verify.
"""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar, TypeAlias, TypeVar

import msgspec
from msgspec import Struct

from .. import model as m
from ..errors import InvalidAgentResponse
from ._common import at_root as _at
from ._common import merge
from ._family import FamilyCodec
from ._family_wire import Metadata, Variant, Wire, build_wire

__all__ = ["V03Codec", "decode_card_v03", "encode_card_hybrid", "encode_card_v03", "legacy_url",
           "shared"]

T = TypeVar("T")

VARIANT = Variant(
    name="0.3",
    label="A2A v0.2/v0.3 JSON-RPC",
    methods={
        "send": "message/send",
        "stream": "message/stream",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "resubscribe": "tasks/resubscribe",
        "push_set": "tasks/pushNotificationConfig/set",
        "push_get": "tasks/pushNotificationConfig/get",
        "push_list": "tasks/pushNotificationConfig/list",
        "push_delete": "tasks/pushNotificationConfig/delete",
        "card": "agent/getAuthenticatedExtendedCard",
    },
)


class V03Codec(FamilyCodec):
    """JSON-RPC of A2A v0.2.x and v0.3.0."""

    variant: ClassVar[Variant] = VARIANT
    wire: ClassVar[Wire] = build_wire(VARIANT)
    lax: ClassVar[Wire] = wire
    versions = frozenset({"0.3", "0.2"})
    nearest = ("1.0", "0.1")
    protojson = "0.3-pj"

    def encode_push_task(self, task: m.Task) -> bytes:
        return self.encode_stream_item(task)

    def card_out(self, card: m.AgentCard) -> Any:
        # the hybrid document, as at the well-known URL: one of the card's signatures
        # is made over that very document
        return encode_card_hybrid(card)

    def card_in(self, data: bytes) -> m.AgentCard:
        return _card_in(self.read_result(WCard, data))


@functools.cache
def shared() -> V03Codec:
    """One v0.3 codec for the variants that write v0.3's objects where they have none."""
    return V03Codec()


# ------------------------------------------------------------------------------ card
# Decoding only (cards are built as dicts by the codec): every field a sloppy
# peer may leave out has a default, so a card is refused only when unusable.


class WInterface(Struct):
    url: str
    transport: str = "JSONRPC"


class WProvider(Struct):
    organization: str = ""
    url: str | None = None


class WExtension(Struct, omit_defaults=True):
    uri: str
    description: str | None = None
    required: bool = False
    params: Metadata | None = None


class WCapabilities(Struct, rename="camel"):
    streaming: bool | None = None
    push_notifications: bool | None = None
    state_transition_history: bool | None = None
    extensions: list[WExtension] | None = None


class WSkill(Struct, rename="camel"):
    id: str
    name: str
    description: str = ""
    tags: list[str] = msgspec.field(default_factory=list)
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None
    security: list[dict[str, list[str]]] | None = None


class WOAuthFlow(Struct, rename="camel"):
    authorization_url: str | None = None
    token_url: str | None = None
    refresh_url: str | None = None
    scopes: dict[str, str] = msgspec.field(default_factory=dict)


class WOAuthFlows(Struct, rename="camel"):
    authorization_code: WOAuthFlow | None = None
    client_credentials: WOAuthFlow | None = None
    implicit: WOAuthFlow | None = None
    password: WOAuthFlow | None = None


class WAPIKeyScheme(Struct, tag="apiKey", tag_field="type", omit_defaults=True):
    name: str
    location: str = msgspec.field(name="in")
    description: str | None = None


class WHTTPScheme(Struct, tag="http", tag_field="type", rename="camel", omit_defaults=True):
    scheme: str
    bearer_format: str | None = None
    description: str | None = None


class WOAuth2Scheme(Struct, tag="oauth2", tag_field="type", rename="camel"):
    flows: WOAuthFlows
    oauth2_metadata_url: str | None = None
    description: str | None = None


class WOIDCScheme(Struct, tag="openIdConnect", tag_field="type", rename="camel"):
    open_id_connect_url: str
    description: str | None = None


class WMTLSScheme(Struct, tag="mutualTLS", tag_field="type", omit_defaults=True):
    description: str | None = None


WSecurityScheme: TypeAlias = WAPIKeyScheme | WHTTPScheme | WOAuth2Scheme | WOIDCScheme | WMTLSScheme
# Canonical scheme -> its wire Struct, for the schemes whose members are named alike.
_SCHEMES: dict[type, type[Struct]] = {
    m.APIKeyScheme: WAPIKeyScheme, m.HTTPAuthScheme: WHTTPScheme, m.MutualTLSScheme: WMTLSScheme,
}
_SCHEMES_IN: dict[type, Any] = {w: c for c, w in _SCHEMES.items()}
SECURITY_SCHEME_TYPES = frozenset({"apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"})


class WSignature(Struct, omit_defaults=True):
    protected: str
    signature: str
    header: Metadata | None = None


class WCard(Struct, rename="camel"):
    name: str
    url: str
    description: str = ""
    version: str = ""
    protocol_version: str | None = None
    preferred_transport: str | None = None
    additional_interfaces: list[WInterface] | None = None
    capabilities: WCapabilities = msgspec.field(default_factory=WCapabilities)
    default_input_modes: list[str] | None = None
    default_output_modes: list[str] | None = None
    skills: list[WSkill] = msgspec.field(default_factory=list)
    provider: WProvider | None = None
    documentation_url: str | None = None
    icon_url: str | None = None
    # Decoded one by one: a scheme of a type this dialect does not know is skipped.
    security_schemes: dict[str, Any] | None = None
    security: list[dict[str, list[str]]] | None = None
    supports_authenticated_extended_card: bool | None = None
    signatures: list[WSignature] | None = None



# ----------------------------------------------------------------------------- cards

_LEGACY_VERSIONS = ("0.2", "0.3")


def _is_legacy(interface: m.AgentInterface) -> bool:
    return interface.protocol_version in _LEGACY_VERSIONS


def legacy_url(card: m.AgentCard) -> str:
    """The URL a v0.3 client should post JSON-RPC to, for cards served by method."""
    jsonrpc = [i for i in card.interfaces if i.binding == "JSONRPC"]
    for i in jsonrpc:
        if _is_legacy(i):
            return i.url
    if jsonrpc:
        return jsonrpc[0].url
    return card.interfaces[0].url if card.interfaces else ""


def encode_card_v03(card: m.AgentCard, *, jsonrpc_url: str) -> dict[str, Any]:
    """``card`` in the v0.3.0 shape, with ``jsonrpc_url`` as its main (JSON-RPC) URL.

    Only the card's v0.2/v0.3 interfaces are listed in ``additionalInterfaces``:
    a v0.3 card's interface carries no version, so a v0.3 client would speak
    v0.3 to whatever is listed there. The card's signatures are copied, though none
    covers this rendering alone: a document served with them is the hybrid one
    (``encode_card_hybrid``), or is signed again over its own payload.
    """
    doc: dict[str, Any] = {
        "protocolVersion": "0.3.0",
        "name": card.name,
        "description": card.description,
        "version": card.version,
        "url": jsonrpc_url,
        "preferredTransport": "JSONRPC",
    }
    main = (jsonrpc_url, "JSONRPC")
    seen = {main}
    extra: list[dict[str, str]] = []
    for i in card.interfaces:
        key = (i.url, i.binding)
        if _is_legacy(i) and key not in seen:
            seen.add(key)
            extra.append({"url": i.url, "transport": i.binding})
    if extra:
        # The schema asks for the main endpoint to be listed as well.
        doc["additionalInterfaces"] = [{"url": jsonrpc_url, "transport": "JSONRPC"}, *extra]
    caps = card.capabilities
    capabilities: dict[str, Any] = {
        "streaming": caps.streaming,
        "pushNotifications": caps.push_notifications,
        "stateTransitionHistory": caps.state_transition_history,
    }
    if caps.extensions:
        capabilities["extensions"] = [_extension_out(e) for e in caps.extensions]
    doc["capabilities"] = capabilities
    doc["defaultInputModes"] = list(card.default_input_modes)
    doc["defaultOutputModes"] = list(card.default_output_modes)
    doc["skills"] = [_skill_out(s) for s in card.skills]
    if card.provider is not None:
        # provider.url is required in v0.2+; a v0.1-born card may lack it.
        doc["provider"] = {
            "organization": card.provider.organization,
            "url": card.provider.url or "",
        }
    if card.documentation_url is not None:
        doc["documentationUrl"] = card.documentation_url
    if card.icon_url is not None:
        doc["iconUrl"] = card.icon_url
    if card.security_schemes:
        doc["securitySchemes"] = {name: _scheme_out(s) for name, s in card.security_schemes.items()}
    if card.security:
        doc["security"] = [{k: list(v) for k, v in req.items()} for req in card.security]
    if caps.extended_card:
        doc["supportsAuthenticatedExtendedCard"] = True
    if card.signatures:
        doc["signatures"] = [_signature_out(s) for s in card.signatures]
    return doc


def encode_card_hybrid(card: m.AgentCard) -> dict[str, Any]:
    """``card`` as one document every client generation reads (DIALECTS.md §e, §i.24).

    v1.0 clients read ``supportedInterfaces`` and the oneof-wrapped security
    schemes; v0.1 clients read ``url`` and ``authentication``; v0.2/v0.3 clients
    read ``url``, ``preferredTransport``, ``protocolVersion``,
    ``additionalInterfaces`` and the ``type``-tagged schemes. The renderings share
    most field names (name, skills, capabilities ...), so the document is the v0.3
    rendering deep-merged with the v1.0 one and then the v0.1 one.

    Every member comes from ``card`` alone (``url`` is its ``legacy_url``), so the
    document served is the one signed, wherever it is served from: a signed card
    carries a signature over this whole document (``card_signing``).
    """
    from .v0_1 import encode_card_v01
    from .v1_0 import encode_card_v1

    url = legacy_url(card)
    v03 = encode_card_v03(card, jsonrpc_url=url)
    # v0.1 readers add `authentication` and `capabilities.stateTransitionHistory`;
    # v0.3 readers take "security" as their requirement list, v1.0 readers
    # "securityRequirements": both stay.
    doc: dict[str, Any] = merge(merge(v03, encode_card_v1(card)),
                                encode_card_v01(card, url=url))
    return doc


def decode_card_v03(doc: dict[str, Any]) -> m.AgentCard:
    """A v0.2.x or v0.3.0 card document -> the canonical card.

    ``url``/``preferredTransport``/``additionalInterfaces`` become ``interfaces``
    with the card's ``protocolVersion`` as Major.Minor; a card without one is a
    v0.2.0-v0.2.4 card. Raises ``InvalidAgentResponse`` naming the bad field.
    """
    if not isinstance(doc, dict):
        raise InvalidAgentResponse("Invalid agent card: not a JSON object")
    try:
        return _card_in(msgspec.convert(doc, WCard))
    except msgspec.ValidationError as exc:
        raise InvalidAgentResponse(f"Invalid agent card: {_at(str(exc), 'card')}") from None
    except RecursionError:
        raise InvalidAgentResponse("Invalid agent card: nested too deeply") from None


def _card_in(w: WCard) -> m.AgentCard:
    version = _major_minor(w.protocol_version) if w.protocol_version else "0.2"
    main = m.AgentInterface(
        url=w.url, binding=_binding(w.preferred_transport or "JSONRPC"), protocol_version=version
    )
    interfaces = [main]
    seen = {(main.url, main.binding)}
    for wi in w.additional_interfaces or ():
        key = (wi.url, _binding(wi.transport))
        if key not in seen:
            seen.add(key)
            interfaces.append(m.AgentInterface(url=key[0], binding=key[1], protocol_version=version))
    wc = w.capabilities
    capabilities = m.AgentCapabilities(
        streaming=bool(wc.streaming),
        push_notifications=bool(wc.push_notifications),
        extended_card=bool(w.supports_authenticated_extended_card),
        state_transition_history=bool(wc.state_transition_history),
        extensions=[_like(m.AgentExtension, e) for e in wc.extensions or ()],
    )
    card = m.AgentCard(
        name=w.name,
        description=w.description,
        version=w.version,
        interfaces=interfaces,
        capabilities=capabilities,
        skills=[_like(m.AgentSkill, s) for s in w.skills],
        provider=(
            m.AgentProvider(organization=w.provider.organization, url=w.provider.url or None)
            if w.provider is not None
            else None
        ),
        documentation_url=w.documentation_url,
        icon_url=w.icon_url,
        security_schemes=_schemes_in(w.security_schemes or {}),
        security=w.security or [],
        signatures=[_like(m.CardSignature, s) for s in w.signatures or ()],
    )
    if w.default_input_modes is not None:
        card.default_input_modes = w.default_input_modes
    if w.default_output_modes is not None:
        card.default_output_modes = w.default_output_modes
    return card


_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)")
_BINDINGS = {"JSONRPC": "JSONRPC", "GRPC": "GRPC", "HTTP+JSON": "HTTP+JSON", "REST": "HTTP+JSON"}


def _major_minor(version: str) -> str:
    found = _VERSION.match(version)
    return f"{int(found.group(1))}.{int(found.group(2))}" if found else version.strip()


def _binding(transport: str) -> str:
    return _BINDINGS.get(transport.upper(), transport)


def _like(cls: type[T], w: Struct) -> T:
    """``w`` as ``cls``, a Struct whose members bear the same names."""
    return cls(**msgspec.structs.asdict(w))


def _extension_out(e: m.AgentExtension) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(_like(WExtension, e))
    return out


def _skill_out(s: m.AgentSkill) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": s.id,
        "name": s.name,
        "description": s.description,
        "tags": list(s.tags),
    }
    if s.examples is not None:
        out["examples"] = list(s.examples)
    if s.input_modes is not None:
        out["inputModes"] = list(s.input_modes)
    if s.output_modes is not None:
        out["outputModes"] = list(s.output_modes)
    if s.security is not None:
        out["security"] = [{k: list(v) for k, v in req.items()} for req in s.security]
    return out


def _signature_out(s: m.CardSignature) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(_like(WSignature, s))
    return out


# Canonical flow name -> (v0.3 name, URL fields the v0.3 schema requires for it).
_FLOWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "authorization_code": ("authorizationCode", ("authorizationUrl", "tokenUrl")),
    "client_credentials": ("clientCredentials", ("tokenUrl",)),
    "implicit": ("implicit", ("authorizationUrl",)),
    "password": ("password", ("tokenUrl",)),
}


def _flow_out(flow: m.OAuthFlow, required: tuple[str, ...]) -> dict[str, Any]:
    urls = {"authorizationUrl": flow.authorization_url, "tokenUrl": flow.token_url}
    # Required URLs are written even when unknown ("" reads back as absent).
    out: dict[str, Any] = {name: urls[name] or "" for name in required}
    if flow.refresh_url is not None:
        out["refreshUrl"] = flow.refresh_url
    out["scopes"] = dict(flow.scopes)
    return out


def _scheme_out(s: m.SecurityScheme) -> dict[str, Any]:
    out: dict[str, Any]
    if isinstance(s, m.OAuth2Scheme):
        # v0.3 has no device-code flow and no PKCE flag: they are left out.
        flows = {
            _FLOWS[key][0]: _flow_out(flow, _FLOWS[key][1])
            for key, flow in s.flows.items()
            if key in _FLOWS
        }
        out = {"type": "oauth2", "flows": flows}
        if s.metadata_url is not None:
            out["oauth2MetadataUrl"] = s.metadata_url
    elif isinstance(s, m.OpenIdConnectScheme):
        out = {"type": "openIdConnect", "openIdConnectUrl": s.url}
    else:
        # the other schemes' wire Structs name their members as the canonical ones do
        out = msgspec.to_builtins(_like(_SCHEMES[type(s)], s))
        return out
    if s.description is not None:
        out["description"] = s.description
    return out


def _flow_in(w: WOAuthFlow) -> m.OAuthFlow:
    return m.OAuthFlow(
        scopes=w.scopes,
        authorization_url=w.authorization_url or None,
        token_url=w.token_url or None,
        refresh_url=w.refresh_url or None,
    )


def _schemes_in(docs: dict[str, Any]) -> dict[str, m.SecurityScheme]:
    out: dict[str, m.SecurityScheme] = {}
    for name, doc in docs.items():
        kind = doc.get("type") if isinstance(doc, dict) else None
        if not isinstance(kind, str) or kind not in SECURITY_SCHEME_TYPES:
            continue  # a scheme type this dialect cannot express: skipped, not fatal
        try:
            w = msgspec.convert(doc, WSecurityScheme)
        except msgspec.ValidationError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent card: {_at(str(exc), f'card.securitySchemes.{name}')}"
            ) from None
        out[name] = _scheme_in(w)
    return out


def _scheme_in(w: WSecurityScheme) -> m.SecurityScheme:
    if isinstance(w, WOAuth2Scheme):
        # WOAuthFlows names its members as the canonical flows are keyed
        flows = {
            key: _flow_in(flow)
            for key, flow in msgspec.structs.asdict(w.flows).items()
            if flow is not None
        }
        return m.OAuth2Scheme(
            flows=flows, metadata_url=w.oauth2_metadata_url, description=w.description
        )
    if isinstance(w, WOIDCScheme):
        return m.OpenIdConnectScheme(url=w.open_id_connect_url, description=w.description)
    scheme: m.SecurityScheme = _like(_SCHEMES_IN[type(w)], w)
    return scheme
