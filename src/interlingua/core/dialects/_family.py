"""One conversion core for the v0.x family of dialects (v0.2/v0.3, v0.1, SAM, tutorial).

``FamilyCodec`` holds every conversion between the canonical model and the
family's wire objects (messages, parts, artifacts, statuses, events, push
configs, errors) and the whole JSON-RPC codec built on them. A dialect is a
subclass that names its table (``Variant``, see ``_family_wire``) and its wire
Structs, and overrides only what is truly its own.

Leniency is one path for all: a request or result decodes straight into the
dialect's Structs; when that fails, the document is read generically, given
what the dialect needs (a part tag from the other spelling, the dialect's
member names, the ``kind`` of a result that lacks it, a bare Message wrapped as
params, DIALECTS.md §i.3-5) and converted once more.

Conversions that can fail raise ``FieldError`` carrying the path of the bad
field relative to the object converted; callers prepend their own segment as
the error unwinds, so building paths costs nothing on success.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, ClassVar, TypeVar

import msgspec

from .. import calls as c
from .. import model as m
from ..errors import (
    A2AError,
    InvalidAgentResponse,
    InvalidParams,
    UnsupportedOperation,
    method_not_found,
)
from ..lifecycle import RETURN_STATES
from ..parts import new_id
from ._common import (
    FieldError,
    at_root,
    b64decode,
    b64encode,
    decode_error_member,
    decode_params,
    each_in,
    encode_error_member,
    field_in,
    format_timestamp,
    normalize_timestamp,
)
from ._family_wire import Variant, Wire
from .base import Codec, StreamItem

__all__ = ["DATA_COMPAT_KEY", "FamilyCodec", "bytes_in"]

T = TypeVar("T")

# Part metadata flag marking a non-object DataPart value wrapped as {"value": X}
# (DIALECTS.md §i.27, the same spelling the official SDK uses).
DATA_COMPAT_KEY = "data_part_compat"

_encoder = msgspec.json.Encoder()
_any = msgspec.json.Decoder()
_DEFAULT_CONFIG = c.SendConfig()

# Where messages, parts and artifacts sit in a document, for the lenient path.
_NESTED = ("message", "status", "history", "artifacts", "artifact", "parts", "file",
           "configuration")
#: ProtoJSON's state names, as a v0.3 peer may send them (the lenient path only)
_PROTO_STATES = {
    "TASK_STATE_SUBMITTED": "submitted", "TASK_STATE_WORKING": "working",
    "TASK_STATE_INPUT_REQUIRED": "input-required", "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_CANCELLED": "canceled", "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_FAILED": "failed", "TASK_STATE_REJECTED": "rejected",
    "TASK_STATE_AUTH_REQUIRED": "auth-required", "TASK_STATE_UNSPECIFIED": "unknown",
}
# a camelCase name's capitals, which a snake_case dialect writes "_" and lower-cased
_SNAKE_CASE = re.compile(r"(?<=[a-z0-9])([A-Z])")
# The camelCase members a snake_case dialect also reads (SAM's SDK-made peers).
_CAMEL = {
    "messageId": "message_id", "taskId": "task_id", "contextId": "context_id",
    "referenceTaskIds": "reference_task_ids", "mimeType": "mime_type",
    "artifactId": "artifact_id", "inlineData": "inline_data", "lastChunk": "last_chunk",
    "acceptedOutputModes": "accepted_output_modes", "historyLength": "history_length",
    "pushNotificationConfig": "push_notification_config",
}
_FILE_RULES: dict[str, tuple[Callable[[int], bool], str]] = {
    "one": (lambda n: n == 1, "must have exactly one of `bytes` or `uri`"),
    "at_least_one": (lambda n: n >= 1, "must have `uri` or `bytes`"),
    "at_most_one": (lambda n: n <= 1, "must not have both `bytes` and `uri`"),
}


# The operation of a call, as ``Variant.methods`` names it.
_OPS: dict[type, str] = {
    c.SendMessage: "send", c.GetTask: "get", c.CancelTask: "cancel", c.SubscribeToTask: "resubscribe",
    c.SetPushConfig: "push_set", c.GetPushConfig: "push_get", c.ListPushConfigs: "push_list",
    c.DeletePushConfig: "push_delete", c.GetExtendedCard: "card",
}


# The members of a v1.0 StreamResponse / SendMessageResponse, and the kind each holds.
_WRAPPERS = {"task": "task", "message": "message", "statusUpdate": "status-update",
             "artifactUpdate": "artifact-update"}


def _tag_part(part: dict[str, Any], tag: str) -> None:
    """Give an untagged part the tag ``tag``: the other spelling's tag, else the one
    member it holds (fasta2a sends v1.0-style parts in v0.3 methods). A v1.0 file
    part (``raw`` / ``url``) becomes a file member."""
    other = part.get("type" if tag == "kind" else "kind")
    if isinstance(other, str):
        part[tag] = other
        return
    if "raw" in part or "url" in part:
        file = {"bytes": part.pop("raw", None), "uri": part.pop("url", None),
                "mimeType": part.pop("mediaType", None), "name": part.pop("filename", None)}
        part["file"] = {k: v for k, v in file.items() if v is not None}
    held = [member for member in ("text", "data", "file") if member in part]
    if len(held) == 1:  # a part that holds two is left untagged: refused as such
        part[tag] = held[0]


def _untagged_part(message: str, tag: str) -> str:
    """msgspec's refusal of a part ``_tag_part`` could not tag (it held no member, or
    two), said as what a part must hold: the caller never left out a ``kind``."""
    missing = f"Object missing required field `{tag}`"
    if message.startswith(missing) and "parts[" in message:
        return ("a part must hold exactly one of `text`, `data` or `file` (or name it in "
                f"`{tag}`){message[len(missing):]}")
    return message


def timestamp_in(value: str) -> str:
    try:
        return normalize_timestamp(value)
    except InvalidParams:
        pass
    # v0.x says only "ISO 8601": also take its other forms (basic, week dates, no seconds).
    try:
        return format_timestamp(datetime.fromisoformat(value))
    except OverflowError:  # a valid instant that falls outside years 1-9999 in UTC
        raise FieldError(["timestamp"], "is out of range") from None
    except ValueError:
        raise FieldError(["timestamp"], "is not an ISO 8601 timestamp") from None


def bytes_in(text: str, path: list[str]) -> bytes:
    try:
        return b64decode(text)
    except InvalidParams:
        raise FieldError(path, "is not valid base64") from None


def required(value: T | None, name: str) -> T:
    if value is None:
        raise FieldError([name], "is required")
    return value


def _named_config(method: str, config_id: str) -> str:
    """A push config id a request names: an empty one names no config (as in v1.0,
    and as a path or a gRPC resource name cannot hold one)."""
    if not config_id:
        raise InvalidParams(
            f"Invalid params for {method}: params.pushNotificationConfigId must not be empty")
    return config_id


class FamilyCodec(Codec):
    """A v0.x JSON-RPC codec driven by its ``variant`` table and ``wire`` Structs."""

    variant: ClassVar[Variant]
    wire: ClassVar[Wire]
    #: the Structs read after a document was made lenient (the same as ``wire``
    #: unless the fast path refuses unknown members)
    lax: ClassVar[Wire]
    #: wire state <-> canonical state, for a dialect whose states are not the canonical ones
    states_in: ClassVar[Mapping[Any, m.TaskState] | None] = None
    states_out: ClassVar[Mapping[m.TaskState, Any] | None] = None
    # v0.x streams mark their last status event (DIALECTS.md §i.17)
    marks_final = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        v = cls.__dict__.get("variant")
        if v is not None:
            cls.name = v.name
            cls.error_codes = v.codes
            cls.methods = frozenset(v.methods.values())
            cls.streaming_methods = frozenset(
                v.methods[op] for op in ("stream", "resubscribe") if op in v.methods
            )
        # after the name is set: the base derives traits from it
        super().__init_subclass__(**kwargs)

    def member_path(self, path: list[str]) -> list[str]:
        if not self.variant.snake:
            return path
        return [seg if seg.startswith("[") else _SNAKE_CASE.sub(r"_\1", seg).lower()
                for seg in path]

    def __init__(self) -> None:
        v = self.variant
        w = self.wire
        self._stream_method = v.methods.get("stream")
        self._file_check, self._file_fault = _FILE_RULES[v.file_rule]
        self._decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
        self._readers: dict[str, Callable[[str, bytes | None], c.Call]] = {
            method: getattr(self, "call_in_" + ("send" if op == "stream" else op))
            for op, method in v.methods.items()
        }
        self._fallbacks = {m: self.send_fallback(m) for m in v.methods.values()}
        # Parts are made and told apart on every request: their classes are kept at hand.
        self._text, self._file, self._data = w.TextPart, w.FilePart, w.DataPart
        self._plain = w.Part is None and not v.echo
        self._message, self._artifact, self._status = w.Message, w.Artifact, w.Status
        self._task, self._status_event, self._artifact_event = (
            w.Task, w.StatusEvent, w.ArtifactEvent
        )
        self._send_params = self.decoder(w.SendParams)
        self._states_in, self._states_out = self.states_in, self.states_out

    def decoder(self, typ: Any) -> msgspec.json.Decoder[Any]:
        d = self._decoders.get(typ)
        if d is None:
            d = self._decoders[typ] = msgspec.json.Decoder(typ)
        return d

    # ============================================================= wire -> canonical

    def part_in(self, w: Any) -> m.Part:
        t = type(w)
        kind = (
            "text" if t is self._text else "data" if t is self._data
            else "file" if t is self._file else self._untagged_kind(w)
        )
        if kind == "text":
            return m.TextPart(text=w.text, metadata=w.metadata)
        if kind == "data":
            return self.data_in(w.data, w.metadata)
        return self.file_in(w.file, w.metadata)

    def _untagged_kind(self, p: Any) -> str:
        present = (p.text is not None) + (p.data is not None) + (p.file is not None)
        if present != 1:
            raise FieldError([], "must have exactly one of `text`, `data` or `file`")
        member = "text" if p.text is not None else "data" if p.data is not None else "file"
        for tag_name, tag in (("kind", p.kind), ("type", p.type)):
            if tag is not None and tag != member:
                raise FieldError([tag_name], f"is {tag!r} but the part holds `{member}`")
        return member

    def data_in(self, data: Any, meta: dict[str, Any] | None) -> m.DataPart:
        if meta is not None and meta.get(DATA_COMPAT_KEY) is True and "value" in data:
            # A non-object value a v1.0-side peer wrapped for us: unwrap it.
            rest = {k: v for k, v in meta.items() if k != DATA_COMPAT_KEY}
            return m.DataPart(data=data["value"], metadata=rest or None)
        return m.DataPart(data=data, metadata=meta)

    def file_in(self, f: Any, metadata: dict[str, Any] | None) -> m.FilePart:
        if not self._file_check((f.data is not None) + (f.uri is not None)):
            raise FieldError(["file"], self._file_fault)
        raw = None if f.data is None else bytes_in(f.data, ["file", "bytes"])
        return m.FilePart(
            raw=raw, uri=f.uri, media_type=f.mime_type, filename=f.name, metadata=metadata
        )

    def parts_in(self, parts: list[Any]) -> list[m.Part]:
        out: list[m.Part] = []
        part_in = self.part_in
        for i, p in enumerate(parts):
            try:
                out.append(part_in(p))
            except FieldError as exc:
                exc.path[:0] = ["parts", f"[{i}]"]
                raise
        return out

    def message_id_in(self, w: Any) -> str:
        """The id of a message that came without one."""
        return new_id()

    def message_in(self, w: Any) -> m.Message:
        return m.Message(
            message_id=w.message_id or self.message_id_in(w),
            role=w.role,
            parts=self.parts_in(w.parts),
            context_id=w.context_id,
            task_id=w.task_id,
            reference_task_ids=w.reference_task_ids,
            extensions=w.extensions,
            metadata=w.metadata,
        )

    def artifact_in(self, w: Any) -> m.Artifact:
        return m.Artifact(
            artifact_id=w.artifact_id,
            parts=self.parts_in(w.parts),
            name=w.name,
            description=w.description,
            metadata=w.metadata,
            extensions=w.extensions,
        )

    def status_in(self, w: Any) -> m.TaskStatus:
        msg = None if w.message is None else field_in("message", self.message_in, w.message)
        ts = w.timestamp
        return m.TaskStatus(
            state=w.state if self._states_in is None else self._states_in[w.state],
            message=msg,
            timestamp=None if ts is None else timestamp_in(ts),
        )

    def task_in(self, w: Any) -> m.Task:
        return m.Task(
            id=w.id,
            context_id=required(w.context_id, "context_id"),
            status=field_in("status", self.status_in, w.status),
            artifacts=each_in("artifacts", w.artifacts, self.artifact_in) if w.artifacts else [],
            history=each_in("history", w.history, self.message_in) if w.history else [],
            metadata=w.metadata,
        )

    def event_ids(self, w: Any) -> tuple[str, str]:
        """The task and context an event names (SAM's may lack them)."""
        return required(w.task_id, "task_id"), required(w.context_id, "context_id")

    def status_event_in(self, w: Any) -> m.StatusUpdate:
        task_id, context_id = self.event_ids(w)
        status = field_in("status", self.status_in, w.status)
        return m.StatusUpdate(task_id, context_id, status, w.metadata)

    def artifact_event_in(self, w: Any) -> m.ArtifactUpdate:
        task_id, context_id = self.event_ids(w)
        artifact = field_in("artifact", self.artifact_in, w.artifact)
        return m.ArtifactUpdate(
            task_id, context_id, artifact, bool(w.append), bool(w.last_chunk), w.metadata
        )

    def item_in(self, w: Any) -> StreamItem:
        t = type(w)
        if t is self.wire.StatusEvent or t is self.lax.StatusEvent:
            return self.status_event_in(w)
        if t is self.wire.ArtifactEvent or t is self.lax.ArtifactEvent:
            return self.artifact_event_in(w)
        if t is self.wire.Task or t is self.lax.Task:
            return self.task_in(w)
        return self.message_in(w)

    def push_config_in(self, w: Any, task_id: str | None) -> m.PushConfig:
        a = w.authentication
        auth = None if a is None else m.AuthInfo(schemes=a.schemes, credentials=a.credentials)
        return m.PushConfig(url=w.url, id=w.id, task_id=task_id, token=w.token, authentication=auth)

    def send_config_in(self, w: Any) -> c.SendConfig:
        if w is None:
            return c.SendConfig()
        push = w.push_notification_config
        return c.SendConfig(
            accepted_output_modes=w.accepted_output_modes,
            history_length=w.history_length,
            # Absent means blocking (DIALECTS.md §i.31).
            blocking=True if w.blocking is None else w.blocking,
            push_config=self.push_config_in(push, None) if push is not None else None,
        )

    # ============================================================= canonical -> wire

    def part_out(self, p: m.Part) -> Any:
        # media_type / filename of text and data parts have no v0.x spelling: dropped.
        if type(p) is m.TextPart:
            if self._plain:
                return self._text(text=p.text, metadata=p.metadata)
            return self._part_of("text", p.text, p.metadata)
        if type(p) is m.DataPart:
            data, meta = p.data, p.metadata
            if not isinstance(data, dict):
                meta = dict(meta) if meta else {}
                meta[DATA_COMPAT_KEY] = True
                data = {"value": data}
            if self._plain:
                return self._data(data=data, metadata=meta)
            return self._part_of("data", data, meta)
        assert isinstance(p, m.FilePart)
        file = self.file_out(p)
        if self._plain:
            return self._file(file=file, metadata=p.metadata)
        return self._part_of("file", file, p.metadata)

    def _part_of(self, kind: str, value: Any, metadata: Any) -> Any:
        """A part of a dialect whose parts have no tag, or echo it."""
        if self.wire.Part is not None:
            return self.wire.Part(metadata=metadata, **{kind: value})
        cls = {"text": self._text, "data": self._data, "file": self._file}[kind]
        return cls(metadata=metadata, tag_echo=kind, **{kind: value})

    def file_out(self, p: m.FilePart) -> Any:
        data = None if p.raw is None else b64encode(p.raw)
        if data is None and p.uri is None and not self._file_check(0):
            # v0.1's file with neither, where the dialect needs one: empty bytes, as v1.0
            data = ""
        return self.wire.File(
            data=data,
            # SAM's file with both, where the dialect allows one: its bytes alone, as v1.0
            uri=p.uri if data is None or self._file_check(2) else None,
            mime_type=p.media_type,
            name=p.filename,
        )

    def message_out(self, m: m.Message) -> Any:
        part_out = self.part_out
        out = self._message(
            message_id=m.message_id,
            role=m.role,
            parts=[part_out(p) for p in m.parts],
            context_id=m.context_id,
            task_id=m.task_id,
            reference_task_ids=m.reference_task_ids,
            extensions=m.extensions,
            metadata=m.metadata,
        )
        if not self._plain and self.variant.echo:
            out.message_id_echo = m.message_id
        return out

    def artifact_out(self, a: m.Artifact) -> Any:
        # ``index`` is v0.1's artifact identity; v0.2+ identify by artifactId only.
        part_out = self.part_out
        return self._artifact(
            artifact_id=a.artifact_id,
            parts=[part_out(p) for p in a.parts],
            name=a.name,
            description=a.description,
            metadata=a.metadata,
            extensions=a.extensions,
        )

    def status_out(self, s: m.TaskStatus) -> Any:
        return self._status(
            state=s.state if self._states_out is None else self._states_out[s.state],
            message=self.message_out(s.message) if s.message is not None else None,
            timestamp=s.timestamp,
        )

    def task_out(self, t: m.Task) -> Any:
        return self._task(
            id=t.id,
            context_id=t.context_id,
            status=self.status_out(t.status),
            artifacts=[self.artifact_out(a) for a in t.artifacts] if t.artifacts else None,
            history=[self.message_out(h) for h in t.history] if t.history else None,
            metadata=t.metadata,
        )

    def push_config_out(self, config: m.PushConfig) -> Any:
        a = config.authentication
        auth = None if a is None else self.wire.PushAuth(schemes=a.schemes, credentials=a.credentials)
        return self.wire.PushConfig(
            url=config.url, id=config.id, token=config.token, authentication=auth
        )

    def task_push_out(self, config: m.PushConfig, call: c.Call) -> Any:
        task_id = config.task_id or getattr(call, "task_id", None) or ""
        return self.wire.TaskPushConfig(
            task_id=task_id, push_notification_config=self.push_config_out(config)
        )

    # ============================================================== lenient reading

    def normalize(self, doc: Any) -> None:
        """Give a generic document, in place, the spelling this dialect reads."""
        if isinstance(doc, list):
            for item in doc:
                self.normalize(item)
            return
        if not isinstance(doc, dict):
            return
        v = self.variant
        if v.camel_aliases:
            for camel in [k for k in doc if k in _CAMEL]:
                doc.setdefault(_CAMEL[camel], doc.pop(camel))
        if "parts" not in doc and "role" in doc and "content" in doc:
            # python-a2a's message: one part (or a list) under ``content``
            content = doc.pop("content")
            doc["parts"] = content if isinstance(content, list) else [content]
        state = doc.get("state")
        if isinstance(state, str) and state.startswith("TASK_STATE_"):
            # a ProtoJSON state name (DIALECTS.md §i.2): the same state, both cancels
            doc["state"] = _PROTO_STATES.get(state, state)
        tag = v.part_tag
        parts = doc.get("parts")
        if tag is not None and isinstance(parts, list):
            for part in parts:
                if isinstance(part, dict) and tag not in part:
                    _tag_part(part, tag)
        for key in _NESTED:
            if key in doc:
                self.normalize(doc[key])

    def infer_kind(self, doc: Any) -> Any:
        """Name the union member of a result that came without ``kind``, by its fields;
        a result wrapped the v1.0 way (``{"task": …}``, ``{"statusUpdate": …}`` …, as
        fasta2a answers v0.3 methods) is unwrapped first. Returns the document."""
        if isinstance(doc, dict) and len(doc) == 1:
            ((key, inner),) = doc.items()
            kind = _WRAPPERS.get(key)
            if kind is not None and isinstance(inner, dict):
                inner.setdefault("kind", kind)
                if kind == "status-update":
                    inner.setdefault("final", False)  # v1.0 has none: the state tells
                return inner
        if isinstance(doc, dict) and "kind" not in doc:
            if "artifact" in doc:
                doc["kind"] = "artifact-update"
            elif "status" in doc:
                event = any(k in doc for k in self.variant.event_markers)
                doc["kind"] = "status-update" if event else "task"
            elif "role" in doc or "parts" in doc or "messageId" in doc:
                doc["kind"] = "message"
        return doc

    def send_fallback(self, method: str) -> Callable[[Any], Any]:
        def fallback(doc: Any) -> Any:
            if not isinstance(doc, dict):
                raise InvalidParams(f"Invalid params for {method}: params must be a JSON object")
            doc = self.wrap_bare_message(doc)
            self.normalize(doc)
            try:
                return msgspec.convert(doc, self.lax.SendParams)
            except msgspec.ValidationError as exc:
                said = _untagged_part(str(exc), self.variant.part_tag or "")
                raise InvalidParams(
                    f"Invalid params for {method}: {at_root(said, 'params')}"
                ) from None

        return fallback

    def wrap_bare_message(self, doc: dict[str, Any]) -> dict[str, Any]:
        if "message" not in doc and "role" in doc and "parts" in doc:
            return {"message": doc}  # a bare Message as params (DIALECTS.md §i.3)
        return doc

    def read_result(self, typ: Any, data: bytes, lax_typ: Any = None) -> Any:
        """Decode a peer's result; on a shape error retry leniently, else InvalidAgentResponse."""
        try:
            return self.decoder(typ).decode(data)
        except msgspec.ValidationError as exc:
            first = exc
        except msgspec.DecodeError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent response: result is not JSON: {exc}"
            ) from None
        try:
            doc = _any.decode(data)
        except msgspec.DecodeError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent response: result is not JSON: {exc}"
            ) from None
        found = self.infer_kind(doc)
        # (a result unwrapped: the strict fault is the wrapper's, whose kind is not needed)
        root = f"result.{next(iter(doc))}" if found is not doc else "result"
        self.normalize(found)
        try:
            return msgspec.convert(found, typ if lax_typ is None else lax_typ)
        except msgspec.ValidationError as exc:
            fault = first if self.variant.report_first and found is doc else exc
            raise InvalidAgentResponse(
                f"Invalid agent response: {at_root(str(fault), root)}"
            ) from None

    # ================================================================ server side

    def decode_call(self, method: str, params: bytes | None) -> c.Call:
        reader = self._readers.get(method)
        if reader is None:
            raise method_not_found(method)
        try:
            return reader(method, params)
        except RecursionError:
            raise InvalidParams(f"Invalid params for {method}: nested too deeply") from None

    def params_in(self, typ: Any, method: str, params: bytes | None) -> Any:
        return decode_params(self.decoder(typ), params, method=method)

    def call_in_send(self, method: str, params: bytes | None) -> c.Call:
        w = decode_params(
            self._send_params, params, method=method,
            fallback=self._fallbacks[method],
        )
        try:
            message = self.message_in(w.message)
        except FieldError as exc:
            raise InvalidParams(
                f"Invalid params for {method}: {exc.describe('params.message')}"
            ) from None
        return c.SendMessage(
            message=message, config=self.send_config_in(w.configuration), metadata=w.metadata,
            streaming=method == self._stream_method,
        )

    def call_in_get(self, method: str, params: bytes | None) -> c.Call:
        q = self.params_in(self.wire.TaskQuery, method, params)
        return c.GetTask(id=q.id, history_length=q.history_length)

    def call_in_cancel(self, method: str, params: bytes | None) -> c.Call:
        q = self.params_in(self.wire.TaskIdParams, method, params)
        return c.CancelTask(id=q.id, metadata=q.metadata)

    def call_in_resubscribe(self, method: str, params: bytes | None) -> c.Call:
        # TaskIdParams; the historyLength v0.1 sent on this method is kept if given.
        r = self.params_in(self.wire.TaskQuery, method, params)
        return c.SubscribeToTask(id=r.id, history_length=r.history_length)

    def call_in_push_set(self, method: str, params: bytes | None) -> c.Call:
        s = self.params_in(self.wire.TaskPushConfig, method, params)
        config = self.push_config_in(s.push_notification_config, s.task_id)
        return c.SetPushConfig(task_id=s.task_id, config=config)

    def call_in_push_get(self, method: str, params: bytes | None) -> c.Call:
        g = self.params_in(self.wire.GetPushParams, method, params)
        # none (TaskIdParams) asks for the task's own config; an empty one names none
        config_id = g.push_notification_config_id
        return c.GetPushConfig(task_id=g.id, config_id=None if config_id is None
                               else _named_config(method, config_id))

    def call_in_push_list(self, method: str, params: bytes | None) -> c.Call:
        return c.ListPushConfigs(task_id=self.params_in(self.wire.TaskIdParams, method, params).id)

    def call_in_push_delete(self, method: str, params: bytes | None) -> c.Call:
        d = self.params_in(self.wire.DeletePushParams, method, params)
        return c.DeletePushConfig(task_id=d.id, config_id=_named_config(
            method, d.push_notification_config_id))

    def call_in_card(self, method: str, params: bytes | None) -> c.Call:
        return c.GetExtendedCard()

    def unsupported(self, what: object) -> A2AError:
        return UnsupportedOperation(f"{type(what).__name__} is not part of {self.variant.label}")

    def encode_result(self, call: c.Call, result: c.Result) -> bytes:
        if isinstance(result, m.Task):
            return _encoder.encode(self.task_out(result))
        if isinstance(result, m.Message):
            return _encoder.encode(self.message_out(result))
        if result is None:
            return b"null"
        if "push_get" in self.variant.methods:
            if isinstance(result, m.PushConfig):
                return _encoder.encode(self.task_push_out(result, call))
            if isinstance(result, list):
                return _encoder.encode([self.task_push_out(p, call) for p in result])
        if isinstance(result, m.AgentCard) and "card" in self.variant.methods:
            return _encoder.encode(self.card_out(result))
        raise self.unsupported(result)

    def card_out(self, card: m.AgentCard) -> Any:
        raise self.unsupported(card)

    def card_in(self, data: bytes) -> m.AgentCard:
        raise InvalidAgentResponse("Invalid agent response: this dialect has no card method")

    def encode_error(self, error: A2AError) -> bytes:
        return encode_error_member(
            self.code_of(error), error.message, error.data
        )

    def encode_stream_item(self, item: StreamItem) -> bytes:
        if isinstance(item, m.StatusUpdate):
            # v0.x streams mark their last status event (DIALECTS.md §i.17).
            return _encoder.encode(self._status_event(
                task_id=item.task_id, context_id=item.context_id,
                status=self.status_out(item.status),
                final=item.status.state in RETURN_STATES, metadata=item.metadata,
            ))
        if isinstance(item, m.ArtifactUpdate):
            return _encoder.encode(self._artifact_event(
                task_id=item.task_id, context_id=item.context_id,
                artifact=self.artifact_out(item.artifact),
                append=True if item.append else None,
                last_chunk=True if item.last_chunk else None,
                metadata=item.metadata,
            ))
        if isinstance(item, m.Task):
            return _encoder.encode(self.task_out(item))
        return _encoder.encode(self.message_out(item))

    # ================================================================ client side

    def encode_call(self, call: c.Call) -> tuple[str, bytes]:
        op = "stream" if isinstance(call, c.SendMessage) and call.streaming else _OPS.get(type(call))
        method = self.variant.methods.get(op or "")
        if method is None:
            raise self.unsupported(call)
        params = self.params_out(call)
        return method, b"{}" if params is None else _encoder.encode(params)

    def params_out(self, call: c.Call) -> Any:
        """The params Struct of ``call`` (None: no params)."""
        w = self.wire
        if isinstance(call, c.SendMessage):
            return self.send_params_out(call)
        if isinstance(call, (c.GetTask, c.SubscribeToTask)):
            return w.TaskQuery(id=call.id, history_length=call.history_length)
        if isinstance(call, c.CancelTask):
            return w.TaskIdParams(id=call.id, metadata=call.metadata)
        if isinstance(call, c.SetPushConfig):
            config = self.push_config_out(call.config)
            return w.TaskPushConfig(task_id=call.task_id, push_notification_config=config)
        if isinstance(call, c.GetPushConfig):
            return w.GetPushParams(id=call.task_id, push_notification_config_id=call.config_id)
        if isinstance(call, c.ListPushConfigs):
            return w.TaskIdParams(id=call.task_id)
        if isinstance(call, c.DeletePushConfig):
            return w.DeletePushParams(id=call.task_id, push_notification_config_id=call.config_id)
        return None

    def send_params_out(self, call: c.SendMessage) -> Any:
        conf = call.config
        config = None
        if conf != _DEFAULT_CONFIG:
            push = conf.push_config
            config = self.wire.SendConfig(
                accepted_output_modes=conf.accepted_output_modes,
                history_length=conf.history_length,
                push_notification_config=self.push_config_out(push) if push else None,
                blocking=conf.blocking,
            )
        return self.wire.SendParams(
            message=self.message_out(call.message), configuration=config, metadata=call.metadata
        )

    def decode_result(self, call: c.Call, result: bytes) -> c.Result:
        return self._from_agent(self.result_in, call, result)

    def _from_agent(self, read: Callable[..., T], *args: Any) -> T:
        """``read(*args)``, its faults as ``InvalidAgentResponse``."""
        try:
            return read(*args)
        except FieldError as exc:
            raise InvalidAgentResponse(
                f"Invalid agent response: {exc.describe('result')}"
            ) from None
        except RecursionError:
            raise InvalidAgentResponse("Invalid agent response: nested too deeply") from None

    def result_in(self, call: c.Call, data: bytes) -> c.Result:
        w, lax = self.wire, self.lax
        if _OPS.get(type(call)) not in self.variant.methods:
            raise self.unsupported(call)
        if isinstance(call, c.SendMessage):
            item = self.item_in(self.read_result(w.SendResult, data, lax.SendResult))
            assert isinstance(item, (m.Task, m.Message))
            return item
        if isinstance(call, (c.GetTask, c.CancelTask, c.SubscribeToTask)):
            return self.task_in(self.read_result(w.Task, data, lax.Task))
        if isinstance(call, (c.SetPushConfig, c.GetPushConfig)):
            tp = self.read_result(w.TaskPushConfig, data)
            return self.push_config_in(tp.push_notification_config, tp.task_id)
        if isinstance(call, c.ListPushConfigs):
            configs: Any = w.TaskPushConfig
            items = self.read_result(list[configs], data)
            return [self.push_config_in(tp.push_notification_config, tp.task_id) for tp in items]
        if isinstance(call, c.DeletePushConfig):
            return None  # null in v0.3; some peers answer {} (DIALECTS.md §i.30)
        if isinstance(call, c.GetExtendedCard):
            return self.card_in(data)
        raise self.unsupported(call)

    def decode_stream_item(self, result: bytes) -> StreamItem:
        return self._from_agent(self.stream_item_in, result)

    def stream_item_in(self, data: bytes) -> StreamItem:
        return self.item_in(self.read_result(self.wire.StreamItem, data, self.lax.StreamItem))

    def decode_error(self, error: Any) -> A2AError:
        return decode_error_member(error, self.variant.errors)
