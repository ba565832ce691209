"""pytester for the plugin tests, and a folder holding the sample ttnn test suite."""

from __future__ import annotations

import pytest

from plugin_suite import CONFTEST, MODEL_TESTS


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")


@pytest.fixture
def model_suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester folder with test_model.py and its conftest.py (from plugin_suite)."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_model=MODEL_TESTS)
    return pytester
