"""Dialect detection: method name, payload shape, header, recorded dialect."""

from __future__ import annotations

import msgspec
import pytest

from interlingua.core.dialects.detect import detect
from interlingua.core.errors import InvalidRequest, MethodNotFound


def p(doc: object) -> bytes:
    return msgspec.json.encode(doc)


@pytest.mark.parametrize(
    ("method", "dialect"),
    [("SendMessage", "1.0"), ("ListTasks", "1.0"), ("GetExtendedAgentCard", "1.0"),
     ("tasks/pushNotificationConfig/list", "0.3"),
     ("agent/getAuthenticatedExtendedCard", "0.3"), ("tasks/sendSubscribe", "0.1"),
     ("tasks/pushNotification/set", "0.1"), ("tasks/send-streaming", "sam"),
     ("task/subscribe", "tutorial")],
)
def test_by_method_name(method: str, dialect: str) -> None:
    assert detect(method, None).dialect == dialect


def test_unknown_method() -> None:
    with pytest.raises(MethodNotFound):
        detect("tasks/list", None)


V03_MESSAGE = {"kind": "message", "messageId": "m", "role": "user",
               "parts": [{"kind": "text", "text": "hi", "metadata": {"type": "x"}}]}


def test_message_send_v03_vs_tutorial() -> None:
    assert detect("message/send", p({"message": V03_MESSAGE})).dialect == "0.3"
    tut = {"message": {"role": "user", "parts": [{"type": "text", "text": "ping"}]}}
    assert detect("message/send", p(tut)).dialect == "tutorial"
    # the tutorial's message streamed by a v0.3 client library: no messageId
    assert detect("message/stream", p({"message": V03_MESSAGE})).dialect == "0.3"
    assert detect("message/stream", p(tut)).dialect == "tutorial"
    no_id = {"message": {k: v for k, v in V03_MESSAGE.items() if k != "messageId"}}
    assert detect("message/stream", p(no_id)).dialect == "tutorial"
    # "type" parts with a messageId are the tutorial variant too
    tut_id = {"message": {"role": "user", "messageId": "m",
                          "parts": [{"type": "text", "text": "x"}]}}
    assert detect("message/send", p(tut_id)).dialect == "tutorial"
    # text that merely mentions the key names is content, not a key
    tricky = {"message": {**V03_MESSAGE, "parts": [{"kind": "text", "text": '"type": 1'}]}}
    assert detect("message/send", p(tricky)).dialect == "0.3"


def test_tasks_send_v01_vs_sam() -> None:
    v01 = {"id": "task-1", "message": {"role": "user", "parts": [{"type": "text", "text": "x"}]}}
    assert detect("tasks/send", p(v01)).dialect == "0.1"
    sam = {"message": {"role": "user", "parts": [{"text": "x"}], "message_id": "m",
                       "context_id": "c", "kind": "message"}}
    assert detect("tasks/send", p(sam)).dialect == "sam"


def test_tasks_send_without_id_needs_a_sam_marker() -> None:
    """No ``id`` and "type" parts without snake_case keys or untagged parts: v0.1
    missing its id, left to the v0.1 codec to refuse."""
    v01 = {"message": {"role": "user", "parts": [{"type": "text", "text": "x"}]}}
    for strict in (False, True):
        assert detect("tasks/send", p(v01), strict=strict).dialect == "0.1"
        assert detect("tasks/send", p(v01["message"]), strict=strict).dialect == "0.1"
    # SAM's markers still name SAM: a snake_case key, or a part without a tag
    snake = {"message": {**v01["message"], "message_id": "m"}}
    assert detect("tasks/send", p(snake)).dialect == "sam"
    untagged = {"message": {"role": "user",
                            "parts": [{"type": "text", "text": "x"}, {"text": "y"}]}}
    assert detect("tasks/send", p(untagged)).dialect == "sam"


def test_a_message_kind_is_no_part_discriminator() -> None:
    tut = {"message": {"kind": "message", "messageId": "m", "role": "user",
                       "parts": [{"type": "text", "text": "x"}]}}
    assert detect("message/send", p(tut)).dialect == "tutorial"
    assert detect("message/send", p(tut), strict=True).dialect == "tutorial"
    bare = tut["message"]
    assert detect("message/stream", p(bare), strict=True).dialect == "tutorial"


def test_shared_methods_use_header_then_the_task() -> None:
    d = detect("tasks/get", p({"id": "t1"}))
    assert d.dialect is None and d.task_id == "t1" and d.fallback == "0.3"
    assert detect("tasks/get", p({"id": "t1"}), header_version="0.1").dialect == "0.1"
    assert detect("tasks/cancel", p({"id": "t1"}), header_version="0.3").dialect == "0.3"
    assert detect("tasks/resubscribe", p({"id": "t1"}), header_version="0.2").dialect == "0.3"


