"""The HTTP status of a refusal is the error's own ``http_status``; the SAM and
tutorial codecs send the v0.3 codes.

errors.py is the one table of codes and statuses: the auth layer answers with
what it says instead of numbers of its own.
"""

from __future__ import annotations

import pytest

from interlingua.core import errors
from interlingua.core.dialects.sam import SAMCodec
from interlingua.core.dialects.tutorial import TutorialCodec
from interlingua.core.dialects.v0_3 import V03Codec
from interlingua.core.errors import (
    A2AError,
    AuthenticationRequired,
    AuthorizationFailed,
    RateLimitExceeded,
    TaskNotFound,
)
from interlingua.server.auth import Forbidden, RateLimited, Unauthenticated
from interlingua.server.auth.runtime import refusal


@pytest.mark.parametrize(("exc", "status", "headers"), [
    (AuthenticationRequired(), 401, []),
    (Unauthenticated("no key", challenges=['Bearer realm="a2a"', "Basic"]), 401,
     [(b"www-authenticate", b'Bearer realm="a2a"'), (b"www-authenticate", b"Basic")]),
    (AuthorizationFailed(), 403, []),
    (Forbidden("no"), 403, []),
    (Forbidden("scope", challenge='Bearer error="insufficient_scope"'), 403,
     [(b"www-authenticate", b'Bearer error="insufficient_scope"')]),
    (RateLimitExceeded(), 429, []),
    (RateLimited("slow down", retry_after=3), 429, [(b"retry-after", b"3")]),
])
def test_refusals_answer_with_their_status_and_headers(
        exc: A2AError, status: int, headers: list[tuple[bytes, bytes]]) -> None:
    assert refusal(exc) == (status, headers)
    assert type(exc).http_status == status


def test_the_status_is_read_from_the_error() -> None:
    class Unavailable(AuthorizationFailed):
        http_status = 451

    class Slow(RateLimitExceeded):
        http_status = 503

    assert refusal(Unavailable()) == (451, [])
    assert refusal(Slow()) == (503, [])


def test_other_errors_are_no_refusals() -> None:
    assert refusal(TaskNotFound()) is None


ALL_ERRORS = sorted(
    (cls for cls in vars(errors).values()
     if isinstance(cls, type) and issubclass(cls, A2AError) and cls is not errors.RemoteError),
    key=lambda cls: cls.__name__)


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda cls: cls.__name__)
def test_sam_and_tutorial_send_the_v03_code(cls: type[A2AError]) -> None:
    expected = V03Codec().encode_error(cls())
    assert SAMCodec().encode_error(cls()) == expected
    assert TutorialCodec().encode_error(cls()) == expected
