"""Properties of the v1.0 codec, checked against the v1.0 proto itself.

* every key the encoder writes is the JSON name of a field of the right proto
  message (the proto is parsed independently of the codec, by
  ``tests/reference/extract.py``, and kept in
  ``tests/reference/extracted/v1.0-proto.json``, checked against ``a2a.proto``
  where the shared folder is present), every
  REQUIRED field is written, and no oneof holds two members;
* decode(encode(x)) == x for generated canonical objects, calls and results;
* rewriting an encoded document in ways ProtoJSON allows (snake_case names,
  enum numbers, unknown members, the v0.3 ``CANCELLED`` spelling) decodes to
  the same thing, and encode(decode(y)) is a fixed point;
* arbitrary JSON and mutated valid requests raise nothing but ``A2AError``.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.dialects import get_codec
from interlingua.core.dialects._common import format_timestamp
from interlingua.core.dialects.v1_0 import V1Codec, decode_card_v1, encode_card_v1
from interlingua.core.errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    ContentTypeNotSupported,
    ExtendedCardNotConfigured,
    ExtendedCardNotSupported,
    ExtensionSupportRequired,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    InvalidRequest,
    InvalidTaskState,
    MethodNotFound,
    ParseError,
    PushNotSupported,
    RateLimitExceeded,
    ResourceUnavailable,
    StreamingNotSupported,
    TaskNotCancelable,
    TaskNotFound,
    UnsupportedOperation,
    VersionNotSupported,
)
from tests.hypothesis_budget import examples
from tests.reference import extract

codec = V1Codec()
SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ====================================================================== the proto


@dataclass
class ProtoField:
    name: str
    json_name: str
    type: str
    repeated: bool = False
    map_value: str | None = None
    required: bool = False
    oneof: str | None = None


@dataclass
class ProtoMessage:
    name: str
    fields: dict[str, ProtoField] = field(default_factory=dict)  # by JSON name

    def by_proto_name(self, name: str) -> ProtoField:
        return next(f for f in self.fields.values() if f.name == name)


def load_proto() -> tuple[dict[str, ProtoMessage], dict[str, dict[str, int]]]:
    """The messages and enums of the v1.0 proto, as ``extract.parse_proto`` read them."""
    found = extract.load("v1.0-proto.json")
    messages = {
        name: ProtoMessage(name, {key: ProtoField(**f) for key, f in fields.items()})
        for name, fields in found["messages"].items()
    }
    return messages, found["enums"]


MESSAGES, ENUMS = load_proto()


def test_the_proto_parser_reads_what_the_proto_says():
    # a few facts read off a2a.proto by eye, so the checks below check something
    part = MESSAGES["Part"]
    assert set(part.fields) == {"text", "raw", "url", "data", "metadata", "filename", "mediaType"}
    assert {f.oneof for f in part.fields.values()} == {"content", None}
    assert MESSAGES["Task"].fields["status"].required
    assert MESSAGES["AgentCard"].fields["securitySchemes"].map_value == "SecurityScheme"
    assert MESSAGES["OAuth2SecurityScheme"].fields["oauth2MetadataUrl"].type == "string"
    assert ENUMS["TaskState"]["TASK_STATE_CANCELED"] == 5
    assert ENUMS["Role"] == {"ROLE_UNSPECIFIED": 0, "ROLE_USER": 1, "ROLE_AGENT": 2}
    assert len(MESSAGES) > 40


_SCALARS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "bytes": (str,),
    "bool": (bool,),
    "int32": (int,),
    "int64": (int, str),
}


def conforms(doc: Any, message: str, path: str = "$") -> None:
    """Assert ``doc`` is a valid ProtoJSON rendering of ``message``."""
    msg = MESSAGES[message]
    assert isinstance(doc, dict), f"{path}: expected a {message} object"
    for key, value in doc.items():
        assert key in msg.fields, f"{path}.{key} is not a field of {message}"
        f = msg.fields[key]
        if f.map_value is not None:
            assert isinstance(value, dict), f"{path}.{key}: map expected"
            for k, v in value.items():
                _value_conforms(v, f.type, f"{path}.{key}[{k!r}]")
        elif f.repeated:
            assert isinstance(value, list), f"{path}.{key}: list expected"
            for i, v in enumerate(value):
                _value_conforms(v, f.type, f"{path}.{key}[{i}]")
        else:
            _value_conforms(value, f.type, f"{path}.{key}")
    for f in msg.fields.values():
        if f.required:
            assert f.json_name in doc, f"{path}: REQUIRED {message}.{f.json_name} missing"
    groups: dict[str, list[str]] = {}
    for key in doc:
        if msg.fields[key].oneof:
            groups.setdefault(msg.fields[key].oneof or "", []).append(key)
    for group, members in groups.items():
        assert len(members) == 1, f"{path}: oneof {group} holds {members}"


def _value_conforms(value: Any, ftype: str, path: str) -> None:
    if ftype.startswith("google.protobuf."):
        if ftype == "google.protobuf.Struct":
            assert isinstance(value, dict), path
        elif ftype == "google.protobuf.Timestamp":
            assert isinstance(value, str), path
        return
    if ftype in ENUMS:
        assert value in ENUMS[ftype], f"{path}: {value!r} is not a {ftype}"
        return
    if ftype in _SCALARS:
        assert isinstance(value, _SCALARS[ftype]), f"{path}: {value!r} is not {ftype}"
        if ftype != "bool":
            assert not isinstance(value, bool), path
        return
    conforms(value, ftype, path)


# ================================================================= strategies

short = st.text(max_size=6)
nonempty = st.text(min_size=1, max_size=6)
opt = st.none() | nonempty
opt_list = st.none() | st.lists(nonempty, min_size=1, max_size=2)
json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | short
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short, inner, max_size=3),
    max_leaves=6,
)
metadata = st.none() | st.dictionaries(short, json_value, max_size=3)
timestamps = st.none() | st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
).map(format_timestamp)

text_parts = st.builds(m.TextPart, text=short, metadata=metadata, media_type=opt, filename=opt)
file_parts = st.one_of(
    st.builds(
        m.FilePart, raw=st.binary(max_size=12), media_type=opt, filename=opt, metadata=metadata
    ),
    st.builds(m.FilePart, uri=short, media_type=opt, filename=opt, metadata=metadata),
)
data_parts = st.builds(m.DataPart, data=json_value, metadata=metadata, media_type=opt, filename=opt)
parts = st.one_of(text_parts, file_parts, data_parts)


def messages(message_id: st.SearchStrategy[str] = short) -> st.SearchStrategy[m.Message]:
    return st.builds(
        m.Message,
        message_id=message_id,
        role=st.sampled_from(m.Role),
        parts=st.lists(parts, min_size=1, max_size=3),
        context_id=opt,
        task_id=opt,
        reference_task_ids=opt_list,
        extensions=opt_list,
        metadata=metadata,
    )


artifacts = st.builds(
    m.Artifact,
    artifact_id=short,
    parts=st.lists(parts, max_size=2),
    name=opt,
    description=opt,
    metadata=metadata,
    extensions=opt_list,
)
statuses = st.builds(
    m.TaskStatus,
    state=st.sampled_from(m.TaskState),
    message=st.none() | messages(),
    timestamp=timestamps,
)
tasks = st.builds(
    m.Task,
    id=nonempty,
    context_id=short,
    status=statuses,
    artifacts=st.lists(artifacts, max_size=2),
    history=st.lists(messages(), max_size=2),
    metadata=metadata,
)
status_updates = st.builds(
    m.StatusUpdate, task_id=short, context_id=short, status=statuses, metadata=metadata
)
artifact_updates = st.builds(
    m.ArtifactUpdate,
    task_id=short,
    context_id=short,
    artifact=artifacts,
    append=st.booleans(),
    last_chunk=st.booleans(),
    metadata=metadata,
)
stream_items = st.one_of(tasks, messages(), status_updates, artifact_updates)

auth = st.builds(m.AuthInfo, schemes=st.lists(nonempty, min_size=1, max_size=1), credentials=opt)


def push_configs(task_id: st.SearchStrategy[str | None] = opt) -> st.SearchStrategy[m.PushConfig]:
    return st.builds(
        m.PushConfig,
        url=nonempty,
        id=opt,
        task_id=task_id,
        token=opt,
        authentication=st.none() | auth,
    )


send_configs = st.builds(
    c.SendConfig,
    accepted_output_modes=opt_list,
    history_length=st.none() | st.integers(0, 1000),
    blocking=st.booleans(),
    push_config=st.none() | push_configs(),
)
non_unknown_states = st.sampled_from([s for s in m.TaskState if s is not m.TaskState.UNKNOWN])


@st.composite
def set_push_calls(draw: st.DrawFn) -> c.SetPushConfig:
    task_id = draw(nonempty)
    return c.SetPushConfig(
        task_id=task_id, config=draw(push_configs(st.just(task_id))), tenant=draw(opt)
    )


@st.composite
def send_calls(draw: st.DrawFn) -> c.SendMessage:
    """A send whose push config names no task or the send's own (another is refused)."""
    message = draw(messages(nonempty))
    config = draw(send_configs)
    if config.push_config is not None:
        config.push_config.task_id = draw(st.sampled_from([None, message.task_id]))
    return c.SendMessage(message=message, config=config, metadata=draw(metadata),
                         tenant=draw(opt), streaming=draw(st.booleans()))


