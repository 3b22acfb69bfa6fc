"""The same client calls over JSON-RPC, HTTP+JSON and gRPC against one live server
give the same canonical results: tasks, pages, push configs and errors."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import msgspec
import pytest

from interlingua import Agent, Context
from interlingua.client import Client, DialectMismatch
from interlingua.core.calls import (
    DeletePushConfig,
    GetPushConfig,
    ListPushConfigs,
    SetPushConfig,
)
from interlingua.core.errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    InvalidParams,
    RateLimitExceeded,
    TaskNotFound,
)
from interlingua.core.model import DataPart, Part, PushConfig, Task, TaskState, TextPart
from interlingua.server.auth import APIKeyAuth, AuthConfig, Limits, Principal, RateLimit
from interlingua.server.push import PushSettings
from tests.live import live_grpc_agent


async def _work(ctx: Context) -> None:
    if ctx.text == "slow":
        await ctx.update("working on it")
        await asyncio.sleep(30)
        return
    await ctx.complete("done", artifact=ctx.text, name="echo")


AGENT = Agent("Worker", "Echoes; works slowly on request.", _work, push_notifications=True)

# (binding, dialect) of every way the client can speak to this server
WAYS = [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0"), ("rest", "0.3"),
        ("grpc", "1.0"), ("grpc", "0.3")]


@pytest.fixture(scope="module")
def urls() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(AGENT, push=PushSettings(allow_http=True,
                                                  allow_private_networks=True)) as where:
        yield where


def _address(urls: tuple[str, str], binding: str) -> str:
    base, target = urls
    return {"jsonrpc": base + "/", "rest": base, "grpc": target}[binding]


def _client(urls: tuple[str, str], way: tuple[str, str]) -> Client:
    """A client speaking ``way`` (binding, dialect) to the server at ``urls``."""
    binding, dialect = way
    return Client(_address(urls, binding), binding=binding, dialect=dialect, timeout=20)


@pytest.fixture
async def clients(urls: tuple[str, str]) -> AsyncIterator[dict[tuple[str, str], Client]]:
    made = {(b, d): Client(_address(urls, b), binding=b, dialect=d, timeout=20)
            for b, d in WAYS}
    try:
        yield made
    finally:
        for c in made.values():
            await c.aclose()


async def test_a_task_reads_the_same_over_every_binding(
        clients: dict[tuple[str, str], Client]) -> None:
    made = await clients["rest", "1.0"].send("hello")
    assert isinstance(made, Task) and made.status.state is TaskState.COMPLETED
    seen = {way: await c.get_task(made.id) for way, c in clients.items()}
    assert seen["rest", "1.0"] == seen["jsonrpc", "1.0"]
    assert seen["rest", "0.3"] == seen["jsonrpc", "0.3"]
    assert seen["grpc", "1.0"] == seen["jsonrpc", "1.0"]
    assert seen["grpc", "0.3"] == seen["jsonrpc", "0.3"]
    page = {b: await clients[b, "1.0"].list_tasks(context_id=made.context_id)
            for b in ("jsonrpc", "rest", "grpc")}
    assert page["rest"] == page["jsonrpc"] and [t.id for t in page["rest"].tasks] == [made.id]
    assert page["grpc"] == page["jsonrpc"]


@pytest.mark.parametrize("way", WAYS, ids=["-".join(w) for w in WAYS])
async def test_push_configs_over_each_binding(clients: dict[tuple[str, str], Client],
                                              way: tuple[str, str]) -> None:
    client = clients[way]
    task = await client.send("slow", blocking=False)
    assert isinstance(task, Task)
    try:
        config = PushConfig(url="http://127.0.0.1:9/hook", id="cfg-1", token="tok")
        made = await client.call(SetPushConfig(task_id=task.id, config=config))
        assert isinstance(made, PushConfig)
        assert (made.id, made.url, made.token) == ("cfg-1", config.url, "tok")
        got = await client.call(GetPushConfig(task_id=task.id, config_id="cfg-1"))
        assert got == made
        # what one binding set, the other sees
        other = clients["jsonrpc" if way[0] == "rest" else "rest", "1.0"]
        assert await other.call(ListPushConfigs(task_id=task.id)) == [made]
        assert await client.call(DeletePushConfig(task_id=task.id, config_id="cfg-1")) is None
        assert await client.call(ListPushConfigs(task_id=task.id)) == []
    finally:
        await client.cancel(task.id)


@pytest.mark.parametrize("way", WAYS, ids=["-".join(w) for w in WAYS])
async def test_errors_carry_the_same_message(clients: dict[tuple[str, str], Client],
                                             way: tuple[str, str]) -> None:
    with pytest.raises(TaskNotFound) as raised:
        await clients[way].get_task("no-such-task")
    assert raised.value.message == "Task not found: no-such-task"


#: every way, and JSON-RPC's older dialects, whose errors have fewer codes
ERROR_WAYS = [*WAYS, ("jsonrpc", "0.1")]
KEYS = {"alice": "alice-key-0123456789abcdef", "bob": "bob-key-0123456789abcdef"}


@pytest.mark.parametrize("way", ERROR_WAYS, ids=["-".join(w) for w in ERROR_WAYS])
async def test_a_config_id_the_task_has_not_is_not_found_in_every_dialect(
        urls: tuple[str, str], way: tuple[str, str]) -> None:
    """docs/push.md §Rules: a get of a config the task has not is TaskNotFound naming it,
    in every dialect, and a v0.1 config's id is its task's (before: v0.1's client dropped
    the id, answering the task's one config, its id None)."""
    async with _client(urls, way) as client:
        task = await client.send("hello")
        made = await client.call(SetPushConfig(
            task_id=task.id, config=PushConfig(url="http://127.0.0.1:9/hook", token="tok")))
        assert isinstance(made, PushConfig)
        with pytest.raises(TaskNotFound) as raised:
            await client.call(GetPushConfig(task_id=task.id, config_id="no-such-config"))
        assert raised.value.message == (f"Not found: task {task.id} has no push "
                                        "notification config with id 'no-such-config'")
        assert await client.call(GetPushConfig(task_id=task.id)) == made
        if way[1] == "0.1":
            assert made.id == task.id
            assert await client.call(GetPushConfig(task_id=task.id, config_id=task.id)) == made


@pytest.mark.parametrize("way", ERROR_WAYS, ids=["-".join(w) for w in ERROR_WAYS])
async def test_a_delete_of_a_config_id_the_task_has_not_keeps_its_configs(
        urls: tuple[str, str], way: tuple[str, str]) -> None:
    """docs/push.md §Rules: a delete of an unknown id succeeds (it is gone); v0.1, which
    has no delete, says so rather than answering anything."""
    async with _client(urls, way) as client, _client(urls, ("jsonrpc", "1.0")) as v1:
        task = await client.send("hello")
        made = await client.call(SetPushConfig(
            task_id=task.id, config=PushConfig(url="http://127.0.0.1:9/hook", token="tok")))
        delete = DeletePushConfig(task_id=task.id, config_id="no-such-config")
        if way[1] == "0.1":
            with pytest.raises(DialectMismatch):
                await client.call(delete)
        else:
            assert await client.call(delete) is None
        kept = await v1.call(ListPushConfigs(task_id=task.id))
        assert isinstance(made, PushConfig) and [c.token for c in kept] == ["tok"]


async def _only_alice(principal: Principal, operation: str, task: object, skill: object) -> bool:
    return principal.id == "alice"


@pytest.fixture(scope="module")
def secured() -> Iterator[tuple[str, str]]:
    auth = AuthConfig(schemes={"key": APIKeyAuth(KEYS)}, authorize=_only_alice)
    with live_grpc_agent(AGENT, auth=auth) as where:
        yield where


@pytest.fixture(scope="module")
def limited() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(AGENT, limits=Limits(rate_limit=RateLimit(rate=0.001, burst=1))) \
            as where:
        yield where


async def _refusal(urls: tuple[str, str], way: tuple[str, str],
                   headers: dict[str, str] | None = None) -> A2AError:
    binding, dialect = way
    async with Client(_address(urls, binding), binding=binding, dialect=dialect, timeout=20,
                      headers=headers) as client:
        with pytest.raises(A2AError) as raised:
            await client.get_task("some-task")
    return raised.value


@pytest.mark.parametrize("way", ERROR_WAYS, ids=["-".join(w) for w in ERROR_WAYS])
async def test_a_refused_caller_hears_why_on_every_binding(
        secured: tuple[str, str], way: tuple[str, str]) -> None:
    # (v0.3's JSON-RPC said InvalidRequest, and its HTTP+JSON the status's words alone)
    anonymous = await _refusal(secured, way)
    assert type(anonymous) is AuthenticationRequired
    assert anonymous.message == "Authentication required: this agent accepts key"
    wrong = await _refusal(secured, way, {"X-API-Key": "not-a-key-0123456789abcdef"})
    assert type(wrong) is AuthenticationRequired
    assert wrong.message == "The API key in header 'X-API-Key' is not valid"
    refused = await _refusal(secured, way, {"X-API-Key": KEYS["bob"]})
    assert type(refused) is AuthorizationFailed and refused.message == "bob is not allowed to get"


@pytest.mark.parametrize("dialect", [None, "1.0", "0.3"])
async def test_the_card_at_a_grpc_address_refusing_the_caller_says_so(
        secured: tuple[str, str], dialect: str | None) -> None:
    # (it said the agent "gives no card over gRPC": read at its HTTP URL, refused alike)
    async with Client(f"grpc://{secured[1]}", dialect=dialect, timeout=20,
                      headers={"X-API-Key": "not-a-key-0123456789abcdef"}) as client:
        with pytest.raises(AuthenticationRequired,
                           match="The API key in header 'X-API-Key' is not valid"):
            await client.get_card()
    async with Client(f"grpc://{secured[1]}", dialect=dialect, timeout=20) as anonymous:
        assert (await anonymous.get_card()).name  # the public card, as before


async def test_a_caller_over_its_rate_hears_it_on_every_binding(
        limited: tuple[str, str]) -> None:
    with pytest.raises(TaskNotFound):  # the one request of the burst
        async with Client(_address(limited, "jsonrpc"), timeout=20) as client:
            await client.get_task("some-task")
    for way in ERROR_WAYS:
        refused = await _refusal(limited, way)
        assert type(refused) is RateLimitExceeded, way  # (v0.3's JSON-RPC: InternalError)
        assert refused.message.startswith(
            "Rate limit exceeded: at most 0.001 requests per second (bursts of 1)"), way


async def _echo_parts(ctx: Context) -> None:
    await ctx.artifact(list(ctx.message.parts), name="echo")
    await ctx.complete()


@pytest.fixture(scope="module")
def echoing() -> Iterator[tuple[str, str]]:
    with live_grpc_agent(Agent("Parts", "Echoes the parts it is sent.", _echo_parts)) as where:
        yield where


#: parts each binding must carry as they are (gRPC 1.0 refused data null and read an
#: empty object back as null; gRPC 0.3 dropped a part's metadata, and with it the mark
#: that unwraps data that is no object)
PARTS: list[Part] = [
    TextPart(text="x", metadata={"k": 1}),
    DataPart(data=None),
    DataPart(data={}),
    DataPart(data={"empty": {}, "none": [], "null": None}),
    DataPart(data=[1, 2]),
    DataPart(data="just text"),
]


@pytest.mark.parametrize("way", ERROR_WAYS, ids=["-".join(w) for w in ERROR_WAYS])
async def test_parts_arrive_and_return_as_they_were_sent_on_every_binding(
        echoing: tuple[str, str], way: tuple[str, str]) -> None:
    binding, dialect = way
    async with Client(_address(echoing, binding), binding=binding, dialect=dialect,
                      timeout=20) as client, \
            Client(_address(echoing, "jsonrpc"), timeout=20) as reference:
        task = await client.send(PARTS)
        assert isinstance(task, Task)
        assert task.artifacts[0].parts == PARTS, "the answer"
        stored = await reference.get_task(task.id)
        assert stored.history[0].parts == PARTS, "what the agent was sent"


#: numbers past a double's 53 bits of integer, and one that is no integer
NUMBERS = {"past": 2**53 + 1, "far": 2**60, "below": -(2**70) - 1, "small": 5, "half": 0.5}


def _carried(binding: str, value: int | float) -> int | float:
    """``value`` as ``binding`` carries it: gRPC's ``Value`` holds a double, so an
    integer arrives rounded to one, as an integer (docs/grpc.md)."""
    return int(float(value)) if binding == "grpc" and isinstance(value, int) else value


@pytest.mark.parametrize("way", ERROR_WAYS, ids=["-".join(w) for w in ERROR_WAYS])
async def test_integers_arrive_and_return_as_integers_on_every_binding(
        echoing: tuple[str, str], way: tuple[str, str]) -> None:
    # (over gRPC, one past 2**53 came back as a float, 9007199254740992.0, both to the
    # agent and from it)
    binding, dialect = way
    expected = {k: _carried(binding, v) for k, v in NUMBERS.items()}
    sent: list[Part] = [TextPart(text="x", metadata=NUMBERS), DataPart(data=NUMBERS)]
    async with Client(_address(echoing, binding), binding=binding, dialect=dialect,
                      timeout=20) as client, \
            Client(_address(echoing, "jsonrpc"), timeout=20) as reference:
        task = await client.send(sent)
        assert isinstance(task, Task)
        stored = await reference.get_task(task.id)
        for parts, where in ((stored.history[0].parts, "what the agent was sent"),
                             (task.artifacts[0].parts, "the answer")):
            text, data = parts
            assert isinstance(text, TextPart) and isinstance(data, DataPart)
            for got in (text.metadata, data.data):
                assert isinstance(got, dict) and got == expected, where
                assert {k: type(v) for k, v in got.items()} == \
                    {k: type(v) for k, v in NUMBERS.items()}, where


@pytest.mark.parametrize("way", ERROR_WAYS, ids=["-".join(w) for w in ERROR_WAYS])
async def test_a_task_named_by_dots_is_reached_on_every_binding(
        urls: tuple[str, str], way: tuple[str, str]) -> None:
    # (a v0.1 client names its tasks; over HTTP+JSON the URL took /tasks/.. for / and
    # /tasks/. for /tasks, the listing)
    async with Client(_address(urls, "jsonrpc"), dialect="0.1", timeout=20) as naming:
        for name in (".", ".."):
            with contextlib.suppress(A2AError):  # (made by the way run before)
                await naming.send("hello", task_id=name)
    async with _client(urls, way) as client:
        for name in (".", ".."):
            task = await client.get_task(name)
            assert task.id == name and task.status.state is TaskState.COMPLETED


@pytest.mark.parametrize("way", ERROR_WAYS, ids=["-".join(w) for w in ERROR_WAYS])
async def test_an_empty_task_id_is_invalid_params_on_every_binding(
        urls: tuple[str, str], way: tuple[str, str]) -> None:
    # (HTTP+JSON asked /tasks/, the listing, and read it as a task; v0.3's JSON-RPC
    # said "task not found")
    async with _client(urls, way) as client:
        for call in (client.get_task(""), client.cancel(""),
                     client.call(GetPushConfig(task_id="", config_id="c"))):
            with pytest.raises(InvalidParams):
                await call
        with pytest.raises(InvalidParams):
            async for _ in client.subscribe(""):
                pass


@pytest.mark.parametrize("way", WAYS, ids=["-".join(w) for w in WAYS])
async def test_a_value_out_of_the_wire_s_range_is_invalid_params_on_every_binding(
        urls: tuple[str, str], way: tuple[str, str]) -> None:
    # (the gRPC client raised a bare ClientError, before anything was sent)
    dialect = way[1]
    async with _client(urls, way) as client:
        with pytest.raises(InvalidParams, match=r"Invalid params for (GetTask|tasks/get)"):
            await client.get_task("some-task", history_length=2**31)
        if dialect == "1.0":
            with pytest.raises(InvalidParams, match="1099511627776"):
                await client.list_tasks(page_size=2**40)
            with pytest.raises(InvalidParams, match=r"[Ii]nvalid params for ListTasks"):
                await client.list_tasks(status_timestamp_after="yesterday")


#: the ways that list tasks (A2A 1.0)
LISTING_WAYS = [way for way in WAYS if way[1] == "1.0"]


@pytest.mark.parametrize("way", LISTING_WAYS, ids=["-".join(w) for w in LISTING_WAYS])
async def test_a_bad_timestamp_is_named_with_its_field_on_every_binding(
        urls: tuple[str, str], way: tuple[str, str]) -> None:
    # (gRPC said protobuf's "Failed to parse timestamp: missing valid timezone offset",
    # and took a date alone, or a year past 9999 once in UTC)
    async with _client(urls, way) as client:
        for bad, why in (("yesterday", "is not an RFC 3339 timestamp"),
                         ("2024-13-01T00:00:00Z", "is not an RFC 3339 timestamp"),
                         ("2024-01-01", "is not an RFC 3339 timestamp"),
                         ("9999-12-31T23:59:59-01:00", "is out of range (UTC years 1 to 9999)")):
            with pytest.raises(InvalidParams) as raised:
                await client.list_tasks(status_timestamp_after=bad)
            assert f"statusTimestampAfter {why}: {bad!r}" in raised.value.message


@pytest.mark.parametrize("way", ERROR_WAYS, ids=["-".join(w) for w in ERROR_WAYS])
async def test_a_history_of_none_is_none_on_every_binding(
        urls: tuple[str, str], way: tuple[str, str]) -> None:
    # (v0.3's proto reads a history length of 0 as all of it: gRPC 0.3 gave it all, and
    # then its raw answers (last_result, a stream event's raw) still held it)
    async with _client(urls, way) as client:
        sent = await client.send("hello", history_length=0)
        assert isinstance(sent, Task) and sent.history == []
        assert "history" not in _task_in(client.last_result)
        assert (await client.get_task(sent.id, history_length=0)).history == []
        assert "history" not in _task_in(client.last_result)
        assert len((await client.get_task(sent.id, history_length=1)).history) == 1
        assert len(_task_in(client.last_result)["history"]) == 1
        async for event in client.stream("hi", history_length=0):
            if isinstance(event.item, Task):  # (a v0.1 stream carries no task)
                assert event.item.history == [] and "history" not in _task_in(event.raw)


def _task_in(raw: bytes | None) -> dict[str, Any]:
    """The task of a raw answer: a task, or a send's answer or stream event holding one."""
    answer = msgspec.json.decode(raw or b"null")
    assert isinstance(answer, dict), raw
    task = answer.get("task", answer)
    assert isinstance(task, dict) and "status" in task, raw
    return task


#: a gRPC address as the client takes it: (its URL, the binding named with it)
ADDRESS_FORMS = {"grpc-url": ("grpc://{}", None), "bare-with-binding": ("{}", "grpc")}


@pytest.mark.parametrize("form", ADDRESS_FORMS)
@pytest.mark.parametrize("dialect", [None, "1.0", "0.3"])
async def test_the_card_of_an_agent_at_a_grpc_address_is_asked_for_over_grpc(
        urls: tuple[str, str], dialect: str | None, form: str) -> None:
    # (it was looked for at grpc://…/.well-known/agent-card.json, which httpx refused;
    # a bare host:port given with binding="grpc" was looked for as an HTTP URL)
    template, binding = ADDRESS_FORMS[form]
    async with Client(template.format(urls[1]), binding=binding, dialect=dialect,
                      timeout=20) as over_grpc, \
            Client(urls[0], timeout=20) as over_http:
        card = await over_grpc.get_card()
        assert card.name == (await over_http.get_card()).name == "Worker"
        assert {i.binding for i in card.interfaces} >= {"GRPC", "JSONRPC"}
        sent = await over_grpc.send("hello")  # and the client still calls over gRPC
        assert isinstance(sent, Task) and sent.status.state is TaskState.COMPLETED
        assert over_grpc.url == "grpc://" + urls[1] and over_grpc.binding == "grpc"


@pytest.mark.parametrize("way", WAYS, ids=["-".join(w) for w in WAYS])
async def test_a_push_config_asked_for_without_its_id_on_every_binding(
        clients: dict[tuple[str, str], Client], way: tuple[str, str]) -> None:
    # (HTTP+JSON and v0.3's gRPC, whose routes name the config, refused the call)
    client = clients[way]
    task = await client.send("slow", blocking=False)
    assert isinstance(task, Task)
    try:
        with pytest.raises(TaskNotFound, match="has no push notification config"):
            await client.call(GetPushConfig(task_id=task.id))
        config = PushConfig(url="http://127.0.0.1:9/hook", id="only", token="tok")
        made = await client.call(SetPushConfig(task_id=task.id, config=config))
        assert await client.call(GetPushConfig(task_id=task.id)) == made
    finally:
        await client.cancel(task.id)


@pytest.fixture(scope="module")
def signed() -> Iterator[tuple[str, str]]:
    from interlingua.server.auth import CardSigning

    with live_grpc_agent(AGENT, card_signing=CardSigning()) as where:
        yield where


async def test_a_card_verifier_is_used_whatever_the_endpoint_is_known_by(
        signed: tuple[str, str]) -> None:
    # (with a dialect given, or at a gRPC address, the endpoint is known without the
    # card: the card was never read, and the verifier passed over without a word)
    from joserfc.jwk import ECKey

    from interlingua.client import CardVerifier
    from interlingua.client.security import UnverifiedCard

    other = ECKey.generate_key("P-256", private=True).as_pem(private=False).decode()
    base, target = signed
    async with Client(base + "/", dialect="1.0", timeout=20,
                      card_verifier=CardVerifier(keys=[other])) as client:
        with pytest.raises(UnverifiedCard, match="is not trusted"):
            await client.send("hello")
    async with Client(base + "/", dialect="1.0", timeout=20,
                      card_verifier=CardVerifier()) as client:
        assert isinstance(await client.send("hello"), Task)  # its own keys verify it
    async with Client("grpc://" + target, timeout=20,
                      card_verifier=CardVerifier()) as client:
        with pytest.raises(UnverifiedCard, match="verify it at the agent's HTTP URL"):
            await client.send("hello")


def test_the_card_command_says_a_grpc_card_cannot_be_verified(
        signed: tuple[str, str]) -> None:
    # (--verify was passed over: the card printed, exit 0, nothing verified)
    from click.testing import CliRunner

    from interlingua.cli.main import main

    done = CliRunner().invoke(main, ["card", "grpc://" + signed[1], "--verify"],
                              prog_name="interlingua")
    assert done.exit_code == 1, done.output
    assert "verify it at the agent's HTTP URL" in done.output
