"""Bad input on the request surfaces A2A 1.1 (draft) added: each is refused in
the caller's dialect (JSON-RPC code, HTTP status, gRPC status) with a message
naming what was wrong, on a real server on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from interlingua.core.errors import quoted
from interlingua.core.parts import new_id

from .drivers import GRPC03, GRPC10, Refused
from .test_generations import _grpc_get, served

V11 = {"A2A-Version": "1.1"}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Any]]:
    with served() as got:
        yield got


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as cl:
        yield cl


@pytest.fixture(scope="module")
def task_id(server: tuple[str, Any], client: httpx.Client) -> str:
    url = server[0]
    resp = client.post(url, headers=V11, json={
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m-ask", "role": "ROLE_USER",
                               "parts": [{"text": "ask"}]}}})
    task_id: str = resp.json()["result"]["task"]["id"]
    return task_id


def _rpc_error(client: httpx.Client, url: str, method: str, params: Any) -> dict[str, Any]:
    resp = client.post(url, headers=V11,
                       json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert resp.status_code == 200, resp.text
    error: dict[str, Any] = resp.json()["error"]
    return error


# a JSON value for currentGeneration / ifGenerationMatch, and what the refusal names
BAD_GENERATIONS = [
    ("abc", "'abc'"),
    (-1, "non-negative"),
    ("-1", "'-1'"),
    (1.5, "float"),
    (1e30, "float"),
    (True, "bool"),
    ("", "''"),
    ("9" * 5000, "non-negative integer"),
    ([], "array"),
    ({}, "object"),
]


@pytest.mark.parametrize(("value", "named"), BAD_GENERATIONS,
                         ids=[repr(v)[:12] for v, _ in BAD_GENERATIONS])
def test_a_bad_current_generation_is_invalid_params_over_json_rpc(
        server: tuple[str, Any], client: httpx.Client, task_id: str, value: Any,
        named: str) -> None:
    error = _rpc_error(client, server[0], "GetTask", {"id": task_id, "currentGeneration": value})
    assert error["code"] == -32602
    assert "currentGeneration" in error["message"] and named in error["message"]
    assert len(error["message"]) < 300  # a huge value is not echoed whole


@pytest.mark.parametrize(("value", "named"), BAD_GENERATIONS,
                         ids=[repr(v)[:12] for v, _ in BAD_GENERATIONS])
def test_a_bad_if_generation_match_is_invalid_params_and_takes_nothing(
        server: tuple[str, Any], client: httpx.Client, task_id: str, value: Any,
        named: str) -> None:
    url = server[0]
    before = client.post(url, headers=V11, json={
        "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}).json()
    error = _rpc_error(client, url, "SendMessage", {
        "message": {"messageId": "m-bad", "role": "ROLE_USER", "taskId": task_id,
                    "parts": [{"text": "x"}]},
        "configuration": {"ifGenerationMatch": value}})
    assert error["code"] == -32602
    assert "ifGenerationMatch" in error["message"] and named in error["message"]
    after = client.post(url, headers=V11, json={
        "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}).json()
    assert after["result"]["generation"] == before["result"]["generation"]


@pytest.mark.parametrize("query", [
    "currentGeneration=abc", "currentGeneration=", "currentGeneration=-1",
    "currentGeneration=1.5", "current_generation=x1",
])
def test_a_bad_current_generation_is_400_over_rest(
        server: tuple[str, Any], client: httpx.Client, task_id: str, query: str) -> None:
    resp = client.get(f"{server[0]}/tasks/{task_id}?{query}", headers=V11)
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    # named as the caller sent it, not as a JSON-RPC params member
    assert error["status"] == "INVALID_ARGUMENT"
    assert f"query parameter {query.split('=')[0]} " in error["message"], error


@pytest.mark.parametrize("query", [
    "currentGeneration=1&currentGeneration=2",
    "currentGeneration=1&current_generation=1",
    "historyLength=1&historyLength=5",
])
def test_a_query_parameter_given_twice_is_400_naming_it(
        server: tuple[str, Any], client: httpx.Client, task_id: str, query: str) -> None:
    """Which of two values was meant is not guessed (before: the last one was taken)."""
    resp = client.get(f"{server[0]}/tasks/{task_id}?{query}", headers=V11)
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    name = query.split("=")[0]
    assert error["status"] == "INVALID_ARGUMENT"
    assert f"query parameter {name} is given more than once" in error["message"]


def test_a_bad_current_generation_is_invalid_argument_over_grpc(
        server: tuple[str, Any], client: httpx.Client, task_id: str) -> None:
    with pytest.raises(Refused) as refused:
        _grpc_get(client, server[0], task_id, version="1.1", current=-1)
    assert refused.value.status == "INVALID_ARGUMENT"
    # the proto's field, as the gRPC caller set it
    assert ": current_generation must be" in refused.value.message, refused.value.message
    assert "non-negative" in refused.value.message


def test_a_long_poll_on_an_unknown_task_is_not_found_at_once_on_every_binding(
        server: tuple[str, Any], client: httpx.Client) -> None:
    url = server[0]
    error = _rpc_error(client, url, "GetTask", {"id": "no-such-task", "currentGeneration": "1"})
    assert error["code"] == -32001 and "no-such-task" in error["message"]
    resp = client.get(f"{url}/tasks/no-such-task?currentGeneration=1", headers=V11)
    assert resp.status_code == 404 and "no-such-task" in resp.json()["error"]["message"]
    with pytest.raises(Refused) as refused:
        _grpc_get(client, url, "no-such-task", version="1.1", current=1)
    assert refused.value.status == "NOT_FOUND" and "no-such-task" in refused.value.message


@pytest.mark.parametrize("version", ["1.2", "2.0", "abc"])
def test_a_version_not_served_is_named_in_the_refusal(
        server: tuple[str, Any], client: httpx.Client, task_id: str, version: str) -> None:
    resp = client.post(server[0], headers={"A2A-Version": version}, json={
        "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}})
    error = resp.json()["error"]
    assert error["code"] == -32009 and repr(version) in error["message"]
    assert "1.1" in error["message"]


@pytest.mark.parametrize("via", ["jsonrpc", "rest-1.0", "rest-0.3"])
def test_a_non_ascii_header_is_quoted_as_sent_not_as_latin_1(
        server: tuple[str, Any], client: httpx.Client, task_id: str, via: str) -> None:
    """Header bytes reach the app as latin-1 characters: a UTF-8 "²" was quoted "Â²".
    Now as the client wrote it (bytes that are no UTF-8 as latin-1, as HTTP reads them;
    the query parameter, %-escaped UTF-8, as it is)."""
    url = server[0]
    sent = "²".encode()  # as curl sends it
    for header, shown in ((sent, "'²'"), (b"\xff1", "'ÿ1'")):
        headers = [(b"A2A-Version", header)]
        if via == "jsonrpc":
            resp = client.post(url, headers=headers, json={
                "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}})
            message = resp.json()["error"]["message"]
        elif via == "rest-1.0":
            resp = client.get(f"{url}/tasks/{task_id}", headers=headers)
            message = resp.json()["error"]["message"]
        else:
            resp = client.get(f"{url}/v1/tasks/{task_id}", headers=headers)
            message = resp.json()["message"]
        assert message.startswith(f"A2A-Version {shown} is not supported"), message
    asked = client.get(f"{url}/tasks/{task_id}", params={"A2A-Version": "²"})
    assert "A2A-Version '²' is not supported" in asked.text, asked.text
    # the other headers a refusal quotes: Content-Encoding, and Content-Type on HTTP+JSON
    coded = client.post(url, headers=[(b"Content-Encoding", sent),
                                      (b"Content-Type", b"application/json")], content=b"{}")
    assert "Content-Encoding '²' is not supported" in coded.text, coded.text
    typed = client.post(f"{url}/message:send", headers=[(b"Content-Type", b"text/" + sent)],
                        content=b"{}")
    assert "Content-Type 'text/²' is not supported" in typed.text, typed.text


# ------------------------------------------- a part holding no member, or two


def _part_refusal(client: httpx.Client, url: str, via: str, part: dict[str, Any]
                  ) -> tuple[int, str]:
    """(the JSON-RPC code or HTTP status, the message) of a send whose one part is ``part``."""
    if via == "jsonrpc-0.3":
        resp = client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "message/send",
                                      "params": {"message": {"messageId": new_id(),
                                                             "role": "user", "parts": [part]}}})
        return resp.json()["error"]["code"], resp.json()["error"]["message"]
    if via == "jsonrpc-0.1":  # python-a2a's path
        resp = client.post(f"{url}/tasks/send", json={
            "jsonrpc": "2.0", "id": 1, "method": "tasks/send",
            "params": {"id": new_id(), "message": {"role": "user", "parts": [part]}}})
        return resp.json()["error"]["code"], resp.json()["error"]["message"]
    if via == "rest-0.3":
        resp = client.post(f"{url}/v1/message:send", json={
            "message": {"messageId": new_id(), "role": "ROLE_USER", "content": [part]}})
        return resp.status_code, resp.json()["message"]
    if "file" in part:  # 1.0 spells a file part's member ``url``
        part = {"text": part["text"], "url": part["file"]["uri"]}
    resp = client.post(f"{url}/message:send", headers={"A2A-Version": "1.0"}, json={
        "message": {"messageId": new_id(), "role": "ROLE_USER", "parts": [part]}})
    return resp.status_code, resp.json()["error"]["message"]


@pytest.mark.parametrize("part", [{}, {"text": "a", "data": {"b": 1}},
                                  {"text": "a", "file": {"uri": "http://x/y"}}],
                         ids=["no member", "text and data", "text and file"])
@pytest.mark.parametrize(("via", "refused"), [
    ("jsonrpc-0.3", -32602), ("jsonrpc-0.1", -32602), ("rest-0.3", 422), ("rest-1.0", 400)])
def test_a_part_holding_no_member_or_two_is_refused_saying_so_on_every_path(
        server: tuple[str, Any], client: httpx.Client, via: str, refused: int,
        part: dict[str, Any]) -> None:
    """Before: 'missing required field `kind`' (the caller left out no kind), and
    HTTP+JSON v0.3 took a part with text and data as its text, dropping the data."""
    code, message = _part_refusal(client, server[0], via, part)
    assert code == refused, message
    # the member as sent: a v0.3 ProtoJSON message's parts are its ``content``
    assert "exactly one of" in message, message
    assert ("content[0]" if via == "rest-0.3" else "parts[0]") in message, message
    assert "missing required field" not in message


@pytest.mark.parametrize("task_id", ["x" * 20000, "\U0001f600" * 5000], ids=["ascii", "emoji"])
def test_a_huge_unknown_task_id_is_not_found_over_grpc_not_past_its_metadata_limit(
        server: tuple[str, Any], client: httpx.Client, task_id: str) -> None:
    """Before: 'Task not found: <the whole id>' went past gRPC's 16 KiB trailer limit and
    the caller got RESOURCE_EXHAUSTED 'Stream removed'."""
    with pytest.raises(Refused) as refused:
        _grpc_get(client, server[0], task_id, version="1.1", current=0)
    assert refused.value.status == "NOT_FOUND", refused.value.message
    assert refused.value.message == f"Task not found: {quoted(task_id)}"


@pytest.mark.parametrize("task_id", ["x" * 20000, "\U0001f600" * 5000, "a\nb"],
                         ids=["ascii", "emoji", "newline"])
@pytest.mark.parametrize("via", ["rest-1.0", "rest-0.3", "jsonrpc-1.0", "jsonrpc-0.3"])
def test_an_unknown_task_id_is_quoted_cut_in_the_refusal_over_http(
        server: tuple[str, Any], client: httpx.Client, task_id: str, via: str) -> None:
    """As over gRPC: the caller's id is quoted, cut to a few dozen characters, in the
    404 (before: echoed whole, a refusal as long as the id, newlines and all)."""
    url = server[0]
    if via.startswith("rest"):
        path = "/v1/tasks/" if via == "rest-0.3" else "/tasks/"
        resp = client.get(url + path + quote(task_id, safe=""),
                          headers={} if via == "rest-0.3" else V11)
        assert resp.status_code == 404, resp.text
        body = resp.json()
        message = body.get("error", body)["message"]
    else:
        message = client.post(url, headers=V11 if via == "jsonrpc-1.0" else {}, json={
            "jsonrpc": "2.0", "id": 1, "method": "GetTask" if via == "jsonrpc-1.0" else
            "tasks/get", "params": {"id": task_id}}).json()["error"]["message"]
    assert message == f"Task not found: {quoted(task_id)}"
    assert len(message) < 100


def test_an_unknown_task_id_of_a_usual_length_is_named_as_it_is(
        server: tuple[str, Any], client: httpx.Client) -> None:
    task_id = "task-" + new_id()
    resp = client.get(f"{server[0]}/tasks/{task_id}", headers=V11)
    assert resp.json()["error"]["message"] == f"Task not found: {task_id}"


LONG = "x" * 20000


@pytest.mark.parametrize("version", ["", "0.3", "1.0", "1.1"])
def test_an_unknown_method_is_quoted_cut_in_the_refusal(
        server: tuple[str, Any], client: httpx.Client, version: str) -> None:
    """JSON-RPC's -32601 names the caller's method quoted and cut, whichever dialect
    reads it (before: 'Method not found: <the whole method>')."""
    resp = client.post(server[0], headers={"A2A-Version": version} if version else {},
                       json={"jsonrpc": "2.0", "id": 1, "method": LONG, "params": {}})
    assert resp.status_code == 200, resp.text[:200]
    error = resp.json()["error"]
    assert error["code"] == -32601
    assert error["message"] == f"Method not found: {quoted(LONG)}"
    assert len(error["message"]) < 100


@pytest.mark.parametrize("prefix", ["/", "/v1/"], ids=["rest-1.0", "rest-0.3"])
def test_an_unknown_route_is_quoted_cut_in_the_refusal(
        server: tuple[str, Any], client: httpx.Client, prefix: str) -> None:
    """HTTP+JSON's 404 names the caller's path quoted and cut (before: echoed whole)."""
    resp = client.get(server[0] + prefix + LONG, headers=V11)
    assert resp.status_code == 404, resp.text[:200]
    body = resp.json()
    message = body.get("error", body)["message"]
    assert message == f"Not found: no A2A route GET {quoted(prefix + LONG)}"
    assert len(message) < 100


def test_a_wrong_verb_on_a_long_path_is_quoted_cut_in_the_405(
        server: tuple[str, Any], client: httpx.Client) -> None:
    resp = client.delete(server[0] + "/tasks/" + LONG, headers=V11)
    assert resp.status_code == 405 and resp.headers["allow"] == "GET, HEAD", resp.text[:200]
    message = resp.json()["error"]["message"]
    assert message == \
        f"Method not allowed: DELETE {quoted('/tasks/' + LONG)} (allowed: GET, HEAD)"


# ------------------------------- a refused member named as its caller sent it

TEXT = [{"text": "x"}]
# (the request's ProtoJSON as JSON-RPC params / an HTTP+JSON body / a gRPC request, and
# the member each names: JSON-RPC's params path, HTTP+JSON's body member, the proto field)
V1_REFUSED: dict[str, tuple[dict[str, Any], tuple[str, str, str]]] = {
    "a 1.1 field in a 1.0 send": (
        {"message": {"messageId": "m", "role": "ROLE_USER", "parts": TEXT},
         "configuration": {"ifGenerationMatch": "1"}},
        ("params.configuration.ifGenerationMatch is an A2A 1.1 field",
         "configuration.ifGenerationMatch is an A2A 1.1 field",
         "configuration.if_generation_match is an A2A 1.1 field")),
    "no message id": (
        {"message": {"role": "ROLE_USER", "parts": TEXT}},
        ("params.message.messageId is required", "message.messageId is required",
         "message.message_id is required")),
    "no role": (
        {"message": {"messageId": "m", "parts": TEXT}},
        ("params.message.role is required", "message.role is required",
         "message.role is required")),
    "an unspecified role": (
        {"message": {"messageId": "m", "role": "ROLE_UNSPECIFIED", "parts": TEXT}},
        ("params.message.role is required", "message.role is required",
         "message.role is required")),
    "a role the proto has not": (
        {"message": {"messageId": "m", "role": 7, "parts": TEXT}},
        ("params.message.role must be ROLE_USER or ROLE_AGENT, got 7",
         "message.role must be ROLE_USER or ROLE_AGENT, got 7",
         "message.role must be ROLE_USER or ROLE_AGENT, got 7")),
    "a push config without a url": (
        {"message": {"messageId": "m", "role": "ROLE_USER", "parts": TEXT},
         "configuration": {"taskPushNotificationConfig": {"token": "t"}}},
        ("params.configuration.taskPushNotificationConfig.url is required",
         "configuration.taskPushNotificationConfig.url is required",
         "configuration.task_push_notification_config.url is required")),
}


def _v1_refusal(client: httpx.Client, url: str, via: str, rpc: str, doc: dict[str, Any]
                ) -> str:
    """The message of the refusal of ``doc`` sent to ``rpc`` over ``via`` as A2A 1.0."""
    v10 = {"A2A-Version": "1.0"}
    if via == "jsonrpc-1.0":
        error = client.post(url, headers=v10, json={"jsonrpc": "2.0", "id": 1, "method": rpc,
                                                    "params": doc}).json()["error"]
        assert error["code"] == -32602, error
        return str(error["message"])
    if via == "rest-1.0":
        resp = client.post(f"{url}/message:send", headers=v10, json=doc)
        assert resp.status_code == 400, resp.text
        return str(resp.json()["error"]["message"])
    d = GRPC10(client, url, headers=v10)
    with pytest.raises(Refused) as refused:
        d.unary(rpc, d.message_of(rpc, doc))
    assert refused.value.status == "INVALID_ARGUMENT", refused.value
    return refused.value.message


@pytest.mark.parametrize("case", list(V1_REFUSED))
@pytest.mark.parametrize("via", ["jsonrpc-1.0", "rest-1.0", "grpc-1.0"])
def test_a_refused_1_0_member_is_named_as_its_caller_sent_it(
        server: tuple[str, Any], client: httpx.Client, via: str, case: str) -> None:
    """Before: gRPC named JSON-RPC's ``params.message.messageId`` (a gRPC caller sets
    ``message.message_id``), and a role left out was 'must be ROLE_USER or
    ROLE_AGENT, got None' everywhere."""
    doc, named = V1_REFUSED[case]
    message = _v1_refusal(client, server[0], via, "SendMessage", doc)
    expected = named[["jsonrpc-1.0", "rest-1.0", "grpc-1.0"].index(via)]
    assert message.startswith(f"Invalid params for SendMessage: {expected}"), message


