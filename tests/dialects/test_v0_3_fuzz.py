"""Fuzzing only v0.2/v0.3 has: its agent cards.

The checks every dialect gets are in test_fuzz.py (``V0_3`` there).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.dialects.v0_3 import decode_card_v03, encode_card_v03
from interlingua.core.model import AgentCard
from tests.dialects.test_fuzz import V0_3
from tests.dialects.v0_3_strategies import cards
from tests.hypothesis_budget import examples


@settings(max_examples=examples(150), deadline=None)
@given(st.data(), cards)
def test_mutated_cards(data: st.DataObject, card: AgentCard) -> None:
    doc = data.draw(V0_3.mutated(encode_card_v03(card, jsonrpc_url="https://a/rpc")))
    try:
        back = decode_card_v03(doc)
    except errors.InvalidAgentResponse:
        return
    assert isinstance(back, AgentCard)
    # one write-and-read settles a card: after it, round trips are exact
    settled = decode_card_v03(encode_card_v03(back, jsonrpc_url=back.interfaces[0].url))
    assert (
        decode_card_v03(encode_card_v03(settled, jsonrpc_url=settled.interfaces[0].url)) == settled
    )


@settings(max_examples=examples(150), deadline=None)
@given(V0_3.docs)
def test_arbitrary_cards(doc: Any) -> None:
    try:
        decode_card_v03(doc)
    except errors.InvalidAgentResponse:
        pass