def test_strict_mode_refuses_mixed_payloads() -> None:
    mixed = {"message": {"role": "user", "messageId": "m",
                         "parts": [{"kind": "text", "type": "text", "text": "x"}]}}
    assert detect("message/send", p(mixed)).dialect == "0.3"
    with pytest.raises(InvalidRequest, match="kind"):
        detect("message/send", p(mixed), strict=True)
    both = {"id": "t", "message": {"role": "user", "parts": [{"text": "x"}],
                                   "message_id": "m"}}
    assert detect("tasks/send", p(both)).dialect == "0.1"
    with pytest.raises(InvalidRequest, match="snake_case"):
        detect("tasks/send", p(both), strict=True)


def test_deeply_nested_params_are_invalid_params_not_a_crash() -> None:
    from interlingua.core.dialects import all_codecs
    from interlingua.core.errors import A2AError

    deep = b'{"message":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    for codec in all_codecs().values():
        for method in codec.methods:
            try:
                codec.decode_call(method, deep)
            except A2AError as exc:
                assert codec.code_of(exc) in (-32602, -32600, -32004, -32601), exc


def test_keys_in_content_are_not_markers() -> None:
    """Only the message's and its parts' own members count: keys inside metadata or
    a data part's data are the user's."""
    tut = {"messageId": "m", "role": "user", "parts": [{"type": "text", "text": "x"}]}
    for meta in ({"kind": "k"}, {"kind": {"kind": 1}}):
        assert detect("message/send", p({"message": {**tut, "metadata": meta}})).dialect \
            == "tutorial"
        assert detect("message/send", p({"message": tut, "metadata": meta}),
                      strict=True).dialect == "tutorial"
    kindless = {"messageId": "m", "role": "user", "parts": [{"text": "x"}, {"data": {"a": 1}}]}
    assert detect("message/send", p({"message": {**kindless, "metadata": {"type": "x"}}}),
                  strict=True).dialect == "0.3"
    in_data = {**kindless, "parts": [{"data": {"type": "order"}}]}
    assert detect("message/send", p({"message": in_data})).dialect == "0.3"
    v03 = {**V03_MESSAGE, "parts": [{"kind": "data", "data": {"type": "order"}}]}
    assert detect("message/send", p({"message": v03}), strict=True).dialect == "0.3"
    # a messageId only in metadata: the message has none
    no_id = {k: v for k, v in V03_MESSAGE.items() if k != "messageId"}
    assert detect("message/send", p({"message": {**no_id, "metadata": {"messageId": "m"}}})
                  ).dialect == "tutorial"
    # a bare Message as params, its parts under python-a2a's ``content``
    assert detect("message/send", p({**kindless, "metadata": {"type": 1}})).dialect == "0.3"
    bare = {"messageId": "m", "role": "user", "content": {"type": "text", "text": "x"},
            "metadata": {"kind": 1}}
    assert detect("message/send", p(bare)).dialect == "tutorial"


def test_snake_case_keys_in_content_are_not_sam_markers() -> None:
    v01 = {"id": "t", "message": {"role": "user", "metadata": {"context_id": "c"}, "parts": [
        {"type": "data", "data": {"task_id": "T-1", "message_id": "m"}}]}}
    assert detect("tasks/send", p(v01), strict=True).dialect == "0.1"
    # SAM's own: a file part's mime_type, a bare message's message_id
    sam_file = {"message": {"role": "user", "metadata": {}, "parts": [
        {"file": {"uri": "u", "mime_type": "text/plain"}}]}}
    assert detect("tasks/send", p(sam_file)).dialect == "sam"
    with pytest.raises(InvalidRequest, match="snake_case"):
        detect("tasks/send", p({"id": "t", **sam_file}), strict=True)
    bare = {"role": "user", "message_id": "m", "parts": [{"data": {"id": 1}}]}
    assert detect("tasks/send", p(bare)).dialect == "sam"


def test_params_not_shaped_as_a_message_are_left_to_the_codec() -> None:
    odd = {"message": {"role": "user", "parts": "x", "metadata": {"kind": 1}, "messageId": "m"}}
    assert detect("message/send", p(odd)).dialect == "0.3"
    assert detect("tasks/send", p({"id": "t", "message": "x"})).dialect == "0.1"
    assert detect("tasks/send", p({"message": {"message_id": "m", "parts": 1}})).dialect == "sam"
    assert detect("tasks/send", p([1])).dialect == "0.1"


def test_a_cancel_naming_the_task_task_id_is_sams() -> None:
    for key in ("task_id", "taskId"):
        assert detect("tasks/cancel", p({key: "t1"})).dialect == "sam"
        # the payload's shape before the header: only SAM's cancel reads the member
        assert detect("tasks/cancel", p({key: "t1"}), header_version="0.3").dialect == "sam"
        # SAM has no tasks/get nor tasks/resubscribe: v0.3's name the task ``id``
        d = detect("tasks/get", p({key: "t1"}))
        assert d.dialect is None and d.task_id is None and d.fallback == "0.3"
    both = detect("tasks/cancel", p({"id": "t1", "task_id": "t1"}))
    assert both.dialect is None and both.task_id == "t1"
    in_metadata = detect("tasks/cancel", p({"id": "t1", "metadata": {"task_id": "x"}}))
    assert in_metadata.dialect is None and in_metadata.task_id == "t1"