def test_a_refused_1_0_list_or_get_names_the_proto_field_over_grpc(
        server: tuple[str, Any], client: httpx.Client) -> None:
    d = GRPC10(client, server[0], headers={"A2A-Version": "1.0"})
    for rpc, doc, said in (
            ("ListTasks", {"pageSize": 1000}, "ListTasks: page_size must be between 1 and 100"),
            ("GetTask", {"id": "x", "historyLength": -1}, "GetTask: history_length must not"),
            ("GetTask", {}, "GetTask: id is required"),
            ("GetTaskPushNotificationConfig", {"id": "c"},
             "GetTaskPushNotificationConfig: task_id is required")):
        with pytest.raises(Refused) as refused:
            d.unary(rpc, d.message_of(rpc, doc))
        assert refused.value.status == "INVALID_ARGUMENT"
        assert said in refused.value.message, refused.value.message
        assert "params" not in refused.value.message.removeprefix("Invalid params")


@pytest.mark.parametrize(("configuration", "named"), [
    ({"if_generation_match": "1"}, "configuration.if_generation_match is an A2A 1.1 field"),
    ({"task_push_notification_config": {"token": "t"}},
     "configuration.task_push_notification_config.url is required"),
])
def test_a_refused_member_of_a_body_is_named_in_the_spelling_it_was_sent_in(
        server: tuple[str, Any], client: httpx.Client, configuration: dict[str, Any],
        named: str) -> None:
    """ProtoJSON readers take the proto's names too: a body that spells a member so is
    told of it so (before: ``configuration.ifGenerationMatch``, a name it never sent)."""
    resp = client.post(f"{server[0]}/message:send", headers={"A2A-Version": "1.0"}, json={
        "message": {"message_id": "m", "role": "ROLE_USER", "parts": TEXT},
        "configuration": configuration})
    assert resp.status_code == 400, resp.text
    assert f"Invalid params for SendMessage: {named}" in resp.json()["error"]["message"]