calls_ = st.one_of(
    send_calls(),
    st.builds(c.GetTask, id=nonempty, history_length=st.none() | st.integers(0, 100), tenant=opt),
    st.builds(
        c.ListTasks,
        context_id=opt,
        status=st.none() | non_unknown_states,
        page_size=st.integers(1, 100),
        page_token=opt,
        history_length=st.none() | st.integers(0, 100),
        status_timestamp_after=timestamps,
        include_artifacts=st.booleans(),
        tenant=opt,
    ),
    st.builds(c.CancelTask, id=nonempty, metadata=metadata, tenant=opt),
    st.builds(c.SubscribeToTask, id=nonempty, tenant=opt),
    set_push_calls(),
    # (v1.0 requires the config's id: an empty one is refused)
    st.builds(c.GetPushConfig, task_id=nonempty, config_id=nonempty, tenant=opt),
    st.builds(
        c.ListPushConfigs,
        task_id=nonempty,
        page_size=st.none() | st.integers(1, 100),
        page_token=opt,
        tenant=opt,
    ),
    st.builds(c.DeletePushConfig, task_id=nonempty, config_id=nonempty, tenant=opt),
    st.builds(c.GetExtendedCard, tenant=opt),
)

# --- the card (the part v1.0 can express: one OAuth2 flow, no stateTransitionHistory)

