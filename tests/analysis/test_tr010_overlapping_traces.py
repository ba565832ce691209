"""TR010: two live traces where one writes over an output the other keeps. Sharing memory is
an info note; reading a value after the other trace's replay overwrote it is the error."""

from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, Y, Z, rules_at


def _two_traces(release_a_first: bool, b_output: int, reads: str = "") -> SessionBuilder:
    """Trace A (its intermediate at H freed at capture end), trace B (output at `b_output`).
    `reads`: after B's replay at 40 and A's at 41, "host" reads B's output at 50, "op" uses
    it in an eager op at 51 whose result the host reads at 54 ("op_unused": nothing reads that
    result), "replay_b" replays B again at 52 and then reads it at 53."""
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
        if reads == "host":
            b.d2h(out_b, line=50)
        elif reads in ("op", "op_unused"):
            tmp = b.alloc(Z)
            b.op("ttnn.add", [out_b], [tmp], line=51)
            if reads == "op":
                b.d2h(tmp, line=54)  # the op's result is used
            b.free(tmp)
        elif reads == "replay_b":
            b.execute(tb, line=52)
            b.d2h(out_b, line=53)
        b.release(a, line=42)
    b.release(tb, line=43)
    return b


def test_second_trace_output_on_the_first_trace_intermediate_is_reported(analyze_both):
    findings = analyze_both(_two_traces(release_a_first=False, b_output=H))
    # THEN TR010 at B's end_trace_capture, the moment both traces are live: an info note,
    # since nothing read B's output after A's replay overwrote it
    assert rules_at(findings) == [("TR010", 31)]
    assert str(findings[0].severity) == "info"
    ev = findings[0].evidence
    assert ev["traces"] == [0, 1]
    assert ev["trace_0"]["range"] == ev["trace_1"]["range"] == "[0x101000, 0x101800)"


def test_first_trace_released_before_the_second_capture_is_not_reported(analyze_both):
    # (trace A, released unreplayed while B replays, is TR017's performance note, not TR010's)
    findings = analyze_both(_two_traces(release_a_first=True, b_output=H))
    assert [f.rule for f in findings if f.rule != "TR017"] == []


def test_disjoint_traces_are_not_reported(analyze_both):
    assert analyze_both(_two_traces(release_a_first=False, b_output=Z)) == []


def test_host_read_after_the_other_replay_overwrote_the_output_is_an_error(analyze_both):
    findings = analyze_both(_two_traces(release_a_first=False, b_output=H, reads="host"))
    # THEN one error at the read, naming the replay that overwrote it
    assert rules_at(findings) == [("TR010", 50)]
    assert str(findings[0].severity) == "error"
    assert findings[0].evidence["overwritten_by"]["at"] == "model.py:41"
    assert findings[0].evidence["output_of"] == 1


def test_op_reading_the_overwritten_output_is_an_error(analyze_both):
    findings = analyze_both(_two_traces(release_a_first=False, b_output=H, reads="op"))
    assert rules_at(findings) == [("TR010", 51)]
    assert str(findings[0].severity) == "error"
    # the value flow followed the op's result to its use, and the message names it
    assert findings[0].evidence["used"]["how"] == "host read"
    assert findings[0].evidence["used"]["through"] == 1
    assert "the program used it: host read by `to_torch` at model.py:54 through 1 op(s)" in findings[0].message


def test_op_reading_the_overwritten_output_whose_result_nobody_uses_is_info(analyze_both):
    """By consequence (`ctx.flow`): the op read trace A's bytes, but nothing used what it computed,
    so no value the program uses changed: the traces only share memory (info)."""
    findings = analyze_both(_two_traces(release_a_first=False, b_output=H, reads="op_unused"))
    assert rules_at(findings) == [("TR010", 31)]
    assert str(findings[0].severity) == "info"


def test_output_written_again_by_its_own_trace_before_the_read_is_a_note(analyze_both):
    # GIVEN A's replay overwrote B's output, but B replays again before its output is read
    findings = analyze_both(_two_traces(release_a_first=False, b_output=H, reads="replay_b"))
    # THEN only the info note at B's capture: no value read was corrupted
    assert [(f.rule, f.line, str(f.severity)) for f in findings] == [("TR010", 31, "info")]