# a v0.3 ProtoJSON send (the body of POST /v1/message:send, the ``a2a.v1`` gRPC request),
# and the member each refusal names: the body's (ProtoJSON), the proto field (gRPC)
V03_REFUSED: dict[str, tuple[dict[str, Any], tuple[str, str]]] = {
    "no content": (
        {"message": {"messageId": "m", "role": "ROLE_USER", "content": []}},
        ("Expected `array` of length >= 1 - at `message.content`",
         "request.content is required")),
    "no message": (
        {"configuration": {"blocking": True}},
        ("message is required", "request is required")),
    "no message id": (
        {"message": {"role": "ROLE_USER", "content": TEXT}},
        ("message.messageId is required", "request.message_id is required")),
    "no role": (
        {"message": {"messageId": "m", "content": TEXT}},
        ("message.role is required", "request.role is required")),
    "an unspecified role": (
        {"message": {"messageId": "m", "role": "ROLE_UNSPECIFIED", "content": TEXT}},
        ("message.role is required", "request.role is required")),
    "a role the proto has not": (
        {"message": {"messageId": "m", "role": 7, "content": TEXT}},
        ("message.role must be ROLE_USER or ROLE_AGENT, got 7",
         "request.role must be ROLE_USER or ROLE_AGENT, got 7")),
    "a push config without a url": (
        {"message": {"messageId": "m", "role": "ROLE_USER", "content": TEXT},
         "configuration": {"pushNotification": {"token": "t"}}},
        ("configuration.pushNotification.url is required",
         "configuration.push_notification.url is required")),
    "a negative history length": (
        {"message": {"messageId": "m", "role": "ROLE_USER", "content": TEXT},
         "configuration": {"historyLength": -1}},
        ("Expected `int` >= 0 - at `configuration.historyLength`",
         "Expected `int` >= 0 - at `configuration.history_length`")),
}


