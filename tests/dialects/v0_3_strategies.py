"""Hypothesis strategies and schema access for the v0.2/v0.3 JSON-RPC codec tests.

The strategies draw canonical objects that v0.3 can represent: no media type or
filename on text/data parts, no artifact ``index``, exactly one of bytes/uri
on files, no tenant. Anything else is dropped on the way out by design and is
tested separately.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft7Validator

from interlingua.core.calls import (
    CancelTask,
    DeletePushConfig,
    GetExtendedCard,
    GetPushConfig,
    GetTask,
    ListPushConfigs,
    SendConfig,
    SendMessage,
    SetPushConfig,
    SubscribeToTask,
)
from interlingua.core.dialects._common import format_timestamp
from interlingua.core.model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeyScheme,
    Artifact,
    ArtifactUpdate,
    AuthInfo,
    CardSignature,
    DataPart,
    FilePart,
    HTTPAuthScheme,
    Message,
    MutualTLSScheme,
    OAuth2Scheme,
    OAuthFlow,
    OpenIdConnectScheme,
    PushConfig,
    Role,
    StatusUpdate,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from tests.reference import SPEC


@cache
def schema(version: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SPEC / version / "a2a.json").read_text())
    return doc


@cache
def validator(version: str, definition: str) -> Draft7Validator:
    root = schema(version)
    return Draft7Validator(
        {"$ref": f"#/definitions/{definition}", "definitions": root["definitions"]}
    )


def assert_valid(instance: Any, definition: str, version: str = "v0.3.0") -> None:
    errors = sorted(validator(version, definition).iter_errors(instance), key=str)
    assert not errors, f"{definition} ({version}): " + "; ".join(
        f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]
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
# "data_part_compat" is the wrapper flag of non-object data parts; user metadata never carries it.
meta_keys = st.text(max_size=6).filter(lambda k: k != "data_part_compat")
metadata_dicts = st.dictionaries(meta_keys, json_values, max_size=3)
metadata = st.none() | metadata_dicts
ids = st.text(min_size=1, max_size=10)
texts = st.text(max_size=20)
opt_text = st.none() | texts
str_lists = st.lists(st.text(max_size=8), max_size=3)
opt_str_list = st.none() | str_lists

timestamps = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
).map(format_timestamp)


# ----------------------------------------------------------------------------- parts

text_parts = st.builds(TextPart, text=texts, metadata=metadata)
file_parts = st.one_of(
    st.builds(
        FilePart,
        raw=st.binary(max_size=24),
        media_type=opt_text,
        filename=opt_text,
        metadata=metadata,
    ),
    st.builds(
        FilePart,
        uri=texts,
        media_type=opt_text,
        filename=opt_text,
        metadata=metadata,
    ),
)
object_data_parts = st.builds(
    DataPart, data=st.dictionaries(st.text(max_size=5), json_values, max_size=4), metadata=metadata
)
# Non-object data travels as {"value": X} plus a metadata flag; empty user metadata
# cannot be told apart from none after the flag is removed, so it is not drawn.
scalar_data_parts = st.builds(
    DataPart,
    data=json_scalars | st.lists(json_values, max_size=3),
    metadata=st.none() | st.dictionaries(meta_keys, json_values, min_size=1, max_size=3),
)
parts = st.one_of(text_parts, file_parts, object_data_parts, scalar_data_parts)


# -------------------------------------------------------------------- task objects

messages = st.builds(
    Message,
    message_id=ids,
    role=st.sampled_from(Role),
    parts=st.lists(parts, min_size=1, max_size=3),
    context_id=st.none() | ids,
    task_id=st.none() | ids,
    reference_task_ids=st.none() | st.lists(ids, max_size=2),
    extensions=opt_str_list,
    metadata=metadata,
)
artifacts = st.builds(
    Artifact,
    artifact_id=ids,
    parts=st.lists(parts, max_size=3),
    name=opt_text,
    description=opt_text,
    metadata=metadata,
    extensions=opt_str_list,
)
statuses = st.builds(
    TaskStatus,
    state=st.sampled_from(TaskState),
    message=st.none() | messages,
    timestamp=st.none() | timestamps,
)
tasks = st.builds(
    Task,
    id=ids,
    context_id=ids,
    status=statuses,
    artifacts=st.lists(artifacts, max_size=2),
    history=st.lists(messages, max_size=2),
    metadata=metadata,
)
status_updates = st.builds(
    StatusUpdate, task_id=ids, context_id=ids, status=statuses, metadata=metadata
)
artifact_updates = st.builds(
    ArtifactUpdate,
    task_id=ids,
    context_id=ids,
    artifact=artifacts,
    append=st.booleans(),
    last_chunk=st.booleans(),
    metadata=metadata,
)
stream_items = st.one_of(tasks, messages, status_updates, artifact_updates)

auth_infos = st.builds(AuthInfo, schemes=str_lists, credentials=opt_text)


def push_configs(
    task_id: st.SearchStrategy[str | None] | None = None,
) -> st.SearchStrategy[PushConfig]:
    return st.builds(
        PushConfig,
        url=texts,
        id=st.none() | ids,
        task_id=st.none() if task_id is None else task_id,
        token=opt_text,
        authentication=st.none() | auth_infos,
    )


# ---------------------------------------------------------------------------- calls

send_configs = st.builds(
    SendConfig,
    accepted_output_modes=opt_str_list,
    history_length=st.none() | st.integers(min_value=0, max_value=2**31 - 1),
    blocking=st.booleans(),
    push_config=st.none() | push_configs(),
)
history_lengths = st.none() | st.integers(min_value=0, max_value=2**31 - 1)


@st.composite
def set_push_calls(draw: st.DrawFn) -> SetPushConfig:
    task_id = draw(ids)
    # A decoded config knows its task, so the canonical call carries it twice.
    return SetPushConfig(task_id=task_id, config=draw(push_configs(st.just(task_id))))


calls = st.one_of(
    st.builds(
        SendMessage,
        message=messages,
        config=send_configs,
        metadata=metadata,
        streaming=st.booleans(),
    ),
    st.builds(GetTask, id=ids, history_length=history_lengths),
    st.builds(CancelTask, id=ids, metadata=metadata),
    st.builds(SubscribeToTask, id=ids, history_length=history_lengths),
    set_push_calls(),
    st.builds(GetPushConfig, task_id=ids, config_id=st.none() | ids),
    st.builds(ListPushConfigs, task_id=ids),
    st.builds(DeletePushConfig, task_id=ids, config_id=ids),
    st.just(GetExtendedCard()),
)


# ----------------------------------------------------------------------------- cards

urls = st.text(min_size=1, max_size=12)
opt_url = st.none() | urls


def _flow(*fields: str) -> st.SearchStrategy[OAuthFlow]:
    kwargs: dict[str, Any] = {
        "scopes": st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=2),
        "refresh_url": opt_url,
    }
    for name in fields:
        kwargs[name] = opt_url
    return st.builds(OAuthFlow, **kwargs)


_FLOW_KINDS = {
    "authorization_code": _flow("authorization_url", "token_url"),
    "client_credentials": _flow("token_url"),
    "implicit": _flow("authorization_url"),
    "password": _flow("token_url"),
}


@st.composite
def oauth_flows(draw: st.DrawFn) -> dict[str, OAuthFlow]:
    names = draw(st.sets(st.sampled_from(sorted(_FLOW_KINDS)), max_size=4))
    return {name: draw(_FLOW_KINDS[name]) for name in names}


security_schemes = st.one_of(
    st.builds(
        APIKeyScheme,
        name=texts,
        location=st.sampled_from(["header", "query", "cookie"]),
        description=opt_text,
    ),
    st.builds(HTTPAuthScheme, scheme=texts, bearer_format=opt_text, description=opt_text),
    st.builds(OAuth2Scheme, flows=oauth_flows(), metadata_url=opt_url, description=opt_text),
    st.builds(OpenIdConnectScheme, url=urls, description=opt_text),
    st.builds(MutualTLSScheme, description=opt_text),
)
requirements = st.lists(
    st.dictionaries(st.text(max_size=6), st.lists(st.text(max_size=6), max_size=2), max_size=2),
    max_size=2,
)
skills = st.builds(
    AgentSkill,
    id=ids,
    name=texts,
    description=texts,
    tags=str_lists,
    examples=opt_str_list,
    input_modes=opt_str_list,
    output_modes=opt_str_list,
    security=st.none() | requirements,
)
extensions = st.builds(
    AgentExtension,
    uri=urls,
    description=opt_text,
    required=st.booleans(),
    params=st.none() | metadata_dicts,
)


@st.composite
def legacy_interfaces(draw: st.DrawFn) -> list[AgentInterface]:
    """A JSON-RPC v0.3 main interface first, then other distinct v0.3 endpoints."""
    main = AgentInterface(url=draw(urls), binding="JSONRPC", protocol_version="0.3")
    extra = draw(
        st.lists(
            st.tuples(urls, st.sampled_from(["JSONRPC", "GRPC", "HTTP+JSON"])),
            max_size=3,
            unique=True,
        )
    )
    out = [main]
    for url, binding in extra:
        if (url, binding) != (main.url, main.binding):
            out.append(AgentInterface(url=url, binding=binding, protocol_version="0.3"))
    return out


cards = st.builds(
    AgentCard,
    name=texts,
    description=texts,
    version=texts,
    interfaces=legacy_interfaces(),
    capabilities=st.builds(
        AgentCapabilities,
        streaming=st.booleans(),
        push_notifications=st.booleans(),
        extended_card=st.booleans(),
        state_transition_history=st.booleans(),
        extensions=st.lists(extensions, max_size=2),
    ),
    skills=st.lists(skills, max_size=2),
    default_input_modes=str_lists,
    default_output_modes=str_lists,
    provider=st.none() | st.builds(AgentProvider, organization=texts, url=opt_url),
    documentation_url=opt_url,
    icon_url=opt_url,
    security_schemes=st.dictionaries(st.text(max_size=6), security_schemes, max_size=3),
    security=requirements,
    signatures=st.lists(
        st.builds(
            CardSignature, protected=texts, signature=texts, header=st.none() | metadata_dicts
        ),
        max_size=2,
    ),
)
