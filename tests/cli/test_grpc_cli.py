"""``--binding grpc`` on the client commands, and gRPC addresses (``grpc://HOST:PORT``)
as their URL, against a live server that serves every binding."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from click.testing import Result

from interlingua.server.engine import EngineConfig
from tests.cli.ways import run
from tests.client.agents import agent
from tests.live import live_grpc_agent

GRPC = ["--binding", "grpc"]


def ok(*args: str) -> Result:
    result = run(*args)
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


def lines_of(result: Result) -> list[Any]:
    return [msgspec.json.decode(line) for line in result.stdout.splitlines() if line.strip()]


def test_card_of_a_grpc_address_is_read_over_grpc(where: tuple[str, str]) -> None:
    from tests.cli.test_console_script import interlingua

    url, target = where
    done = interlingua("card", f"grpc://{target}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Test assistant  version 2.1.0\n")
    # v0.3's card lists v0.3's interfaces alone, while commands without --dialect speak
    # v1.0 here: none of them is marked, and what they speak is said
    assert f"GRPC       0.3   dns:///{target}\n" in done.stdout
    assert "(used by default)" not in done.stdout
    assert "Used by default: gRPC v1.0 where the agent serves it, else v0.3 (--dialect " \
        "chooses)" in done.stdout
    chosen = interlingua("card", f"grpc://{target}", "--dialect", "0.3")
    assert f"GRPC       0.3   dns:///{target}  (used by default)" in chosen.stdout
    assert "Used by default:" not in chosen.stdout
    assert f"Card: grpc://{target} (over gRPC: v0.3 GetAgentCard)" in done.stdout
    raw = msgspec.json.decode(interlingua("card", f"grpc://{target}", "--json").stdout)
    assert raw["name"] == "Test assistant" and raw["url"] == url + "/"
    # v1.0 has only the extended card, which this agent has not: what to do instead
    done = interlingua("card", f"grpc://{target}", "--dialect", "1.0")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "unsupported protocol" not in done.stderr
    assert "a gRPC address has no well-known card: read it at the agent's HTTP URL" \
        in done.stderr
    # (not told to ask in v1.0, which it did)
    assert "--dialect 1.0" not in done.stderr, done.stderr


def test_card_of_a_grpc_address_nobody_serves_is_unreachable() -> None:
    """Nothing listens at the address: exit 3 (could not be reached), one line."""
    from tests.cli.test_console_script import interlingua
    from tests.services import free_port

    target = f"127.0.0.1:{free_port()}"
    done = interlingua("card", f"grpc://{target}", "--timeout", "5")
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(f"error: cannot reach {target}"), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


def test_grpcs_to_a_plain_grpc_port_is_one_line(where: tuple[str, str]) -> None:
    """TLS to a port that speaks none: exit 3 and one line, the command's own (gRPC's
    C core printed its handshake failure on stderr first)."""
    from tests.cli.test_console_script import interlingua

    _, target = where
    done = interlingua("send", f"grpcs://{target}", "hi", "--timeout", "10")
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith(f"error: cannot reach {target}"), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


def test_an_http_url_at_a_grpc_port_says_what_the_port_speaks(where: tuple[str, str]) -> None:
    """http:// at a gRPC port: the answer is HTTP/2, not HTTP/1.1; the error says so
    and names the grpc:// form, not only the parser's "illegal request line"."""
    from tests.cli.test_console_script import interlingua

    _, target = where
    done = interlingua("send", f"http://{target}", "hi", "--timeout", "10")
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "not HTTP/1.1" in done.stderr and f"grpc://{target}" in done.stderr, done.stderr


