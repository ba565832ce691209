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


def test_recorded_values_differ_so_the_finding_is_an_error(analyze_both):
    """Severity follows proof: eager calls at the line passed another value than the replays use."""
    findings = analyze_both(_schedule([1.0, 0.5], captured=0.25))
    assert [str(f.severity) for f in findings] == ["error"]


def test_one_finding_per_call_site_however_many_captures(analyze_both):
    """GIVEN a loop that captures one trace per step with the step number baked in
    THEN one finding at the line, counting the captures, first and last trace."""
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    for step in range(30):
        out = b.alloc(H)
        if step % 10 == 9:
            tid = b.begin_trace(line=40)
            b.op("ttnn.add", [x], [out], line=21, args={"step": step})
            b.end_trace(tid, line=41)
            b.execute(tid, line=42)
            b.release(tid, line=43)
        else:
            b.op("ttnn.add", [x], [out], line=21, args={"step": step})
            b.d2h(out, line=30)
        b.free(out)
    # the recaptures at one call path are TR018's performance note; TR007 is what is tested
    findings = [f for f in analyze_both(b) if f.rule != "TR018"]
    assert rules_at(findings) == [("TR007", 21)]
    occ = findings[0].evidence["occurrences"]
    assert occ["count"] == 3
    assert (occ["first"]["trace"], occ["last"]["trace"]) == (0, 2)
    assert "captured into 3 traces" in findings[0].message
