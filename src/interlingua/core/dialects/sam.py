"""The Solace Agent Mesh dialect (seed 002; DIALECTS.md §a.5, §i.5).

v0.1 method names (``tasks/send``, ``tasks/cancel``) plus ``tasks/send-streaming``,
carrying v0.2 params and objects under snake_case names (``message_id``,
``task_id``, ``context_id``, ``mime_type``) with discriminator-less parts, told
apart by their member (``text``, ``data`` or ``file``). ``tasks/send`` and
``tasks/cancel`` are also v0.1 methods: which codec reads a payload is decided
by its shape elsewhere; this module only decodes and encodes.

Reading: ``{"message": Message, "configuration"?, "metadata"?}`` for both sends
(a bare Message as params is taken too, DIALECTS.md §i.3); a message without
``message_id`` gets one; ``message.task_id`` continues a task. ``tasks/cancel``
takes ``{"id"}`` (or ``task_id`` / ``taskId``). Peers built on the same SDK may
send the camelCase aliases instead: they are read too, the snake_case spelling
winning when both are given. Blocking unless ``configuration.blocking`` is false.

Writing: Task ``{kind: "task", id, context_id, status, history?, artifacts?,
metadata?}``; status ``{state, message?, timestamp}``; stream events
``{kind: "status-update", task_id, context_id, status, final, metadata?}`` and
``{kind: "artifact-update", task_id, context_id, artifact, append?, last_chunk?,
metadata?}``; messages with ``kind: "message"``.

Artifacts: seed 002 shows ``{id, name, uri, mime_type, inline_data: {data}}``
without ``parts``; we write ``{id, name?, description?, parts, metadata?}`` and,
when the artifact is exactly one file part, the seed's flat ``uri`` /
``mime_type`` / ``inline_data`` as well, so readers of either form find the
file. On input ``parts`` wins; without it the flat members become one file part
named after the artifact (none at all: no parts). An artifact without ``id`` is
identified by its ``name``, which seed 002 makes the required member.

What SAM cannot say, and what is sent instead: seed 002 lists only the states
submitted/working/completed/failed/canceled — the others go out under their
lowercase v0.2 names (``input-required``, ``auth-required``, ``rejected``,
``unknown``); a status without a timestamp (which SAM calls required) goes out
without one, since the core has no clock to invent it; media type and filename
of text/data parts, artifact ``index``, ``tenant`` and a v0.1 client-chosen task
id are dropped. Errors are ``{code, message, data?}``; seed 002 lists only the
JSON-RPC standard codes, so A2A-specific errors carry their v0.2 codes.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
from msgspec import UNSET, UnsetType

from ..calls import Call, CancelTask, Result, SendMessage
from ..errors import InvalidAgentResponse, InvalidParams
from ..model import Artifact, FilePart, Message, Part, StatusUpdate, Task
from ._common import FieldError, b64encode
from ._family import FamilyCodec, bytes_in
from ._family_wire import Fields, Metadata, Variant, Wire, build_wire
from .v0_3 import shared as _v03

__all__ = ["SAMCodec"]


class SInlineData(msgspec.Struct):
    data: str


def _artifact_fields(part: Any) -> Fields:
    return [(name, typ | None, None) for name, typ in (
        ("id", str), ("name", str), ("description", str), ("parts", list[part]), ("uri", str),
        ("mime_type", str), ("inline_data", SInlineData), ("metadata", Metadata),
        ("extensions", list[str]),
        # the v0.2 identity member, as SDK-made peers spell it
        ("artifact_id", str),
    )]


VARIANT = Variant(
    name="sam",
    label="the Solace Agent Mesh dialect",
    methods={"send": "tasks/send", "stream": "tasks/send-streaming", "cancel": "tasks/cancel"},
    snake=True,
    part_tag=None,
    # Seed 002 requires it but leaves it out of its own status messages: generated when absent.
    message_id_required=False,
    ids_required=False,
    camel_aliases=True,
    file_rule="at_least_one",
    event_markers=("task_id", "taskId", "final"),
    report_first=False,
    artifact_fields=_artifact_fields,
)


class SCancelParams(msgspec.Struct, kw_only=True, omit_defaults=True):
    # UNSET tells a member left out from one sent empty or null: a refusal names
    # the member the caller used
    id: str | UnsetType | None = UNSET
    metadata: Metadata | None = None
    task_id: str | UnsetType | None = UNSET
    task_id_c: str | UnsetType | None = msgspec.field(default=UNSET, name="taskId")


class SAMCodec(FamilyCodec):
    """JSON-RPC as Solace Agent Mesh writes it (seed 002)."""

    variant: ClassVar[Variant] = VARIANT
    wire: ClassVar[Wire] = build_wire(VARIANT)
    lax: ClassVar[Wire] = build_wire(VARIANT, lax=True)
    # a v0.3 variant: its tasks are polled with v0.3's tasks/get, webhooks are v0.3's
    family = "0.3"
    versions = frozenset({"0.1", "0.2", "0.3"})
    context_field = "message.context_id"

    def encode_push_task(self, task: Task) -> bytes:
        return _v03().encode_stream_item(task)

    def artifact_in(self, w: Any) -> Artifact:
        artifact_id = w.id or w.artifact_id or w.name
        if artifact_id is None:
            raise FieldError(["id"], "is required (or `name`)")
        parts: list[Part] = []
        if w.parts is not None:
            parts = self.parts_in(w.parts)
        elif w.inline_data is not None or w.uri is not None:
            raw = None
            if w.inline_data is not None:
                raw = bytes_in(w.inline_data.data, ["inline_data", "data"])
            parts.append(FilePart(raw=raw, uri=w.uri, media_type=w.mime_type, filename=w.name))
        return Artifact(
            artifact_id=artifact_id,
            parts=parts,
            name=w.name,
            description=w.description,
            metadata=w.metadata,
            extensions=w.extensions,
        )

    def artifact_out(self, a: Artifact) -> Any:
        out = super().artifact_out(a)
        out.id, out.artifact_id = out.artifact_id, None  # SAM's identity member is ``id``
        if len(a.parts) == 1 and type(a.parts[0]) is FilePart:
            # The seed's flat form too, for readers that look only there.
            f = a.parts[0]
            out.uri = f.uri
            out.mime_type = f.media_type
            if f.raw is not None:
                out.inline_data = SInlineData(data=b64encode(f.raw))
        return out

    def call_in_cancel(self, method: str, params: bytes | None) -> Call:
        w = self.params_in(SCancelParams, method, params)
        named = (("id", w.id), ("task_id", w.task_id), ("taskId", w.task_id_c))
        for _, task_id in named:
            if task_id:  # (an empty id names no task: never looked up)
                return CancelTask(id=task_id, metadata=w.metadata)
        sent = next((name for name, value in named if value is not UNSET), "id")
        raise InvalidParams(
            f"Invalid params for {method}: `params.{sent}` is required and must not be empty")

    def params_out(self, call: Call) -> Any:
        if isinstance(call, CancelTask):
            return SCancelParams(id=call.id, metadata=call.metadata)
        return super().params_out(call)

    def result_in(self, call: Call, data: bytes) -> Result:
        if not isinstance(call, (SendMessage, CancelTask)):
            raise self.unsupported(call)
        w = self.read_result(self.wire.StreamItem, data, self.lax.StreamItem)
        kind = type(w).__name__.rsplit(".", 1)[-1]
        if kind == "ArtifactEvent" or (kind == "Message" and isinstance(call, CancelTask)):
            what = "an artifact update" if kind == "ArtifactEvent" else "a message"
            raise InvalidAgentResponse(
                f"Invalid agent response: {what} does not answer {type(call).__name__}"
            )
        item = self.item_in(w)
        if isinstance(item, StatusUpdate):
            # Seed 002 lists a status event as a possible answer: it says all a Task needs.
            return Task(
                id=item.task_id, context_id=item.context_id, status=item.status,
                metadata=item.metadata,
            )
        assert isinstance(item, (Task, Message))
        return item
