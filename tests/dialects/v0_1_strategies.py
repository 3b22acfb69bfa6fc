"""Hypothesis strategies and schema access for the v0.1 JSON-RPC codec tests.

Two families:

* ``any_*`` draw canonical objects of every shape the server may hand the codec
  (all nine states, artifacts with or without ``index``, media types on text
  parts, files with both bytes and uri ...). Everything encoded from them must
  validate against the v0.1.0 schema.
* the plain names draw objects v0.1 can represent exactly: the seven v0.1
  states, artifacts named ``artifact-{index}``, messages without task/context
  ids, events with ``context_id = ""``, files with at most one of bytes/uri.
  They round-trip, modulo message ids (v0.1 messages carry none; see
  ``same_modulo_message_ids``).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from functools import cache
from typing import Any

import msgspec
from hypothesis import strategies as st
from jsonschema import Draft7Validator, FormatChecker

from interlingua.core.calls import (
    CancelTask,
    GetPushConfig,
    GetTask,
    SendConfig,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects._common import format_timestamp
from interlingua.core.model import (
    Artifact,
    ArtifactUpdate,
    AuthInfo,
    DataPart,
    FilePart,
    Message,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from tests.reference import SPEC

SCHEMA = SPEC / "v0.1.0" / "a2a.json"

# The states of the v0.1.0 schema's TaskState enum.
V01_STATES = [
    TaskState.SUBMITTED,
    TaskState.WORKING,
    TaskState.INPUT_REQUIRED,
    TaskState.COMPLETED,
    TaskState.CANCELED,
    TaskState.FAILED,
    TaskState.UNKNOWN,
]


# ------------------------------------------------------------------------- schema

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_formats = FormatChecker()


@_formats.checks("date-time")
def _is_date_time(value: object) -> bool:
    # jsonschema checks "date-time" only with an extra package; RFC 3339 by hand.
    if not isinstance(value, str):
        return True
    if not _RFC3339.match(value):
        return False
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    return True


@cache
def schema() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SCHEMA.read_text())
    return doc


@cache
def validator(definition: str) -> Draft7Validator:
    return Draft7Validator(
        {"$ref": f"#/$defs/{definition}", "$defs": schema()["$defs"]}, format_checker=_formats
    )


def assert_valid(instance: Any, definition: str) -> None:
    errors = sorted(validator(definition).iter_errors(instance), key=str)
    assert not errors, f"{definition} (v0.1.0): " + "; ".join(
        f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]
    )


def response(result: bytes, rid: Any = 1) -> Any:
    """A JSON-RPC success response around an encoded ``result``."""
    return msgspec.json.decode(
        b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(rid) + b',"result":' + result + b"}"
    )


# ------------------------------------------------------------------------ JSON values

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
# "data_part_compat" flags wrapped non-object data; user metadata never carries it.
meta_keys = st.text(max_size=6).filter(lambda k: k != "data_part_compat")
metadata_dicts = st.dictionaries(meta_keys, json_values, max_size=3)
metadata = st.none() | metadata_dicts
# Data parts read empty metadata as none (our own compatibility flag comes and
# goes there), so their round trips use none or non-empty metadata.
part_metadata = st.none() | st.dictionaries(meta_keys, json_values, min_size=1, max_size=3)
ids = st.text(min_size=1, max_size=10)
texts = st.text(max_size=20)
opt_text = st.none() | texts
str_lists = st.lists(st.text(max_size=8), max_size=3)
history_lengths = st.none() | st.integers(min_value=0, max_value=2**31 - 1)

timestamps = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
).map(format_timestamp)


# ----------------------------------------------------------------------------- parts

text_parts = st.builds(TextPart, text=texts, metadata=metadata)
file_parts = st.builds(
    FilePart,
    raw=st.none() | st.binary(max_size=24),
    media_type=opt_text,
    filename=opt_text,
    metadata=metadata,
).flatmap(
    # at most one of raw / uri: v0.1 also allows neither (a bare file reference)
    lambda p: (
        st.just(p)
        if p.raw is not None
        else st.builds(
            FilePart,
            uri=st.none() | texts,
            media_type=st.just(p.media_type),
            filename=st.just(p.filename),
            metadata=st.just(p.metadata),
        )
    )
)
object_data_parts = st.builds(
    DataPart, data=st.dictionaries(st.text(max_size=5), json_values, max_size=4), metadata=part_metadata
)
# Non-object data travels wrapped with a metadata flag; empty user metadata
# cannot be told from none once the flag is removed, so it is not drawn.
other_data_parts = st.builds(
    DataPart,
    data=json_scalars | st.lists(json_values, max_size=3),
    metadata=st.none() | st.dictionaries(meta_keys, json_values, min_size=1, max_size=3),
)
parts = st.one_of(text_parts, file_parts, object_data_parts, other_data_parts)

# What the server may hold beyond that: media types on every part, both bytes and uri.
any_parts = st.one_of(
    parts,
    st.builds(TextPart, text=texts, metadata=metadata, media_type=opt_text, filename=opt_text),
    st.builds(
        DataPart, data=json_values, metadata=part_metadata, media_type=opt_text, filename=opt_text
    ),
    st.builds(FilePart, raw=st.binary(max_size=8), uri=texts, media_type=opt_text),
)


# -------------------------------------------------------------------- task objects

messages = st.builds(
    Message,
    message_id=ids,
    role=st.sampled_from(Role),
    parts=st.lists(parts, min_size=1, max_size=3),
    metadata=metadata,
)
any_messages = st.builds(
    Message,
    message_id=ids,
    role=st.sampled_from(Role),
    parts=st.lists(any_parts, min_size=1, max_size=3),
    context_id=st.none() | ids,
    task_id=st.none() | ids,
    reference_task_ids=st.none() | st.lists(ids, max_size=2),
    extensions=st.none() | str_lists,
    metadata=metadata,
)


@st.composite
def artifacts(draw: st.DrawFn) -> Artifact:
    index = draw(st.integers(min_value=0, max_value=1000))
    return Artifact(
        artifact_id=f"artifact-{index}",
        parts=draw(st.lists(parts, max_size=3)),
        name=draw(opt_text),
        description=draw(opt_text),
        metadata=draw(metadata),
        index=index,
    )


any_artifacts = st.builds(
    Artifact,
    artifact_id=ids,
    parts=st.lists(any_parts, max_size=3),
    name=opt_text,
    description=opt_text,
    metadata=metadata,
    extensions=st.none() | str_lists,
    index=st.none() | st.integers(min_value=0, max_value=1000),
)

statuses = st.builds(
    TaskStatus,
    state=st.sampled_from(V01_STATES),
    message=st.none() | messages,
    timestamp=st.none() | timestamps,
)
any_statuses = st.builds(
    TaskStatus,
    state=st.sampled_from(TaskState),
    message=st.none() | any_messages,
    timestamp=st.none() | timestamps,
)


@st.composite
def tasks(draw: st.DrawFn) -> Task:
    # an artifact of a task is known by its index, so a task's indexes differ
    arts = draw(st.lists(artifacts(), max_size=2, unique_by=lambda a: a.index))
    return Task(
        id=draw(ids),
        context_id=draw(st.just("") | ids),  # "" is a task without a session
        status=draw(statuses),
        artifacts=arts,
        history=draw(st.lists(messages, max_size=2)),
        metadata=draw(metadata),
    )


any_tasks = st.builds(
    Task,
    id=ids,
    context_id=st.just("") | ids,
    status=any_statuses,
    artifacts=st.lists(any_artifacts, max_size=3),
    history=st.lists(any_messages, max_size=2),
    metadata=metadata,
)

# v0.1 events carry no session: they read back with context_id "".
status_updates = st.builds(
    StatusUpdate, task_id=ids, context_id=st.just(""), status=statuses, metadata=metadata
)
artifact_updates = st.builds(
    ArtifactUpdate,
    task_id=ids,
    context_id=st.just(""),
    artifact=artifacts(),
    append=st.booleans(),
    last_chunk=st.booleans(),
    metadata=metadata,
)
events = st.one_of(status_updates, artifact_updates)

any_stream_items = st.one_of(
    any_tasks,
    any_messages,
    st.builds(StatusUpdate, task_id=ids, context_id=ids, status=any_statuses, metadata=metadata),
    st.builds(
        ArtifactUpdate,
        task_id=ids,
        context_id=ids,
        artifact=any_artifacts,
        append=st.booleans(),
        last_chunk=st.booleans(),
        metadata=metadata,
    ),
)

auth_infos = st.builds(AuthInfo, schemes=str_lists, credentials=opt_text)


def push_configs(
    task_id: st.SearchStrategy[str | None] | None = None,
) -> st.SearchStrategy[PushConfig]:
    return st.builds(
        PushConfig,
        url=texts,
        task_id=st.none() if task_id is None else task_id,
        token=opt_text,
        authentication=st.none() | auth_infos,
    )


# Configs as the server may hold them (with an id v0.1 does not show).
any_push_configs = st.builds(
    PushConfig,
    url=texts,
    id=st.none() | ids,
    task_id=st.none() | ids,
    token=opt_text,
    authentication=st.none() | auth_infos,
)


# ---------------------------------------------------------------------------- calls


@st.composite
def send_calls(draw: st.DrawFn) -> SendMessage:
    message = draw(messages)
    message.context_id = draw(st.none() | ids)  # the session rides on the message
    return SendMessage(
        message=message,
        config=SendConfig(
            history_length=draw(history_lengths), push_config=draw(st.none() | push_configs())
        ),
        metadata=draw(metadata),
        streaming=draw(st.booleans()),
        client_task_id=draw(ids),
    )


@st.composite
def set_push_calls(draw: st.DrawFn) -> SetPushConfig:
    task_id = draw(ids)
    # A decoded config knows its task, so the canonical call carries it twice.
    return SetPushConfig(task_id=task_id, config=draw(push_configs(st.just(task_id))))


calls = st.one_of(
    send_calls(),
    st.builds(GetTask, id=ids, history_length=history_lengths),
    st.builds(CancelTask, id=ids, metadata=metadata),
    st.builds(SubscribeToTask, id=ids, history_length=history_lengths),
    set_push_calls(),
    st.builds(GetPushConfig, task_id=ids),
)


# --------------------------------------------------------------------- comparison


def without_message_ids(value: Any) -> Any:
    """``value`` as builtins with every message's ``message_id`` blanked.

    v0.1 messages have no id: each read makes a new one, so round trips are
    compared modulo message ids.
    """
    doc = msgspec.to_builtins(value)
    _blank(doc)
    return doc


def _blank(doc: Any) -> None:
    if isinstance(doc, dict):
        if "message_id" in doc and "role" in doc and "parts" in doc:
            doc["message_id"] = ""
        for v in doc.values():
            _blank(v)
    elif isinstance(doc, list):
        for v in doc:
            _blank(v)


def same_modulo_message_ids(a: Any, b: Any) -> bool:
    return type(a) is type(b) and without_message_ids(a) == without_message_ids(b)
