"""v1.0 codec: what it refuses, what it tolerates, and the exact shapes it writes.

Expected shapes come from DIALECTS.md §a.4/§c/§d/§e/§f and the v1.0 proto.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from interlingua.core import calls as c
from interlingua.core import model as m
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.v1_0 import V1Codec, decode_card_v1, encode_card_v1
from interlingua.core.errors import (
    A2AError,
    AuthenticationRequired,
    InternalError,
    InvalidAgentResponse,
    InvalidParams,
    MethodNotFound,
    RemoteError,
    TaskNotFound,
    UnsupportedOperation,
    VersionNotSupported,
)

codec = V1Codec()
enc = msgspec.json.encode
dec = msgspec.json.decode

TEXT = {"text": "hi"}


def send(message: Any = None, **extra: Any) -> bytes:
    doc: dict[str, Any] = dict(extra)
    if message is not None:
        doc["message"] = message
    return enc(doc)


def msg(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"messageId": "m-1", "role": "ROLE_USER", "parts": [TEXT]}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def refused(method: str, params: bytes | None, *names: str) -> InvalidParams:
    with pytest.raises(InvalidParams) as info:
        codec.decode_call(method, params)
    err = info.value
    assert get_codec("1.0").code_of(err) == -32602
    for name in names:
        assert name in err.message, (name, err.message)
    return err


# ====================================================================== refusals


@pytest.mark.parametrize(
    ("params", "names"),
    [
        (send(), ["message"]),
        (send(message=5), ["message"]),
        (send(msg(parts=[])), ["message.parts"]),
        (send(msg(parts=...)), ["message.parts"]),
        (send(msg(messageId="")), ["message.messageId"]),
        (send(msg(messageId=...)), ["message.messageId"]),
        (send(msg(role=...)), ["message.role is required"]),
        (send(msg(role=False)), ["message.role", "bool"]),  # (not "is required")
        (send(msg(role="ROLE_UNSPECIFIED")), ["message.role is required"]),
        (send(msg(role=0)), ["message.role is required"]),
        (send(msg(role="user")), ["message.role", "'user'"]),
        (send(msg(role=7)), ["message.role must be ROLE_USER or ROLE_AGENT, got 7"]),
        (send(msg(parts=[TEXT, {}])), ["message.parts[1]", "found none"]),
        (send(msg(parts=[{"text": "a", "url": "b"}])), ["message.parts[0]", "text, url"]),
        (send(msg(parts=[{"raw": "aGk=", "data": None}])), ["message.parts[0]", "raw, data"]),
        (send(msg(parts=[{"metadata": {"a": 1}}])), ["message.parts[0]", "found none"]),
        (send(msg(parts=[{"raw": "not base64!"}])), ["message.parts[0].raw", "base64"]),
        (send(msg(), configuration={"historyLength": -1}), ["configuration.historyLength"]),
        (send(msg(), configuration={"historyLength": "x"}), ["configuration.historyLength"]),
        (
            send(msg(), configuration={"taskPushNotificationConfig": {"token": "t"}}),
            ["configuration.taskPushNotificationConfig.url"],
        ),
        (
            send(
                msg(),
                configuration={
                    "taskPushNotificationConfig": {"url": "https://x", "authentication": {}}
                },
            ),
            ["taskPushNotificationConfig.authentication.scheme"],
        ),
        (b"[1, 2]", ["params"]),
        (b"{not json", ["malformed"]),
    ],
)
def test_send_message_refusals(params: bytes, names: list[str]) -> None:
    refused("SendMessage", params, *names)
    refused("SendStreamingMessage", params, *names)


@pytest.mark.parametrize(
    ("method", "params", "names"),
    [
        ("GetTask", {}, ["id"]),
        ("GetTask", {"id": ""}, ["id"]),
        ("GetTask", {"id": "t", "historyLength": -3}, ["historyLength"]),
        ("CancelTask", {}, ["id"]),
        ("SubscribeToTask", {"id": 5}, ["id"]),
        ("ListTasks", {"status": "TASK_STATE_RUNNING"}, ["status", "TASK_STATE_RUNNING"]),
        ("ListTasks", {"status": 42}, ["status"]),
        ("ListTasks", {"pageSize": 0}, ["pageSize"]),
        ("ListTasks", {"pageSize": 101}, ["pageSize", "101"]),
        ("ListTasks", {"pageSize": 150, "historyLength": -5}, ["pageSize"]),
        ("ListTasks", {"historyLength": -5}, ["historyLength"]),
        ("ListTasks", {"statusTimestampAfter": "last tuesday"}, ["statusTimestampAfter"]),
        ("ListTasks", {"statusTimestampAfter": 1700000000}, ["statusTimestampAfter"]),
        ("CreateTaskPushNotificationConfig", {"taskId": "t"}, ["url"]),
        ("CreateTaskPushNotificationConfig", {"url": "https://x"}, ["taskId"]),
        (
            "CreateTaskPushNotificationConfig",
            {"taskId": "t", "url": "https://x", "authentication": {"credentials": "c"}},
            ["authentication.scheme"],
        ),
        ("GetTaskPushNotificationConfig", {"id": "c"}, ["taskId"]),
        ("ListTaskPushNotificationConfigs", {}, ["taskId"]),
        ("ListTaskPushNotificationConfigs", {"taskId": "t", "pageSize": -1}, ["pageSize"]),
        ("DeleteTaskPushNotificationConfig", {"taskId": "t"}, ["id"]),
        ("DeleteTaskPushNotificationConfig", {"id": "c"}, ["taskId"]),
        ("GetExtendedAgentCard", {"tenant": 3}, ["tenant"]),
    ],
)
def test_other_refusals(method: str, params: Any, names: list[str]) -> None:
    refused(method, enc(params), *names)


def test_unknown_method() -> None:
    with pytest.raises(MethodNotFound) as info:
        codec.decode_call("message/send", b"{}")
    assert get_codec("1.0").code_of(info.value) == -32601


# ====================================================================== leniency


def test_send_message_defaults() -> None:
    call = codec.decode_call("SendMessage", send(msg()))
    assert call == c.SendMessage(
        message=m.Message(message_id="m-1", role=m.Role.USER, parts=[m.TextPart("hi")])
    )
    assert call.config.blocking is True  # returnImmediately absent
    streaming = codec.decode_call("SendStreamingMessage", send(msg()))
    assert isinstance(streaming, c.SendMessage) and streaming.streaming


def test_send_message_configuration() -> None:
    call = codec.decode_call(
        "SendMessage",
        send(
            msg(contextId="ctx", taskId="t"),
            tenant="acme",
            metadata={"k": [1]},
            configuration={
                "acceptedOutputModes": ["text/plain"],
                "historyLength": 0,
                "returnImmediately": True,
                "taskPushNotificationConfig": {
                    "url": "https://hook",
                    "token": "tok",
                    "authentication": {"scheme": "Bearer", "credentials": "s3"},
                },
            },
        ),
    )
    assert call == c.SendMessage(
        message=m.Message(
            message_id="m-1",
            role=m.Role.USER,
            parts=[m.TextPart("hi")],
            context_id="ctx",
            task_id="t",
        ),
        config=c.SendConfig(
            accepted_output_modes=["text/plain"],
            history_length=0,
            blocking=False,
            push_config=m.PushConfig(
                url="https://hook",
                token="tok",
                authentication=m.AuthInfo(schemes=["Bearer"], credentials="s3"),
            ),
        ),
        metadata={"k": [1]},
        tenant="acme",
    )


def test_parts_map_to_the_model() -> None:
    call = codec.decode_call(
        "SendMessage",
        send(
            msg(
                parts=[
                    {"text": "", "mediaType": "text/markdown"},
                    {"raw": "aGVsbG8=", "filename": "h.txt", "mediaType": "text/plain"},
                    {"raw": "aGVsbG8"},  # unpadded
                    {"raw": "_-8"},  # URL-safe alphabet
                    {"url": "https://f", "metadata": {"a": 1}},
                    {"data": None},
                    {"data": [1, "two"]},
                    {"text": None, "data": {"x": 1}},  # null is "not set"
                ]
            )
        ),
    )
    assert isinstance(call, c.SendMessage)
    assert call.message.parts == [
        m.TextPart("", media_type="text/markdown"),
        m.FilePart(raw=b"hello", filename="h.txt", media_type="text/plain"),
        m.FilePart(raw=b"hello"),
        m.FilePart(raw=b"\xff\xef"),
        m.FilePart(uri="https://f", metadata={"a": 1}),
        m.DataPart(None),
        m.DataPart([1, "two"]),
        m.DataPart({"x": 1}),
    ]


def test_snake_case_names_numbers_as_strings_and_enum_numbers() -> None:
    call = codec.decode_call(
        "SendMessage",
        enc(
            {
                "message": {
                    "message_id": "m",
                    "role": 2,
                    "parts": [{"text": "x", "media_type": "text/plain"}],
                    "context_id": "ctx",
                    "reference_task_ids": ["a"],
                },
                "configuration": {"history_length": "4", "return_immediately": "true"},
                "futureField": {"ignored": True},
            }
        ),
    )
    assert call == c.SendMessage(
        message=m.Message(
            message_id="m",
            role=m.Role.AGENT,
            parts=[m.TextPart("x", media_type="text/plain")],
            context_id="ctx",
            reference_task_ids=["a"],
        ),
        config=c.SendConfig(history_length=4, blocking=False),
    )


def test_snake_case_filters_are_not_dropped() -> None:
    # a filter spelled the proto way must still filter
    call = codec.decode_call(
        "ListTasks", enc({"context_id": "ctx", "page_size": 7, "include_artifacts": True})
    )
    assert call == c.ListTasks(context_id="ctx", page_size=7, include_artifacts=True)


def test_camel_case_wins_over_snake_case() -> None:
    call = codec.decode_call("GetTask", enc({"history_length": 1, "historyLength": 2, "id": "t"}))
    assert call == c.GetTask(id="t", history_length=2)


def test_metadata_keys_are_left_alone() -> None:
    meta = {"snake_key": {"inner_key": 1}, "camelKey": None}
    call = codec.decode_call(
        "SendMessage",
        enc({"message": {**msg(), "metadata": meta, "unknown_member": 1}, "metadata": meta}),
    )
    assert isinstance(call, c.SendMessage)
    assert call.metadata == meta and call.message.metadata == meta


def test_list_tasks_defaults_and_states() -> None:
    assert codec.decode_call("ListTasks", None) == c.ListTasks(page_size=50)
    assert codec.decode_call("ListTasks", b"{}") == c.ListTasks(
        page_size=50, include_artifacts=False, status=None
    )
    for spelling in ("TASK_STATE_CANCELED", "TASK_STATE_CANCELLED", 5):
        call = codec.decode_call("ListTasks", enc({"status": spelling}))
        assert isinstance(call, c.ListTasks) and call.status is m.TaskState.CANCELED
    unspecified = codec.decode_call("ListTasks", enc({"status": "TASK_STATE_UNSPECIFIED"}))
    assert isinstance(unspecified, c.ListTasks) and unspecified.status is None
    edge = codec.decode_call("ListTasks", enc({"pageSize": 100, "historyLength": 0}))
    assert edge == c.ListTasks(page_size=100, history_length=0)


def test_list_tasks_timestamp_is_normalized() -> None:
    call = codec.decode_call(
        "ListTasks", enc({"statusTimestampAfter": "2023-10-27T12:00:00.123456+02:00"})
    )
    assert isinstance(call, c.ListTasks)
    # at or after 123.456 ms: the stores' millisecond instants from 124 on
    assert call.status_timestamp_after == "2023-10-27T10:00:00.124Z"


def test_list_tasks_after_the_last_millisecond_there_is_is_refused() -> None:
    """Rounded up, it is past year 9999: refused as out of range, not a 500."""
    with pytest.raises(Exception, match=r"statusTimestampAfter.*out of range"):
        codec.decode_call("ListTasks", enc({"statusTimestampAfter": "9999-12-31T23:59:59.9995Z"}))


@pytest.mark.parametrize(("given", "read"), [
    ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"),  # the least instant there is
    ("0999-06-01T00:00:00.5+00:00", "0999-06-01T00:00:00.500Z"),  # a year before 1000
    ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
])
def test_list_tasks_takes_every_instant_of_years_1_to_9999(given: str, read: str) -> None:
    call = codec.decode_call("ListTasks", enc({"statusTimestampAfter": given}))
    assert isinstance(call, c.ListTasks) and call.status_timestamp_after == read


@pytest.mark.parametrize(("given", "why"), [
    ("0001-01-01T00:00:00+01:00", "is out of range (UTC years 1 to 9999)"),
    ("9999-12-31T23:59:59-01:00", "is out of range (UTC years 1 to 9999)"),
    ("2020-13-45T99:99:99.999Z", "is not an RFC 3339 timestamp"),  # canonical in shape only
    ("0000-00-00T00:00:00.000Z", "is not an RFC 3339 timestamp"),
    ("2020-02-30T00:00:00Z", "is not an RFC 3339 timestamp"),
])
def test_list_tasks_refuses_what_names_no_instant(given: str, why: str) -> None:
    with pytest.raises(InvalidParams) as refused:
        codec.decode_call("ListTasks", enc({"statusTimestampAfter": given}))
    assert f"statusTimestampAfter {why}" in refused.value.message, refused.value.message


def test_get_task_history_length_unset_is_none() -> None:
    assert codec.decode_call("GetTask", enc({"id": "t"})) == c.GetTask(id="t", history_length=None)
    assert codec.decode_call("GetTask", enc({"id": "t", "historyLength": 0})) == c.GetTask(
        id="t", history_length=0
    )


def test_push_config_calls() -> None:
    assert codec.decode_call(
        "CreateTaskPushNotificationConfig",
        enc(
            {
                "tenant": "acme",
                "taskId": "t",
                "id": "cfg",
                "url": "https://hook",
                "authentication": {"scheme": "Basic"},
            }
        ),
    ) == c.SetPushConfig(
        task_id="t",
        config=m.PushConfig(
            url="https://hook", id="cfg", task_id="t", authentication=m.AuthInfo(schemes=["Basic"])
        ),
        tenant="acme",
    )
    assert codec.decode_call(
        "GetTaskPushNotificationConfig", enc({"taskId": "t", "id": "cfg"})
    ) == c.GetPushConfig(task_id="t", config_id="cfg")
    assert codec.decode_call(
        "ListTaskPushNotificationConfigs", enc({"task_id": "t", "pageSize": 0})
    ) == c.ListPushConfigs(task_id="t")
    assert codec.decode_call(
        "DeleteTaskPushNotificationConfig", enc({"taskId": "t", "id": "cfg"})
    ) == c.DeletePushConfig(task_id="t", config_id="cfg")


def test_extended_card_call_takes_no_params() -> None:
    assert codec.decode_call("GetExtendedAgentCard", None) == c.GetExtendedCard()
    assert codec.decode_call("GetExtendedAgentCard", enc({"tenant": "a"})) == c.GetExtendedCard(
        tenant="a"
    )


# ====================================================================== shapes out

TASK = m.Task(
    id="t",
    context_id="ctx",
    status=m.TaskStatus(m.TaskState.UNKNOWN, timestamp="2024-01-01T00:00:00.000Z"),
)
MESSAGE = m.Message(message_id="m", role=m.Role.AGENT, parts=[m.TextPart("ok")])


def test_send_results_are_wrapped() -> None:
    call = c.SendMessage(message=MESSAGE)
    assert dec(codec.encode_result(call, TASK)) == {
        "task": {
            "id": "t",
            "contextId": "ctx",
            "status": {"state": "TASK_STATE_UNSPECIFIED", "timestamp": "2024-01-01T00:00:00.000Z"},
        }
    }
    assert dec(codec.encode_result(call, MESSAGE)) == {
        "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "ok"}]}
    }
    # GetTask and CancelTask answer the bare Task
    assert dec(codec.encode_result(c.GetTask(id="t"), TASK))["id"] == "t"
    assert dec(codec.encode_result(c.CancelTask(id="t"), TASK))["id"] == "t"


def test_stream_events_have_no_final() -> None:
    status = m.StatusUpdate(
        task_id="t", context_id="ctx", status=m.TaskStatus(m.TaskState.COMPLETED)
    )
    assert dec(codec.encode_stream_item(status)) == {
        "statusUpdate": {
            "taskId": "t",
            "contextId": "ctx",
            "status": {"state": "TASK_STATE_COMPLETED"},
        }
    }
    chunk = m.ArtifactUpdate(
        task_id="t",
        context_id="ctx",
        artifact=m.Artifact(artifact_id="a", parts=[m.DataPart({"n": 1})], index=3),
        append=True,
        last_chunk=True,
        metadata={"k": "v"},
    )
    assert dec(codec.encode_stream_item(chunk)) == {
        "artifactUpdate": {
            "taskId": "t",
            "contextId": "ctx",
            "artifact": {"artifactId": "a", "parts": [{"data": {"n": 1}}]},
            "append": True,
            "lastChunk": True,
            "metadata": {"k": "v"},
        }
    }


def test_parts_out() -> None:
    message = m.Message(
        message_id="m",
        role=m.Role.USER,
        parts=[
            m.FilePart(raw=b"\x00\x01", media_type="application/octet-stream", filename="b"),
            m.FilePart(uri="https://f"),
            m.FilePart(),  # v0.1 allows a file with neither; v1.0 gets an empty raw
            m.FilePart(raw=b"x", uri="https://ignored"),
            m.DataPart(None),
            m.TextPart("t", media_type="text/plain", filename="t.txt", metadata={}),
        ],
    )
    assert dec(codec.encode_stream_item(message))["message"]["parts"] == [
        {"raw": "AAE=", "mediaType": "application/octet-stream", "filename": "b"},
        {"url": "https://f"},
        {"raw": ""},
        {"raw": "eA=="},
        {"data": None},
        {"text": "t", "mediaType": "text/plain", "filename": "t.txt", "metadata": {}},
    ]


def test_push_config_results_are_flat() -> None:
    config = m.PushConfig(
        url="https://hook",
        id="cfg",
        token="tok",
        authentication=m.AuthInfo(schemes=["Bearer", "Basic"], credentials="s3"),
    )
    expected = {
        "id": "cfg",
        "taskId": "t",
        "url": "https://hook",
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "s3"},
    }
    set_call = c.SetPushConfig(task_id="t", config=config)
    assert dec(codec.encode_result(set_call, config)) == expected
    listed = dec(codec.encode_result(c.ListPushConfigs(task_id="t"), [config]))
    assert listed == {"configs": [expected], "nextPageToken": ""}
    assert codec.encode_result(c.DeletePushConfig(task_id="t", config_id="cfg"), None) == b"null"


def test_delete_result_accepts_null_and_empty_object() -> None:
    call = c.DeletePushConfig(task_id="t", config_id="cfg")
    assert codec.decode_result(call, b"null") is None
    assert codec.decode_result(call, b"{}") is None


def test_wrong_result_type_is_an_internal_error() -> None:
    with pytest.raises(InternalError):
        codec.encode_result(c.GetTask(id="t"), MESSAGE)
    with pytest.raises(InternalError):
        codec.encode_result(c.ListTasks(), TASK)


@pytest.mark.parametrize(
    ("call", "body"),
    [
        (c.GetTask(id="t"), b"[]"),
        (c.GetTask(id="t"), b"{"),
        (c.GetTask(id="t"), b'{"id": "t", "status": {"state": "TASK_STATE_DONE"}}'),
        (c.SendMessage(message=MESSAGE), b"{}"),
        (c.SendMessage(message=MESSAGE), b'{"task": {"id": "t"}, "message": {"role": 1}}'),
        (c.SendMessage(message=MESSAGE), b'{"message": {"messageId": "m", "parts": []}}'),
        (c.ListTasks(), b'{"tasks": [{"id": "t", "history": [{"role": "x"}]}]}'),
        (c.SubscribeToTask(id="t"), b'{"statusUpdate": {"taskId": "t"}}'),
    ],
)
def test_bad_results_are_invalid_agent_responses(call: c.Call, body: bytes) -> None:
    with pytest.raises(InvalidAgentResponse):
        codec.decode_result(call, body)


def test_bad_result_names_the_member() -> None:
    with pytest.raises(InvalidAgentResponse) as info:
        codec.decode_result(
            c.ListTasks(), b'{"tasks": [{"id": "t", "history": [{"role": "x", "parts": []}]}]}'
        )
    assert "result.tasks[0].history[0].role" in info.value.message


def test_results_tolerate_omitted_defaults() -> None:
    # a protobuf peer leaves empty strings and empty lists out
    page = codec.decode_result(c.ListTasks(), b"{}")
    assert page == c.ListTasksResult(tasks=[], next_page_token="", page_size=0, total_size=0)
    task = codec.decode_result(c.GetTask(id="t"), b'{"id": "t", "status": {}}')
    assert task == m.Task(id="t", context_id="", status=m.TaskStatus(m.TaskState.UNKNOWN))


# ========================================================================= errors


def test_error_shape() -> None:
    err = TaskNotFound("Task not found: t", data={"taskId": "t", "attempt": 2, "none": None})
    assert dec(codec.encode_error(err)) == {
        "code": -32001,
        "message": "Task not found: t",
        "data": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "TASK_NOT_FOUND",
                "domain": "a2a-protocol.org",
                "metadata": {"taskId": "t", "attempt": "2"},
            }
        ],
    }
    bare = dec(codec.encode_error(VersionNotSupported()))
    assert bare["code"] == -32009
    assert bare["data"] == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "VERSION_NOT_SUPPORTED",
            "domain": "a2a-protocol.org",
        }
    ]


def test_details_from_a_peer_are_passed_on() -> None:
    details = [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []}]
    err = InvalidParams("bad", data=details)
    assert dec(codec.encode_error(err))["data"] == details


@pytest.mark.parametrize(
    ("error", "cls"),
    [
        ({"code": -32001, "message": "x"}, TaskNotFound),
        ({"code": -32004, "message": "x"}, UnsupportedOperation),
        ({"code": -32602, "message": "x", "data": "free text"}, InvalidParams),
        (
            {
                "code": -32600,
                "message": "x",
                "data": [
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "UNAUTHENTICATED",
                    }
                ],
            },
            AuthenticationRequired,
        ),
    ],
)
def test_decode_error_classes(error: dict[str, Any], cls: type[A2AError]) -> None:
    err = codec.decode_error(error)
    assert type(err) is cls
    assert err.message == "x"


@pytest.mark.parametrize(
    "error",
    [{"code": -31999, "message": "custom"}, {"code": "x"}, "oops", None, {"code": True}],
)
def test_unknown_or_malformed_errors_are_remote_errors(error: Any) -> None:
    err = codec.decode_error(error)
    assert isinstance(err, RemoteError)
    if isinstance(error, dict) and error.get("code") == -31999:
        assert get_codec("1.0").code_of(err) == -31999 and err.message == "custom"


# =========================================================================== card

CARD = m.AgentCard(
    name="Agent",
    description="Does things",
    version="1.2.0",
    interfaces=[
        m.AgentInterface(url="https://a/rpc"),
        m.AgentInterface(url="https://a/rest", binding="HTTP+JSON", tenant="acme"),
    ],
    capabilities=m.AgentCapabilities(
        streaming=True,
        extended_card=True,
        state_transition_history=True,
        extensions=[m.AgentExtension(uri="urn:x", required=True)],
    ),
    skills=[
        m.AgentSkill(
            id="s",
            name="Skill",
            tags=["t"],
            security=[{"oauth": ["read"]}],
            input_modes=["text/plain"],
        )
    ],
    provider=m.AgentProvider(organization="Org"),
    icon_url="https://a/icon.png",
    security_schemes={
        "key": m.APIKeyScheme(name="X-Key", location="header"),
        "bearer": m.HTTPAuthScheme(scheme="bearer", bearer_format="JWT"),
        "oauth": m.OAuth2Scheme(
            flows={
                "client_credentials": m.OAuthFlow(
                    token_url="https://a/token", scopes={"read": "Read"}
                ),
                "password": m.OAuthFlow(token_url="https://a/pw"),
            },
            metadata_url="https://a/.well-known/oauth-authorization-server",
        ),
        "oidc": m.OpenIdConnectScheme(url="https://a/.well-known/openid-configuration"),
        "mtls": m.MutualTLSScheme(),
    },
    security=[{"key": []}, {"oauth": ["read"]}],
    signatures=[m.CardSignature(protected="p", signature="s", header={"kid": "1"})],
)


def test_card_shape() -> None:
    assert encode_card_v1(CARD) == {
        "name": "Agent",
        "description": "Does things",
        "supportedInterfaces": [
            {"url": "https://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {
                "url": "https://a/rest",
                "protocolBinding": "HTTP+JSON",
                "tenant": "acme",
                "protocolVersion": "1.0",
            },
        ],
        "provider": {"url": "", "organization": "Org"},
        "version": "1.2.0",
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "extensions": [{"uri": "urn:x", "required": True}],
            "extendedAgentCard": True,
        },
        "securitySchemes": {
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "bearer", "bearerFormat": "JWT"}},
            "oauth": {
                "oauth2SecurityScheme": {
                    # v1.0's flows is a oneof: the first flow is kept
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": "https://a/token",
                            "scopes": {"read": "Read"},
                        }
                    },
                    "oauth2MetadataUrl": "https://a/.well-known/oauth-authorization-server",
                }
            },
            "oidc": {
                "openIdConnectSecurityScheme": {
                    "openIdConnectUrl": "https://a/.well-known/openid-configuration"
                }
            },
            "mtls": {"mtlsSecurityScheme": {}},
        },
        "securityRequirements": [
            {"schemes": {"key": {"list": []}}},
            {"schemes": {"oauth": {"list": ["read"]}}},
        ],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "s",
                "name": "Skill",
                "description": "",
                "tags": ["t"],
                "inputModes": ["text/plain"],
                "securityRequirements": [{"schemes": {"oauth": {"list": ["read"]}}}],
            }
        ],
        "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "1"}}],
        "iconUrl": "https://a/icon.png",
    }


def test_card_result_is_the_same_document() -> None:
    assert dec(codec.encode_result(c.GetExtendedCard(), CARD)) == encode_card_v1(CARD)


def test_hybrid_card_keys_are_ignored() -> None:
    doc = encode_card_v1(CARD)
    doc.update(
        url="https://a/rpc",
        preferredTransport="JSONRPC",
        protocolVersion="0.3.0",
        supportsAuthenticatedExtendedCard=True,
        security=[{"ignored": []}],  # securityRequirements is there and wins
    )
    doc["securitySchemes"]["key"].update({"type": "apiKey", "in": "header", "name": "X-Key"})
    card = decode_card_v1(doc)
    assert card.security == CARD.security
    assert card.security_schemes["key"] == m.APIKeyScheme(name="X-Key", location="header")


def test_card_without_a_scheme_member_is_refused() -> None:
    with pytest.raises(InvalidAgentResponse) as info:
        decode_card_v1({"name": "x", "securitySchemes": {"old": {"type": "apiKey"}}})
    assert "securitySchemes.old" in info.value.message


def test_card_absent_modes_take_the_model_default() -> None:
    card = decode_card_v1({"name": "x"})
    assert card.default_input_modes == ["text/plain"]
    assert decode_card_v1({"name": "x", "defaultInputModes": []}).default_input_modes == []


def test_a_task_result_without_id_is_an_invalid_agent_response() -> None:
    from interlingua.core import calls as _c
    from interlingua.core.dialects.v1_0 import V1Codec as _V1
    from interlingua.core.errors import InvalidAgentResponse as _Bad

    with pytest.raises(_Bad, match="id"):
        _V1().decode_result(_c.GetTask(id="t"),
                            b'{"contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}')
