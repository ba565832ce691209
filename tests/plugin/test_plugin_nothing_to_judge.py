"""Rule: under --ttrecord, a test that recorded no ttnn call or captured no trace is not
counted as judged: the test report says why in one line and the summary counts them."""

from plugin_suite import run
import pytest

pytestmark = pytest.mark.spawns

TESTS = """
import torch
import ttnn


def test_no_ttnn():
    assert 1 + 1 == 2


def test_eager_only(device):
    x = ttnn.from_torch(torch.ones(32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    ttnn.to_torch(ttnn.relu(x))
"""


def test_tests_with_nothing_to_judge_are_said(model_suite):
    # GIVEN a test that never calls ttnn and one that runs ttnn eagerly, never capturing
    model_suite.makepyfile(test_empty=TESTS)
    # WHEN run with --ttrecord
    result = run(model_suite, "--ttrecord", "-rA", "test_empty.py")
    # THEN both pass (nothing failed) but neither is counted as judged
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "*0 test(s) recorded into*; 0 with findings",
        "*nothing to judge: 1 recorded no ttnn call; 1 captured no trace (eager only: only"
        " @pytest.mark.ttrecord(audit_region=...) can judge those)",
    ])  # fmt: skip
    # AND each test's report carries its own sentence
    out = result.stdout.str()
    assert "ttrecord: No trace was captured (an eager-only run)" in out
    assert "ttrecord: no ttnn call was recorded in this test" in out
