"""The wire objects of the v0.x family, built from a dialect's table.

v0.2/v0.3, the Solace Agent Mesh variant and the tutorial variant send the same
objects (DIALECTS.md §b) and differ only in spelling: camelCase or snake_case
member names, the member that tags a part (``kind``, ``type`` or none), whether
a message must carry its id, and which members are optional. ``Variant`` is
that table; ``build_wire`` turns it into msgspec Structs, so params and results
decode straight from bytes into typed objects in the dialect's own spelling.

Every part Struct also has ``tag_echo``, the other dialects' tag member
(``type`` next to ``kind`` and the reverse): read and ignored, written only by a
dialect that echoes it (the tutorial's, DIALECTS.md §i.4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeAlias

import msgspec
from msgspec import Meta

from ..errors import A2AError
from ..model import Role, TaskState
from ._codes import V03_CODES, Codes
from ._common import V03_ERROR_CLASSES

Metadata: TypeAlias = dict[str, Any]
NonEmptyStr = Annotated[str, Meta(min_length=1)]
# historyLength: int32 in every version that types it (v1.0 proto)
NonNegativeInt = Annotated[int, Meta(ge=0, le=2**31 - 1)]
Fields: TypeAlias = list[tuple[str, Any] | tuple[str, Any, Any]]

__all__ = [
    "Metadata", "NonEmptyStr", "NonNegativeInt", "PushAuth", "Variant", "Wire", "build_wire",
]


@dataclass(frozen=True)
class Variant:
    """The table of one v0.x dialect: what sets its wire apart from its siblings'."""

    name: str
    #: how messages name the dialect: "A2A v0.2/v0.3 JSON-RPC"
    label: str
    #: operation -> JSON-RPC method: send, stream, get, cancel, resubscribe,
    #: push_set, push_get, push_list, push_delete, card
    methods: Mapping[str, str]
    #: member names in snake_case (SAM) instead of camelCase
    snake: bool = False
    #: the member that names a part's kind: "kind", "type", or None (told by its member)
    part_tag: str | None = "kind"
    #: also write the other spelling of part tags and message ids (the tutorial)
    echo: bool = False
    #: a message must carry a non-empty id (else one is made up)
    message_id_required: bool = True
    #: task and event ids typed as required (else checked while converting)
    ids_required: bool = True
    #: camelCase members are read too, the own spelling winning (SAM)
    camel_aliases: bool = False
    #: the file part rule: "one" of bytes/uri, "at_least_one", or "at_most_one"
    file_rule: str = "one"
    #: members whose presence makes an untagged result a status event
    event_markers: tuple[str, ...] = ("taskId",)
    #: on a result no shape fits: report the strict reader's fault, else the lenient one's
    report_first: bool = True
    #: the JSON-RPC codes sent where they differ from the errors' own, and the codes read back
    codes: Codes = field(default_factory=lambda: V03_CODES)
    errors: Mapping[int, type[A2AError]] = field(default_factory=lambda: V03_ERROR_CLASSES)
    #: what a data part's ``data`` may be (v0.1's prose allows arrays too)
    data_type: Any = dict[str, Any]
    #: the artifact's members, given its part type (SAM's flat artifact)
    artifact_fields: Callable[[Any], Fields] | None = None


class PushAuth(msgspec.Struct, omit_defaults=True):
    """Push authentication: spelt alike in every v0.x dialect."""

    schemes: list[str]
    credentials: str | None = None


class Wire:
    """The Structs of one variant (attributes set by ``build_wire``) and their decoders."""

    TextPart: Any
    FilePart: Any
    DataPart: Any
    Part: Any  # the untagged part, when parts carry no tag
    File: Any
    Message: Any
    Artifact: Any
    Status: Any
    Task: Any
    StatusEvent: Any
    ArtifactEvent: Any
    PushAuth: Any
    PushConfig: Any
    SendConfig: Any
    SendParams: Any
    TaskQuery: Any
    TaskIdParams: Any
    TaskPushConfig: Any
    GetPushParams: Any
    DeletePushParams: Any
    SendResult: Any
    StreamItem: Any


def _opt(name: str, typ: Any) -> tuple[str, Any, Any]:
    return (name, typ | None, None)


def default_artifact_fields(part: Any) -> Fields:
    return [
        ("artifact_id", str),
        ("parts", list[part]),
        _opt("name", str),
        _opt("description", str),
        _opt("metadata", Metadata),
        _opt("extensions", list[str]),
    ]


