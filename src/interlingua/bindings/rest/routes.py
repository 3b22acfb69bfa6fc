"""The HTTP+JSON route tables of v1.0 and v0.3, and matching a request against them.

Pure: a method and a path in, the operation (named by its JSON-RPC method in the
dialect whose codec reads it), the path's variables and the tenant out.

v1.0 routes (DIALECTS.md §g.1) sit at the root and again under ``/{tenant}``; v0.3
routes (§g.2) under ``/v1``. The fixed top-level names win: a first path segment
that is ``v1``, ``tasks``, ``message:send``, ``message:stream``,
``extendedAgentCard`` or ``.well-known`` is never a tenant (so ``v1`` cannot be
one, §i.29); any other first segment in front of a v1.0 route is the tenant.
A v0.3 route asked for with ``A2A-Version: 1.x`` is read as the v1.0 route under
a ``/v1`` base path (§h.3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote

from ...core.dialects import V1_CODECS

__all__ = ["RESERVED", "V1_OPS", "Match", "NoRoute", "match"]

#: first path segments that are routes, never tenants
RESERVED = frozenset({"v1", "tasks", "message:send", "message:stream", "extendedAgentCard",
                      ".well-known"})


@dataclass(frozen=True, slots=True)
class Match:
    """A matched route: ``dialect`` is "1.0" or "0.3"; ``op`` the operation's JSON-RPC
    method in that dialect; ``task_id``/``config_id`` from the path; ``codec`` the
    registry's name of the codec that reads and writes its bodies."""

    dialect: str
    op: str
    task_id: str | None = None
    config_id: str | None = None
    tenant: str | None = None
    codec: str = field(default="1.0", compare=False)

    @property
    def streaming(self) -> bool:
        return self.op in _STREAMING


_STREAMING = frozenset({"SendStreamingMessage", "SubscribeToTask", "message/stream",
                        "tasks/resubscribe"})


class NoRoute(Exception):
    """No route: ``allowed`` empty means 404; else the path exists for those methods (405)."""

    def __init__(self, path: str, allowed: tuple[str, ...] = ()) -> None:
        super().__init__(path)
        self.path = path
        self.allowed = allowed


# (segments after the prefix, as a pattern) -> {HTTP method: operation}
# "{id}" is a task id, "{cid}" a push config id; "{id}:verb" a task id with a verb.
_V1: dict[tuple[str, ...], dict[str, str]] = {
    ("message:send",): {"POST": "SendMessage"},
    ("message:stream",): {"POST": "SendStreamingMessage"},
    ("tasks",): {"GET": "ListTasks"},
    ("tasks", "{id}"): {"GET": "GetTask"},
    ("tasks", "{id}:cancel"): {"POST": "CancelTask"},
    # the proto says GET, the spec's prose POST: both (§i.8)
    ("tasks", "{id}:subscribe"): {"GET": "SubscribeToTask", "POST": "SubscribeToTask"},
    ("tasks", "{id}", "pushNotificationConfigs"): {
        "POST": "CreateTaskPushNotificationConfig", "GET": "ListTaskPushNotificationConfigs"},
    ("tasks", "{id}", "pushNotificationConfigs", "{cid}"): {
        "GET": "GetTaskPushNotificationConfig", "DELETE": "DeleteTaskPushNotificationConfig"},
    ("extendedAgentCard",): {"GET": "GetExtendedAgentCard"},
}

#: the operations of the v1.0 routes (whose params name a path's ids ``id``/``taskId``)
V1_OPS = frozenset(op for methods in _V1.values() for op in methods.values())

_V03: dict[tuple[str, ...], dict[str, str]] = {
    ("message:send",): {"POST": "message/send"},
    ("message:stream",): {"POST": "message/stream"},
    ("tasks", "{id}"): {"GET": "tasks/get"},
    ("tasks", "{id}:cancel"): {"POST": "tasks/cancel"},
    ("tasks", "{id}:subscribe"): {"GET": "tasks/resubscribe", "POST": "tasks/resubscribe"},
    ("tasks", "{id}", "pushNotificationConfigs"): {
        "POST": "tasks/pushNotificationConfig/set", "GET": "tasks/pushNotificationConfig/list"},
    # the v0.3.0 proto's create route says ``task/*`` (§i.9): both spellings
    ("task", "{id}", "pushNotificationConfigs"): {"POST": "tasks/pushNotificationConfig/set"},
    ("tasks", "{id}", "pushNotificationConfigs", "{cid}"): {
        "GET": "tasks/pushNotificationConfig/get",
        "DELETE": "tasks/pushNotificationConfig/delete"},
    ("card",): {"GET": "agent/getAuthenticatedExtendedCard"},
}