@pytest.mark.parametrize("case", list(V03_REFUSED))
@pytest.mark.parametrize("via", ["rest-0.3", "grpc-0.3"])
def test_a_refused_v0_3_member_is_named_as_its_caller_sent_it(
        server: tuple[str, Any], client: httpx.Client, via: str, case: str) -> None:
    """Before: v0.3 JSON-RPC's ``message/send``, ``parts``, ``pushNotificationConfig``
    and ``params.``, which the codec respells the request into; a gRPC role of 7 was
    'Expected `str`, got `int`'."""
    doc, (rest_named, grpc_named) = V03_REFUSED[case]
    url = server[0]
    if via == "rest-0.3":
        resp = client.post(f"{url}/v1/message:send", json=doc)
        assert resp.status_code == 422, resp.text
        message, named = resp.json()["message"], rest_named
    else:
        d = GRPC03(client, url)
        with pytest.raises(Refused) as refused:
            d.unary("SendMessage", d.message_of("SendMessage", doc))
        assert refused.value.status == "INVALID_ARGUMENT", refused.value
        message, named = refused.value.message, grpc_named
    assert message == f"Invalid params for SendMessage: {named}", message


@pytest.mark.parametrize(("part", "named"), [
    ({"file": {"fileWithBytes": "!!!", "mimeType": "text/plain"}},
     "message.content[0].file.fileWithBytes is not valid base64"),
    ({"file": {"file_with_bytes": "!!!"}},
     "message.content[0].file.file_with_bytes is not valid base64"),
    ({"data": {"data": 5}}, "Expected `object`, got `int` - at `message.content[0].data.data`"),
    ({"text": 1}, "Expected `str`, got `int` - at `message.content[0].text`"),
])
def test_a_refused_v0_3_part_is_named_as_its_caller_sent_it(
        server: tuple[str, Any], client: httpx.Client, part: dict[str, Any],
        named: str) -> None:
    resp = client.post(f"{server[0]}/v1/message:send", json={
        "message": {"messageId": "m", "role": "ROLE_USER", "content": [part]}})
    assert resp.status_code == 422, resp.text
    assert resp.json()["message"] == f"Invalid params for SendMessage: {named}"


