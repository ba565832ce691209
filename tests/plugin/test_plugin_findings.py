"""Rule: under --ttrecord a test with an error-level hazard fails and its report names the
finding at its file:line; a clean test passes; every test that used ttnn leaves a session."""

import sqlite3

from plugin_suite import line_of, run
import pytest

pytestmark = pytest.mark.slow


def test_hazard_fails_with_file_line_and_clean_test_passes(model_suite):
    # GIVEN a suite where one test reads back inside a capture (and swallows the TT_FATAL)
    # WHEN run with --ttrecord into a chosen folder
    result = run(model_suite, "--ttrecord", "--ttrecord-dir", "rec",
                 "test_model.py::test_clean_trace", "test_model.py::test_readback_in_capture",
                 "test_model.py::test_without_ttnn")  # fmt: skip
    # THEN the readback test fails on its finding, named at the line of the readback
    result.assert_outcomes(passed=2, failed=1)
    line = line_of("LINE_READBACK")
    result.stdout.fnmatch_lines([
        "ttrecord: 1 finding(s) in rec/test_model.py_test_readback_in_capture.db (fail-on: error)",
        f"TR001 error test_model.py:{line} in test_readback_in_capture: Readback inside trace capture",
        f"FAILED test_model.py::test_readback_in_capture - TR001 at test_model.py:{line}: *",
    ])  # fmt: skip
    # AND the tests that used ttnn have their sessions, with the finding stored in them
    rec = model_suite.path / "rec"
    assert sorted(p.name for p in rec.glob("*.db")) == [
        "test_model.py_test_clean_trace.db", "test_model.py_test_readback_in_capture.db"]  # fmt: skip
    rows = sqlite3.connect(rec / "test_model.py_test_readback_in_capture.db").execute(
        "SELECT rule, line FROM findings").fetchall()  # fmt: skip
    assert rows == [("TR001", line)]
    clean = sqlite3.connect(rec / "test_model.py_test_clean_trace.db")
    assert clean.execute("SELECT count(*) FROM findings").fetchone() == (0,)
    assert clean.execute("SELECT count(*) FROM events WHERE kind = 'trace_execute'").fetchone() == (1,)
    result.stdout.fnmatch_lines(["*= ttrecord =*", "2 test(s) recorded into *rec; 1 with findings"])