def _find(table: dict[tuple[str, ...], dict[str, str]], segs: list[str],
          second_raw: str) -> tuple[dict[str, str], str | None, str | None] | None:
    """The methods of the pattern ``segs`` fits, with the task and config ids;
    ``second_raw`` is the second segment %-escaped, as it came."""
    n = len(segs)
    if n == 0:
        return None
    head = segs[0]
    if n == 1:
        found = table.get((head,))
        return (found, None, None) if found is not None else None
    if head not in ("tasks", "task"):
        return None
    second = segs[1]
    if n == 2:
        escaped_id, colon, verb = second_raw.rpartition(":")
        if colon and verb in ("cancel", "subscribe"):
            found = table.get((head, "{id}:" + verb)) if escaped_id else None
            # (no id before the verb: no route, not a task named ":cancel")
            return (found, unquote(escaped_id), None) if found is not None else None
        found = table.get((head, "{id}"))
        return (found, second, None) if found is not None and second else None
    if segs[2] != "pushNotificationConfigs" or not second or n > 4:
        return None
    if n == 3:
        found = table.get((head, "{id}", "pushNotificationConfigs"))
        return (found, second, None) if found is not None else None
    found = table.get((head, "{id}", "pushNotificationConfigs", "{cid}"))
    return (found, second, segs[3]) if found is not None and segs[3] else None


def match(method: str, path: str, *, version: str | None = None) -> Match:
    """The route of ``method`` ``path``; raises ``NoRoute``. ``version`` is the
    request's ``A2A-Version`` as Major.Minor (None when absent)."""
    raw = path.split("/")
    if raw and raw[0] == "":
        raw = raw[1:]
    slashed = len(raw) > 1 and raw[-1] == ""
    if slashed:
        raw = raw[:-1]  # one trailing slash is forgiven
    segs = [unquote(s) for s in raw]
    if any(s == "" for s in segs):
        raise NoRoute(path)
    tenant = None
    if segs and segs[0] == "v1":
        if version is not None and version.startswith("1."):
            # a v1.0 interface under a /v1 base path (as 1.1, draft, when asked for)
            table, dialect, codec = _V1, "1.0", V1_CODECS.get(version, "1.0")
        else:
            table, dialect, codec = _V03, "0.3", "0.3-pj"
        segs = segs[1:]
    else:
        table, dialect, codec = _V1, "1.0", V1_CODECS.get(version, "1.0")
        if segs and segs[0] not in RESERVED and len(segs) > 1:
            tenant, segs = segs[0], segs[1:]
    # the second segment as it came: a verb follows a ":" written as one, not as %3A
    found = _find(table, segs, raw[len(raw) - len(segs) + 1] if len(segs) > 1 else "")
    if found is None:
        raise NoRoute(path)
    methods, task_id, config_id = found
    if slashed and config_id is None:
        empty = _empty_config(table, segs, task_id, method)
        if empty is not None:
            methods, config_id = empty
    op = methods.get(method)
    if op is None and method == "HEAD":
        op = _head_of(methods)
    if op is None:
        head = ("HEAD",) if _head_of(methods) is not None else ()
        raise NoRoute(path, tuple(sorted((*methods, *head))))
    return Match(dialect, op, task_id, config_id, tenant, codec)


def _empty_config(table: dict[tuple[str, ...], dict[str, str]], segs: list[str],
                  task_id: str | None, method: str) -> tuple[dict[str, str], str] | None:
    """The config route of a path ``.../pushNotificationConfigs/`` asked for with a verb
    of it (a get, a delete), its config id empty: refused as an empty id is on every
    binding, not answered as the list (a create there is a create)."""
    if len(segs) != 3 or segs[2] != "pushNotificationConfigs" or task_id is None:
        return None
    one = table.get((segs[0], "{id}", "pushNotificationConfigs", "{cid}"))
    if one is None or (one.get(method) is None and (method != "HEAD" or _head_of(one) is None)):
        return None
    return one, ""


def _head_of(methods: dict[str, str]) -> str | None:
    """The operation a HEAD request runs: its GET's, as HTTP has it (RFC 9110 §9.3.2; the
    server sends the answer's head alone), unless the GET opens a stream."""
    op = methods.get("GET")
    return op if op is not None and op not in _STREAMING else None
