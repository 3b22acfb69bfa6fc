"""The property and fuzz tests' settings (tests/hypothesis_budget.py)."""

from __future__ import annotations

from hypothesis import settings

from .hypothesis_budget import EVERYDAY, THOROUGH, examples


def test_examples_have_no_deadline_in_either_profile() -> None:
    assert settings.get_current_profile_name() in (EVERYDAY, THOROUGH)
    # a test's own settings, made at import, inherit the profile's
    assert settings(max_examples=examples(150)).deadline is None
    assert settings.get_profile(EVERYDAY).deadline is None
    assert settings.get_profile(THOROUGH).deadline is None


def test_the_everyday_run_tries_a_third_of_the_examples_at_least_30() -> None:
    if settings.get_current_profile_name() == EVERYDAY:
        assert (examples(90), examples(30), examples(20), examples(600)) == (30, 30, 20, 200)
    else:
        assert examples(90) == 90
