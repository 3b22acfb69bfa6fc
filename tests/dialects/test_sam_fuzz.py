"""Fuzzing only the Solace Agent Mesh codec has: input nested too deeply.

The checks every dialect gets are in test_fuzz.py (``SAM`` there).
"""

from __future__ import annotations

import pytest

from interlingua.core import errors
from tests.dialects.test_fuzz import SAM, SEND


def test_deep_nesting_is_refused_not_crashed() -> None:
    deep = b'{"message":{"role":"user","parts":[{"data":' + b'{"a":' * 5000 + b"1" + b"}" * 5000
    deep += b"}]}}"
    with pytest.raises(errors.InvalidParams, match="nested too deeply"):
        SAM.codec.decode_call("tasks/send", deep)
    # results too
    deep_result = b'{"kind":"task","id":"t","context_id":"c","status":{"state":"working"},'
    deep_result += b'"metadata":' + b"[" * 100000 + b"]" * 100000 + b"}"
    with pytest.raises(errors.InvalidAgentResponse):
        SAM.codec.decode_result(SEND, deep_result)