def build_wire(v: Variant, *, lax: bool = False) -> Wire:
    """The Structs of ``v``. ``lax`` ones ignore unknown members: a variant that
    reads another spelling refuses them in its fast path (so that such a
    document takes the path that renames them) and reads with these after."""
    forbid = v.camel_aliases and not lax
    rename: Literal["camel"] | None = None if v.snake else "camel"
    opts: dict[str, Any] = {"omit_defaults": True, "kw_only": True, "module": __name__,
                            "forbid_unknown_fields": forbid}

    def struct(name: str, fields: Fields, tag: str | None = None, tag_field: str = "kind") -> Any:
        return msgspec.defstruct(
            f"{v.name}.{name}", fields, rename=rename, tag=tag, tag_field=tag_field if tag else None,
            **opts,
        )

    w = Wire()
    meta = _opt("metadata", Metadata)
    w.File = struct("File", [
        ("data", str | None, msgspec.field(default=None, name="bytes")),
        _opt("uri", str), _opt("mime_type", str), _opt("name", str),
    ])
    if v.part_tag is not None:
        echo = ("tag_echo", str | None,
                msgspec.field(default=None, name="type" if v.part_tag == "kind" else "kind"))
        w.TextPart = struct("TextPart", [("text", str), meta, echo], "text", v.part_tag)
        w.FilePart = struct("FilePart", [("file", w.File), meta, echo], "file", v.part_tag)
        w.DataPart = struct("DataPart", [("data", v.data_type), meta, echo], "data", v.part_tag)
        w.Part = None
        part: Any = w.TextPart | w.FilePart | w.DataPart
    else:
        w.TextPart = w.FilePart = w.DataPart = None
        w.Part = part = struct("Part", [
            _opt("text", str), _opt("data", dict[str, Any]), _opt("file", w.File), meta,
            # a peer that adds a tag has it checked against the member present
            _opt("kind", str), _opt("type", str),
        ])
    message_fields: Fields = [
        ("message_id", NonEmptyStr) if v.message_id_required else _opt("message_id", str),
        ("role", Role),
        ("parts", Annotated[list[part], Meta(min_length=1)]),
        _opt("context_id", str), _opt("task_id", str),
        _opt("reference_task_ids", list[str]), _opt("extensions", list[str]), meta,
    ]
    if v.echo:
        # the tutorial's snake_case spellings: read (camelCase wins), only the id echoed
        message_fields += [
            (f"{name}_echo", str | None, msgspec.field(default=None, name=name))
            for name in ("message_id", "task_id", "context_id")
        ]
    message: Any = struct("Message", message_fields, "message")
    artifact: Any = struct("Artifact", (v.artifact_fields or default_artifact_fields)(part))
    w.Message, w.Artifact = message, artifact
    w.Status = struct("Status", [
        ("state", TaskState), _opt("message", w.Message), _opt("timestamp", str),
    ])
    w.Task = struct("Task", [
        ("id", str), ("context_id", str) if v.ids_required else _opt("context_id", str),
        ("status", w.Status), _opt("artifacts", list[artifact]),
        _opt("history", list[message]), meta,
    ], "task")
    ids: Fields = (
        [("task_id", str), ("context_id", str)]
        if v.ids_required else [_opt("task_id", str), _opt("context_id", str)]
    )
    # ``final`` is required by the v0.2/v0.3 schema, so it has no default and is always written.
    w.StatusEvent = struct("StatusEvent", [
        *ids, ("status", w.Status),
        ("final", bool) if v.ids_required else _opt("final", bool), meta,
    ], "status-update")
    w.ArtifactEvent = struct("ArtifactEvent", [
        *ids, ("artifact", w.Artifact), _opt("append", bool), _opt("last_chunk", bool), meta,
    ], "artifact-update")
    w.PushAuth = PushAuth
    w.PushConfig = struct("PushConfig", [
        ("url", str), _opt("id", str), _opt("token", str), _opt("authentication", w.PushAuth),
    ])
    w.SendConfig = struct("SendConfig", [
        _opt("accepted_output_modes", list[str]), _opt("history_length", NonNegativeInt),
        _opt("push_notification_config", w.PushConfig), _opt("blocking", bool),
    ])
    w.SendParams = struct("SendParams", [
        ("message", w.Message), _opt("configuration", w.SendConfig), meta,
    ])
    # TaskQueryParams; also read for tasks/resubscribe, where v0.1 sent it. An empty id
    # names no task: invalid params in every dialect (v0.1's schema says so; v1.0 too)
    task_id: Any = NonEmptyStr
    w.TaskQuery = struct("TaskQuery", [
        ("id", task_id), _opt("history_length", NonNegativeInt), meta,
    ])
    w.TaskIdParams = struct("TaskIdParams", [("id", task_id), meta])
    # (also the answer a client reads: a peer's empty task id there is its own affair)
    w.TaskPushConfig = struct("TaskPushConfig", [
        ("task_id", str), ("push_notification_config", w.PushConfig),
    ])
    # TaskIdParams or GetTaskPushNotificationConfigParams (v0.2.5+)
    w.GetPushParams = struct("GetPushParams", [
        ("id", task_id), _opt("push_notification_config_id", str), meta,
    ])
    w.DeletePushParams = struct("DeletePushParams", [
        ("id", task_id), ("push_notification_config_id", str), meta,
    ])
    w.SendResult = w.Task | w.Message
    w.StreamItem = w.Task | w.Message | w.StatusEvent | w.ArtifactEvent
    return w
