"""How many examples the property and fuzz tests try.

Each test names the count it is written for (``examples(150)``). The everyday run,
scripts/test and CI included, tries a third of it (at least 30): those modules were a
seventh of the suite's time on two cores. The property tests draw new examples each run,
so runs together reach further than one; the fuzz suites try a fixed set. The
``thorough`` profile tries every one: ``pytest --hypothesis-profile=thorough tests/dialects``.
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["EVERYDAY", "THOROUGH", "examples"]

#: the profile under which each test tries the full count it names
THOROUGH = "thorough"
#: the profile of every other run
EVERYDAY = "everyday"
# No deadline per example, in either: these tests check what the code does, not how
# fast, and the full run keeps two workers per core busy beside the servers and
# peers other tests start, where an example can wait past Hypothesis's 200 ms for
# the CPU. (Loaded before the test modules make their settings, which inherit it;
# --hypothesis-profile loads the thorough one later.)
settings.register_profile(EVERYDAY, deadline=None)
settings.register_profile(THOROUGH, deadline=None)
settings.load_profile(EVERYDAY)

_SHARE = 3  # the everyday run tries one example in this many
_FLOOR = 30


def examples(count: int) -> int:
    """``count`` under the thorough profile; a third of it, at least 30, otherwise."""
    if settings.get_current_profile_name() == THOROUGH:
        return count
    return min(count, max(_FLOOR, count // _SHARE))
