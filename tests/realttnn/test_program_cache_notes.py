"""On the real ttnn 0.81.1 (mock p150): a compile while a trace is live is recorded as a
`program_cache_miss` note under the call that compiled (from num_program_cache_entries), and
cached calls or calls with no live trace are not; with no kernel-binary buffer visible on the
mock device, `check` reports no TR014."""

from __future__ import annotations

import sys

from realttnn_helpers import describe, events, marks, ttrecord_run


def test_compile_while_a_trace_is_live_is_noted_under_its_call(tmp_path):
    proc, db = ttrecord_run(sys.executable, "compile_while_trace_live.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    assert "entries 3" in proc.stdout  # relu, gelu, exp
    m = marks("compile_while_trace_live.py")
    notes = events(db, "e.kind = 'note' AND e.name = 'program_cache_miss'")
    parents = {e["seq"]: e for e in events(db, "e.kind = 'op'")}
    assert [parents[n["parent"]]["cs_line"] for n in notes] == [m["first_gelu"]]
    assert notes[0]["args"] == '{"new_entries":1}'
    check = __import__("subprocess").run([sys.executable, "-m", "ttrecord", "check", str(db)],
                                         capture_output=True, text=True)  # fmt: skip
    assert "TR014" not in check.stdout, check.stdout
