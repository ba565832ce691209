"""docs/check.md's side-by-side table of ttnn's trace allocation tracker and ttrecord is what
scripts/tracker_table.py measures: re-run here for three samples that show how the two differ
(the tracker is coarse: any allocation alive at a replay; ttrecord: overlap with the trace)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
import pytest

pytestmark = pytest.mark.spawns

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


def _stopped_by():
    import importlib.util

    spec = importlib.util.spec_from_file_location("tracker_table", ROOT / "scripts" / "tracker_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.stopped_by


TT_FATAL_STDERR = """\
Traceback (most recent call last):
  File "samples/trace_region_too_small.py", line 47, in main
    ttnn.end_trace_capture(device, decode_trace, cq_id=0)
RuntimeError: TT_FATAL @ /project/tt_metal/distributed/mesh_trace.cpp:80: a <= b | c
info:
Creating trace buffers of size 36864B on MeshDevice 1, but only 32768B is allocated for trace region.
backtrace:
 --- ttrecord.emulator: no native backtrace (emulated device)
"""


def test_a_run_that_dies_is_named_by_its_exception_not_its_last_stderr_line():
    stopped_by = _stopped_by()
    # the exception line, its source path cut to the file, pipes escaped for the table
    assert stopped_by(TT_FATAL_STDERR) == "RuntimeError: TT_FATAL @ mesh_trace.cpp:80: a <= b \\| c"
    assert stopped_by(TT_FATAL_STDERR, width=30) == "RuntimeError: TT_FATAL @ mesh…"
    # the last of several tracebacks (an exception raised while handling another)
    chained = "Traceback (most recent call last):\n  x\nKeyError: 1\n\nDuring handling...\n\n" \
              "Traceback (most recent call last):\n  y\nValueError: expected 128 logits, got 96\n"
    assert stopped_by(chained) == "ValueError: expected 128 logits, got 96"
    assert stopped_by("killed\n") is None


def test_the_docs_table_names_the_exceptions_the_runs_stop_on():
    text = (ROOT / "docs" / "check.md").read_text()
    assert "the run stops:  ---" not in text
    assert "| `python_error` | nothing (the run stops: ValueError: expected 128 logits, got 96) |" in text
    assert "| `acknowledged_corruptible` | nothing | TR004 info |" in text
