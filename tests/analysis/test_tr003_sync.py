"""TR003: synchronize_device / event waits while a trace is being captured."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, rules_at


def _program(sync_inside: bool) -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    if not sync_inside:
        b.sync(line=15)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=11)
    if sync_inside:
        b.sync(line=15)
    b.end_trace(tid, line=21)
    b.execute(tid, line=30)
    b.sync(line=31)
    b.release(tid, line=32)
    return b


def test_sync_inside_capture_is_reported_at_its_line(analyze_both):
    findings = analyze_both(_program(sync_inside=True))
    assert rules_at(findings) == [("TR003", 15)]
    assert "synchronize_device" in findings[0].message


def test_syncs_before_capture_and_after_replay_are_not_reported(analyze_both):
    assert analyze_both(_program(sync_inside=False)) == []
