from __future__ import annotations

import pytest

from tests.mesh.helpers import namespace, need_broker


@pytest.fixture
def ns() -> str:
    need_broker()
    return namespace()
