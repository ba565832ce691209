"""docs/check.md's side-by-side table of ttnn's trace allocation tracker and ttrecord is what
scripts/tracker_table.py measures: re-run here for three samples that show how the two differ
(the tracker is coarse: any allocation alive at a replay; ttrecord: overlap with the trace)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_docs_table_rows_match_fresh_runs():
    samples = ["alloc_after_capture", "alloc_after_capture_safe", "compile_after_capture"]
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "tracker_table.py"), "--check",
                        str(ROOT / "docs" / "check.md"), *samples],
                       capture_output=True, text=True, timeout=900)  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_safe_sample_is_where_they_disagree():
    text = (ROOT / "docs" / "check.md").read_text()
    assert ("| `alloc_after_capture_safe` | raises at execute_trace: 1 buffer(s) alive | nothing |"
            in text)  # fmt: skip