scopes = st.dictionaries(nonempty, short, max_size=2)
_FLOWS = {
    "authorization_code": st.builds(
        m.OAuthFlow,
        scopes=scopes,
        authorization_url=opt,
        token_url=opt,
        refresh_url=opt,
        pkce_required=st.booleans(),
    ),
    "client_credentials": st.builds(m.OAuthFlow, scopes=scopes, token_url=opt, refresh_url=opt),
    "implicit": st.builds(m.OAuthFlow, scopes=scopes, authorization_url=opt, refresh_url=opt),
    "password": st.builds(m.OAuthFlow, scopes=scopes, token_url=opt, refresh_url=opt),
    "device_code": st.builds(
        m.OAuthFlow,
        scopes=scopes,
        device_authorization_url=opt,
        token_url=opt,
        refresh_url=opt,
    ),
}


def _single_flow(key: str, flow: st.SearchStrategy[m.OAuthFlow]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({key: flow})


flows = st.one_of(st.just({}), *[_single_flow(key, flow) for key, flow in _FLOWS.items()])
schemes = st.one_of(
    st.builds(
        m.APIKeyScheme,
        name=short,
        location=st.sampled_from(["header", "query", "cookie"]),
        description=opt,
    ),
    st.builds(m.HTTPAuthScheme, scheme=short, bearer_format=opt, description=opt),
    st.builds(m.OAuth2Scheme, flows=flows, metadata_url=opt, description=opt),
    st.builds(m.OpenIdConnectScheme, url=short, description=opt),
    st.builds(m.MutualTLSScheme, description=opt),
)
requirements = st.dictionaries(nonempty, st.lists(short, max_size=2), max_size=2)
cards = st.builds(
    m.AgentCard,
    name=short,
    description=short,
    version=short,
    interfaces=st.lists(
        st.builds(
            m.AgentInterface,
            url=short,
            binding=st.sampled_from(["JSONRPC", "GRPC", "HTTP+JSON"]),
            protocol_version=st.sampled_from(["1.0", "0.3"]),
            tenant=opt,
        ),
        max_size=2,
    ),
    capabilities=st.builds(
        m.AgentCapabilities,
        streaming=st.booleans(),
        push_notifications=st.booleans(),
        extended_card=st.booleans(),
        extensions=st.lists(
            st.builds(
                m.AgentExtension,
                uri=short,
                description=opt,
                required=st.booleans(),
                params=metadata,
            ),
            max_size=2,
        ),
    ),
    skills=st.lists(
        st.builds(
            m.AgentSkill,
            id=short,
            name=short,
            description=short,
            tags=st.lists(short, max_size=2),
            examples=opt_list,
            input_modes=opt_list,
            output_modes=opt_list,
            security=st.none() | st.lists(requirements, min_size=1, max_size=2),
        ),
        max_size=2,
    ),
    default_input_modes=st.lists(short, max_size=2),
    default_output_modes=st.lists(short, max_size=2),
    provider=st.none() | st.builds(m.AgentProvider, organization=short, url=opt),
    documentation_url=opt,
    icon_url=opt,
    security_schemes=st.dictionaries(nonempty, schemes, max_size=3),
    security=st.lists(requirements, max_size=2),
    signatures=st.lists(
        st.builds(m.CardSignature, protected=short, signature=short, header=metadata), max_size=2
    ),
)


@st.composite
def calls_with_results(draw: st.DrawFn) -> tuple[c.Call, c.Result]:
    call = draw(calls_)
    result: c.Result
    if isinstance(call, c.SendMessage | c.SubscribeToTask):
        result = draw(st.one_of(tasks, messages()))
    elif isinstance(call, c.GetTask | c.CancelTask):
        result = draw(tasks)
    elif isinstance(call, c.ListTasks):
        result = c.ListTasksResult(
            tasks=draw(st.lists(tasks, max_size=2)),
            next_page_token=draw(short),
            page_size=draw(st.integers(0, 100)),
            total_size=draw(st.integers(0, 2**31 - 1)),
        )
    elif isinstance(call, c.SetPushConfig | c.GetPushConfig):
        result = draw(push_configs(nonempty))
    elif isinstance(call, c.ListPushConfigs):
        configs = draw(st.lists(push_configs(nonempty), max_size=3))
        # a call that asks for a page is answered with one (and its next token)
        result = c.PushConfigsPage(configs=configs, next_page_token=draw(st.text(max_size=8))) \
            if call.paged else configs
    elif isinstance(call, c.DeletePushConfig):
        result = None
    else:
        result = draw(cards)
    return call, result


_REQUEST_MESSAGES = {
    "SendMessage": "SendMessageRequest",
    "SendStreamingMessage": "SendMessageRequest",
    "GetTask": "GetTaskRequest",
    "ListTasks": "ListTasksRequest",
    "CancelTask": "CancelTaskRequest",
    "SubscribeToTask": "SubscribeToTaskRequest",
    "CreateTaskPushNotificationConfig": "TaskPushNotificationConfig",
    "GetTaskPushNotificationConfig": "GetTaskPushNotificationConfigRequest",
    "ListTaskPushNotificationConfigs": "ListTaskPushNotificationConfigsRequest",
    "DeleteTaskPushNotificationConfig": "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCard": "GetExtendedAgentCardRequest",
}
_RESPONSE_MESSAGES = {
    c.SendMessage: "SendMessageResponse",
    c.SubscribeToTask: "StreamResponse",
    c.GetTask: "Task",
    c.CancelTask: "Task",
    c.ListTasks: "ListTasksResponse",
    c.SetPushConfig: "TaskPushNotificationConfig",
    c.GetPushConfig: "TaskPushNotificationConfig",
    c.ListPushConfigs: "ListTaskPushNotificationConfigsResponse",
    c.GetExtendedCard: "AgentCard",
}


# ============================================================ proto-name conformance


@SETTINGS
@given(stream_items)
def test_stream_items_use_the_proto_names(item: Any) -> None:
    conforms(msgspec.json.decode(codec.encode_stream_item(item)), "StreamResponse")


@SETTINGS
@given(calls_)
def test_requests_use_the_proto_names(call: c.Call) -> None:
    method, params = codec.encode_call(call)
    conforms(msgspec.json.decode(params), _REQUEST_MESSAGES[method])


@SETTINGS
@given(calls_with_results())
def test_results_use_the_proto_names(pair: tuple[c.Call, c.Result]) -> None:
    call, result = pair
    doc = msgspec.json.decode(codec.encode_result(call, result))
    if isinstance(call, c.DeletePushConfig):
        assert doc is None
    else:
        conforms(doc, _RESPONSE_MESSAGES[type(call)])


@SETTINGS
@given(cards)
def test_cards_use_the_proto_names(card: m.AgentCard) -> None:
    conforms(encode_card_v1(card), "AgentCard")


def test_list_tasks_always_carries_its_required_counters() -> None:
    body = codec.encode_result(
        c.ListTasks(), c.ListTasksResult(tasks=[], next_page_token="", page_size=0, total_size=0)
    )
    assert msgspec.json.decode(body) == {
        "tasks": [],
        "nextPageToken": "",
        "pageSize": 0,
        "totalSize": 0,
    }


# ====================================================================== round trips


@SETTINGS
@given(stream_items)
def test_stream_item_round_trip(item: Any) -> None:
    assert codec.decode_stream_item(codec.encode_stream_item(item)) == item


@SETTINGS
@given(calls_)
def test_call_round_trip(call: c.Call) -> None:
    method, params = codec.encode_call(call)
    assert method in codec.methods
    assert (method in codec.streaming_methods) == (
        isinstance(call, c.SubscribeToTask) or (isinstance(call, c.SendMessage) and call.streaming)
    )
    assert codec.decode_call(method, params) == call


@SETTINGS
@given(calls_with_results())
def test_result_round_trip(pair: tuple[c.Call, c.Result]) -> None:
    call, result = pair
    assert codec.decode_result(call, codec.encode_result(call, result)) == result


@SETTINGS
@given(cards)
def test_card_round_trip(card: m.AgentCard) -> None:
    assert decode_card_v1(encode_card_v1(card)) == card
    # and through the wire bytes of GetExtendedAgentCard
    call = c.GetExtendedCard()
    assert codec.decode_result(call, codec.encode_result(call, card)) == card


_ERRORS: list[type[A2AError]] = [
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    TaskNotFound,
    TaskNotCancelable,
    PushNotSupported,
    UnsupportedOperation,
    InvalidTaskState,
    StreamingNotSupported,
    ContentTypeNotSupported,
    InvalidAgentResponse,
    ExtendedCardNotConfigured,
    ExtendedCardNotSupported,
    ExtensionSupportRequired,
    VersionNotSupported,
    AuthenticationRequired,
    AuthorizationFailed,
    RateLimitExceeded,
    ResourceUnavailable,
]


@SETTINGS
@given(
    st.sampled_from(_ERRORS),
    nonempty,
    st.none() | st.dictionaries(nonempty, nonempty, min_size=1, max_size=3),
)
def test_error_round_trip(cls: type[A2AError], message: str, data: Any) -> None:
    err = cls(message, data=data)
    doc = msgspec.json.decode(codec.encode_error(err))
    assert doc["code"] == get_codec("1.0").code_of(err)
    back = codec.decode_error(doc)
    # InvalidTaskState / StreamingNotSupported / ExtendedCardNotSupported share code and
    # reason with their parent
    assert isinstance(err, type(back))
    assert (back.reason, get_codec("1.0").code_of(back)) == (err.reason, get_codec("1.0").code_of(err))
    assert back.message == message
    assert back.data == data


# ====================================================== ProtoJSON-equivalent rewrites


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda mt: "_" + mt.group(1).lower(), name)