def test_a_card_s_grpc_url_is_taken_as_an_address(where: tuple[str, str]) -> None:
    """The card's ``dns:///host:port``, pasted as it is, reaches the gRPC service."""
    _, target = where
    sent = msgspec.json.decode(ok("send", f"dns:///{target}", "hello", "--json").stdout)
    assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_card_shows_the_grpc_interfaces(where: tuple[str, str]) -> None:
    url, target = where
    out = ok("card", url).stdout
    # named as the card names them: an absolute URI in gRPC's name syntax
    assert f"GRPC       1.0   dns:///{target}\n" in out
    assert f"GRPC       0.3   dns:///{target}\n" in out
    assert "Dialects: JSON-RPC 1.0, 0.3; HTTP+JSON 1.0, 0.3; GRPC 1.0, 0.3" in out
    chosen = ok("card", url, *GRPC).stdout
    assert f"GRPC       1.0   dns:///{target}  (used by default)" in chosen
    assert "Dialects: GRPC 1.0, 0.3" in chosen


def test_card_of_a_server_offering_1_1_says_1_1_is_spoken() -> None:
    """``interlingua serve --offer-1.1``: the card names 1.1 on its v1.0 interfaces, which
    the client speaks 1.1 to; the Dialects line says so, as the interface lines do."""
    from tests.cli.test_serve_bindings import serving

    with serving("--grpc-port", "0", "--offer-1.1") as info:
        url = info["listen"]
        out = ok("card", url).stdout
        assert f"JSONRPC    1.1   {url}/  (used by default)" in out, out
        assert "Dialects: JSON-RPC 1.1, 0.3; HTTP+JSON 1.1, 0.3; GRPC 1.1, 0.3" in out, out
        assert "Dialects: GRPC 1.1, 0.3" in ok("card", url, *GRPC).stdout
        # a client told to speak 1.0 there speaks it at the URL, not at the 1.1 interface
        older = ok("card", url, "--dialect", "1.0").stdout
        assert "(used by default)" not in older, older
        assert f"Used by default: JSON-RPC v1.0 at {url} (the URL given" in older, older


@pytest.mark.parametrize("how", ["card", "address-1.0", "address-0.3"])
def test_send_get_cancel_over_grpc(where: tuple[str, str], how: str) -> None:
    url, target = where
    if how == "card":
        at, extra = url, GRPC
    else:
        at, extra = f"grpc://{target}", ["--dialect", how.rpartition("-")[2]]
    sent = msgspec.json.decode(ok("send", at, "hello", "--json", *extra).stdout)
    # the answer's ProtoJSON, as the gRPC service sent it
    assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id = sent["task"]["id"]
    assert ok("get", at, task_id, *extra).stdout.splitlines()[0] == f"Task {task_id}  completed"
    waiting = msgspec.json.decode(
        ok("send", at, "sleep 30", "--no-wait", "--json", *extra).stdout)["task"]["id"]
    assert ok("cancel", at, waiting, *extra).stdout.splitlines()[0] == (
        f"Task {waiting}  canceled")
    again = run("cancel", at, waiting, *extra)
    assert again.exit_code == 1
    assert again.stderr.startswith("error: TaskNotCancelable (-32002): ")


def test_a_grpc_address_without_a_dialect_speaks_v1(where: tuple[str, str]) -> None:
    _, target = where
    sent = msgspec.json.decode(ok("send", f"grpc://{target}", "hi", "--json").stdout)
    assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    page = msgspec.json.decode(ok("tasks", f"grpc://{target}", "--context-id",
                                  sent["task"]["contextId"], "--json").stdout)
    assert [t["id"] for t in page["tasks"]] == [sent["task"]["id"]]


def test_tasks_json_over_grpc_has_the_members_json_rpc_gives(where: tuple[str, str]) -> None:
    # ProtoJSON leaves a field at its default out: an empty page's members (tasks,
    # nextPageToken, totalSize), which v1.0's JSON always carries and scripts read
    url, target = where
    nobody = "no-such-context"
    over_grpc = msgspec.json.decode(ok("tasks", f"grpc://{target}", "--context-id", nobody,
                                       "--json").stdout)
    over_rpc = msgspec.json.decode(ok("tasks", url, "--context-id", nobody, "--dialect", "1.0",
                                      "--json").stdout)
    assert over_grpc == over_rpc
    assert over_grpc["tasks"] == [] and over_grpc["nextPageToken"] == ""


