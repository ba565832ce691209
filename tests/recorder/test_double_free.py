"""Rule: a tensor deallocated twice (`deallocate(force=True)` again, or `ttnn.deallocate` after
it) frees its buffer once; the later calls record no buffer, and every reader copes."""

from __future__ import annotations

from tests.recorder.conftest import PROLOGUE, record, run_ttrecord
import pytest

pytestmark = pytest.mark.spawns


def test_second_deallocate_records_no_phantom_buffer(write_script, tmp_path):
    # GIVEN a tensor deallocated with force=True twice, then with ttnn.deallocate
    script = write_script("double_free.py", PROLOGUE + (
        "t = tensor()\n"
        "t.deallocate(force=True)\n"
        "t.deallocate(force=True)\n"
        "ttnn.deallocate(t)\n"
        "ttnn.close_device(device)\n"
    ))  # fmt: skip
    rec = record(script, tmp_path)
    assert rec.proc.returncode == 0, rec.proc.stderr
    # THEN one buffer, on the device, allocated and freed once
    rows = rec.rows("SELECT device, alloc_seq, free_seq FROM buffers")
    assert len(rows) == 1 and rows[0]["device"] is not None and rows[0]["free_seq"] is not None
    assert rec.rows("SELECT count(*) AS n FROM events WHERE kind = 'free'")[0]["n"] == 1
    # AND the readers that sort buffers by device do not crash on it
    proc = run_ttrecord(["export", "visualizer", str(rec.path), "-o", str(tmp_path / "vis")],
                        cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "1 buffers" in proc.stdout
