"""The tutorial dialect (seed 003; DIALECTS.md §a.5, §i.4).

A tutorial page's mix of generations: v0.2's ``message/send`` whose message has
v0.1-style ``"type"`` parts and no ``messageId``, a reply that names the id
``message_id``, and ``task/subscribe`` (a code sample's name, in no spec) to
re-attach to a task. ``message/send`` is also a v0.3 method; which codec reads
a payload is decided by its shape elsewhere.

Reading: parts tagged ``type`` (or ``kind``), a message id under ``messageId``
or ``message_id`` — generated when neither is given —, the task link under
``taskId``/``contextId`` or ``task_id``/``context_id``, and otherwise what the
v0.2/v0.3 codec reads (configuration, metadata, a bare Message as params).
``task/subscribe`` takes ``{"id", "historyLength"?}``.

Writing: the v0.2/v0.3 objects, with two echoes (§i.4): every part carries
``kind`` next to ``type`` and every message ``message_id`` next to
``messageId``. Seed 003's client reads ``type`` and ``message_id``, a v0.2
client reads ``kind`` and ``messageId``, and the v0.3.0 JSON schema allows the
extra members, so all three accept the same bytes. Errors are v0.3's.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..model import Message, Task
from ..parts import new_id
from ._family import FamilyCodec
from ._family_wire import Variant, Wire, build_wire
from .v0_3 import shared as _v03

__all__ = ["TutorialCodec"]

VARIANT = Variant(
    name="tutorial",
    label="the tutorial dialect",
    # message/stream: a v0.3 streaming client's send of the tutorial's message
    methods={"send": "message/send", "stream": "message/stream",
             "resubscribe": "task/subscribe"},
    part_tag="type",
    echo=True,
    message_id_required=False,
    # Seed 003's own spelling is what the reader expects: report its fault.
    report_first=False,
)


class TutorialCodec(FamilyCodec):
    """JSON-RPC as seed 003's tutorial writes it."""

    variant: ClassVar[Variant] = VARIANT
    wire: ClassVar[Wire] = build_wire(VARIANT)
    lax: ClassVar[Wire] = wire
    # a v0.3 variant: its tasks are polled with v0.3's tasks/get, webhooks are v0.3's
    family = "0.3"
    versions = frozenset({"0.2", "0.3"})

    def encode_push_task(self, task: Task) -> bytes:
        return _v03().encode_stream_item(task)

    def message_id_in(self, w: Any) -> str:
        return w.message_id_echo or new_id()

    def message_in(self, w: Any) -> Message:
        # the task link spelt task_id / context_id (DIALECTS.md §b.2), as the id may be
        if w.task_id is None and w.task_id_echo is not None:
            w.task_id = w.task_id_echo
        if w.context_id is None and w.context_id_echo is not None:
            w.context_id = w.context_id_echo
        return super().message_in(w)
