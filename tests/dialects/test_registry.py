"""The codec registry: every codec under its name, each declaring its traits.

The server, the bindings and the client ask these traits instead of comparing
dialect names, so each must name something the registry has.
"""

from __future__ import annotations

import pytest

from interlingua.core import errors
from interlingua.core.dialects import SPOKEN, TRAITS, all_codecs, answering, get_codec, versions
from interlingua.core.dialects.v0_3_protojson import V03ProtoJSONCodec

NAMES = sorted(all_codecs())


def test_the_registry_holds_every_codec_the_protojson_one_included() -> None:
    assert set(NAMES) == {"1.1", "1.0", "0.3", "0.1", "sam", "tutorial", "0.3-pj"}
    assert isinstance(get_codec("0.3-pj"), V03ProtoJSONCodec)
    assert set(SPOKEN) <= set(NAMES)
    with pytest.raises(ValueError, match="unknown dialect 'nope'"):
        get_codec("nope")


@pytest.mark.parametrize("name", NAMES)
def test_each_codec_declares_traits_the_registry_can_resolve(name: str) -> None:
    codec = get_codec(name)
    assert codec.name == name
    # what a task made through it is recorded as, and whose methods it borrows
    assert codec.dialect in all_codecs() and codec.family in all_codecs()
    assert get_codec(codec.dialect).dialect == codec.dialect
    assert codec.versions and codec.versions <= set(versions())
    assert codec.push_mode in ("event", "task")
    for other in codec.nearest:
        assert other in SPOKEN and other != codec.dialect
    if codec.protojson is not None:
        rendering = get_codec(codec.protojson)
        assert rendering.dialect == codec.dialect and rendering.grpc_service is not None


def test_the_versions_are_every_codecs_newest_first() -> None:
    assert versions() == ("1.1", "1.0", "0.3", "0.2", "0.1")


def test_the_protojson_codec_is_v03_to_everything_but_its_wire() -> None:
    pj, v03 = get_codec("0.3-pj"), get_codec("0.3")
    assert (pj.dialect, pj.family, pj.versions) == ("0.3", "0.3", v03.versions)
    assert get_codec(v03.protojson or "") is pj


def test_a_variants_task_polled_with_its_familys_method_is_answered_in_the_variant() -> None:
    codec = answering("tasks/get", "sam", "0.3")
    assert "tasks/get" in codec.methods  # read as v0.3 reads it ...
    assert codec.name == "sam"  # ... answered in SAM
    sam = get_codec("sam")
    assert {t: getattr(codec, t) for t in TRAITS} == {t: getattr(sam, t) for t in TRAITS}
    # a v1.0 task polled with a v0.x method: v0.3 answers
    assert answering("tasks/get", "1.0", "0.3") is get_codec("0.3")
    assert answering("message/send", "0.3", "0.3") is get_codec("0.3")


def test_error_codes_follow_the_nearest_class_a_table_names() -> None:
    v01, v03, v1 = get_codec("0.1"), get_codec("0.3"), get_codec("1.0")
    assert v01.code_of(errors.InvalidTaskState()) == -32009
    assert v03.code_of(errors.InvalidTaskState()) == errors.UnsupportedOperation.code
    assert v01.code_of(errors.UnsupportedOperation()) == errors.UnsupportedOperation.code

    class Custom(errors.AuthenticationRequired):
        code = -31999

    # a subclass keeps its base's v0.1 code, and its own elsewhere
    assert (v01.code_of(Custom()), v1.code_of(Custom())) == (-32007, -31999)
    assert v1.code_of(errors.RemoteError(-32042, "odd")) == -32042


def test_a_codec_knows_the_tasks_made_in_its_dialect() -> None:
    protojson = get_codec("0.3-pj")
    assert protojson.recorded("0.3")  # recorded as the dialect it renders
    assert not protojson.recorded("0.3-pj")
    assert get_codec("sam").recorded("sam") and not get_codec("sam").recorded("1.0")
