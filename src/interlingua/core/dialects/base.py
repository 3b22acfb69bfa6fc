"""What every dialect codec offers.

A codec is pure: bytes in, canonical objects out, and back. The server side
decodes requests and encodes results, errors and stream events; the client
side encodes requests and decodes results and events. Both live in one class
so that round-trip tests (decode(encode(x)) == x) cover both directions.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..calls import Call, Result
from ..errors import A2AError
from ..model import ArtifactUpdate, Message, StatusUpdate, Task

__all__ = ["Codec", "StreamItem"]

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
