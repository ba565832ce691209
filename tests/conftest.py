"""Fixtures every test folder shares."""

from __future__ import annotations

import pytest

from tests.recorded_samples import SampleCache, shared_folder
from tests.spawn_guard import (  # noqa: F401  (hooks: a test that starts a process is marked so)
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_makereport,
    pytest_runtest_protocol,
)


@pytest.fixture(scope="session")
def sample_cache(tmp_path_factory: pytest.TempPathFactory) -> SampleCache:
    """Samples recorded once per test run, shared by all xdist workers (tests/recorded_samples.py)."""
    return SampleCache(shared_folder(tmp_path_factory.getbasetemp()))