@st.composite
def rewrite(draw: st.DrawFn, doc: Any, message: str) -> Any:
    """``doc`` (a ``message``) spelled another way ProtoJSON readers must accept."""
    msg = MESSAGES[message]
    out: dict[str, Any] = {}
    for key, value in doc.items():
        f = msg.fields[key]
        name = f.name if draw(st.booleans()) else key
        out[name] = draw(_rewrite_value(value, f))
    if draw(st.integers(0, 4)) == 0:
        out["someFutureField"] = draw(json_value)
    return out


def _rewrite_value(value: Any, f: ProtoField) -> st.SearchStrategy[Any]:
    def one(v: Any) -> st.SearchStrategy[Any]:
        if f.type in MESSAGES and isinstance(v, dict):
            return rewrite(v, f.type)
        if f.type in ENUMS and isinstance(v, str):
            spellings = [v, ENUMS[f.type][v]]
            if v == "TASK_STATE_CANCELED":
                spellings.append("TASK_STATE_CANCELLED")
            return st.sampled_from(spellings)
        if f.type == "int32" and isinstance(v, int):
            return st.sampled_from([v, str(v)])
        return st.just(v)

    if f.map_value is not None:
        return st.fixed_dictionaries({k: one(v) for k, v in value.items()})
    if f.repeated:
        return st.tuples(*[one(v) for v in value]).map(list)
    return one(value)


