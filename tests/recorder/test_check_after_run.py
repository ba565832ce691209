"""`ttrecord run --check` records, then checks the session: the exit status is the program's
when it failed, otherwise the check's (1 when an error-level hazard was found)."""

from __future__ import annotations

from tests.recorder.conftest import SAMPLES, record
import pytest

pytestmark = pytest.mark.spawns


def test_check_flag_reports_the_hazard_and_fails(tmp_path):
    """GIVEN a program that runs fine but allocates over trace memory WHEN recorded with
    --check THEN the check's report names TR004 and ttrecord exits 1, with findings stored."""
    rec = record(SAMPLES / "alloc_after_capture.py", tmp_path, "--check")
    assert rec.proc.returncode == 1, rec.proc.stderr[-2000:]
    assert "TR004" in rec.proc.stdout
    assert rec.session()["status"] == "ok"
    assert [r["rule"] for r in rec.rows("SELECT rule FROM findings")] == ["TR004"]
