"""Audit mode: each call of an audited function is treated as a would-be capture, and every
blocker inside it is reported in one eager run, with "in audit region NAME"."""

from ttrecord.events import Kind
from ttrecord.testing import SessionBuilder, host_tensor

from analysis_helpers import H, W, X, rules_at


def _eager_run_with_forward_audited() -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    for step in range(2):
        b.begin_region("model.forward", line=5)
        b.h2d(x, line=10)  # writes the input inside the region
        h = b.alloc(H)
        b.op("ttnn.multiply", [x, w], [h], line=11, args={"1": 1.0 / (step + 1)})
        b.d2h(h, line=12)  # debug readback
        b.sync(line=13)
        b._add(Kind.OP, "ttnn.to_layout", 14, inputs=(host_tensor(),), outputs=(host_tensor(),))
        b.free(h)
        b.end_region(line=5)
    b.d2h(x, line=20)  # outside the region: fine
    return b


def test_every_blocker_in_the_region_is_reported_in_one_run(analyze_both):
    findings = analyze_both(_eager_run_with_forward_audited())
    assert rules_at(findings) == [
        ("TR001", 12),
        ("TR002", 10),
        ("TR003", 13),
        ("TR007", 11),
        ("TR008", 14),
    ]
    for f in findings:
        assert "in audit region model.forward" in f.message
        assert f.evidence["region"] == "model.forward"
    readback = next(f for f in findings if f.rule == "TR001")
    assert readback.evidence["occurrences"] == 2  # both calls, one finding per line


def test_calls_outside_any_region_are_not_reported(analyze_both):
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    b.h2d(x, line=10)
    b.d2h(x, line=12)
    b.sync(line=13)
    assert analyze_both(b) == []
