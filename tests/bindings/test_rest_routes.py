"""Matching requests against the HTTP+JSON route tables (pure)."""

from __future__ import annotations

import pytest

from interlingua.bindings.rest import Match, NoRoute, match


@pytest.mark.parametrize(("method", "path", "expected"), [
    ("POST", "/message:send", Match("1.0", "SendMessage")),
    ("POST", "/message:stream", Match("1.0", "SendStreamingMessage")),
    ("GET", "/tasks", Match("1.0", "ListTasks")),
    ("GET", "/tasks/t1", Match("1.0", "GetTask", "t1")),
    ("POST", "/tasks/t1:cancel", Match("1.0", "CancelTask", "t1")),
    ("GET", "/tasks/t1:subscribe", Match("1.0", "SubscribeToTask", "t1")),
    ("POST", "/tasks/t1:subscribe", Match("1.0", "SubscribeToTask", "t1")),
    ("POST", "/tasks/t1/pushNotificationConfigs",
     Match("1.0", "CreateTaskPushNotificationConfig", "t1")),
    ("GET", "/tasks/t1/pushNotificationConfigs",
     Match("1.0", "ListTaskPushNotificationConfigs", "t1")),
    ("GET", "/tasks/t1/pushNotificationConfigs/c1",
     Match("1.0", "GetTaskPushNotificationConfig", "t1", "c1")),
    ("DELETE", "/tasks/t1/pushNotificationConfigs/c1",
     Match("1.0", "DeleteTaskPushNotificationConfig", "t1", "c1")),
    ("GET", "/extendedAgentCard", Match("1.0", "GetExtendedAgentCard")),
    # tenants: any first segment that is not a route
    ("POST", "/acme/message:send", Match("1.0", "SendMessage", tenant="acme")),
    ("GET", "/acme/tasks/t1", Match("1.0", "GetTask", "t1", tenant="acme")),
    ("GET", "/a%20b/tasks", Match("1.0", "ListTasks", tenant="a b")),
    ("GET", "/acme/extendedAgentCard", Match("1.0", "GetExtendedAgentCard", tenant="acme")),
    # a task id with a colon keeps it; escaped slashes stay in the id
    ("GET", "/tasks/a:b", Match("1.0", "GetTask", "a:b")),
    ("GET", "/tasks/a%2Fb", Match("1.0", "GetTask", "a/b")),
    ("GET", "/tasks/t1/", Match("1.0", "GetTask", "t1")),
    # a config route with its config id empty: the get or delete of that empty id (which
    # every binding refuses), not the list; a create there is a create
    ("GET", "/tasks/t1/pushNotificationConfigs/",
     Match("1.0", "GetTaskPushNotificationConfig", "t1", "")),
    ("HEAD", "/tasks/t1/pushNotificationConfigs/",
     Match("1.0", "GetTaskPushNotificationConfig", "t1", "")),
    ("DELETE", "/acme/tasks/t1/pushNotificationConfigs/",
     Match("1.0", "DeleteTaskPushNotificationConfig", "t1", "", tenant="acme")),
    ("POST", "/tasks/t1/pushNotificationConfigs/",
     Match("1.0", "CreateTaskPushNotificationConfig", "t1")),
    ("GET", "/v1/tasks/t1/pushNotificationConfigs/",
     Match("0.3", "tasks/pushNotificationConfig/get", "t1", "")),
    ("POST", "/v1/task/t1/pushNotificationConfigs/",
     Match("0.3", "tasks/pushNotificationConfig/set", "t1")),
    # v0.3 under /v1
    ("POST", "/v1/message:send", Match("0.3", "message/send")),
    ("POST", "/v1/message:stream", Match("0.3", "message/stream")),
    ("GET", "/v1/tasks/t1", Match("0.3", "tasks/get", "t1")),
    ("POST", "/v1/tasks/t1:cancel", Match("0.3", "tasks/cancel", "t1")),
    ("GET", "/v1/tasks/t1:subscribe", Match("0.3", "tasks/resubscribe", "t1")),
    ("POST", "/v1/tasks/t1:subscribe", Match("0.3", "tasks/resubscribe", "t1")),
    ("POST", "/v1/tasks/t1/pushNotificationConfigs",
     Match("0.3", "tasks/pushNotificationConfig/set", "t1")),
    ("POST", "/v1/task/t1/pushNotificationConfigs",
     Match("0.3", "tasks/pushNotificationConfig/set", "t1")),
    ("GET", "/v1/tasks/t1/pushNotificationConfigs",
     Match("0.3", "tasks/pushNotificationConfig/list", "t1")),
    ("GET", "/v1/tasks/t1/pushNotificationConfigs/c1",
     Match("0.3", "tasks/pushNotificationConfig/get", "t1", "c1")),
    ("DELETE", "/v1/tasks/t1/pushNotificationConfigs/c1",
     Match("0.3", "tasks/pushNotificationConfig/delete", "t1", "c1")),
    ("GET", "/v1/card", Match("0.3", "agent/getAuthenticatedExtendedCard")),
])
def test_routes(method: str, path: str, expected: Match) -> None:
    assert match(method, path) == expected


def test_a_v1_base_path_with_a_v1_header_is_v1() -> None:
    assert match("POST", "/v1/message:send", version="1.0") == Match("1.0", "SendMessage")
    assert match("POST", "/v1/message:send", version="0.3").dialect == "0.3"


@pytest.mark.parametrize("path", [
    "/", "/nothing", "/v1", "/v1/tasks", "/acme", "/v1/acme/message:send",
    "/tasks//x", "/tasks/t1/pushNotificationConfigs/c1/more", "/task/t1",
    "/acme/v1/message:send", "/.well-known/other",
    # a verb with no task id before it (was the task ":subscribe")
    "/tasks/:subscribe", "/v1/tasks/:subscribe", "/acme/tasks/:subscribe",
])
def test_unknown_paths(path: str) -> None:
    with pytest.raises(NoRoute) as no:
        match("GET", path)
    assert no.value.allowed == ()


def test_a_verb_with_no_task_id_is_no_route() -> None:
    """Before: ``POST /tasks/:cancel`` was a 405 naming GET (the task ":cancel")."""
    with pytest.raises(NoRoute) as no:
        match("POST", "/tasks/:cancel")
    assert no.value.allowed == ()


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("GET", "/message:send", ("POST",)),
    ("DELETE", "/tasks/t1", ("GET", "HEAD")),
    ("HEAD", "/tasks/t1:subscribe", ("GET", "POST")),  # a stream takes no HEAD
    ("PUT", "/tasks/t1/pushNotificationConfigs", ("GET", "HEAD", "POST")),
    ("GET", "/v1/task/t1/pushNotificationConfigs", ("POST",)),
])
def test_wrong_verbs(method: str, path: str, allowed: tuple[str, ...]) -> None:
    with pytest.raises(NoRoute) as no:
        match(method, path)
    assert no.value.allowed == allowed


def test_head_runs_the_get_of_its_route() -> None:
    assert match("HEAD", "/tasks/t1").op == "GetTask"
    assert match("HEAD", "/acme/tasks").op == "ListTasks"
    assert match("HEAD", "/v1/tasks/t1").op == "tasks/get"

