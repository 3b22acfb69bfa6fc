"""core/bounds.py at each bound: a field at its bound is no fault, one byte (or one
entry) past it is, named by its path; sizes are UTF-8 bytes, not characters. Every
binding's refusal of them: tests/bindings/test_parity_field_sizes.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from interlingua.core import bounds as b
from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.dialects import get_codec

URL = "https://hooks.example.com/"


def _send(*, refs: list[str] | None = None, extensions: list[str] | None = None,
          modes: list[str] | None = None, push: m.PushConfig | None = None) -> c.SendMessage:
    msg = m.Message(message_id="m", role=m.Role.USER, parts=[m.TextPart(text="1")],
                    reference_task_ids=refs, extensions=extensions)
    return c.SendMessage(message=msg, config=c.SendConfig(accepted_output_modes=modes,
                                                          push_config=push))


def _set(**kw: object) -> c.SetPushConfig:
    return c.SetPushConfig(task_id="t", config=m.PushConfig(**kw))  # type: ignore[arg-type]


def _auth(schemes: list[str], credentials: str | None = None) -> m.AuthInfo:
    return m.AuthInfo(schemes=schemes, credentials=credentials)


#: name -> (the call at size or count ``n``, the bound, the path refused)
CASES: dict[str, tuple[Callable[[int], c.Call], int, list[str]]] = {
    "token": (lambda n: _set(url=URL, token="t" * n), b.MAX_PUSH_TOKEN_BYTES,
              ["pushNotificationConfig", "token"]),
    "url": (lambda n: _set(url=URL + "u" * (n - len(URL))), b.MAX_URL_BYTES,
            ["pushNotificationConfig", "url"]),
    "credentials": (lambda n: _set(url=URL, authentication=_auth(["Bearer"], "k" * n)),
                    b.MAX_CREDENTIALS_BYTES,
                    ["pushNotificationConfig", "authentication", "credentials"]),
    "schemes": (lambda n: _set(url=URL, authentication=_auth(["S"] * n)), b.MAX_SCHEMES,
                ["pushNotificationConfig", "authentication", "schemes"]),
    "a scheme": (lambda n: _set(url=URL, authentication=_auth(["Bearer", "s" * n])),
                 b.MAX_NAME_BYTES,
                 ["pushNotificationConfig", "authentication", "schemes", "[1]"]),
    "a send's token": (lambda n: _send(push=m.PushConfig(url=URL, token="t" * n)),
                       b.MAX_PUSH_TOKEN_BYTES,
                       ["configuration", "pushNotificationConfig", "token"]),
    "reference ids": (lambda n: _send(refs=[f"r{i}" for i in range(n)]),
                      b.MAX_REFERENCE_TASK_IDS, ["message", "referenceTaskIds"]),
    "extensions": (lambda n: _send(extensions=[URL] * n), b.MAX_EXTENSIONS,
                   ["message", "extensions"]),
    "an extension": (lambda n: _send(extensions=[URL, URL + "e" * (n - len(URL))]),
                     b.MAX_URL_BYTES, ["message", "extensions", "[1]"]),
    "output modes": (lambda n: _send(modes=["text/plain"] * n), b.MAX_OUTPUT_MODES,
                     ["configuration", "acceptedOutputModes"]),
    "an output mode": (lambda n: _send(modes=["x" * n]), b.MAX_NAME_BYTES,
                       ["configuration", "acceptedOutputModes", "[0]"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_at_the_bound_taken_one_past_refused(name: str) -> None:
    make, limit, path = CASES[name]
    assert b.call_fault(make(limit)) is None
    fault = b.call_fault(make(limit + 1))
    assert fault is not None and fault[0] == path, fault
    assert str(limit) in fault[1], fault


def test_sizes_are_utf8_bytes() -> None:
    """A token of 2048 "é" is 4096 bytes, at the bound; one more ASCII byte is past it,
    though it is 2049 characters."""
    assert b.call_fault(_set(url=URL, token="é" * 2048)) is None
    fault = b.call_fault(_set(url=URL, token="é" * 2048 + "a"))
    assert fault == (["pushNotificationConfig", "token"],
                     "is longer than 4096 bytes, the most this agent accepts")


def test_a_send_without_such_fields_and_other_calls_have_none() -> None:
    assert b.call_fault(_send()) is None
    assert b.call_fault(c.GetTask(id="x" * 100_000)) is None


@pytest.mark.parametrize(("dialect", "path", "spelt"), [
    ("1.0", ["configuration", "pushNotificationConfig", "token"],
     ["configuration", "taskPushNotificationConfig", "token"]),
    ("1.0", ["pushNotificationConfig", "authentication", "schemes", "[0]"],
     ["authentication", "scheme"]),
    ("1.0", ["message", "referenceTaskIds"], ["message", "referenceTaskIds"]),
    ("0.3", ["pushNotificationConfig", "token"], ["pushNotificationConfig", "token"]),
    ("0.3-pj", ["configuration", "pushNotificationConfig", "url"],
     ["configuration", "pushNotification", "url"]),
    ("0.3-pj", ["pushNotificationConfig", "url"], ["config", "pushNotificationConfig", "url"]),
    ("0.1", ["configuration", "pushNotificationConfig", "token"],
     ["pushNotification", "token"]),
    ("sam", ["message", "referenceTaskIds"], ["message", "reference_task_ids"]),
    ("sam", ["configuration", "acceptedOutputModes", "[3]"],
     ["configuration", "accepted_output_modes", "[3]"]),
])
def test_each_dialect_spells_the_path_of_its_params(dialect: str, path: list[str],
                                                     spelt: list[str]) -> None:
    assert get_codec(dialect).member_path(path) == spelt
