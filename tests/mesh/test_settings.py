"""Mesh settings refuse numbers that cannot work where they are given (a card published
in a tight loop, a session expiry MQTT 5 cannot carry); names are the profile's to
check when it lays out its topics."""

from __future__ import annotations

from typing import Any

import pytest

from interlingua import Agent, create_app
from interlingua.mesh import MeshSettings, attach

URL = "mqtt://127.0.0.1:1883"


@pytest.mark.parametrize(("fields", "complaint"), [
    ({"session_expiry": -1}, "session_expiry must be 0 to 4294967295"),
    ({"session_expiry": 2**32}, "session_expiry must be 0 to 4294967295"),
    ({"card_interval": 0.0}, "card_interval must be above 0"),
    ({"reconnect_delay": -1.0}, "reconnect_delay must be above 0"),
    ({"reconnect_delay": float("nan")}, "reconnect_delay must be above 0"),
    ({"cancel_grace": -0.5}, "cancel_grace must not be negative"),
])
def test_a_number_that_cannot_work_is_refused_by_name(fields: dict[str, Any],
                                                      complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        MeshSettings(url=URL, namespace="ns", **fields)


@pytest.mark.parametrize(("fields", "complaint"), [
    ({"namespace": "a/+/b"}, "namespace 'a/\\+/b' cannot be a topic level"),
    ({"namespace": "ns", "instance": "x/y"}, "instance 'x/y' cannot be a topic level"),
    ({"namespace": "ns", "profile": "bogus"}, "unknown mesh profile 'bogus'"),
])
def test_a_name_no_topic_can_hold_is_refused_when_attached(fields: dict[str, Any],
                                                           complaint: str) -> None:
    async def echo(ctx: Any) -> None:
        await ctx.complete("x")

    app = create_app(Agent("echo", "d", echo), store="memory://")
    with pytest.raises(ValueError, match=complaint):
        attach(app, MeshSettings(url=URL, **fields))


def test_the_edges_that_work_are_taken() -> None:
    s = MeshSettings(url=URL, namespace="ns", session_expiry=0, cancel_grace=0.0,
                     card_interval=0.1, reconnect_delay=0.01)
    assert (s.session_expiry, s.cancel_grace) == (0, 0.0)
    assert MeshSettings(url=URL, namespace="ns", session_expiry=2**32 - 1).session_expiry