def test_stream_and_subscribe_over_grpc(where: tuple[str, str]) -> None:
    url, _ = where
    lines = lines_of(ok("stream", url, "hi", "--json", *GRPC))
    assert next(iter(lines[0])) == "task"
    assert lines[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id = lines[0]["task"]["id"]
    replayed = lines_of(ok("subscribe", url, task_id, "--last-event-id", "1", "--json", *GRPC))
    assert replayed == lines[1:]


def test_json_over_grpc_writes_64_bit_integers_as_strings(where: tuple[str, str]) -> None:
    """ProtoJSON writes an int64 as a string: A2A 1.1's ``generation`` in the gRPC
    answer's JSON is what JSON-RPC and HTTP+JSON give, ``"3"``, not ``3``; a send's
    answer shown as the task ended (read again) keeps it."""
    url, target = where
    v11 = ["--dialect", "1.1"]
    sent = msgspec.json.decode(ok("send", f"grpc://{target}", "hello", "--json", *v11).stdout)
    task_id = sent["task"]["id"]
    over_grpc = msgspec.json.decode(ok("get", f"grpc://{target}", task_id, "--json",
                                       *v11).stdout)
    over_rest = msgspec.json.decode(ok("get", url, task_id, "--json", *v11,
                                       "--binding", "rest").stdout)
    assert isinstance(over_grpc["generation"], str) and int(over_grpc["generation"]) > 1
    assert over_grpc == over_rest
    # a send's answer, shown as the task ended, keeps the generation too
    assert sent["task"]["generation"] == over_grpc["generation"]
    lines = lines_of(ok("stream", f"grpc://{target}", "hi", "--json", *v11))
    numbers = [next(iter(line.values()))["generation"] for line in lines]
    assert numbers == [str(n) for n in range(1, len(lines) + 1)], numbers


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
def test_errors_read_as_over_json_rpc(where: tuple[str, str], dialect: str) -> None:
    url, target = where
    over_grpc = run("get", f"grpc://{target}", "no-such-task", "--dialect", dialect)
    rpc = run("get", url + "/", "no-such-task", "--dialect", dialect)
    assert over_grpc.exit_code == rpc.exit_code == 1
    assert over_grpc.stderr == rpc.stderr == (
        "error: TaskNotFound (-32001): Task not found: no-such-task\n")


#: (binding, dialect) of every way the commands speak to an agent
WAYS = [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0"), ("rest", "0.3"),
        ("grpc", "1.0"), ("grpc", "0.3")]


@pytest.fixture(scope="module")
def one_by_default() -> Iterator[tuple[str, str]]:
    """The agent on every binding, whose answers hold the last message of a task's
    history unless another length is asked for."""
    with live_grpc_agent(agent, engine_config=EngineConfig(default_history_length=1)) as found:
        yield found


def _over(where: tuple[str, str], binding: str, dialect: str) -> list[str]:
    url, target = where
    return [f"grpc://{target}" if binding == "grpc" else url, "--binding", binding,
            "--dialect", dialect]


def _history_ids(answer: Any) -> list[str]:
    """The message ids of the history in a raw answer: a task, or a send's answer or
    stream event holding one (``{"task": ...}``)."""
    task = answer.get("task", answer)
    return [message["messageId"] for message in task.get("history", [])]


@pytest.mark.parametrize("way", WAYS, ids=["-".join(w) for w in WAYS])
@pytest.mark.parametrize("asked", ["0", "1", "2", None])
def test_get_json_holds_the_history_asked_for_on_every_binding(
        one_by_default: tuple[str, str], way: tuple[str, str], asked: str | None) -> None:
    """``get --history N --json``: none for 0, the last N, the agent's default without
    --history, the same on every binding (v0.3's gRPC, whose request cannot say 0,
    printed the whole history for --history 0)."""
    url, _ = one_by_default
    sent = msgspec.json.decode(ok("send", url, "hello", "--json", "--dialect", "1.0").stdout)
    task_id = sent["task"]["id"]
    whole = _history_ids(msgspec.json.decode(
        ok("get", url, task_id, "--history", "10", "--json", "--dialect", "1.0").stdout))
    assert len(whole) == 2, whole
    history = ["--history", asked] if asked is not None else []
    got = msgspec.json.decode(ok("get", *_over(one_by_default, *way), task_id, *history,
                                 "--json").stdout)
    assert _history_ids(got) == whole[len(whole) - int(asked or 1):]


@pytest.mark.parametrize("way", WAYS, ids=["-".join(w) for w in WAYS])
@pytest.mark.parametrize("asked", ["0", "1", None])
def test_send_and_stream_json_hold_the_history_asked_for_on_every_binding(
        one_by_default: tuple[str, str], way: tuple[str, str], asked: str | None) -> None:
    """The answer to ``send --no-wait --history N --json`` and the first task of
    ``stream --history N --json``: the history the task had then (the message sent),
    none of it for --history 0, on every binding."""
    history = ["--history", asked] if asked is not None else []
    at = _over(one_by_default, *way)
    sent = msgspec.json.decode(ok("send", *at, "sleep 0.2", "--no-wait", *history,
                                  "--json").stdout)
    first = lines_of(ok("stream", *at, "hi", *history, "--json"))[0]
    expected = 0 if asked == "0" else 1
    assert (len(_history_ids(sent)), len(_history_ids(first))) == (expected, expected)


@pytest.mark.parametrize("address", ["grpc://127.0.0.1", "grpc://:50051", "grpcs://h:99999"])
def test_a_bad_grpc_address_is_a_usage_error(address: str) -> None:
    result = run("get", address, "t1")
    assert result.exit_code == 2
    assert "grpc://HOST:PORT" in result.stderr or "port" in result.stderr


@contextlib.contextmanager
def _cardless_grpc(refusal: str | None = None) -> Iterator[str]:
    """A gRPC server that answers every call UNIMPLEMENTED (or with the status code named
    ``refusal``): an agent that gives no card over gRPC (as some do), in a thread of its
    own; yields its address."""
    import asyncio
    import threading

    import grpc

    ready: list[str] = []
    stop = threading.Event()

    async def refuse(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await context.abort(getattr(grpc.StatusCode, refusal or "UNIMPLEMENTED"), "refused")

    class Refusing(grpc.GenericRpcHandler):
        def service(self, details: Any) -> Any:
            return grpc.unary_unary_rpc_method_handler(refuse) if refusal else None

    async def run() -> None:
        server = grpc.aio.server(handlers=[Refusing()])
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        ready.append(f"127.0.0.1:{port}")
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0)

    thread = threading.Thread(target=asyncio.run, args=(run(),), daemon=True)
    thread.start()
    while not ready:
        stop.wait(0.01)
    try:
        yield ready[0]
    finally:
        stop.set()
        thread.join(10)


def test_mcp_of_a_grpc_agent_without_a_card_is_exit_1_as_card_is() -> None:
    """The agent answered, refusing both card calls: exit 1 from ``card`` and from
    ``mcp`` alike, each saying --dialect 1.0 calls it without one (``mcp`` exited 3,
    "could not be reached", without the hint)."""
    from tests.cli.test_console_script import interlingua

    with _cardless_grpc() as target:
        card = interlingua("card", f"grpc://{target}", "--timeout", "5")
        mcp = interlingua("mcp", f"grpc://{target}", "--timeout", "5")
    assert (card.returncode, mcp.returncode) == (1, 1), (card.stderr, mcp.stderr)
    for done in (card, mcp):
        assert "read it at the agent's HTTP URL" in done.stderr, done.stderr
        assert "--dialect 1.0" in done.stderr and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("dialect", ["1.0", "0.3", None])
def test_a_bare_address_with_binding_grpc_is_a_grpc_address(where: tuple[str, str],
                                                             dialect: str | None) -> None:
    """``send HOST:PORT --binding grpc``: the plain-text gRPC address, as the client
    takes it with binding="grpc" (the CLI refused it as no agent URL), whichever
    comes first on the command line."""
    _, target = where
    asked = ["--dialect", dialect] if dialect else []
    for args in (["send", target, "hi", *GRPC], ["send", *GRPC, target, "hi"]):
        sent = msgspec.json.decode(ok(*args, *asked, "--json").stdout)
        assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    task_id = sent["task"]["id"]
    assert ok("get", target, task_id, *GRPC, *asked).stdout.splitlines()[0] == (
        f"Task {task_id}  completed")
    # (its card, asked for over gRPC: v0.3's public one, as for grpc://)
    assert f"Card: grpc://{target} (over gRPC" in ok("card", target, *GRPC).stdout


@pytest.mark.parametrize("binding", [None, "jsonrpc", "rest"])
def test_a_bare_address_without_binding_grpc_stays_refused(where: tuple[str, str],
                                                           binding: str | None) -> None:
    url, _ = where
    bare = url.removeprefix("http://")
    result = run("send", bare, "hi", *(["--binding", binding] if binding else []))
    assert result.exit_code == 2
    assert "is not an agent URL" in result.stderr, result.stderr


#: every way subscribe speaks: WAYS, and v0.1 (JSON-RPC alone)
SUBSCRIBE_WAYS = [*WAYS, ("jsonrpc", "0.1")]


@pytest.mark.parametrize("way", SUBSCRIBE_WAYS, ids=["-".join(w) for w in SUBSCRIBE_WAYS])
def test_subscribe_to_a_finished_task_shows_how_it_ended_on_every_binding(
        where: tuple[str, str], way: tuple[str, str]) -> None:
    """A fresh ``subscribe`` to a task already finished shows the task as it ended, its
    artifacts with it, in every dialect and binding (v0.3 and v0.1, whose agent answers
    with the final status alone, showed "completed" and nothing of the answer)."""
    url, _ = where
    sent = msgspec.json.decode(ok("send", url, "data", "--json", "--dialect", "1.0").stdout)
    task_id = sent["task"]["id"]
    at = _over(where, *way)
    if way[1] == "0.1":
        at = [*at[:1], "--dialect", "0.1"]  # (v0.1 has JSON-RPC alone)
    shown = ok("subscribe", *at[:1], task_id, *at[1:]).stdout
    assert shown.splitlines()[0] == f"Task {task_id}  completed", shown
    assert "Artifacts (1)" in shown and '"answer": 42' in shown, shown


@pytest.fixture(scope="module")
def keyed() -> Iterator[str]:
    """The test assistant behind an API key, on gRPC too: its gRPC target."""
    from interlingua.server.auth import APIKeyAuth, AuthConfig

    auth = AuthConfig(schemes={"key": APIKeyAuth({"me": "right-" + "k" * 20})})
    with live_grpc_agent(agent, auth=auth) as (_, target):
        yield target


@pytest.mark.parametrize("dialect", [None, "1.0", "0.3"])
def test_card_of_a_grpc_address_refusing_the_key_says_so(keyed: str,
                                                         dialect: str | None) -> None:
    """A wrong key: said as the refusal it is, as ``send`` says it (it read as an agent
    that gives no card, with advice that is refused the same way)."""
    from tests.cli.test_console_script import interlingua

    asked = ["grpc://" + keyed, "-H", "X-API-Key: wrong-" + "k" * 20,
             *(["--dialect", dialect] if dialect else [])]
    card = interlingua("card", *asked)
    send = interlingua("send", *asked, "hi")
    assert card.returncode == send.returncode == 1, (card.stderr, send.stderr)
    assert card.stderr.startswith("error: AuthenticationRequired ("), card.stderr
    assert card.stderr == send.stderr


@pytest.mark.parametrize(("refusal", "said"), [("UNAUTHENTICATED", "AuthenticationRequired"),
                                               ("PERMISSION_DENIED", "AuthorizationFailed")])
def test_card_of_a_grpc_address_refusing_the_caller_says_so(refusal: str, said: str) -> None:
    from tests.cli.test_console_script import interlingua

    with _cardless_grpc(refusal) as target:
        card = interlingua("card", f"grpc://{target}", "--timeout", "5")
        send = interlingua("send", f"grpc://{target}", "hi", "--timeout", "5")
    assert card.returncode == send.returncode == 1, (card.stderr, send.stderr)
    assert card.stderr.startswith(f"error: {said} ("), card.stderr
    assert card.stderr == send.stderr
