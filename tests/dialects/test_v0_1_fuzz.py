"""Fuzzing only v0.1 has: its tasks as results, and its agent cards.

The checks every dialect gets are in test_fuzz.py (``V0_1`` there).
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from interlingua.core import errors
from interlingua.core.calls import GetTask, SetPushConfig
from interlingua.core.dialects.v0_1 import decode_card_v01, encode_card_v01
from interlingua.core.model import AgentCard, PushConfig
from tests.dialects.fuzzing import FUZZ
from tests.dialects.test_fuzz import SEND_V01, V0_1
from tests.dialects.v0_1_strategies import any_tasks
from tests.hypothesis_budget import examples


@FUZZ
@given(st.data(), any_tasks)
def test_mutated_tasks(data: st.DataObject, task: Any) -> None:
    doc = data.draw(V0_1.mutated(msgspec.json.decode(V0_1.codec.encode_result(SEND_V01, task))))
    raw = msgspec.json.encode(doc)
    V0_1.client_safely(GetTask(id="t"), raw)
    V0_1.client_safely(SetPushConfig(task_id="t", config=PushConfig(url="u")), raw)


@settings(max_examples=examples(150), deadline=None)
@given(V0_1.docs)
def test_arbitrary_cards(doc: Any) -> None:
    try:
        card = decode_card_v01(doc)
    except errors.InvalidAgentResponse:
        return
    assert isinstance(card, AgentCard)
    encode_card_v01(card, url=card.interfaces[0].url)


@settings(max_examples=examples(150), deadline=None)
@given(
    st.data(),
    st.fixed_dictionaries(
        {
            "name": st.text(max_size=5),
            "url": st.text(max_size=5),
            "version": st.text(max_size=5),
            "capabilities": st.fixed_dictionaries({"streaming": st.booleans()}),
            "authentication": st.fixed_dictionaries(
                {
                    "schemes": st.lists(
                        st.sampled_from(["Bearer", "Basic", "ApiKey", "OAuth2", "mTLS", "X"])
                    ),
                    "credentials": st.sampled_from(
                        [
                            '{"in": "query", "name": "k"}',
                            '{"tokenUrl": "https://t"}',
                            "[1]",
                            "{",
                            "",
                        ]
                    ),
                }
            ),
            "skills": st.lists(
                st.fixed_dictionaries({"id": st.text(max_size=3), "name": st.text(max_size=3)}),
                max_size=2,
            ),
        }
    ),
)
def test_mutated_cards(data: st.DataObject, doc: Any) -> None:
    try:
        card = decode_card_v01(data.draw(V0_1.mutated(doc)))
    except errors.InvalidAgentResponse:
        return
    assert isinstance(card, AgentCard)
    assert [i.protocol_version for i in card.interfaces] == ["0.1"]
