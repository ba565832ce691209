"""Rule: --ttrecord-fail-on never reports findings without failing tests."""

from plugin_suite import run
import pytest

pytestmark = pytest.mark.slow


def test_fail_on_never_reports_but_passes(model_suite):
    # GIVEN the audited test (TR001 in an audit region) WHEN run with --ttrecord-fail-on never
    result = run(model_suite, "--ttrecord", "--ttrecord-fail-on", "never",
                 "test_model.py::test_audited_decode")  # fmt: skip
    # THEN it passes, and the summary still lists the finding and the session
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*= ttrecord =*",
        "1 test(s) recorded into *.ttrecord; 1 with findings",
        "  test_model.py::test_audited_decode: TR001 x1  (*test_model.py_test_audited_decode.db)",
    ])  # fmt: skip
