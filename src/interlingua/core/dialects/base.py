"""What every dialect codec offers.

A codec is pure: bytes in, canonical objects out, and back. The server side
decodes requests and encodes results, errors and stream events; the client
side encodes requests and decodes results and events. Both live in one class
so that round-trip tests (decode(encode(x)) == x) cover both directions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from ..calls import Call, Result
from ..errors import A2AError
from ..model import ArtifactUpdate, Message, StatusUpdate, Task
from ._codes import code_in

__all__ = ["TRAITS", "Codec", "PushMode", "StreamItem"]

#: how webhooks of a push config registered in a dialect are fed: "event" (each
#: event a stream carries, as its own body) or "task" (the whole task when its status
#: changes, a queued delivery moved on to the newest status)
PushMode = Literal["event", "task"]

# What a stream (SSE, webhook, event mesh) carries, in canonical form.
StreamItem = Task | Message | StatusUpdate | ArtifactUpdate


class Codec:
    """Base of the per-dialect codecs; subclasses fill in every method."""

    #: the dialect's short name: "1.0", "0.3", "0.1", "sam", "tutorial"
    name: ClassVar[str]
    #: the JSON-RPC methods this dialect owns
    methods: ClassVar[frozenset[str]]
    #: methods that answer with an SSE stream
    streaming_methods: ClassVar[frozenset[str]] = frozenset()

    # ------------------------------------------------------------------ traits
    # What sets the dialect apart outside its wire, asked by the server and the
    # client instead of the dialect's name (a new dialect declares these, and
    # nothing else outside this package changes).

    #: the dialect recorded with a task made through this codec (``RequestInfo.dialect``,
    #: a task's and a push config's stored dialect): the name, but for a second
    #: rendering of another dialect's objects (v0.3-ProtoJSON is recorded as "0.3")
    dialect: ClassVar[str]
    #: the dialect whose task methods this one borrows and whose reading of them it
    #: shares: its own name, but for a variant of another dialect (SAM, the tutorial)
    family: ClassVar[str]
    #: ``A2A-Version`` values (Major.Minor) the dialect takes as its own
    versions: ClassVar[frozenset[str]] = frozenset()
    #: under strict versions, a request with no ``A2A-Version`` is refused (it would be
    #: read as v0.3, which does not have the dialect's methods)
    needs_version_header: ClassVar[bool] = False
    #: a subscription follows its task through interruptions (input-required,
    #: auth-required) to a terminal state; else it ends at an interruption
    follows_interruptions: ClassVar[bool] = False
    #: subscribing to a finished task is refused (else the final state is sent once)
    refuses_finished_subscription: ClassVar[bool] = False
    #: a stream can carry a whole task (the snapshot a subscription starts with); else
    #: the snapshot goes out as the events that say the same: each artifact, then the status
    streams_tasks: ClassVar[bool] = True
    #: a status event says whether it is its stream's last (``final``, v0.x): a stream
    #: that ends at its opening snapshot ends with the snapshot's status too
    marks_final: ClassVar[bool] = False
    #: a first answer that is a message with no task is sent bare (else the caller,
    #: who named the task, gets the task completed with the message)
    bare_replies: ClassVar[bool] = True
    #: the client names a new task (its send carries the id) and every send blocks: a
    #: client that must not wait makes its own id and reads the task by it
    client_names_tasks: ClassVar[bool] = False
    #: how webhooks of push configs registered in this dialect are fed
    push_mode: ClassVar[PushMode] = "task"
    #: a push config registered without an id is named by its task's id (else a new id)
    push_config_id_is_task_id: ClassVar[bool] = False
    #: the media type of the dialect's JSON bodies (HTTP+JSON answers, webhooks)
    media_type: ClassVar[str] = "application/json"
    #: JSON-RPC codes where the dialect's differ from the errors' own (``_codes.py``)
    error_codes: ClassVar[Mapping[type[A2AError], int]] = {}
    #: the ``A2A-Version`` a webhook in this dialect carries (None: no header)
    push_version: ClassVar[str | None] = None
    #: the dialect lists tasks (``ListTasks``)
    lists_tasks: ClassVar[bool] = False
    #: what a client tries when an agent does not understand this dialect, nearest first
    nearest: ClassVar[tuple[str, ...]] = ()
    #: the registry's name of the codec of this dialect's ProtoJSON bindings (HTTP+JSON,
    #: gRPC); None: the dialect has none
    protojson: ClassVar[str | None] = None
    #: the gRPC service this codec's calls are served under (None: not over gRPC)
    grpc_service: ClassVar[str | None] = None
    #: where a send names its context, as an error about it names the member
    context_field: ClassVar[str] = "message.contextId"
    #: its HTTP+JSON error bodies can carry a stream's resume hint, so an error event
    #: that names no error is the agent's fault (else it reads as a broken stream)
    named_stream_errors: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Both default to the name of the first class that has one; a subclass
        # inherits its base's (the mesh's codec is SAM's, and records its tasks so).
        name = getattr(cls, "name", None)
        if name is not None:
            if not hasattr(cls, "dialect"):
                cls.dialect = name
            if not hasattr(cls, "family"):
                cls.family = name

    def code_of(self, error: A2AError | type[A2AError]) -> int:
        """The JSON-RPC code of ``error`` in this dialect."""
        return code_in(self.error_codes, error)

    def recorded(self, dialect: str) -> bool:
        """Whether a task stored with ``dialect`` was made through this codec's dialect."""
        return dialect == self.dialect

    # ---------------------------------------------------------------- server side

    def decode_call(self, method: str, params: bytes | None) -> Call:
        """Params JSON (None when absent) of ``method`` -> a canonical call.

        Raises ``MethodNotFound`` for a method this dialect lacks and
        ``InvalidParams`` (with a message naming the field) for bad params.
        """
        raise NotImplementedError

    def encode_result(self, call: Call, result: Result) -> bytes:
        """The JSON of the response's ``result`` member for ``call``."""
        raise NotImplementedError

    def member_path(self, path: list[str]) -> list[str]:
        """``path``, a member of a call's params as v0.3 JSON-RPC spells it (a field
        ``core.bounds`` refuses), as this dialect's params spell it."""
        return path

    def for_answer(self, call: Call) -> Call:
        """``call`` as a server answering in this dialect serves it: with what the
        engine may know of the answer's form (see ``ListTasks.v1_json``)."""
        return call

    def encode_error(self, error: A2AError) -> bytes:
        """The JSON of the response's ``error`` member: ``{code, message, data?}``."""
        raise NotImplementedError

    def encode_stream_item(self, item: StreamItem) -> bytes:
        """The JSON of one streamed event's ``result`` member."""
        raise NotImplementedError

    def encode_push_task(self, task: Task) -> bytes:
        """The webhook body of a config fed whole tasks (``push_mode`` "task")."""
        raise NotImplementedError

    def http_status(self, error: A2AError) -> int:
        """The HTTP status of ``error`` in the dialect's HTTP+JSON binding."""
        return error.http_status

    def encode_http_error(self, error: A2AError, status: int) -> bytes:
        """The body of an HTTP+JSON error answer with ``status``."""
        raise NotImplementedError

    def decode_http_error(self, doc: Any, status: int = 0,
                          task_route: bool = False) -> A2AError | None:
        """A decoded HTTP+JSON error body (and its status; ``task_route``: the route
        names a task) -> its error; None for a body that names none."""
        return None

    # ---------------------------------------------------------------- client side

    def encode_call(self, call: Call) -> tuple[str, bytes]:
        """A canonical call -> (JSON-RPC method, params JSON)."""
        raise NotImplementedError

    def decode_result(self, call: Call, result: bytes) -> Result:
        """The JSON of a response's ``result`` member for ``call`` -> canonical."""
        raise NotImplementedError

    def decode_stream_item(self, result: bytes) -> StreamItem:
        raise NotImplementedError

    def decode_error(self, error: Any) -> A2AError:
        """A decoded ``error`` member -> the matching canonical error."""
        raise NotImplementedError


#: the traits a codec declares (what a codec wrapping another one copies)
TRAITS = ("dialect", "family", "versions", "needs_version_header", "follows_interruptions",
          "refuses_finished_subscription", "streams_tasks", "marks_final",
          "bare_replies", "push_mode",
          "push_config_id_is_task_id", "error_codes", "media_type", "push_version", "lists_tasks", "nearest",
          "protojson", "grpc_service", "named_stream_errors")
