"""The v0.2/v0.3 agent card: written by ``encode_card_v03``, read by ``decode_card_v03``."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings

from interlingua.core import errors
from interlingua.core.calls import GetExtendedCard
from interlingua.core.dialects.v0_3 import V03Codec, decode_card_v03, encode_card_v03
from interlingua.core.model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    APIKeyScheme,
    HTTPAuthScheme,
    MutualTLSScheme,
    OAuth2Scheme,
    OAuthFlow,
    OpenIdConnectScheme,
)
from tests.dialects.v0_3_strategies import assert_valid, cards
from tests.hypothesis_budget import examples

codec = V03Codec()


def base_card(**fields: Any) -> AgentCard:
    values: dict[str, Any] = {
        "name": "Echo",
        "description": "Repeats",
        "version": "1.2.0",
        "interfaces": [
            AgentInterface(url="https://a.example/rpc", binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url="https://a.example/rpc", binding="JSONRPC", protocol_version="0.3"),
        ],
    }
    values.update(fields)
    return AgentCard(**values)


@settings(max_examples=examples(150), deadline=None)
@given(cards)
def test_card_round_trip(card: AgentCard) -> None:
    doc = encode_card_v03(card, jsonrpc_url=card.interfaces[0].url)
    assert decode_card_v03(doc) == card
    # and through the JSON text, as a client reads it
    assert decode_card_v03(msgspec.json.decode(msgspec.json.encode(doc))) == card


def test_main_fields_and_interfaces() -> None:
    card = base_card(
        interfaces=[
            AgentInterface(url="https://a.example/", binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url="https://a.example/", binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(url="https://a.example/v1", binding="HTTP+JSON", protocol_version="0.3"),
            AgentInterface(
                url="https://a.example/rest", binding="HTTP+JSON", protocol_version="1.0"
            ),
            AgentInterface(url="grpc.a.example:443", binding="GRPC", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, extended_card=True),
        provider=AgentProvider(organization="Acme"),
    )
    doc = encode_card_v03(card, jsonrpc_url="https://a.example/")
    assert doc["url"] == "https://a.example/"
    assert doc["preferredTransport"] == "JSONRPC"
    assert doc["protocolVersion"] == "0.3.0"
    # v1.0 interfaces are not offered to v0.3 clients; the main one is listed first.
    assert doc["additionalInterfaces"] == [
        {"url": "https://a.example/", "transport": "JSONRPC"},
        {"url": "https://a.example/v1", "transport": "HTTP+JSON"},
        {"url": "grpc.a.example:443", "transport": "GRPC"},
    ]
    assert doc["capabilities"] == {
        "streaming": True,
        "pushNotifications": False,
        "stateTransitionHistory": False,
    }
    assert doc["supportsAuthenticatedExtendedCard"] is True
    assert doc["provider"] == {"organization": "Acme", "url": ""}
    assert doc["defaultInputModes"] == ["text/plain"]
    assert doc["skills"] == []
    back = decode_card_v03(doc)
    assert [(i.url, i.binding, i.protocol_version) for i in back.interfaces] == [
        ("https://a.example/", "JSONRPC", "0.3"),
        ("https://a.example/v1", "HTTP+JSON", "0.3"),
        ("grpc.a.example:443", "GRPC", "0.3"),
    ]
    assert back.capabilities.extended_card is True
    assert back.provider == AgentProvider(organization="Acme")


def test_only_main_interface_means_no_additional_interfaces() -> None:
    doc = encode_card_v03(base_card(), jsonrpc_url="https://a.example/rpc")
    assert "additionalInterfaces" not in doc
    assert "supportsAuthenticatedExtendedCard" not in doc


def test_security_schemes_in_the_type_form() -> None:
    # Shapes per DIALECTS.md §e ("v0.2 / v0.3 (`type` discriminator)").
    card = base_card(
        security_schemes={
            "key": APIKeyScheme(name="X-API-Key", location="header", description="a key"),
            "bearer": HTTPAuthScheme(scheme="bearer", bearer_format="JWT"),
            "oauth": OAuth2Scheme(
                flows={
                    "authorization_code": OAuthFlow(
                        authorization_url="https://id/auth",
                        token_url="https://id/token",
                        scopes={"read": "Read"},
                        pkce_required=True,
                    ),
                    "client_credentials": OAuthFlow(token_url="https://id/token"),
                    "device_code": OAuthFlow(device_authorization_url="https://id/device"),
                },
                metadata_url="https://id/.well-known/oauth-authorization-server",
            ),
            "oidc": OpenIdConnectScheme(url="https://id/.well-known/openid-configuration"),
            "mtls": MutualTLSScheme(),
        },
        security=[{"oauth": ["read"]}, {"key": []}],
    )
    doc = encode_card_v03(card, jsonrpc_url="https://a.example/rpc")
    assert doc["securitySchemes"] == {
        "key": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "a key"},
        "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
        "oauth": {
            "type": "oauth2",
            "flows": {
                "authorizationCode": {
                    "authorizationUrl": "https://id/auth",
                    "tokenUrl": "https://id/token",
                    "scopes": {"read": "Read"},
                },
                "clientCredentials": {"tokenUrl": "https://id/token", "scopes": {}},
            },
            "oauth2MetadataUrl": "https://id/.well-known/oauth-authorization-server",
        },
        "oidc": {
            "type": "openIdConnect",
            "openIdConnectUrl": "https://id/.well-known/openid-configuration",
        },
        "mtls": {"type": "mutualTLS"},
    }
    assert doc["security"] == [{"oauth": ["read"]}, {"key": []}]
    back = decode_card_v03(doc)
    oauth = back.security_schemes["oauth"]
    assert isinstance(oauth, OAuth2Scheme)
    assert set(oauth.flows) == {
        "authorization_code",
        "client_credentials",
    }  # no device code in v0.3
    assert oauth.flows["authorization_code"].pkce_required is False
    assert back.security_schemes["key"] == card.security_schemes["key"]


def test_v02_card_without_protocol_version() -> None:
    # A v0.2.0-v0.2.4 card: no protocolVersion, no preferredTransport.
    doc = {
        "name": "Currency Agent",
        "description": "Converts currencies",
        "url": "http://localhost:10000/",
        "version": "1.0.0",
        "capabilities": {"streaming": True, "pushNotifications": True},
        "defaultInputModes": ["text", "text/plain"],
        "defaultOutputModes": ["text"],
        "skills": [
            {
                "id": "convert_currency",
                "name": "Currency Exchange Rates Tool",
                "description": "Helps with exchange values between currencies",
                "tags": ["currency conversion"],
                "examples": ["What is exchange rate between USD and GBP?"],
            }
        ],
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "security": [{"bearer": []}],
        "supportsAuthenticatedExtendedCard": True,
    }
    card = decode_card_v03(doc)
    assert card.interfaces == [
        AgentInterface(url="http://localhost:10000/", binding="JSONRPC", protocol_version="0.2")
    ]
    assert card.capabilities.streaming and card.capabilities.push_notifications
    assert card.capabilities.extended_card
    assert card.skills[0].examples == ["What is exchange rate between USD and GBP?"]
    assert card.default_input_modes == ["text", "text/plain"]
    assert card.security_schemes == {"bearer": HTTPAuthScheme(scheme="bearer")}
    # written back as a v0.3 card that both schemas accept
    out = encode_card_v03(card, jsonrpc_url=card.interfaces[0].url)
    assert_valid(out, "AgentCard")
    assert_valid(out, "AgentCard", "v0.2.6")


@pytest.mark.parametrize(
    ("version", "expected"), [("0.2.5", "0.2"), ("0.3.0", "0.3"), ("0.3", "0.3")]
)
def test_protocol_version_is_major_minor(version: str, expected: str) -> None:
    doc = {
        "name": "A",
        "description": "d",
        "version": "1",
        "url": "https://a/grpc",
        "preferredTransport": "GRPC",
        "protocolVersion": version,
        "additionalInterfaces": [
            {"url": "https://a/grpc", "transport": "GRPC"},
            {"url": "https://a/rpc", "transport": "JSONRPC"},
        ],
        "capabilities": {},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [],
    }
    assert_valid(doc, "AgentCard", "v0.2.6" if version.startswith("0.2") else "v0.3.0")
    card = decode_card_v03(doc)
    assert card.interfaces == [
        AgentInterface(url="https://a/grpc", binding="GRPC", protocol_version=expected),
        AgentInterface(url="https://a/rpc", binding="JSONRPC", protocol_version=expected),
    ]


def test_unknown_scheme_types_are_skipped() -> None:
    doc = {
        "name": "A",
        "url": "https://a/",
        "securitySchemes": {
            "new": {"httpAuthSecurityScheme": {"scheme": "bearer"}},
            "old": {"type": "apiKey", "in": "query", "name": "k"},
        },
    }
    card = decode_card_v03(doc)
    assert card.security_schemes == {"old": APIKeyScheme(name="k", location="query")}


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"url": "https://a/"}, "`name`"),
        ({"name": "A"}, "`url`"),
        ({"name": "A", "url": "https://a/", "skills": [{"id": "s"}]}, "`name`"),
        ({"name": "A", "url": "https://a/", "capabilities": []}, "card.capabilities"),
        (
            {"name": "A", "url": "https://a/", "securitySchemes": {"k": {"type": "apiKey"}}},
            "card.securitySchemes.k",
        ),
    ],
)
def test_bad_cards_name_the_field(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(errors.InvalidAgentResponse) as info:
        decode_card_v03(doc)
    assert field in info.value.message


def test_extended_card_call_uses_the_legacy_jsonrpc_url() -> None:
    card = base_card(
        interfaces=[
            AgentInterface(url="https://a/v1rpc", binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url="https://a/legacy", binding="JSONRPC", protocol_version="0.3"),
        ]
    )
    doc = msgspec.json.decode(codec.encode_result(GetExtendedCard(), card))
    assert doc["url"] == "https://a/legacy"
    back = codec.decode_result(GetExtendedCard(), msgspec.json.encode(doc))
    assert isinstance(back, AgentCard)
    assert back.name == "Echo"
    # a card with only a v1.0 JSON-RPC interface still names a URL
    only_v1 = base_card(interfaces=card.interfaces[:1])
    doc = msgspec.json.decode(codec.encode_result(GetExtendedCard(), only_v1))
    assert doc["url"] == "https://a/v1rpc"
