"""``lf.a2a.v1`` send requests straight into canonical calls, for the usual shape.

A request is otherwise read as the v1.0 codec reads JSON-RPC params: its
ProtoJSON (``pbjson.to_doc``), encoded, decoded by the codec's typed reader.
The send requests most clients make — a message of text parts, an optional
configuration without a push config, no metadata — are read here from the
protobuf message itself. Anything else, including everything the codec would
refuse, returns None and takes the codec's way, so there is one set of rules
and one set of error messages. A test holds the two ways to the same calls.
"""

from __future__ import annotations

from typing import Any

from ...core import calls as c
from ...core import model as m

__all__ = ["send_in"]

_ROLES = {1: m.Role.USER, 2: m.Role.AGENT}
_INT32_MAX = 2**31 - 1


def send_in(request: Any, streaming: bool) -> c.SendMessage | None:
    """A ``SendMessageRequest`` as the codec reads it, or None: ask the codec."""
    if not request.HasField("message") or request.HasField("metadata"):
        return None
    msg = request.message
    role = _ROLES.get(msg.role)
    if role is None or not msg.message_id or msg.HasField("metadata"):
        return None
    parts: list[m.Part] = []
    for p in msg.parts:
        if p.WhichOneof("content") != "text" or p.HasField("metadata"):
            return None
        parts.append(m.TextPart(p.text, None, p.media_type or None, p.filename or None))
    if not parts:
        return None
    config = c.SendConfig()
    if request.HasField("configuration"):
        conf = request.configuration
        if conf.HasField("task_push_notification_config") or conf.HasField("if_generation_match"):
            return None  # (the codec refuses a 1.1 field of a 1.0 request, naming it)
        history = conf.history_length if conf.HasField("history_length") else None
        if history is not None and not 0 <= history <= _INT32_MAX:
            return None
        modes = conf.accepted_output_modes
        config = c.SendConfig(accepted_output_modes=list(modes) if modes else None,
                              history_length=history, blocking=not conf.return_immediately)
    return c.SendMessage(
        message=m.Message(
            message_id=msg.message_id,
            role=role,
            parts=parts,
            context_id=msg.context_id or None,
            task_id=msg.task_id or None,
            # measured: list() of an empty repeated field costs several times asking
            # whether it has anything, on every send (the gRPC CPU per request)
            reference_task_ids=list(refs) if (refs := msg.reference_task_ids) else None,
            extensions=list(exts) if (exts := msg.extensions) else None,
        ),
        config=config,
        tenant=request.tenant or None,
        streaming=streaming,
    )