@SETTINGS
@given(st.data(), stream_items)
def test_stream_items_read_every_protojson_spelling(data: st.DataObject, item: Any) -> None:
    encoded = codec.encode_stream_item(item)
    variant = data.draw(rewrite(msgspec.json.decode(encoded), "StreamResponse"))
    back = codec.decode_stream_item(msgspec.json.encode(variant))
    assert back == item
    assert codec.encode_stream_item(back) == encoded


@SETTINGS
@given(st.data(), calls_)
def test_requests_read_every_protojson_spelling(data: st.DataObject, call: c.Call) -> None:
    method, params = codec.encode_call(call)
    variant = data.draw(rewrite(msgspec.json.decode(params), _REQUEST_MESSAGES[method]))
    assert codec.decode_call(method, msgspec.json.encode(variant)) == call


@SETTINGS
@given(st.data(), cards)
def test_cards_read_every_protojson_spelling(data: st.DataObject, card: m.AgentCard) -> None:
    doc = encode_card_v1(card)
    assert decode_card_v1(data.draw(rewrite(doc, "AgentCard"))) == card


@st.composite
def wire_tasks(draw: st.DrawFn) -> Any:
    """Task documents built from the proto, not from our encoder: sparse and in any spelling."""
    return draw(_wire_message("Task", 0))


