from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import PKI, Issuer


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return PKI.make(Path(tmp_path_factory.mktemp("pki")))


@pytest.fixture(scope="session")
def issuer() -> Issuer:
    return Issuer()
