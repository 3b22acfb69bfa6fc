"""The v0.3 gRPC service's ProtoJSON (package ``a2a.v1``) to and from the v0.3
JSON-RPC objects the ``0.3`` codec reads and writes.

Both say the same things in different words (DIALECTS.md §b, §g.2, §i.28):
parts are ``content`` in a message and carry no ``kind``; a file is
``fileWithUri``/``fileWithBytes``; a data part wraps its object once more;
roles and states are enum names (``TASK_STATE_CANCELLED`` with two Ls); ids
are resource names (``tasks/{id}``, ``tasks/{id}/pushNotificationConfigs/{cid}``);
send results and stream events are wrapped by their member name, not tagged
by ``kind``. Everything else (authentication, owners, the engine) is the
front door's, so the v0.3 service behaves as v0.3 JSON-RPC does.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import InvalidParams

__all__ = ["card_out", "request_in", "result_out", "stream_item_out"]

_ROLES_IN = {"ROLE_USER": "user", "ROLE_AGENT": "agent", 1: "user", 2: "agent"}
_ROLES_OUT = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_STATES_OUT = {
    "submitted": "TASK_STATE_SUBMITTED",
    "working": "TASK_STATE_WORKING",
    "completed": "TASK_STATE_COMPLETED",
    "failed": "TASK_STATE_FAILED",
    "canceled": "TASK_STATE_CANCELLED",
    "input-required": "TASK_STATE_INPUT_REQUIRED",
    "rejected": "TASK_STATE_REJECTED",
    "auth-required": "TASK_STATE_AUTH_REQUIRED",
}

Doc = dict[str, Any]


# ------------------------------------------------------------------ requests in


def _name_ids(name: Any, field: str, parts: int) -> list[str]:
    """``tasks/{id}`` (parts=1) or ``tasks/{id}/pushNotificationConfigs/{cid}`` (parts=2)."""
    pieces = name.split("/") if isinstance(name, str) else []
    ok = (len(pieces) == 2 * parts and pieces[0] == "tasks"
          and (parts == 1 or pieces[2] == "pushNotificationConfigs")
          and all(pieces[1::2]))
    if not ok:
        shape = "tasks/{id}" if parts == 1 else "tasks/{id}/pushNotificationConfigs/{configId}"
        raise InvalidParams(f"Invalid params: {field} must be {shape}, got {name!r}")
    return pieces[1::2]


def _part_in(p: Doc) -> Doc:
    if "text" in p:
        return {"kind": "text", "text": p["text"]}
    if "file" in p:
        f = p["file"] or {}
        out: Doc = {}
        if "fileWithUri" in f:
            out["uri"] = f["fileWithUri"]
        if "fileWithBytes" in f:
            out["bytes"] = f["fileWithBytes"]
        if "mimeType" in f:
            out["mimeType"] = f["mimeType"]
        if f.get("name"):
            out["name"] = f["name"]
        return {"kind": "file", "file": out}
    if "data" in p:
        return {"kind": "data", "data": (p["data"] or {}).get("data", {})}
    raise InvalidParams("Invalid params: a part has none of text, file, data")


def _message_in(msg: Doc) -> Doc:
    out: Doc = {"kind": "message"}
    for key in ("messageId", "contextId", "taskId", "metadata", "extensions"):
        if key in msg:
            out[key] = msg[key]
    role = msg.get("role")
    if role is not None:
        # an unknown value stays as it is, for the codec to refuse by name
        out["role"] = _ROLES_IN.get(role, role)
    out["parts"] = [_part_in(p) for p in msg.get("content", ())]
    return out


def _push_in(cfg: Doc) -> Doc:
    return {k: cfg[k] for k in ("id", "url", "token", "authentication") if k in cfg}


def _send_in(req: Doc) -> Doc:
    if "message" not in req:
        raise InvalidParams("Invalid params: message (request) is required")
    out: Doc = {"message": _message_in(req["message"])}
    cfg = req.get("configuration")
    if cfg is not None:
        config: Doc = {"blocking": bool(cfg.get("blocking", False))}
        if "acceptedOutputModes" in cfg:
            config["acceptedOutputModes"] = cfg["acceptedOutputModes"]
        if cfg.get("historyLength"):
            config["historyLength"] = cfg["historyLength"]
        if "pushNotification" in cfg:
            config["pushNotificationConfig"] = _push_in(cfg["pushNotification"])
        out["configuration"] = config
    if "metadata" in req:
        out["metadata"] = req["metadata"]
    return out


def request_in(rpc: str, req: Doc) -> tuple[str, Doc]:
    """A v0.3 gRPC request (as ProtoJSON) -> (JSON-RPC method, params)."""
    if rpc == "SendMessage":
        return "message/send", _send_in(req)
    if rpc == "SendStreamingMessage":
        return "message/stream", _send_in(req)
    if rpc == "GetTask":
        (task_id,) = _name_ids(req.get("name"), "name", 1)
        params: Doc = {"id": task_id}
        if req.get("historyLength"):
            params["historyLength"] = req["historyLength"]
        return "tasks/get", params
    if rpc == "CancelTask":
        return "tasks/cancel", {"id": _name_ids(req.get("name"), "name", 1)[0]}
    if rpc == "TaskSubscription":
        return "tasks/resubscribe", {"id": _name_ids(req.get("name"), "name", 1)[0]}
    if rpc == "CreateTaskPushNotificationConfig":
        (task_id,) = _name_ids(req.get("parent"), "parent", 1)
        config = _push_in((req.get("config") or {}).get("pushNotificationConfig") or {})
        if req.get("configId"):
            config["id"] = req["configId"]
        return "tasks/pushNotificationConfig/set", {
            "taskId": task_id, "pushNotificationConfig": config}
    if rpc == "GetTaskPushNotificationConfig":
        task_id, config_id = _name_ids(req.get("name"), "name", 2)
        return "tasks/pushNotificationConfig/get", {
            "id": task_id, "pushNotificationConfigId": config_id}
    if rpc == "ListTaskPushNotificationConfig":
        (task_id,) = _name_ids(req.get("parent"), "parent", 1)
        return "tasks/pushNotificationConfig/list", {"id": task_id}
    if rpc == "DeleteTaskPushNotificationConfig":
        task_id, config_id = _name_ids(req.get("name"), "name", 2)
        return "tasks/pushNotificationConfig/delete", {
            "id": task_id, "pushNotificationConfigId": config_id}
    if rpc == "GetAgentCard":
        return "agent/getAuthenticatedExtendedCard", {}
    raise AssertionError(rpc)


# ------------------------------------------------------------------ results out


def _part_out(p: Doc) -> Doc:
    kind = p.get("kind")
    if kind == "text" or (kind is None and "text" in p):
        return {"text": p.get("text", "")}
    if kind == "file" or (kind is None and "file" in p):
        f = p.get("file") or {}
        out: Doc = {}
        if "bytes" in f:
            out["fileWithBytes"] = f["bytes"]
        elif "uri" in f:
            out["fileWithUri"] = f["uri"]
        if "mimeType" in f:
            out["mimeType"] = f["mimeType"]
        if "name" in f:
            out["name"] = f["name"]
        return {"file": out}
    data = p.get("data")
    return {"data": {"data": data if isinstance(data, dict) else {"value": data}}}


def _message_out(msg: Doc) -> Doc:
    out: Doc = {k: msg[k] for k in ("messageId", "contextId", "taskId", "metadata", "extensions")
                if k in msg}
    out["role"] = _ROLES_OUT.get(msg.get("role", ""), "ROLE_UNSPECIFIED")
    out["content"] = [_part_out(p) for p in msg.get("parts", ())]
    return out


def _artifact_out(a: Doc) -> Doc:
    out: Doc = {k: a[k] for k in ("artifactId", "name", "description", "metadata", "extensions")
                if k in a}
    out["parts"] = [_part_out(p) for p in a.get("parts", ())]
    return out


def _status_out(s: Doc) -> Doc:
    out: Doc = {"state": _STATES_OUT.get(s.get("state", ""), "TASK_STATE_UNSPECIFIED")}
    if s.get("message"):
        out["message"] = _message_out(s["message"])
    if "timestamp" in s:
        out["timestamp"] = s["timestamp"]
    return out


def _task_out(t: Doc) -> Doc:
    out: Doc = {"id": t.get("id", ""), "contextId": t.get("contextId", "")}
    if "status" in t:
        out["status"] = _status_out(t["status"])
    if t.get("artifacts"):
        out["artifacts"] = [_artifact_out(a) for a in t["artifacts"]]
    if t.get("history"):
        out["history"] = [_message_out(m) for m in t["history"]]
    if "metadata" in t:
        out["metadata"] = t["metadata"]
    return out


def stream_item_out(item: Doc) -> Doc:
    """A v0.3 stream event (tagged by ``kind``) -> a ``StreamResponse``."""
    kind = item.get("kind")
    if kind == "status-update":
        event: Doc = {k: item[k] for k in ("taskId", "contextId", "final", "metadata")
                      if k in item}
        event["status"] = _status_out(item.get("status") or {})
        return {"statusUpdate": event}
    if kind == "artifact-update":
        event = {k: item[k] for k in ("taskId", "contextId", "append", "lastChunk", "metadata")
                 if k in item}
        event["artifact"] = _artifact_out(item.get("artifact") or {})
        return {"artifactUpdate": event}
    if kind == "message":
        return {"message": _message_out(item)}
    return {"task": _task_out(item)}


def _push_config_out(c: Doc) -> Doc:
    config = c.get("pushNotificationConfig") or {}
    name = f"tasks/{c.get('taskId', '')}/pushNotificationConfigs/{config.get('id', '')}"
    return {"name": name, "pushNotificationConfig": config}


def result_out(rpc: str, result: Any) -> Doc:
    """A v0.3 JSON-RPC result -> the v0.3 gRPC response (as ProtoJSON)."""
    if rpc == "SendMessage":
        if isinstance(result, dict) and result.get("kind") == "message":
            return {"message": _message_out(result)}
        return {"task": _task_out(result)}
    if rpc in ("GetTask", "CancelTask"):
        return _task_out(result)
    if rpc in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return _push_config_out(result)
    if rpc == "ListTaskPushNotificationConfig":
        return {"configs": [_push_config_out(c) for c in result or ()]}
    if rpc == "DeleteTaskPushNotificationConfig":
        return {}
    if rpc == "GetAgentCard":
        return card_out(result)
    raise AssertionError(rpc)


# --------------------------------------------------------------------- the card


def _flow_out(flow: Doc) -> Doc:
    return {k: flow[k] for k in ("authorizationUrl", "tokenUrl", "refreshUrl", "scopes")
            if k in flow}


def _scheme_out(s: Doc) -> Doc | None:
    kind = s.get("type")
    described = {"description": s["description"]} if s.get("description") else {}
    if kind == "apiKey":
        return {"apiKeySecurityScheme": {**described, "location": s.get("in", ""),
                                         "name": s.get("name", "")}}
    if kind == "http":
        inner = {**described, "scheme": s.get("scheme", "")}
        if s.get("bearerFormat"):
            inner["bearerFormat"] = s["bearerFormat"]
        return {"httpAuthSecurityScheme": inner}
    if kind == "oauth2":
        flows = s.get("flows") or {}
        # the proto's flows are a oneof: the first one the card names
        first = next(({name: _flow_out(f)} for name, f in flows.items() if isinstance(f, dict)),
                     {})
        inner = {**described, "flows": first}
        if s.get("oauth2MetadataUrl"):
            inner["oauth2MetadataUrl"] = s["oauth2MetadataUrl"]
        return {"oauth2SecurityScheme": inner}
    if kind == "openIdConnect":
        return {"openIdConnectSecurityScheme": {
            **described, "openIdConnectUrl": s.get("openIdConnectUrl", "")}}
    if kind == "mutualTLS":
        return {"mtlsSecurityScheme": described}
    return None


def card_out(card: Doc) -> Doc:
    """A v0.3 JSON card -> the v0.3 proto's ``AgentCard`` (as ProtoJSON)."""
    out = dict(card)
    schemes = card.get("securitySchemes")
    if isinstance(schemes, dict):
        converted = {name: _scheme_out(s) for name, s in schemes.items() if isinstance(s, dict)}
        out["securitySchemes"] = {k: v for k, v in converted.items() if v is not None}
    if "security" in card:
        out["security"] = [{"schemes": {k: {"list": v} for k, v in req.items()}}
                           for req in card["security"] or ()]
    skills = []
    for skill in card.get("skills") or ():
        skill = dict(skill)
        if "security" in skill:
            skill["security"] = [{"schemes": {k: {"list": v} for k, v in req.items()}}
                                 for req in skill["security"] or ()]
        skills.append(skill)
    out["skills"] = skills
    return out
