"""Rule: @pytest.mark.ttrecord(audit_region=...) audits that function in that test only."""

from plugin_suite import line_of, run
import pytest

pytestmark = pytest.mark.spawns


def test_audit_region_applies_to_the_marked_test_only(model_suite):
    # GIVEN two tests running the same eager decode_step (a readback after a matmul), one of
    # them marked to audit decode_step as a would-be capture region
    # WHEN run with --ttrecord (the unmarked test runs second, after the function was wrapped)
    result = run(model_suite, "--ttrecord", "-p", "no:randomly",
                 "test_model.py::test_audited_decode", "test_model.py::test_unaudited_decode")  # fmt: skip
    # THEN only the marked test fails, on TR001 at the readback inside decode_step
    result.assert_outcomes(passed=1, failed=1)
    readback = line_of("return ttnn.to_torch(h)")
    result.stdout.fnmatch_lines([
        f"TR001 error test_model.py:{readback} in decode_step: Readback inside trace capture",
        "*in audit region decode_step*",
        "FAILED test_model.py::test_audited_decode - TR001*",
    ])  # fmt: skip
    result.stdout.no_fnmatch_line("FAILED test_model.py::test_unaudited_decode*")
