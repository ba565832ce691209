"""The real ttnn 0.81.1's trace allocation tracker opt-outs are recorded like the emulator's:
`acknowledge_corruptible` as a call on the tensor's buffer, `corruptible_allocation_scope` as
its call plus begin/end notes around the allocation it covers; with
TT_METAL_TRACE_ALLOC_TRACKING=1 the real tracker accepts the program recorded as it does plain."""

from __future__ import annotations

import sys

from realttnn_helpers import describe, events, marks, run_script, tensors, ttrecord_run

TRACKING = {"TT_METAL_TRACE_ALLOC_TRACKING": "1"}


def test_opt_outs_are_recorded_and_the_tracker_accepts_them(tmp_path):
    plain = run_script(sys.executable, "tracker_opt_outs.py", tmp_path, env=TRACKING)
    assert plain.returncode == 0 and "tracked 0" in plain.stdout, describe(plain)
    proc, db = ttrecord_run(sys.executable, "tracker_opt_outs.py", tmp_path, env=TRACKING)
    assert proc.returncode == 0 and "tracked 0" in proc.stdout, describe(proc)
    m = marks("tracker_opt_outs.py")
    (ack,) = events(db, "e.name LIKE '%acknowledge_corruptible'")
    assert ack["kind"] == "op" and ack["cs_line"] == m["acknowledge"]
    acked_call, scoped_call = events(db, "e.kind = 'h2d'")  # the two `ttnn.Tensor(..., dev)`
    (out,) = tensors(db, acked_call["seq"], "out")
    (arg,) = tensors(db, ack["seq"], "in")
    assert arg["buffer"] is not None and arg["buffer"] == out["buffer"]
    notes = events(db, "e.kind = 'note' AND e.name LIKE 'corruptible_scope_%'")
    assert [n["name"] for n in notes] == ["corruptible_scope_begin", "corruptible_scope_end"]
    assert all(n["cs_line"] == m["scope"] for n in notes)
    allocs = events(db, "e.kind = 'alloc' AND e.seq > ? AND e.seq < ?", (notes[0]["seq"], notes[1]["seq"]))
    (scoped,) = tensors(db, scoped_call["seq"], "out")
    assert [a["buffer"] for a in allocs] == [scoped["buffer"]]
