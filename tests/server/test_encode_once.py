"""A log event is encoded once per dialect, whatever the number of its readers."""

from __future__ import annotations

from collections import Counter

from interlingua.bindings.http.sse_writer import encoded_item
from interlingua.core import model as m
from interlingua.core.dialects import get_codec
from interlingua.core.dialects.base import StreamItem
from interlingua.server.streams import Entry
from interlingua.stores.base import StoredEvent

calls: Counter[str] = Counter()


class Counting:
    """A codec that counts its stream-item encodings."""

    def __init__(self, name: str) -> None:
        self._codec = get_codec(name)
        self.name = name

    def encode_stream_item(self, item: StreamItem) -> bytes:
        calls[self.name] += 1
        return self._codec.encode_stream_item(item)


def test_each_dialect_encodes_an_event_once_for_all_its_readers() -> None:
    calls.clear()
    event = m.StatusUpdate(task_id="t", context_id="c",
                           status=m.TaskStatus(state=m.TaskState.WORKING))
    stored = StoredEvent(seq=7, event=event)
    readers = [Counting(name) for name in ("1.0", "0.3", "1.0", "0.1", "0.3", "1.0")]
    out = [encoded_item(Entry(7, event, stored), r) for r in readers]  # type: ignore[arg-type]
    assert calls == {"1.0": 1, "0.3": 1, "0.1": 1}
    # Readers of one dialect share the very same bytes.
    assert out[0] is out[2] is out[5] and out[1] is out[4]
    assert out[0] == get_codec("1.0").encode_stream_item(event)
    assert out[1] == get_codec("0.3").encode_stream_item(event)
    assert out[3] == get_codec("0.1").encode_stream_item(event)


def test_snapshots_outside_the_log_are_encoded_per_reader() -> None:
    calls.clear()
    task = m.Task(id="t", context_id="c", status=m.TaskStatus(state=m.TaskState.SUBMITTED))
    reader = Counting("1.0")
    encoded_item(Entry(0, task), reader)  # type: ignore[arg-type]
    encoded_item(Entry(0, task), reader)  # type: ignore[arg-type]
    assert calls == {"1.0": 2}
