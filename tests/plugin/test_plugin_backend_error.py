"""Rule: a backend that cannot be loaded stops the run with one usage line, before any test."""

import importlib.util

import pytest

from plugin_suite import QUIET

pytestmark = pytest.mark.spawns


@pytest.mark.skipif(importlib.util.find_spec("ttnn") is not None, reason="real ttnn is installed")
def test_missing_ttnn_backend_is_a_usage_error(pytester):
    # GIVEN a test suite and no real ttnn installed
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    # WHEN pytest is asked to record with the real ttnn
    result = pytester.runpytest_subprocess(*QUIET, "--ttrecord",
                                           "--ttrecord-backend", "ttnn")  # fmt: skip
    # THEN it stops with pytest's usage-error code and one line saying why
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.stderr.lines if line] == [
        "ERROR: --ttrecord-backend ttnn: cannot import ttnn (No module named 'ttnn')"
    ]
