"""A2A 1.1 (draft): v1.0's wire, with task generations.

Everything 1.1 adds on the wire is here, so that the final 1.1 is a change of
this file (and its proto fields), not a hunt through the codecs. It follows the
specification's ``dev-1.1`` branch at a2aproject/A2A commit 28491879
(2026-08-12, PR #1810): ``/work/shared/spec/v1.1-draft/`` holds that text.

What 1.1 adds to v1.0's ProtoJSON (``v1_0.py``, ``_v1_wire.py``):

* ``Task.generation``, ``TaskStatusUpdateEvent.generation`` and
  ``TaskArtifactUpdateEvent.generation`` (int64, a string in ProtoJSON): written
  only to a request that asked for ``A2A-Version: 1.1``, so that a strict 1.0
  reader never sees a member it does not know. A ``ListTasks`` page holds each
  task's generation too: it is written from the tasks, not from the v1.0 JSON a
  store may keep of them (``for_answer``).
* ``GetTaskRequest.currentGeneration``: a long poll (``server/long_poll.py``).
  Taken from a 1.0 request too, as the draft's example (§3.2.7) sends it with
  ``A2A-Version: 1.0``; that answer carries the task's generation (``v1_0.py``).
* ``SendMessageConfiguration.ifGenerationMatch``: a follow-up is taken only at
  that generation, else ``TaskGenerationMismatch`` (-32010, ABORTED, 409).

A 1.0 request that carries ``ifGenerationMatch`` is refused (``NEEDS_1_1``): a
precondition is never dropped in silence.

The dialect is recorded as "1.0" (``dialect``): a task made by a 1.1 request is
a v1.0 task, which a 1.0 client reads as ever. A push config registered by a 1.1
request is recorded as "1.1" (``RequestInfo.minor``): its bodies are this codec's
StreamResponses, with generations; a 1.0 one's stay 1.0's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import msgspec

from .. import calls as c
from .. import model as m
from ..errors import A2AError, TaskGenerationMismatch
from . import _v1_wire as w
from . import v1_0
from .base import StreamItem

__all__ = ["DRAFT_COMMIT", "VERSION", "V11Codec", "offered"]

#: the A2A-Version that asks for 1.1
VERSION = "1.1"
#: the a2aproject/A2A commit of the draft this follows
DRAFT_COMMIT = "28491879"

_encoder = msgspec.json.Encoder()

_CALL_READERS_11: dict[str, Callable[[str, bytes | None], c.Call]] = {
    **v1_0._CALL_READERS,
    "SendMessage": functools.partial(v1_0._send_in, newer=True),
    "SendStreamingMessage": functools.partial(v1_0._send_in, newer=True),
}


def offered(interfaces: list[m.AgentInterface]) -> list[m.AgentInterface]:
    """A card's interfaces with 1.1 offered: each v1.0 one names 1.1, the latest
    minor version of its major, as the proto says an interface does (a client
    asking for 1.0 there is still served 1.0)."""
    return [msgspec.structs.replace(i, protocol_version=VERSION) if i.protocol_version == "1.0"
            else i for i in interfaces]


def _generation(value: int) -> str | None:
    return str(value) if value else None


def _stamp_task(wire: Any, task: m.Task) -> None:
    wire.generation = _generation(task.generation)


def _stream_out(item: StreamItem) -> Any:
    wire = w.stream_item_out(item)
    kind = type(item)
    if kind is m.Task:
        _stamp_task(wire.task, item)  # type: ignore[arg-type]
    elif kind is m.StatusUpdate:
        wire.status_update.generation = _generation(item.generation)  # type: ignore[union-attr]
    elif kind is m.ArtifactUpdate:
        wire.artifact_update.generation = _generation(item.generation)  # type: ignore[union-attr]
    return wire


class V11Codec(v1_0.V1Codec):
    name = "1.1"
    dialect = "1.0"
    family = "1.1"
    versions = frozenset({VERSION})
    error_codes = v1_0.V1Codec.error_codes
    #: a config registered by a 1.1 request is fed 1.1's StreamResponses (with
    #: generations), with this A2A-Version
    push_version = VERSION

    # ------------------------------------------------------------ server side

    def decode_call(self, method: str, params: bytes | None) -> c.Call:
        reader = _CALL_READERS_11.get(method)
        if reader is None:
            return super().decode_call(method, params)  # says MethodNotFound
        try:
            return reader(method, params)
        except w.WireError as exc:
            raise v1_0._bad_params(method, exc) from None

    def for_answer(self, call: c.Call) -> c.Call:
        # a page of tasks, each with its generation: the v1.0 JSON a store keeps
        # of a task's listing has none
        return call

    def encode_result(self, call: c.Call, result: c.Result) -> bytes:
        wire = v1_0._result_out(call, result)
        if isinstance(result, m.Task):
            _stamp_task(wire.task if isinstance(call, c.SendMessage | c.SubscribeToTask)
                        else wire, result)
        elif isinstance(result, c.ListTasksResult) and result.encoded is None:
            for out, task in zip(wire.tasks, result.tasks, strict=True):
                _stamp_task(out, task)
        return b"null" if wire is None else _encoder.encode(wire)

    def encode_stream_item(self, item: StreamItem) -> bytes:
        return _encoder.encode(_stream_out(item))

    # ------------------------------------------------------------ client side

    def encode_call(self, call: c.Call) -> tuple[str, bytes]:
        plain = _as_1_0(call)
        if plain is call:
            return super().encode_call(call)
        method, wire = v1_0._call_out(plain)
        if isinstance(call, c.SendMessage):
            if wire.configuration is None:  # type: ignore[attr-defined]
                wire.configuration = w.SendMessageConfiguration()  # type: ignore[attr-defined]
            wire.configuration.if_generation_match = str(  # type: ignore[attr-defined]
                call.config.if_generation_match)
        elif isinstance(call, c.GetTask):
            wire.current_generation = str(call.current_generation)  # type: ignore[attr-defined]
        return method, _encoder.encode(wire)

    def decode_result(self, call: c.Call, result: bytes) -> c.Result:
        return super().decode_result(_as_1_0(call), result)

    def decode_error(self, error: Any) -> A2AError:
        if isinstance(error, dict) and error.get("code") == TaskGenerationMismatch.code:
            data = error.get("data")
            infos = [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []
            meta = infos[0].get("metadata") if infos else None
            return TaskGenerationMismatch(error.get("message") or None,
                                          data=meta if isinstance(meta, dict) else data)
        return super().decode_error(error)

    def decode_http_error(self, doc: Any, status: int = 0,
                          task_route: bool = False) -> A2AError | None:
        error = doc.get("error") if isinstance(doc, dict) else None
        details = error.get("details") if isinstance(error, dict) else None
        if isinstance(details, list) and any(
                isinstance(d, dict) and d.get("reason") == TaskGenerationMismatch.reason
                for d in details):
            return self.decode_error({"code": TaskGenerationMismatch.code,
                                      "message": error.get("message"),  # type: ignore[union-attr]
                                      "data": details})
        return super().decode_http_error(doc, status, task_route)


def _as_1_0(call: c.Call) -> c.Call:
    """``call`` without its 1.1 fields (its answer reads as 1.0's, generations aside)."""
    if isinstance(call, c.SendMessage) and call.config.if_generation_match is not None:
        return msgspec.structs.replace(
            call, config=msgspec.structs.replace(call.config, if_generation_match=None))
    if isinstance(call, c.GetTask) and call.current_generation is not None:
        return msgspec.structs.replace(call, current_generation=None)
    return call
