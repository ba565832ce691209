"""TR007: a scalar argument of a captured op that differed between eager calls at that line."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, X, rules_at


def _schedule(values: list[float], captured: float) -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    for v in values:  # eager steps
        out = b.alloc(H)
        b.op("ttnn.multiply", [x], [out], line=21, args={"1": v})
        b.d2h(out, line=30)
        b.free(out)
    tid = b.begin_trace(line=40)
    out = b.alloc(H)
    b.op("ttnn.multiply", [x], [out], line=21, args={"1": captured})
    b.end_trace(tid, line=41)
    b.execute(tid, line=42)
    b.release(tid, line=43)
    return b


def test_value_that_changes_per_step_is_reported_with_all_values(analyze_both):
    findings = analyze_both(_schedule([1.0, 0.5], captured=0.25))
    assert rules_at(findings) == [("TR007", 21)]
    ev = findings[0].evidence
    assert ev["captured"] == {"1": 0.25}
    assert ev["values"]["1"] == [1.0, 0.5, 0.25]
    assert "positional argument 1 = 0.25" in findings[0].message


def test_constant_value_is_not_reported(analyze_both):
    assert analyze_both(_schedule([0.5, 0.5], captured=0.5)) == []
