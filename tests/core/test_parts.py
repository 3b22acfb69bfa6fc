"""The public message/part/task helpers of ``interlingua.core.parts``.

The names follow the helpers seed 002 shows for its SDK (``create_agent_text_message``,
``get_data_from_data_part``, ``create_task_status``, …) without the ``create_`` prefix.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from interlingua.core import parts
from interlingua.core.model import (
    Artifact,
    DataPart,
    FilePart,
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)


def test_all_is_honest() -> None:
    public = {n for n in dir(parts) if not n.startswith("_") and callable(getattr(parts, n))}
    imported = {
        "Artifact",
        "DataPart",
        "FilePart",
        "Message",
        "Part",
        "Role",
        "Task",
        "TaskState",
        "TaskStatus",
        "TextPart",
        "Iterable",
        "Sequence",
        "Any",
        "Metadata",
    }
    assert set(parts.__all__) == public - imported
    for name in parts.__all__:
        assert getattr(parts, name).__doc__, f"{name} has no docstring"


def test_new_id_is_a_time_ordered_uuid() -> None:
    before = time.time_ns() // 1_000_000
    ids = [parts.new_id() for _ in range(2000)]  # crosses the 4 KiB randomness pool
    after = time.time_ns() // 1_000_000
    assert len(set(ids)) == len(ids)
    for text in ids:
        u = uuid.UUID(text)
        assert str(u) == text
        assert u.version == 7 and u.variant == uuid.RFC_4122
        assert before <= u.int >> 80 <= after  # the leading 48 bits: Unix milliseconds
    # made in order, they sort in order down to the millisecond
    stamps = [i[:13] for i in ids]
    assert stamps == sorted(stamps)
    # the variant digit keeps two random bits, and every tail digit is random
    assert {i[19] for i in ids} == set("89ab")
    for position in (15, 16, 17, 20, 21, 22, 24, 35):
        assert len({i[position] for i in ids}) == 16, position


# ------------------------------------------------------------------------ messages


def test_agent_text_message() -> None:
    m = parts.agent_text_message(
        "Processing complete", task_id="task_123", context_id="session_456"
    )
    assert m.role is Role.AGENT
    assert m.parts == [TextPart(text="Processing complete")]
    assert (m.task_id, m.context_id) == ("task_123", "session_456")
    assert m.message_id and m.message_id != parts.agent_text_message("x").message_id


@pytest.mark.parametrize("data", [{"result": "success", "count": 42}, [1, 2], "a string", None])
def test_agent_data_message_keeps_any_value_as_one_data_part(data: Any) -> None:
    m = parts.agent_data_message(data, task_id="task_123", context_id="session_456")
    assert m.role is Role.AGENT
    assert m.parts == [DataPart(data=data)]
    assert (m.task_id, m.context_id) == ("task_123", "session_456")


def test_agent_parts_message_as_seed_002_builds_it() -> None:
    m = parts.agent_parts_message(
        [
            parts.text_part("Here are the results:"),
            parts.data_part({"items": [1, 2, 3]}),
            parts.file_part_from_uri(
                uri="artifact://session/file.pdf", name="file.pdf", mime_type="application/pdf"
            ),
        ],
        task_id="task_123",
        context_id="session_456",
        metadata={"agent_name": "MyAgent"},
    )
    assert m.parts == [
        TextPart(text="Here are the results:"),
        DataPart(data={"items": [1, 2, 3]}),
        FilePart(
            uri="artifact://session/file.pdf", filename="file.pdf", media_type="application/pdf"
        ),
    ]
    assert m.metadata == {"agent_name": "MyAgent"}
    assert parts.get_text(m) == "Here are the results:"


def test_agent_parts_message_takes_any_iterable() -> None:
    m = parts.agent_parts_message(parts.text_part(t) for t in "ab")
    assert parts.get_text(m, sep="") == "ab"


def test_agent_parts_message_refuses_non_parts_and_nothing() -> None:
    with pytest.raises(TypeError, match="not a part: str"):
        parts.agent_parts_message(["text"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least one part"):
        parts.agent_parts_message([])


def test_user_and_agent_message_from_mixed_content() -> None:
    m = parts.user_message(["hi", b"\x00", parts.data_part({"k": 1})])
    assert m.role is Role.USER
    assert [type(p) for p in m.parts] == [TextPart, FilePart, DataPart]
    assert parts.agent_message("x").role is Role.AGENT
    # a list of plain values is data, not parts
    assert parts.agent_message([{"k": 1}, 2]).parts == [DataPart(data=[{"k": 1}, 2])]


# --------------------------------------------------------------------------- files


def test_file_part_from_uri() -> None:
    p = parts.file_part_from_uri(
        "artifact://s/report.pdf", name="report.pdf", mime_type="application/pdf"
    )
    assert p == FilePart(
        uri="artifact://s/report.pdf", filename="report.pdf", media_type="application/pdf"
    )
    assert parts.get_uri_from_file_part(p) == "artifact://s/report.pdf"
    assert parts.get_bytes_from_file_part(p) is None


def test_file_part_from_bytes() -> None:
    p = parts.file_part_from_bytes(bytearray(b"\x89PNG"), name="image.png", mime_type="image/png")
    assert p == FilePart(raw=b"\x89PNG", filename="image.png", media_type="image/png")
    assert type(p.raw) is bytes
    assert parts.get_bytes_from_file_part(p) == b"\x89PNG"
    assert parts.get_uri_from_file_part(p) is None
    with pytest.raises(TypeError, match="bytes"):
        parts.file_part_from_bytes("not bytes")  # type: ignore[arg-type]


def test_file_part_needs_exactly_one_source() -> None:
    with pytest.raises(ValueError):
        parts.file_part()
    with pytest.raises(ValueError):
        parts.file_part(raw=b"x", uri="u")
    assert parts.file_part(uri="u", filename="f").filename == "f"


# ------------------------------------------------------------------------- reading


def test_reading_parts_as_seed_002_does() -> None:
    m = parts.agent_parts_message(
        [
            parts.text_part("one"),
            parts.data_part({"a": 1}),
            parts.file_part_from_uri("u1"),
            parts.text_part("two"),
            parts.data_part([2]),
            parts.file_part_from_bytes(b"b2"),
        ]
    )
    assert parts.get_text(m) == "one\ntwo"
    assert [parts.get_data_from_data_part(p) for p in parts.data_parts(m)] == [{"a": 1}, [2]]
    assert parts.get_data(m) == [{"a": 1}, [2]]
    files = parts.file_parts(m)
    assert [parts.get_uri_from_file_part(p) for p in files] == ["u1", None]
    assert [parts.get_bytes_from_file_part(p) for p in files] == [None, b"b2"]
    # the same readers work on an artifact and on a bare list of parts
    art = Artifact(artifact_id="a", parts=m.parts)
    assert parts.get_text(art) == parts.get_text(m.parts) == "one\ntwo"


@pytest.mark.parametrize(
    ("reader", "wrong"),
    [
        (parts.get_data_from_data_part, TextPart(text="x")),
        (parts.get_uri_from_file_part, DataPart(data={})),
        (parts.get_bytes_from_file_part, TextPart(text="x")),
    ],
)
def test_readers_refuse_the_wrong_part(reader: Any, wrong: Any) -> None:
    with pytest.raises(TypeError, match="not a"):
        reader(wrong)


# --------------------------------------------------------------------------- tasks


def test_task_status() -> None:
    done = parts.agent_text_message("Done!")
    s = parts.task_status(TaskState.COMPLETED, message=done, timestamp="2024-03-04T12:00:00.000Z")
    assert s == TaskStatus(
        state=TaskState.COMPLETED, message=done, timestamp="2024-03-04T12:00:00.000Z"
    )
    assert parts.task_status("input-required").state is TaskState.INPUT_REQUIRED
    assert parts.task_status("working").timestamp is None  # no clock in the core
    with pytest.raises(ValueError, match="unknown task state 'done'"):
        parts.task_status("done")


def test_initial_and_final_task_as_seed_002_builds_them() -> None:
    first = parts.user_message("go", context_id="session_456")
    task = parts.initial_task(first, task_id="task_123", metadata={"agent_name": "MyAgent"})
    assert (task.id, task.context_id) == ("task_123", "session_456")
    assert task.status.state is TaskState.SUBMITTED
    assert task.history == [first]

    done = parts.agent_text_message("Done!", task_id="task_123", context_id="session_456")
    result = Artifact(artifact_id="r", parts=[parts.text_part("42")])
    final = parts.final_task(
        task, status=parts.task_status(TaskState.COMPLETED, message=done), artifacts=[result]
    )
    assert final.status == TaskStatus(state=TaskState.COMPLETED, message=done)
    assert final.artifacts == [result]
    assert final.history == [first, done]
    assert final.metadata == {"agent_name": "MyAgent"}
    assert task.history == [first] and task.artifacts == []  # the original is left as is


def test_final_task_from_separate_arguments() -> None:
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    failed = parts.final_task(task, state=TaskState.FAILED, timestamp="2024-01-01T00:00:00.000Z")
    assert failed.status == TaskStatus(state=TaskState.FAILED, timestamp="2024-01-01T00:00:00.000Z")
    assert failed.history == []


def test_messages_are_canonical_messages() -> None:
    for m in (
        parts.agent_text_message("x"),
        parts.agent_data_message({}),
        parts.agent_parts_message([parts.text_part("x")]),
    ):
        assert isinstance(m, Message) and m.role is Role.AGENT
        assert m.task_id is None and m.context_id is None and m.metadata is None
