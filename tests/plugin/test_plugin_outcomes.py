"""Rule: the plugin leaves pytest's own outcomes alone: a skipped test leaves no session, an
xfailed test stays xfailed and keeps its session, a bad marker argument fails only its test."""

from plugin_suite import run
import pytest

pytestmark = pytest.mark.spawns

OUTCOME_TESTS = """
import pytest
import torch
import ttnn


def _readback_in_capture(device):
    x = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=device)
    tid = ttnn.begin_trace_capture(device, cq_id=0)
    ttnn.to_torch(ttnn.relu(x))


@pytest.mark.xfail(reason="known readback", strict=True)
def test_known_bad(device):
    _readback_in_capture(device)


@pytest.mark.skip(reason="not today")
def test_skipped(device):
    _readback_in_capture(device)


@pytest.mark.ttrecord(fail_on="sometimes")
def test_bad_marker(device):
    pass
"""


def test_skip_xfail_and_bad_marker(model_suite):
    # GIVEN an xfailed hazard, a skipped one, and a marker with an unknown fail_on
    model_suite.makepyfile(test_outcomes=OUTCOME_TESTS)
    # WHEN run with --ttrecord
    result = run(model_suite, "--ttrecord", "test_outcomes.py")
    # THEN the outcomes are pytest's own, and the bad marker fails its own test with one line
    result.assert_outcomes(xfailed=1, skipped=1, errors=1)
    result.stdout.fnmatch_lines(["*ttrecord marker: fail_on='sometimes' is not one of error, warning, info, never*"])
    # AND only the xfailed test that ran left a session
    sessions = sorted(p.name for p in (model_suite.path / ".ttrecord").glob("*.db"))
    assert sessions == ["test_outcomes.py_test_known_bad.db"]