def _wire_message(name: str, depth: int) -> st.SearchStrategy[dict[str, Any]]:
    msg = MESSAGES[name]
    members: dict[str, st.SearchStrategy[Any]] = {}
    required: dict[str, st.SearchStrategy[Any]] = {}
    oneof_members: list[tuple[str, st.SearchStrategy[Any]]] = []
    for f in msg.fields.values():
        strategy = _wire_value(f, depth)
        if strategy is None:
            continue
        if f.oneof:
            oneof_members.append((f.json_name, strategy))
        elif f.required:
            required[f.json_name] = strategy
        else:
            members[f.json_name] = strategy
    base = st.fixed_dictionaries(required, optional=members)
    if not oneof_members:
        return base
    return st.tuples(base, st.sampled_from(oneof_members)).flatmap(
        lambda pair: pair[1][1].map(lambda v, b=pair[0], k=pair[1][0]: {**b, k: v})
    )


def _wire_value(f: ProtoField, depth: int) -> st.SearchStrategy[Any] | None:
    if f.type == "google.protobuf.Struct":
        one: st.SearchStrategy[Any] = st.dictionaries(short, json_value, max_size=2)
    elif f.type == "google.protobuf.Value":
        one = json_value
    elif f.type == "google.protobuf.Timestamp":
        one = st.sampled_from(
            ["2024-03-15T10:15:00Z", "2024-03-15T11:15:00.5+01:00", "2025-04-17T17:47:09.680794Z"]
        )
    elif f.type == "Role":
        one = st.sampled_from(["ROLE_USER", "ROLE_AGENT", 1, 2])
    elif f.type in ENUMS:
        one = st.sampled_from([*ENUMS[f.type], *ENUMS[f.type].values()])
    elif f.type == "bytes":
        one = st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode())
    elif f.type == "string":
        one = short
    elif f.type == "bool":
        one = st.booleans()
    elif f.type == "int32":
        one = st.integers(0, 100)
    elif f.type in MESSAGES:
        if depth > 2:
            return None
        one = _wire_message(f.type, depth + 1)
    else:
        return None
    if f.repeated:
        return st.lists(one, min_size=1 if f.name == "parts" else 0, max_size=2)
    return one


