"""The lifecycle table: every (state, event) pair, and the docs generated from it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlingua.core import lifecycle
from interlingua.core.errors import LifecycleError
from interlingua.core.model import (
    TERMINAL_STATES,
    Artifact,
    ArtifactUpdate,
    HistoryAppended,
    Message,
    Role,
    StatusUpdate,
    Task,
    TaskCreated,
    TaskState,
    TaskStatus,
    TextPart,
)

S = TaskState
ALL = list(TaskState)


def task_in(state: TaskState) -> Task:
    return Task(id="t", context_id="c", status=TaskStatus(state=state))


def status(state: TaskState, text: str | None = None) -> StatusUpdate:
    m = None
    if text is not None:
        m = Message(message_id=f"m-{text}", role=Role.AGENT, parts=[TextPart(text=text)])
    return StatusUpdate(task_id="t", context_id="c", status=TaskStatus(state=state, message=m))


def artifact(aid: str = "a", text: str = "x", append: bool = False) -> ArtifactUpdate:
    return ArtifactUpdate(task_id="t", context_id="c", append=append,
                          artifact=Artifact(artifact_id=aid, parts=[TextPart(text=text)]))


def history(text: str = "u") -> HistoryAppended:
    return HistoryAppended(message=Message(message_id=f"u-{text}", role=Role.USER,
                                           parts=[TextPart(text=text)]))


# The expected table, written out independently of the code's table.
EXPECTED_MOVES = {
    S.SUBMITTED: {S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED, S.COMPLETED, S.FAILED,
                  S.CANCELED, S.REJECTED},
    S.WORKING: {S.WORKING, S.INPUT_REQUIRED, S.AUTH_REQUIRED, S.COMPLETED, S.FAILED,
                S.CANCELED, S.REJECTED},
    S.INPUT_REQUIRED: {S.WORKING, S.CANCELED, S.FAILED},
    S.AUTH_REQUIRED: {S.WORKING, S.CANCELED, S.FAILED},
    S.UNKNOWN: {S.WORKING, S.CANCELED, S.FAILED},
    S.COMPLETED: set(),
    S.CANCELED: set(),
    S.FAILED: set(),
    S.REJECTED: set(),
}


@pytest.mark.parametrize(("src", "dst"), list(itertools.product(ALL, ALL)))
def test_every_status_transition(src: TaskState, dst: TaskState) -> None:
    task = task_in(src)
    if dst in EXPECTED_MOVES[src]:
        lifecycle.apply(task, status(dst))
        assert task.status.state is dst
    else:
        with pytest.raises(LifecycleError):
            lifecycle.apply(task, status(dst))
        assert task.status.state is src  # a refused event changes nothing


@pytest.mark.parametrize("src", ALL)
def test_artifacts_only_while_running(src: TaskState) -> None:
    task = task_in(src)
    if src in (S.SUBMITTED, S.WORKING):
        lifecycle.apply(task, artifact())
        assert len(task.artifacts) == 1
    else:
        with pytest.raises(LifecycleError):
            lifecycle.apply(task, artifact())
        assert task.artifacts == []


@pytest.mark.parametrize("src", ALL)
def test_messages_until_terminal(src: TaskState) -> None:
    task = task_in(src)
    if src in TERMINAL_STATES:
        with pytest.raises(LifecycleError):
            lifecycle.apply(task, history())
    else:
        lifecycle.apply(task, history())
        assert len(task.history) == 1


@pytest.mark.parametrize("src", ALL)
def test_created_is_only_first(src: TaskState) -> None:
    with pytest.raises(LifecycleError):
        lifecycle.apply(task_in(src), TaskCreated(task=task_in(S.SUBMITTED)))


def test_sets() -> None:
    assert {S.COMPLETED, S.CANCELED, S.FAILED, S.REJECTED} == lifecycle.TERMINAL_STATES
    assert {S.INPUT_REQUIRED, S.AUTH_REQUIRED} == lifecycle.INTERRUPTED_STATES


def test_artifact_chunks_append_in_order_and_do_not_touch_events() -> None:
    task = task_in(S.WORKING)
    first = artifact("a", "Once ")
    lifecycle.apply(task, first)
    lifecycle.apply(task, artifact("a", "upon ", append=True))
    lifecycle.apply(task, artifact("b", "other"))
    lifecycle.apply(task, artifact("a", "a time", append=True))
    assert [a.artifact_id for a in task.artifacts] == ["a", "b"]
    assert [p.text for p in task.artifacts[0].parts] == ["Once ", "upon ", "a time"]  # type: ignore[union-attr]
    # the first event's own artifact is not changed by later appends
    assert [p.text for p in first.artifact.parts] == ["Once "]  # type: ignore[union-attr]
    # append=False with an existing id replaces that artifact
    lifecycle.apply(task, artifact("a", "new"))
    assert [p.text for p in task.artifacts[0].parts] == ["new"]  # type: ignore[union-attr]


def test_status_message_joins_history_once() -> None:
    task = task_in(S.SUBMITTED)
    lifecycle.apply(task, status(S.WORKING, "thinking"))
    lifecycle.apply(task, status(S.COMPLETED, "done"))
    assert [m.message_id for m in task.history] == ["m-thinking", "m-done"]


def test_check_all_checks_a_batch_in_order_without_changes() -> None:
    task = task_in(S.WORKING)
    assert lifecycle.check_all(task, [artifact(), status(S.COMPLETED)]) is S.COMPLETED
    with pytest.raises(LifecycleError):
        lifecycle.check_all(task, [status(S.COMPLETED), artifact()])
    assert task.status.state is S.WORKING and task.artifacts == []


events = st.one_of(
    st.sampled_from(ALL).map(status),
    st.builds(artifact, st.sampled_from(["a", "b"]), st.text(max_size=3), st.booleans()),
    st.text(max_size=3).map(history),
)


@given(st.lists(events, max_size=30))
def test_random_event_sequences_keep_the_invariants(seq: list[object]) -> None:
    task = task_in(S.SUBMITTED)
    terminal_reached = False
    for ev in seq:
        before = task.status.state
        try:
            lifecycle.apply(task, ev)  # type: ignore[arg-type]
        except LifecycleError:
            assert task.status.state is before
            continue
        # nothing is ever accepted after a terminal state
        assert not terminal_reached
        terminal_reached = task.status.state in TERMINAL_STATES


def _chunk(aid: str, text: str, append: bool, field: str | None) -> ArtifactUpdate:
    extra: dict[str, object] = {}
    if field == "name":
        extra["name"] = f"n-{text}"
    elif field == "description":
        extra["description"] = f"d-{text}"
    elif field == "metadata":
        extra["metadata"] = {text: 1}
    elif field == "extensions":
        extra["extensions"] = [f"urn:{text}"]
    return ArtifactUpdate(task_id="t", context_id="c", append=append, artifact=Artifact(
        artifact_id=aid, parts=[TextPart(text=text)], **extra))  # type: ignore[arg-type]


batch_events = st.one_of(
    st.builds(_chunk, st.sampled_from(["a", "b", "c"]), st.text(max_size=2), st.booleans(),
              st.sampled_from([None, None, None, "name", "description", "metadata",
                               "extensions"])),
    st.sampled_from([S.WORKING]).map(lambda s: status(s, "w")),
    st.text(max_size=2).map(history),
)


@given(st.lists(st.sampled_from(["a", "b"]), max_size=2), st.lists(batch_events, max_size=40))
def test_a_checked_batch_folds_as_its_events_one_by_one(start: list[str],
                                                        seq: list[ArtifactUpdate]) -> None:
    def fresh() -> Task:
        task = task_in(S.WORKING)
        for aid in dict.fromkeys(start):
            lifecycle.apply(task, artifact(aid, "0"))
        return task

    one_by_one, batched = fresh(), fresh()
    for ev in seq:
        lifecycle.apply(one_by_one, ev, checked=True)
    lifecycle.apply_checked(batched, seq)
    assert batched == one_by_one
    # the events themselves are untouched
    assert all(len(ev.artifact.parts) == 1 for ev in seq if type(ev) is ArtifactUpdate)


@pytest.mark.parametrize("field", ["name", "description", "metadata", "extensions"])
def test_a_chunk_that_changes_more_than_parts_folds_as_alone(field: str) -> None:
    seq = [_chunk("a", "x", False, None), _chunk("a", "y", True, field),
           _chunk("a", "z", True, None)]
    one_by_one, batched = task_in(S.WORKING), task_in(S.WORKING)
    for ev in seq:
        lifecycle.apply(one_by_one, ev, checked=True)
    lifecycle.apply_checked(batched, seq)
    assert batched == one_by_one
    assert getattr(batched.artifacts[0], field) is not None


def test_docs_page_matches_the_table() -> None:
    page = Path(__file__).parents[2] / "docs" / "lifecycle.md"
    assert lifecycle.markdown_table() in page.read_text()


def test_the_command_the_page_names_prints_the_table_without_a_warning() -> None:
    """Before: ``python -m interlingua.core.lifecycle`` warned that the module was
    imported twice (its package imports it)."""
    import subprocess
    import sys

    page = (Path(__file__).parents[2] / "docs" / "lifecycle.md").read_text()
    assert "`python -m interlingua.core.lifecycle_table`" in page
    done = subprocess.run([sys.executable, "-W", "error", "-m",
                           "interlingua.core.lifecycle_table"],
                          capture_output=True, text=True, check=False, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == lifecycle.markdown_table() + "\n"


def _one_by_one(state: TaskState, batch: list[object]) -> TaskState | None:
    """The state ``batch`` leads to from ``state``, checking each event alone (None: refused)."""
    for ev in batch:
        try:
            state = lifecycle.check_from(state, "t", [ev])  # type: ignore[list-item]
        except LifecycleError:
            return None
    return state


# long runs of chunks, as a streamed batch has, with a few other events among them
chunk_heavy = st.lists(st.one_of(st.just(artifact()), st.just(artifact()), st.just(artifact()),
                                 st.sampled_from(ALL).map(status), st.just(history())),
                       max_size=30)


@given(st.sampled_from(ALL), chunk_heavy)
def test_a_batch_is_checked_as_its_events_one_by_one(state: TaskState,
                                                     batch: list[object]) -> None:
    # (a long batch's leading chunks are checked in C: the same answer)
    expected = _one_by_one(state, batch)
    try:
        got: TaskState | None = lifecycle.check_from(state, "t", batch)  # type: ignore[arg-type]
    except LifecycleError:
        got = None
    assert got is expected


@pytest.mark.parametrize("batch", [
    # an event among a long batch's chunks: the chunks after it are checked after it
    [status(S.COMPLETED), artifact(), artifact(), artifact(), artifact()],
    [artifact(), status(S.COMPLETED), artifact(), artifact(), artifact(), artifact()],
    [artifact(), artifact(), artifact(), artifact(), status(S.FAILED), artifact()],
])
def test_a_long_batch_with_a_chunk_after_its_end_is_refused(batch: list[object]) -> None:
    assert _one_by_one(S.WORKING, batch) is None
    with pytest.raises(LifecycleError):
        lifecycle.check_from(S.WORKING, "t", batch)  # type: ignore[arg-type]


def test_a_long_batch_of_chunks_then_its_end_leads_to_the_end() -> None:
    batch = [artifact() for _ in range(300)] + [status(S.COMPLETED)]
    assert lifecycle.check_from(S.WORKING, "t", batch) is S.COMPLETED  # type: ignore[arg-type]
    assert lifecycle.check_from(S.WORKING, "t", batch[:-1]) is S.WORKING  # type: ignore[arg-type]
