"""The v0.1 agent card: members added by ``encode_card_v01``, read by ``decode_card_v01``.

Our card is one hybrid document (v1.0 deep-merged with v0.3, DIALECTS.md
§e/§i.24). v0.1 readers need only ``authentication`` on top (and
``capabilities.stateTransitionHistory``, which v0.3 shares): the hybrid with
those members added must be a valid v0.1.0 ``AgentCard`` that reads back.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.dialects._common import merge
from interlingua.core.dialects.v0_1 import decode_card_v01, encode_card_v01
from interlingua.core.dialects.v0_3 import legacy_url
from interlingua.core.model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeyScheme,
    HTTPAuthScheme,
    MutualTLSScheme,
    OAuth2Scheme,
    OAuthFlow,
    OpenIdConnectScheme,
    SecurityScheme,
)
from interlingua.server.cards.document import card_document
from tests.dialects import v0_3_strategies as v03
from tests.dialects.v0_1_strategies import assert_valid, str_lists, texts
from tests.hypothesis_budget import examples

URL = "https://agent.example/a2a"


def hybrid(card: AgentCard) -> dict[str, Any]:
    """Our well-known card, which holds the v0.1 members (``url`` the card's own)."""
    doc: dict[str, Any] = msgspec.json.decode(card_document(card))
    assert doc == merge(doc, encode_card_v01(card, url=legacy_url(card)))
    return doc


def base_card(**fields: Any) -> AgentCard:
    values: dict[str, Any] = {
        "name": "Echo",
        "description": "Repeats",
        "version": "1.2.0",
        "interfaces": [AgentInterface(url=URL, binding="JSONRPC", protocol_version="0.1")],
    }
    values.update(fields)
    return AgentCard(**values)


# Canonical scheme -> its v0.1 name (the spec's §4.3 / §5.5.3 examples and OpenAPI names).
NAMED: list[tuple[SecurityScheme, str]] = [
    (HTTPAuthScheme(scheme="bearer", bearer_format="JWT"), "Bearer"),
    (HTTPAuthScheme(scheme="Bearer"), "Bearer"),
    (HTTPAuthScheme(scheme="basic"), "Basic"),
    (HTTPAuthScheme(scheme="digest"), "Digest"),
    (HTTPAuthScheme(scheme="Negotiate"), "Negotiate"),
    (APIKeyScheme(name="X-Key", location="header"), "ApiKey"),
    (OAuth2Scheme(flows={"client_credentials": OAuthFlow(token_url="https://t")}), "OAuth2"),
    (OpenIdConnectScheme(url="https://idp/.well-known/openid-configuration"), "OpenIdConnect"),
    (MutualTLSScheme(), "mTLS"),
]


@pytest.mark.parametrize(("scheme", "name"), NAMED, ids=[n for _, n in NAMED])
def test_scheme_names(scheme: SecurityScheme, name: str) -> None:
    added = encode_card_v01(base_card(security_schemes={"s": scheme}), url=URL)
    assert added["authentication"] == {"schemes": [name]}


def test_added_members() -> None:
    card = base_card(
        capabilities=AgentCapabilities(streaming=True, state_transition_history=True),
        security_schemes={
            "jwt": HTTPAuthScheme(scheme="bearer"),
            "other-jwt": HTTPAuthScheme(scheme="bearer"),
            "key": APIKeyScheme(name="X-API-Key", location="header"),
        },
    )
    assert encode_card_v01(card, url=URL) == {
        "url": URL,
        "capabilities": {"stateTransitionHistory": True},
        "authentication": {"schemes": ["Bearer", "ApiKey"]},  # each name once
    }
    # no schemes: no authentication member at all
    assert encode_card_v01(base_card(), url=URL) == {
        "url": URL,
        "capabilities": {"stateTransitionHistory": False},
    }


@settings(max_examples=examples(100), deadline=None)
@given(v03.cards)
def test_hybrid_card_is_a_v01_card(card: AgentCard) -> None:
    doc = hybrid(card)
    assert_valid(doc, "AgentCard")
    back = decode_card_v01(doc)
    assert back.name == card.name
    assert back.description == card.description
    assert back.version == card.version
    assert back.interfaces == [AgentInterface(url=legacy_url(card), binding="JSONRPC",
                                              protocol_version="0.1")]
    assert (
        back.capabilities.streaming,
        back.capabilities.push_notifications,
        back.capabilities.state_transition_history,
    ) == (
        card.capabilities.streaming,
        card.capabilities.push_notifications,
        card.capabilities.state_transition_history,
    )
    assert back.default_input_modes == card.default_input_modes
    assert back.default_output_modes == card.default_output_modes
    assert [(s.id, s.name, s.description, s.tags) for s in back.skills] == [
        (s.id, s.name, s.description, s.tags) for s in card.skills
    ]
    assert back.documentation_url == card.documentation_url
    if card.provider is None:
        assert back.provider is None
    else:
        assert back.provider == AgentProvider(
            organization=card.provider.organization, url=card.provider.url or None
        )
    names = list(
        dict.fromkeys(encode_card_v01(card, url=URL).get("authentication", {}).get("schemes", []))
    )
    assert list(back.security_schemes) == names
    assert back.security == [{n: []} for n in names]


# Cards v0.1 can say exactly: one v0.1 interface, schemes in the form a v0.1 card reads back.
V01_SCHEMES: dict[str, SecurityScheme] = {
    "Bearer": HTTPAuthScheme(scheme="bearer"),
    "Basic": HTTPAuthScheme(scheme="basic"),
    "ApiKey": APIKeyScheme(name="X-API-Key", location="header"),
    "OAuth2": OAuth2Scheme(flows={}),
    "OpenIdConnect": OpenIdConnectScheme(url=""),
    "mTLS": MutualTLSScheme(),
}


@st.composite
def v01_cards(draw: st.DrawFn) -> AgentCard:
    names = draw(st.lists(st.sampled_from(sorted(V01_SCHEMES)), unique=True, max_size=3))
    return AgentCard(
        name=draw(texts),
        description=draw(texts),
        version=draw(texts),
        interfaces=[AgentInterface(url=draw(v03.urls), binding="JSONRPC", protocol_version="0.1")],
        capabilities=AgentCapabilities(
            streaming=draw(st.booleans()),
            push_notifications=draw(st.booleans()),
            state_transition_history=draw(st.booleans()),
        ),
        skills=draw(
            st.lists(
                st.builds(
                    AgentSkill,
                    id=v03.ids,
                    name=texts,
                    description=texts,
                    tags=str_lists,
                    examples=v03.opt_str_list,
                    input_modes=v03.opt_str_list,
                    output_modes=v03.opt_str_list,
                ),
                max_size=2,
            )
        ),
        default_input_modes=draw(str_lists),
        default_output_modes=draw(str_lists),
        provider=draw(st.none() | st.builds(AgentProvider, organization=texts, url=v03.opt_url)),
        documentation_url=draw(v03.opt_url),
        security_schemes={n: V01_SCHEMES[n] for n in names},
        security=[{n: []} for n in names],
    )


@settings(max_examples=examples(100), deadline=None)
@given(v01_cards())
def test_v01_card_round_trip(card: AgentCard) -> None:
    doc = hybrid(card)
    assert decode_card_v01(doc) == card
    assert decode_card_v01(msgspec.json.decode(msgspec.json.encode(doc))) == card


def test_credentials_fill_in_scheme_details() -> None:
    doc: dict[str, Any] = {
        "name": "A",
        "url": URL,
        "version": "1",
        "capabilities": {},
        "skills": [],
        "authentication": {
            "schemes": ["ApiKey", "OpenIdConnect", "OAuth2", "bearer", "Custom"],
            "credentials": '{"in": "query", "name": "key", "openIdConnectUrl": "https://idp/oidc", "authorizationUrl": "https://a"}',
        },
    }
    card = decode_card_v01(doc)
    assert card.security_schemes == {
        "ApiKey": APIKeyScheme(name="key", location="query"),
        "OpenIdConnect": OpenIdConnectScheme(url="https://idp/oidc"),
        "OAuth2": OAuth2Scheme(flows={"implicit": OAuthFlow(authorization_url="https://a")}),
        "bearer": HTTPAuthScheme(scheme="bearer"),
        "Custom": HTTPAuthScheme(scheme="Custom"),
    }
    assert encode_card_v01(card, url=URL)["authentication"] == {
        "schemes": ["ApiKey", "OpenIdConnect", "OAuth2", "Bearer", "Custom"]
    }
    # credentials that are not a JSON object are ignored, not fatal
    doc["authentication"] = {"schemes": ["ApiKey"], "credentials": "secret-name"}
    assert decode_card_v01(doc).security_schemes == {
        "ApiKey": APIKeyScheme(name="X-API-Key", location="header")
    }


def test_a_minimal_and_a_null_filled_card() -> None:
    card = decode_card_v01({"name": "A", "url": URL})
    assert card == AgentCard(
        name="A",
        description="",
        version="",
        interfaces=[AgentInterface(url=URL, binding="JSONRPC", protocol_version="0.1")],
    )
    assert card.default_input_modes == ["text/plain"]  # the spec's default
    nulls = decode_card_v01(
        {
            "name": "A",
            "url": URL,
            "description": None,
            "provider": None,
            "documentationUrl": None,
            "authentication": None,
            "version": "1",
            "capabilities": {"streaming": True},
            "skills": [{"id": "s", "name": "S", "description": None, "tags": None}],
        }
    )
    assert nulls.capabilities.streaming is True
    assert nulls.skills == [AgentSkill(id="s", name="S")]
    assert nulls.security_schemes == {}


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"url": URL}, "`name`"),
        ({"name": "A"}, "`url`"),
        ({"name": "A", "url": URL, "skills": [{"id": "s"}]}, "card.skills[0]"),
        (
            {"name": "A", "url": URL, "capabilities": {"streaming": "yes"}},
            "card.capabilities.streaming",
        ),
        (
            {"name": "A", "url": URL, "authentication": {"schemes": "Bearer"}},
            "card.authentication.schemes",
        ),
    ],
)
def test_bad_cards_name_the_field(doc: Any, field: str) -> None:
    with pytest.raises(errors.InvalidAgentResponse) as info:
        decode_card_v01(doc)
    assert field in info.value.message


def test_not_a_card() -> None:
    doc: Any
    for doc in (None, [], "card", 3):
        with pytest.raises(errors.InvalidAgentResponse):
            decode_card_v01(doc)