@SETTINGS
@given(wire_tasks())
def test_encode_of_decode_is_a_fixed_point(doc: Any) -> None:
    assume(doc.get("id"))  # a task without its REQUIRED id is refused (tested elsewhere)
    call = c.GetTask(id="t")
    first = codec.encode_result(call, codec.decode_result(call, msgspec.json.encode(doc)))
    again = codec.encode_result(call, codec.decode_result(call, first))
    assert first == again
    conforms(msgspec.json.decode(first), "Task")


# ============================================================================ fuzz


def _only_a2a_errors(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except A2AError:
        pass


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(sorted(V1Codec.methods)), st.none() | json_value)
def test_any_json_params_raise_only_a2a_errors(method: str, params: Any) -> None:
    _only_a2a_errors(
        codec.decode_call, method, None if params is None else msgspec.json.encode(params)
    )


@settings(max_examples=examples(100), deadline=None)
@given(st.sampled_from(sorted(V1Codec.methods)), st.binary(max_size=40))
def test_any_bytes_raise_only_a2a_errors(method: str, params: bytes) -> None:
    _only_a2a_errors(codec.decode_call, method, params)


def _mutate(data: st.DataObject, doc: Any) -> Any:
    """Replace, drop or add one member somewhere inside ``doc``."""
    if isinstance(doc, dict) and doc and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(doc)))
        out = dict(doc)
        out[key] = _mutate(data, doc[key])
        return out
    if isinstance(doc, list) and doc and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(doc) - 1))
        return [*doc[:i], _mutate(data, doc[i]), *doc[i + 1 :]]
    action = data.draw(st.sampled_from(["replace", "drop", "add"]))
    if action == "drop" and isinstance(doc, dict) and doc:
        key = data.draw(st.sampled_from(sorted(doc)))
        return {k: v for k, v in doc.items() if k != key}
    if action == "add" and isinstance(doc, dict):
        key = data.draw(st.sampled_from(["text", "raw", "url", "data", "role", "x"]))
        return {**doc, key: data.draw(json_value)}
    return data.draw(json_value)


@settings(max_examples=examples(300), deadline=None)
@given(st.data(), calls_)
def test_mutated_requests_raise_only_a2a_errors(data: st.DataObject, call: c.Call) -> None:
    method, params = codec.encode_call(call)
    mutated = _mutate(data, msgspec.json.decode(params))
    _only_a2a_errors(codec.decode_call, method, msgspec.json.encode(mutated))


@settings(max_examples=examples(150), deadline=None)
@given(st.data(), calls_with_results())
def test_mutated_results_raise_only_a2a_errors(
    data: st.DataObject, pair: tuple[c.Call, c.Result]
) -> None:
    call, result = pair
    mutated = _mutate(data, msgspec.json.decode(codec.encode_result(call, result)))
    _only_a2a_errors(codec.decode_result, call, msgspec.json.encode(mutated))
    _only_a2a_errors(codec.decode_stream_item, msgspec.json.encode(mutated))


@settings(max_examples=examples(100), deadline=None)
@given(json_value)
def test_any_error_object_decodes_to_an_a2a_error(error: Any) -> None:
    assert isinstance(codec.decode_error(error), A2AError)


@pytest.mark.parametrize("method", ["tasks/get", "message/send", "", "sendmessage"])
def test_other_methods_are_not_found(method: str) -> None:
    with pytest.raises(MethodNotFound):
        codec.decode_call(method, b"{}")


@settings(max_examples=examples(100), deadline=None)
@given(json_value)
def test_any_card_document_raises_only_a2a_errors(doc: Any) -> None:
    _only_a2a_errors(decode_card_v1, doc)
    if isinstance(doc, dict):
        _only_a2a_errors(decode_card_v1, {"securitySchemes": {"s": doc}, "skills": [doc]})
