"""TR010: two live traces where one writes over an output the other keeps."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, Y, Z, rules_at


def _two_traces(release_a_first: bool, b_output: int) -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    a = b.begin_trace(line=20)
    hidden = b.alloc(H)
    b.op("ttnn.add", [x, w], [hidden], line=10)
    out_a = b.alloc(Y)
    b.op("ttnn.multiply", [hidden], [out_a], line=11)
    b.free(hidden)  # A's intermediate, freed when capture A ends, still written by A's replays
    b.end_trace(a, line=21)
    if release_a_first:
        b.release(a, line=22)
    tb = b.begin_trace(line=30)
    out_b = b.alloc(b_output)
    b.op("ttnn.add", [x], [out_b], line=12)
    b.end_trace(tb, line=31)
    b.execute(tb, line=40)
    if not release_a_first:
        b.execute(a, line=41)
        b.release(a, line=42)
    b.release(tb, line=43)
    return b


def test_second_trace_output_on_the_first_trace_intermediate_is_reported(analyze_both):
    findings = analyze_both(_two_traces(release_a_first=False, b_output=H))
    # THEN TR010 at B's end_trace_capture, the moment both traces are live
    assert rules_at(findings) == [("TR010", 31)]
    ev = findings[0].evidence
    assert ev["traces"] == [0, 1]
    assert ev["trace_0"]["range"] == ev["trace_1"]["range"] == "[0x101000, 0x101800)"


def test_first_trace_released_before_the_second_capture_is_not_reported(analyze_both):
    assert analyze_both(_two_traces(release_a_first=True, b_output=H)) == []


def test_disjoint_traces_are_not_reported(analyze_both):
    assert analyze_both(_two_traces(release_a_first=False, b_output=Z)) == []
