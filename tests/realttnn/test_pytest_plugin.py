"""`pytest --ttrecord --ttrecord-backend ttnn`: the plugin records a user's tests in-process
against the real ttnn and fails the test whose session has an error-level finding."""

from __future__ import annotations

import shutil
import subprocess
import sys

from realttnn_helpers import describe, marks, rows, script, session


def test_plugin_fails_the_test_that_reads_inside_a_capture(tmp_path):
    shutil.copy(script("pytest_model_tests.py"), tmp_path / "test_model.py")
    m = marks("pytest_model_tests.py")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--ttrecord",
                           "--ttrecord-backend", "ttnn", "--ttrecord-dir", "sessions", "test_model.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, describe(proc)
    assert "1 failed, 1 passed" in proc.stdout, describe(proc)
    assert "FAILED test_model.py::test_read_in_capture - TR001" in proc.stdout, describe(proc)
    dbs = sorted(p.name for p in (tmp_path / "sessions").glob("*.db"))
    assert dbs == ["test_model.py_test_clean.db", "test_model.py_test_read_in_capture.db"], dbs
    clean, bad = (tmp_path / "sessions" / d for d in dbs)
    assert session(bad)["backend"] == "ttnn" and session(clean)["backend"] == "ttnn"
    assert rows(clean, "SELECT rule FROM findings") == []
    found = rows(bad, "SELECT rule, line, file FROM findings")
    assert [(f["rule"], f["line"]) for f in found] == [("TR001", m["read"])], found
    assert found[0]["file"].endswith("test_model.py"), found
    # the clean test's session has the real add with the real allocator's output address
    outs = rows(clean, "SELECT t.address FROM tensors t JOIN events e ON e.seq = t.seq "
                       "WHERE e.kind = 'op' AND t.role = 'out'")
    assert outs and all(o["address"] >= 1048704 for o in outs), outs