def test_a_refused_v0_3_push_config_is_named_as_its_caller_sent_it(
        server: tuple[str, Any], client: httpx.Client, task_id: str) -> None:
    url = server[0]
    resp = client.post(f"{url}/v1/tasks/{task_id}/pushNotificationConfigs",
                       json={"config": {"pushNotificationConfig": {"token": "t"}}})
    assert resp.status_code == 422, resp.text
    assert resp.json()["message"] == "Invalid params for CreateTaskPushNotificationConfig: " \
        "config.pushNotificationConfig.url is required"
    d = GRPC03(client, url)
    for rpc, doc, said in (
            ("CreateTaskPushNotificationConfig",
             {"parent": f"tasks/{task_id}", "config": {"pushNotificationConfig": {}}},
             "config.push_notification_config.url is required"),
            ("GetTask", {"name": f"tasks/{task_id}", "historyLength": -1},
             "Expected `int` >= 0 - at `history_length`")):
        with pytest.raises(Refused) as refused:
            d.unary(rpc, d.message_of(rpc, doc))
        assert refused.value.message == f"Invalid params for {rpc}: {said}"


@pytest.mark.parametrize("escape", ["\\ud800", "\\ud800x", "\\udc00"])
def test_a_lone_surrogate_escape_is_a_parse_error_saying_so_on_json_rpc_and_rest(
        server: tuple[str, Any], client: httpx.Client, escape: str) -> None:
    """Before: JSON-RPC said 'Input data was truncated' of a whole body whose lone
    ``\\ud800`` came within six bytes of its end (msgspec reads ahead for the pair)."""
    url = server[0]
    body = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' + escape + '"}}'
    error = client.post(url, headers={**V11, "Content-Type": "application/json"},
                        content=body).json()["error"]
    assert error["code"] == -32700
    assert "surrogate" in error["message"] and "truncated" not in error["message"], error
    resp = client.post(f"{url}/message:send", headers={"Content-Type": "application/json"},
                       content='{"message":{"messageId":"' + escape + '"}}')
    assert resp.status_code == 400 and "surrogate" in resp.json()["error"]["message"]
    # a body cut short is still told so: in an escape, or with no escape at all
    for cut in (body[:body.index("\\") + 4], body.replace(escape, "x")[:-1]):
        truncated = client.post(url, headers={"Content-Type": "application/json"},
                                content=cut).json()["error"]
        assert truncated == {"code": -32700, "message": "Parse error: Input data was truncated"}
