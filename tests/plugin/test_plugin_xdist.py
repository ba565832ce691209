"""Rule: with pytest-xdist each worker records its own tests and the controller sums them up."""

from plugin_suite import run
import pytest

pytestmark = pytest.mark.slow


def test_workers_write_their_own_sessions(model_suite):
    # GIVEN the suite WHEN run with --ttrecord on two xdist workers
    result = run(model_suite, "--ttrecord", "-n", "2", "test_model.py::test_clean_trace",
                 "test_model.py::test_readback_in_capture", "test_model.py::test_audited_decode")  # fmt: skip
    # THEN the hazards fail their tests as in one process
    result.assert_outcomes(passed=1, failed=2)
    # AND every test's session is in the folder, and the controller's summary lists them
    sessions = sorted(p.name for p in (model_suite.path / ".ttrecord").glob("*.db"))
    assert sessions == ["test_model.py_test_audited_decode.db", "test_model.py_test_clean_trace.db",
                        "test_model.py_test_readback_in_capture.db"]  # fmt: skip
    assert not list((model_suite.path / ".ttrecord").glob(".pytest-*.log"))
    result.stdout.fnmatch_lines(["*= ttrecord =*", "3 test(s) recorded into *; 2 with findings"])
    # AND the short summary keeps each failure's reason, as without xdist
    # (cut to the terminal's width by pytest; without the fix it was the bare node id)
    result.stdout.fnmatch_lines(["FAILED test_model.py::test_readback_in_capture - TR001 at"
                                 " test_model.py:33*"])  # fmt: skip
