"""What the interop tests send, and how they check it came back intact."""

from __future__ import annotations

import base64
from typing import Any

from .harness import state_name

#: non-ASCII text (accents, a symbol, an emoji outside the BMP)
TEXT = "echo héllo wörld ✓ 🚀"
#: nested JSON: an object, since v0.3 data parts carry objects only
DATA: dict[str, Any] = {"n": 7, "ratio": 0.25, "flag": True, "none": None,
                        "nested": {"list": [1, "two", {"three": 3}]}, "text": "ünïcode"}
#: every byte value, so no encoding step can go unnoticed
FILE_BYTES = bytes(range(256))
FILE_NAME = "blob.bin"
FILE_TYPE = "application/octet-stream"
FILE_ARG = {"bytes": base64.b64encode(FILE_BYTES).decode(), "mediaType": FILE_TYPE,
            "name": FILE_NAME}

STREAM_CHUNKS = 3

#: the note on a cell whose SDK turns whole numbers of data parts into floats
DOUBLES_NOTE = ("Whole numbers in data parts are read back as doubles (`7` as `7.0`): the SDK "
                "holds data parts as `google.protobuf.Value`, as it documents.")


#: the note on a cell whose SDK has no file name in v0.3's proto shapes
NO_FILE_NAME_NOTE = ("The SDK's v0.3 HTTP+JSON types follow the v0.3.0 proto, whose `FilePart` "
                     "has no `name` (later v0.3 protos added it): a file part's name is dropped "
                     "on the way out and on the way in; its bytes and media type arrive intact.")


def check_echo_parts(parts: list[dict[str, Any]], file_name: str = FILE_NAME) -> None:
    """Normalized parts (a driver's answer) hold TEXT, DATA and the file, unchanged
    (the file named ``file_name``)."""
    assert len(parts) == 3, parts
    assert parts[0] == {"text": TEXT}
    assert parts[1] == {"data": DATA}, parts[1]
    f = parts[2]["file"]
    assert f["uri"] is None
    assert base64.b64decode(f["bytes"]) == FILE_BYTES
    assert f["mediaType"] == FILE_TYPE
    assert f["name"] == file_name


def has_doubles(value: Any) -> bool:
    """True when a whole number of DATA came back as a float (``7`` as ``7.0``)."""
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(has_doubles(v) for v in value.values())
    if isinstance(value, list):
        return any(has_doubles(v) for v in value)
    return False


def check_stream_events(events: list[dict[str, Any]], append_dropped: bool = False) -> str:
    """Normalized stream events of ``stream 3``: one task, the working status, three
    appended chunks in order, the completed status last. Returns the task id.

    ``append_dropped``: the peer is known to lose every chunk's ``append`` flag."""
    assert events, "no events"
    task_ids = {e["id"] if e["kind"] == "task" else e["taskId"] for e in events}
    assert len(task_ids) == 1, f"events of several tasks: {task_ids}"
    kinds = [e["kind"] for e in events]
    artifacts = [e for e in events if e["kind"] == "artifact"]
    assert [a["artifact"]["parts"] for a in artifacts] == [
        [{"text": f"chunk {i};"}] for i in range(STREAM_CHUNKS)]
    appends = [False] * 3 if append_dropped else [False, True, True]
    assert [a["append"] for a in artifacts] == appends
    assert [a["lastChunk"] for a in artifacts] == [False, False, True]
    assert len({a["artifact"]["artifactId"] for a in artifacts}) == 1
    assert artifacts[0]["artifact"]["name"] == "stream.txt"
    first_artifact = kinds.index("artifact")
    working = [e for e in events[:first_artifact] if e["kind"] == "status"
               and state_name(e["state"]) == "working"]
    assert working and working[-1]["message"] == [{"text": "streaming"}], events[:first_artifact]
    last = events[-1]
    assert last["kind"] == "status" and state_name(last["state"]) == "completed", last
    assert last["message"] == [{"text": "done"}]
    if "final" in last:
        assert last["final"] is True
    return str(task_ids.pop())


def scheme_kind(kind: str | None) -> str:
    """A security scheme's kind as any SDK names it -> apikey, http, oauth2, openidconnect, mtls."""
    k = "".join(c for c in (kind or "").lower() if c.isalpha())
    k = k.removesuffix("securityscheme")
    return {"httpauth": "http", "mutualtls": "mtls", "oauth": "oauth2"}.get(k, k)
