"""The probe fold the durable stores check a batch with: the lifecycle and the
status and history of a full fold, without the artifacts."""

from __future__ import annotations

import pytest

from interlingua.core.errors import LifecycleError
from interlingua.core.model import TaskState, TaskStatus
from interlingua.stores import _projection

from .builders import agent, chunk, created, said, status, ts, user

S = TaskState


def test_a_probe_folds_status_and_history_and_leaves_artifacts_out() -> None:
    batch = [status("t-1", S.WORKING, ts(1)), chunk("t-1", "a", "one"),
             chunk("t-1", "a", "two", append=True), said(user("m-2")),
             status("t-1", S.COMPLETED, ts(2), message=agent("m-3"))]
    full = _projection.fold([created("t-1", at=ts(0), history=[user("m-1")]), *batch])
    probe = _projection.probe("t-1", "ctx-1", TaskStatus(S.SUBMITTED, timestamp=ts(0)))
    probe.history = [user("m-1")]

    assert _projection.advance_probe(probe, batch) is True
    assert probe.status == full.status
    assert probe.history == full.history
    assert probe.artifacts == []  # folded in full: one artifact of two parts
    assert [len(a.parts) for a in full.artifacts] == [2]


def test_a_probe_still_checks_every_artifact() -> None:
    probe = _projection.probe("t-1", "ctx-1", TaskStatus(S.COMPLETED, timestamp=ts(0)))
    with pytest.raises(LifecycleError, match="takes no more artifacts"):
        _projection.advance_probe(probe, [chunk("t-1", "a", "late")])
    working = _projection.probe("t-1", "ctx-1", TaskStatus(S.WORKING, timestamp=ts(0)))
    with pytest.raises(LifecycleError, match="takes no more artifacts"):
        _projection.advance_probe(
            working, [status("t-1", S.FAILED, ts(1)), chunk("t-1", "a", "after the end")])


def test_a_batch_of_chunks_alone_leaves_the_status_unchanged() -> None:
    probe = _projection.probe("t-1", "ctx-1", TaskStatus(S.WORKING, timestamp=ts(0)))
    before = probe.status
    assert _projection.advance_probe(
        probe, [chunk("t-1", "a", "x"), chunk("t-1", "a", "y", append=True)]) is False
    assert probe.status is before and probe.artifacts == []


def test_only_a_batch_with_a_message_in_it_may_add_to_the_history() -> None:
    chunks = [chunk("t-1", "a", "one"), chunk("t-1", "a", "two", append=True)]
    assert not _projection.adds_messages(chunks)
    assert not _projection.adds_messages([*chunks, status("t-1", S.COMPLETED, ts(1))])
    assert _projection.adds_messages(
        [*chunks, status("t-1", S.COMPLETED, ts(1), message=agent("m-2"))])
    assert _projection.adds_messages([*chunks, said(user("m-2"))])
    assert _projection.adds_messages([created("t-1", at=ts(0)), *chunks])
