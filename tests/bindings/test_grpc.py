"""The gRPC binding over real gRPC on loopback: every RPC of the v1.0
(``lf.a2a.v1``) and v0.3 (``a2a.v1``) services, streams and their resumption,
error statuses with their ErrorInfo, and authentication through the same front
door as JSON-RPC."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import msgspec
import pytest
from google.protobuf import struct_pb2

from interlingua import Agent, create_app
from interlingua.bindings.grpc import EVENT_ID_KEY, RESUME_EXTENSION_URI, add_grpc
from interlingua.core.parts import new_id
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2_grpc as rpc03
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1
from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2_grpc as rpc1
from interlingua.server import EngineConfig
from interlingua.server.auth import APIKeyAuth, AuthConfig
from interlingua.server.context import Context
from interlingua.server.push import PushSettings
from tests.live import bind_loopback, live_server, url_of

ALICE = (("x-api-key", "alice-" + "a" * 20),)
BOB = (("x-api-key", "bob-" + "b" * 20),)
V1 = (("a2a-version", "1.0"),)

gates: dict[str, asyncio.Event] = {}


async def _steps(ctx: Context) -> None:
    """Echoes upper-cased; "steps" works in three steps; "wait" waits to be told
    (or canceled)."""
    text = ctx.text
    if text == "steps":
        await ctx.update("one")
        await ctx.update("two")
        await ctx.complete(artifact="three")
    elif text == "wait":
        await ctx.update("waiting")
        await asyncio.sleep(30)
    elif text == "ask":
        await ctx.require_input("more?")
    elif text == "flood":  # more than a reader that does not read can hold
        aid = None
        for n in range(1500):
            aid = await ctx.artifact(f"{n:05d}" + "x" * 4000, artifact_id=aid,
                                     append=aid is not None)
        await ctx.complete()
    else:
        await ctx.complete(artifact=text.upper())


@contextlib.contextmanager
def served(*, auth: AuthConfig | None = None, max_body_bytes: int = 10 * 1024 * 1024,
           push: bool = True, extended: bool = False,
           max_lag: int = 10_000) -> Iterator[tuple[str, str]]:
    """(HTTP base URL, gRPC target) of an agent serving both bindings."""
    sock = bind_loopback()
    agent = Agent("Steps", "Works in steps.", _steps, streaming=True, push_notifications=push,
                  extended_card=(lambda base: msgspec.structs.replace(base, name="Steps+"))
                  if extended else None)
    app = create_app(agent, public_url=url_of(sock), auth=auth, max_body_bytes=max_body_bytes,
                     push=PushSettings(allow_http=True, allow_private_networks=True),
                     engine_config=EngineConfig(max_lag=max_lag))
    server = add_grpc(app, "127.0.0.1:0")
    with live_server(app, sock=sock) as url:
        assert server.port
        yield url, f"127.0.0.1:{server.port}"


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, str]]:
    with served() as where:
        yield where


@pytest.fixture(scope="module")
def v1(agent: tuple[str, str]) -> Iterator[rpc1.A2AServiceStub]:
    with grpc.insecure_channel(agent[1]) as channel:
        yield rpc1.A2AServiceStub(channel)


@pytest.fixture(scope="module")
def v03(agent: tuple[str, str]) -> Iterator[rpc03.A2AServiceStub]:
    with grpc.insecure_channel(agent[1]) as channel:
        yield rpc03.A2AServiceStub(channel)


def _message(text: str, **extra: Any) -> pb1.Message:
    return pb1.Message(message_id=new_id(), role=pb1.ROLE_USER,
                       parts=[pb1.Part(text=text)], **extra)


def _message03(text: str, **extra: Any) -> pb03.Message:
    return pb03.Message(message_id=new_id(), role=pb03.ROLE_USER,
                        content=[pb03.Part(text=text)], **extra)


def _error_info(err: grpc.RpcError) -> tuple[str, str]:
    """(reason, domain) of the ErrorInfo in the status details."""
    details = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
    assert details, "no grpc-status-details-bin"
    status = _Status.parse(details)
    assert status["code"] == err.code().value[0]
    assert status["message"] == err.details()
    (any_,) = status["details"]
    assert any_["type_url"] == "type.googleapis.com/google.rpc.ErrorInfo"
    return any_["reason"], any_["domain"]


class _Status:
    """A reader of google.rpc.Status/Any/ErrorInfo independent of the server's writer:
    the well-known Struct parser is not it, so this reads the wire with protobuf's
    own decoder on a message built for the purpose."""

    @staticmethod
    def parse(data: bytes) -> dict[str, Any]:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        pool = descriptor_pool.DescriptorPool()
        f = descriptor_pb2.FileDescriptorProto(name="status_check.proto", package="check")
        status = f.message_type.add(name="Status")
        status.field.add(name="code", number=1, type=5, label=1)
        status.field.add(name="message", number=2, type=9, label=1)
        status.field.add(name="details", number=3, type=11, label=3, type_name=".check.Any")
        any_ = f.message_type.add(name="Any")
        any_.field.add(name="type_url", number=1, type=9, label=1)
        any_.field.add(name="value", number=2, type=12, label=1)
        info = f.message_type.add(name="ErrorInfo")
        info.field.add(name="reason", number=1, type=9, label=1)
        info.field.add(name="domain", number=2, type=9, label=1)
        pool.Add(f)
        classes = message_factory.GetMessages([f], pool=pool)
        msg = classes["check.Status"].FromString(data)
        details = []
        for d in msg.details:
            inner = classes["check.ErrorInfo"].FromString(d.value)
            details.append({"type_url": d.type_url, "reason": inner.reason,
                            "domain": inner.domain})
        return {"code": msg.code, "message": msg.message, "details": details}


# ------------------------------------------------------------------------ v1.0


def test_v1_send_get_list_cancel(v1: rpc1.A2AServiceStub) -> None:
    sent = v1.SendMessage(pb1.SendMessageRequest(message=_message("hi")), metadata=V1)
    assert sent.WhichOneof("payload") == "task"
    task = sent.task
    assert task.status.state == pb1.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "HI"
    got = v1.GetTask(pb1.GetTaskRequest(id=task.id, history_length=1))
    assert got.id == task.id and got.artifacts[0].parts[0].text == "HI"
    listed = v1.ListTasks(pb1.ListTasksRequest(context_id=task.context_id))
    assert [t.id for t in listed.tasks] == [task.id]
    assert listed.page_size > 0
    # a finished task is not canceled
    with pytest.raises(grpc.RpcError) as err:
        v1.CancelTask(pb1.CancelTaskRequest(id=task.id))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert _error_info(err.value) == ("TASK_NOT_CANCELABLE", "a2a-protocol.org")
    # a running one is
    running = v1.SendMessage(pb1.SendMessageRequest(
        message=_message("wait"),
        configuration=pb1.SendMessageConfiguration(return_immediately=True)))
    canceled = v1.CancelTask(pb1.CancelTaskRequest(id=running.task.id))
    assert canceled.status.state == pb1.TASK_STATE_CANCELED


def test_v1_streams_and_resumes(v1: rpc1.A2AServiceStub) -> None:
    events = list(v1.SendStreamingMessage(pb1.SendMessageRequest(message=_message("steps"))))
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task"
    assert events[-1].status_update.status.state == pb1.TASK_STATE_COMPLETED
    seqs = [int(getattr(e, e.WhichOneof("payload")).metadata[EVENT_ID_KEY]) for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    task_id = events[0].task.id
    # resumed after the first event: every later event, none twice
    again = list(v1.SubscribeToTask(pb1.SubscribeToTaskRequest(id=task_id),
                                    metadata=(("last-event-id", str(seqs[0])),)))
    resumed = [int(getattr(e, e.WhichOneof("payload")).metadata[EVENT_ID_KEY]) for e in again]
    assert resumed == seqs[1:]
    assert [e.SerializeToString() for e in again] == [e.SerializeToString() for e in events[1:]]


def test_v1_a_bad_last_event_id_is_invalid_argument(v1: rpc1.A2AServiceStub) -> None:
    task = v1.SendMessage(pb1.SendMessageRequest(message=_message("hi"))).task
    with pytest.raises(grpc.RpcError) as err:
        list(v1.SubscribeToTask(pb1.SubscribeToTaskRequest(id=task.id),
                                metadata=(("last-event-id", "yesterday"),)))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _error_info(err.value)[0] == "INVALID_PARAMS"


def test_v1_subscribe_follows_a_running_task(v1: rpc1.A2AServiceStub) -> None:
    started = v1.SendMessage(pb1.SendMessageRequest(
        message=_message("wait"),
        configuration=pb1.SendMessageConfiguration(return_immediately=True)))
    stream = v1.SubscribeToTask(pb1.SubscribeToTaskRequest(id=started.task.id))
    first = next(stream)
    assert first.WhichOneof("payload") == "task"
    v1.CancelTask(pb1.CancelTaskRequest(id=started.task.id))
    rest = list(stream)
    assert rest[-1].status_update.status.state == pb1.TASK_STATE_CANCELED


def test_a_stream_too_far_behind_ends_unavailable_and_resumes() -> None:
    with served(max_lag=64) as (_, target), grpc.insecure_channel(target) as channel:
        stub = rpc1.A2AServiceStub(channel)
        stream = stub.SendStreamingMessage(pb1.SendMessageRequest(message=_message("flood")))
        seqs = [_seq(next(stream))]
        time.sleep(2)  # the agent runs on; the server cannot send what is not read
        with pytest.raises(grpc.RpcError) as err:
            seqs.extend(_seq(e) for e in stream)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "subscribe again" in (err.value.details() or "")
        assert _error_info(err.value)[0] == "RESOURCE_UNAVAILABLE"
        # everything after the last event received, from the log: no gap, no duplicate
        task_id = stub.ListTasks(pb1.ListTasksRequest()).tasks[0].id
        rest = list(stub.SubscribeToTask(pb1.SubscribeToTaskRequest(id=task_id),
                                         metadata=(("last-event-id", str(seqs[-1])),)))
        seqs.extend(_seq(e) for e in rest)
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        assert rest[-1].status_update.status.state == pb1.TASK_STATE_COMPLETED


@pytest.mark.parametrize("binding", ["grpc", "jsonrpc"])
async def test_the_client_resumes_a_stream_that_fell_behind_on_either_binding(
        binding: str) -> None:
    # (over gRPC the client raised ResourceUnavailable where over SSE it resumed)
    from interlingua.client import Client

    with served(max_lag=64) as (url, target):
        address = f"grpc://{target}" if binding == "grpc" else url
        async with Client(address, binding=binding, dialect="1.0", timeout=30) as client:
            seqs: list[int] = []
            async for event in client.stream("flood"):
                if event.seq is not None:
                    seqs.append(event.seq)
                if len(seqs) == 1:
                    await asyncio.sleep(2)  # the agent runs on, past what is held
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), "no gap, no duplicate"
    assert len(seqs) >= 1500


def _seq(event: pb1.StreamResponse) -> int:
    return int(getattr(event, event.WhichOneof("payload")).metadata[EVENT_ID_KEY])


def test_v1_push_config_crud(v1: rpc1.A2AServiceStub) -> None:
    task = v1.SendMessage(pb1.SendMessageRequest(message=_message("ask"))).task
    assert task.status.state == pb1.TASK_STATE_INPUT_REQUIRED
    made = v1.CreateTaskPushNotificationConfig(pb1.TaskPushNotificationConfig(
        task_id=task.id, id="c1", url="http://127.0.0.1:9/a2a", token="t"))
    assert (made.task_id, made.id, made.url) == (task.id, "c1", "http://127.0.0.1:9/a2a")
    got = v1.GetTaskPushNotificationConfig(
        pb1.GetTaskPushNotificationConfigRequest(task_id=task.id, id="c1"))
    assert got == made
    listed = v1.ListTaskPushNotificationConfigs(
        pb1.ListTaskPushNotificationConfigsRequest(task_id=task.id))
    assert list(listed.configs) == [made]
    deleted = v1.DeleteTaskPushNotificationConfig(
        pb1.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="c1"))
    assert deleted.SerializeToString() == b""
    with pytest.raises(grpc.RpcError) as err:
        v1.GetTaskPushNotificationConfig(
            pb1.GetTaskPushNotificationConfigRequest(task_id=task.id, id="c1"))
    # as over JSON-RPC: a config the task has not is not found (v1.0 §3.1.8)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert _error_info(err.value) == ("TASK_NOT_FOUND", "a2a-protocol.org")


def test_v1_errors_have_statuses_and_error_info(v1: rpc1.A2AServiceStub) -> None:
    with pytest.raises(grpc.RpcError) as err:
        v1.GetTask(pb1.GetTaskRequest(id="nope"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert _error_info(err.value) == ("TASK_NOT_FOUND", "a2a-protocol.org")
    # the card offers no extended card: unsupported (§3.3.4)
    with pytest.raises(grpc.RpcError) as err:
        v1.GetExtendedAgentCard(pb1.GetExtendedAgentCardRequest())
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert _error_info(err.value)[0] == "UNSUPPORTED_OPERATION"
    # a version this server does not speak
    with pytest.raises(grpc.RpcError) as err:
        v1.GetTask(pb1.GetTaskRequest(id="x"), metadata=(("a2a-version", "9.9"),))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert _error_info(err.value)[0] == "VERSION_NOT_SUPPORTED"
    # a message with no parts
    with pytest.raises(grpc.RpcError) as err:
        v1.SendMessage(pb1.SendMessageRequest(message=pb1.Message(
            message_id=new_id(), role=pb1.ROLE_USER)))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _error_info(err.value)[0] == "INVALID_PARAMS"


def test_v1_bad_input_is_invalid_argument(agent: tuple[str, str]) -> None:
    with grpc.insecure_channel(agent[1]) as channel:
        raw = channel.unary_unary("/lf.a2a.v1.A2AService/SendMessage")
        with pytest.raises(grpc.RpcError) as err:
            raw(b"\xff\xff\xff\xff")
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        # an enum value the proto does not have
        role = pb1.Message(message_id=new_id(), parts=[pb1.Part(text="x")])
        role.role = 7  # type: ignore[assignment]
        with pytest.raises(grpc.RpcError) as err:
            rpc1.A2AServiceStub(channel).SendMessage(pb1.SendMessageRequest(message=role))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        state = pb1.ListTasksRequest()
        state.status = 42  # type: ignore[assignment]
        with pytest.raises(grpc.RpcError) as err:
            rpc1.A2AServiceStub(channel).ListTasks(state)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as err:
            channel.unary_unary("/lf.a2a.v1.A2AService/NoSuchThing")(b"")
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_v1_timestamps_outside_their_range_are_invalid_argument(
        v1: rpc1.A2AServiceStub) -> None:
    """A ``Timestamp`` protobuf carries but no instant is (nanos out of range, past
    year 9999) is refused by its field's name, not answered INTERNAL; the least one
    there is (year 1) is taken, as the same instant over JSON is."""
    for seconds, nanos in ((0, -1), (0, 2_000_000_000), (253_402_300_800, 0)):
        query = pb1.ListTasksRequest()
        query.status_timestamp_after.seconds = seconds
        query.status_timestamp_after.nanos = nanos
        with pytest.raises(grpc.RpcError) as err:
            v1.ListTasks(query)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value
        assert "status_timestamp_after" in (err.value.details() or "")  # (the proto's name)
    first = pb1.ListTasksRequest()
    first.status_timestamp_after.seconds = -62_135_596_800  # 0001-01-01T00:00:00Z
    assert isinstance(v1.ListTasks(first), pb1.ListTasksResponse)  # (refused, as 0001, before)


def test_oversized_request_is_resource_exhausted() -> None:
    with served(max_body_bytes=64 * 1024) as (_, target), grpc.insecure_channel(target) as ch:
        big = pb1.SendMessageRequest(message=_message("x" * 100_000))
        with pytest.raises(grpc.RpcError) as err:
            rpc1.A2AServiceStub(ch).SendMessage(big)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_extended_cards() -> None:
    with served(extended=True) as (url, target), grpc.insecure_channel(target) as ch:
        card = rpc1.A2AServiceStub(ch).GetExtendedAgentCard(pb1.GetExtendedAgentCardRequest())
        assert card.name == "Steps+"
        assert card.capabilities.extended_agent_card
        assert pb1.AgentInterface(url=f"dns:///{target}", protocol_binding="GRPC",
                                  protocol_version="1.0") in card.supported_interfaces
        # v0.3 has one card RPC: the caller's view, the extended card when there is one
        legacy = rpc03.A2AServiceStub(ch).GetAgentCard(pb03.GetAgentCardRequest())
        assert legacy.name == "Steps+" and legacy.supports_authenticated_extended_card
        assert legacy.url == url + "/"


def test_card_lists_grpc(agent: tuple[str, str]) -> None:
    url, target = agent
    card = httpx.get(url + "/.well-known/agent-card.json").json()
    grpc_entries = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    # an absolute URI in gRPC's name syntax: the official SDKs' channels take it as it is
    named = f"dns:///{target}"
    assert {(i["url"], i["protocolVersion"]) for i in grpc_entries} == {
        (named, "1.0"), (named, "0.3")}
    assert {"url": named, "transport": "GRPC"} in card["additionalInterfaces"]
    uris = [e["uri"] for e in card["capabilities"]["extensions"]]
    assert RESUME_EXTENSION_URI in uris


def test_authentication_and_owners_as_over_jsonrpc() -> None:
    auth = AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE[0][1], "bob": BOB[0][1]})})
    with served(auth=auth) as (url, target), grpc.insecure_channel(target) as ch:
        stub = rpc1.A2AServiceStub(ch)
        with pytest.raises(grpc.RpcError) as err:
            stub.SendMessage(pb1.SendMessageRequest(message=_message("hi")))
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert _error_info(err.value)[0] == "UNAUTHENTICATED"
        assert "www-authenticate" in dict(err.value.trailing_metadata())
        task = stub.SendMessage(pb1.SendMessageRequest(message=_message("hi")),
                                metadata=ALICE).task
        # bob cannot see alice's task, over gRPC or JSON-RPC
        with pytest.raises(grpc.RpcError) as err:
            stub.GetTask(pb1.GetTaskRequest(id=task.id), metadata=BOB)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        over_rpc = httpx.post(url + "/", headers={ALICE[0][0]: ALICE[0][1], "A2A-Version": "1.0"},
                              json={"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                                    "params": {"id": task.id}}).json()
        assert over_rpc["result"]["artifacts"][0]["parts"][0]["text"] == "HI"
        # the v0.3 service is behind the same door
        with pytest.raises(grpc.RpcError) as err:
            rpc03.A2AServiceStub(ch).GetTask(pb03.GetTaskRequest(name=f"tasks/{task.id}"))
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_metadata_is_struct(v1: rpc1.A2AServiceStub) -> None:
    meta = struct_pb2.Struct()
    meta.update({"k": "v", "n": 1})
    task = v1.SendMessage(pb1.SendMessageRequest(message=_message("hi", metadata=meta))).task
    got = v1.GetTask(pb1.GetTaskRequest(id=task.id, history_length=5))
    assert dict(got.history[0].metadata) == {"k": "v", "n": 1}


# ------------------------------------------------------------------------ v0.3


def test_v03_send_get_cancel(v03: rpc03.A2AServiceStub) -> None:
    sent = v03.SendMessage(pb03.SendMessageRequest(
        request=_message03("hi"), configuration=pb03.SendMessageConfiguration(blocking=True)))
    assert sent.WhichOneof("payload") == "task"
    task = sent.task
    assert task.status.state == pb03.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "HI"
    got = v03.GetTask(pb03.GetTaskRequest(name=f"tasks/{task.id}", history_length=1))
    assert got.id == task.id and got.artifacts[0].parts[0].text == "HI"
    assert got.history[-1].content[0].text in ("hi", "HI")
    with pytest.raises(grpc.RpcError) as err:
        v03.CancelTask(pb03.CancelTaskRequest(name=f"tasks/{task.id}"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert _error_info(err.value)[0] == "TASK_NOT_CANCELABLE"
    # not blocking: answered at once, then canceled with the v0.3 spelling
    running = v03.SendMessage(pb03.SendMessageRequest(
        request=_message03("wait"), configuration=pb03.SendMessageConfiguration(blocking=False)))
    assert running.task.status.state in (pb03.TASK_STATE_SUBMITTED, pb03.TASK_STATE_WORKING)
    canceled = v03.CancelTask(pb03.CancelTaskRequest(name=f"tasks/{running.task.id}"))
    assert canceled.status.state == pb03.TASK_STATE_CANCELLED


def test_v03_streams_with_final_and_resumes(v03: rpc03.A2AServiceStub) -> None:
    events = list(v03.SendStreamingMessage(pb03.SendMessageRequest(request=_message03("steps"))))
    last = events[-1].status_update
    assert last.status.state == pb03.TASK_STATE_COMPLETED and last.final
    assert not any(e.status_update.final for e in events[:-1])
    seqs = [int(getattr(e, e.WhichOneof("payload")).metadata[EVENT_ID_KEY]) for e in events]
    task_id = events[0].task.id
    again = list(v03.TaskSubscription(pb03.TaskSubscriptionRequest(name=f"tasks/{task_id}"),
                                      metadata=(("last-event-id", str(seqs[1])),)))
    assert [int(getattr(e, e.WhichOneof("payload")).metadata[EVENT_ID_KEY])
            for e in again] == seqs[2:]


def test_v03_push_config_crud(v03: rpc03.A2AServiceStub) -> None:
    task = v03.SendMessage(pb03.SendMessageRequest(request=_message03("ask"))).task
    assert task.status.state == pb03.TASK_STATE_INPUT_REQUIRED
    name = f"tasks/{task.id}/pushNotificationConfigs/c1"
    made = v03.CreateTaskPushNotificationConfig(pb03.CreateTaskPushNotificationConfigRequest(
        parent=f"tasks/{task.id}", config_id="c1",
        config=pb03.TaskPushNotificationConfig(
            push_notification_config=pb03.PushNotificationConfig(
                url="http://127.0.0.1:9/a2a", token="t",
                authentication=pb03.AuthenticationInfo(schemes=["Bearer"], credentials="x")))))
    assert made.name == name
    assert made.push_notification_config.url == "http://127.0.0.1:9/a2a"
    assert list(made.push_notification_config.authentication.schemes) == ["Bearer"]
    got = v03.GetTaskPushNotificationConfig(pb03.GetTaskPushNotificationConfigRequest(name=name))
    assert got == made
    listed = v03.ListTaskPushNotificationConfig(
        pb03.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}"))
    assert list(listed.configs) == [made]
    deleted = v03.DeleteTaskPushNotificationConfig(
        pb03.DeleteTaskPushNotificationConfigRequest(name=name))
    assert deleted.SerializeToString() == b""  # Empty (it was the agent's card)
    listed = v03.ListTaskPushNotificationConfig(
        pb03.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}"))
    assert list(listed.configs) == []
    # the parent and the config's name must name one task
    with pytest.raises(grpc.RpcError) as two:
        v03.CreateTaskPushNotificationConfig(pb03.CreateTaskPushNotificationConfigRequest(
            parent=f"tasks/{task.id}", config_id="c2", config=pb03.TaskPushNotificationConfig(
                name="tasks/other/pushNotificationConfigs/c2",
                push_notification_config=pb03.PushNotificationConfig(
                    url="http://127.0.0.1:9/a2a"))))
    assert two.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "the request's name names task 'other'" in (two.value.details() or "")
    # and the config named two ways: its config_id and its id
    with pytest.raises(grpc.RpcError) as ids:
        v03.CreateTaskPushNotificationConfig(pb03.CreateTaskPushNotificationConfigRequest(
            parent=f"tasks/{task.id}", config_id="asked", config=pb03.TaskPushNotificationConfig(
                push_notification_config=pb03.PushNotificationConfig(
                    id="other", url="http://127.0.0.1:9/a2a"))))
    assert ids.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "names push notification config 'asked', not 'other'" in (ids.value.details() or "")


def test_v03_card_and_errors(v03: rpc03.A2AServiceStub, agent: tuple[str, str]) -> None:
    card = v03.GetAgentCard(pb03.GetAgentCardRequest())
    assert card.name == "Steps"
    assert card.url == agent[0] + "/"
    assert card.capabilities.streaming and card.capabilities.push_notifications
    assert pb03.AgentInterface(url=f"dns:///{agent[1]}", transport="GRPC") in \
        card.additional_interfaces
    with pytest.raises(grpc.RpcError) as err:
        v03.GetTask(pb03.GetTaskRequest(name="tasks/nope"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert _error_info(err.value)[0] == "TASK_NOT_FOUND"
    with pytest.raises(grpc.RpcError) as err:
        v03.GetTask(pb03.GetTaskRequest(name="nope"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        v03.SendMessage(pb03.SendMessageRequest())
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    bad_role = _message03("x")
    bad_role.role = 5  # type: ignore[assignment]
    with pytest.raises(grpc.RpcError) as err:
        v03.SendMessage(pb03.SendMessageRequest(request=bad_role))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


V03_BAD = {
    "a part with no member": (
        lambda s, t: s.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
            message_id=new_id(), role=pb03.ROLE_USER, content=[pb03.Part()]))),
        grpc.StatusCode.INVALID_ARGUMENT, "none of text, file, data"),
    "a file with neither uri nor bytes": (
        lambda s, t: s.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
            message_id=new_id(), role=pb03.ROLE_USER,
            content=[pb03.Part(file=pb03.FilePart(mime_type="a/b"))]))),
        grpc.StatusCode.INVALID_ARGUMENT, "exactly one of"),
    "no message id": (
        lambda s, t: s.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
            role=pb03.ROLE_USER, content=[pb03.Part(text="x")]))),
        grpc.StatusCode.INVALID_ARGUMENT, "SendMessage: request.message_id is required"),
    "a negative history length": (
        lambda s, t: s.GetTask(pb03.GetTaskRequest(name=f"tasks/{t}", history_length=-1)),
        grpc.StatusCode.INVALID_ARGUMENT, "GetTask: Expected `int` >= 0 - at `history_length`"),
    "no role": (
        lambda s, t: s.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
            message_id=new_id(), content=[pb03.Part(text="x")]))),
        grpc.StatusCode.INVALID_ARGUMENT, "SendMessage: request.role is required"),
    "a role the proto has not": (
        lambda s, t: s.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
            message_id=new_id(), role=7, content=[pb03.Part(text="x")]))),  # type: ignore[arg-type]
        grpc.StatusCode.INVALID_ARGUMENT,
        "request.role must be ROLE_USER or ROLE_AGENT, got 7"),
    "no content": (
        lambda s, t: s.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
            message_id=new_id(), role=pb03.ROLE_USER))),
        grpc.StatusCode.INVALID_ARGUMENT, "SendMessage: request.content is required"),
    "a send's push config without a url": (
        lambda s, t: s.SendMessage(pb03.SendMessageRequest(
            request=_message03("x"), configuration=pb03.SendMessageConfiguration(
                push_notification=pb03.PushNotificationConfig(token="t")))),
        grpc.StatusCode.INVALID_ARGUMENT, "configuration.push_notification.url is required"),
    "a push config without its config": (
        lambda s, t: s.CreateTaskPushNotificationConfig(
            pb03.CreateTaskPushNotificationConfigRequest(parent=f"tasks/{t}")),
        grpc.StatusCode.INVALID_ARGUMENT, "config"),
    "a push config without a url": (
        lambda s, t: s.CreateTaskPushNotificationConfig(
            pb03.CreateTaskPushNotificationConfigRequest(
                parent=f"tasks/{t}", config=pb03.TaskPushNotificationConfig(
                    push_notification_config=pb03.PushNotificationConfig()))),
        grpc.StatusCode.INVALID_ARGUMENT, "config.push_notification_config.url is required"),
    "a config name without its config id": (
        lambda s, t: s.GetTaskPushNotificationConfig(
            pb03.GetTaskPushNotificationConfigRequest(name=f"tasks/{t}")),
        grpc.StatusCode.INVALID_ARGUMENT, "pushNotificationConfigs"),
    "an unknown task's configs": (
        lambda s, t: s.ListTaskPushNotificationConfig(
            pb03.ListTaskPushNotificationConfigRequest(parent="tasks/nope")),
        grpc.StatusCode.NOT_FOUND, "nope"),
}


@pytest.mark.parametrize("case", list(V03_BAD))
def test_v03_bad_requests_are_told_what_is_wrong(v03: rpc03.A2AServiceStub, case: str) -> None:
    call, code, said = V03_BAD[case]
    task = v03.SendMessage(pb03.SendMessageRequest(request=_message03("hi"))).task
    with pytest.raises(grpc.RpcError) as err:
        call(v03, task.id)
    assert err.value.code() == code
    assert said in (err.value.details() or ""), err.value.details()
    # the request's proto fields, not the v0.3 JSON-RPC members the codec reads
    assert "params" not in (err.value.details() or "").removeprefix("Invalid params")
    assert _error_info(err.value)[1] == "a2a-protocol.org"


def test_v03_task_is_readable_over_v1(v03: rpc03.A2AServiceStub,
                                       v1: rpc1.A2AServiceStub) -> None:
    made = v03.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
        message_id=new_id(), role=pb03.ROLE_USER,
        content=[pb03.Part(text="hi"),
                 pb03.Part(file=pb03.FilePart(file_with_uri="https://x.example/f",
                                              mime_type="text/plain")),
                 pb03.Part(data=pb03.DataPart(data=_struct({"a": 1})))]))).task
    got = v1.GetTask(pb1.GetTaskRequest(id=made.id, history_length=5))
    parts = got.history[0].parts
    assert parts[0].text == "hi"
    assert (parts[1].url, parts[1].media_type) == ("https://x.example/f", "text/plain")
    assert dict(parts[2].data.struct_value) == {"a": 1}


def test_v03_file_part_keeps_its_name(v03: rpc03.A2AServiceStub,
                                      v1: rpc1.A2AServiceStub) -> None:
    # FilePart.name (field 4) is not in the v0.3.0 proto, but the official SDKs'
    # v0.3 services send and read it: a file named over v0.3 gRPC stays named.
    made = v03.SendMessage(pb03.SendMessageRequest(request=pb03.Message(
        message_id=new_id(), role=pb03.ROLE_USER,
        content=[pb03.Part(file=pb03.FilePart(file_with_bytes=b"\x00\xff",
                                              mime_type="application/octet-stream",
                                              name="blob.bin"))]))).task
    got = v1.GetTask(pb1.GetTaskRequest(id=made.id, history_length=5))
    assert (got.history[0].parts[0].raw, got.history[0].parts[0].filename) == (
        b"\x00\xff", "blob.bin")
    again = v03.GetTask(pb03.GetTaskRequest(name=f"tasks/{made.id}", history_length=5))
    file = again.history[0].content[0].file
    assert (file.file_with_bytes, file.mime_type, file.name) == (
        b"\x00\xff", "application/octet-stream", "blob.bin")


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(value)
    return out
