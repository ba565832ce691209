"""TR013: a call inside a capture that grew the program cache (an incomplete warm-up)."""

from ttrecord.events import Kind, Phase
from ttrecord.testing import SessionBuilder, tensor

from analysis_helpers import H, W, X, Y, rules_at


def _op(b: SessionBuilder, name: str, x, w, out, line: int, shape=(32, 32), **fields):
    return b._add(Kind.OP, name, line, inputs=(tensor(x, shape), tensor(w, shape)),
                  outputs=(tensor(out, shape),), **fields)  # fmt: skip


def _miss(b: SessionBuilder, call) -> None:
    """What the recorder writes under a call during which the program cache grew."""
    b._add(Kind.NOTE, "program_cache_miss", None, parent=call.seq, args={"new_entries": 1})


def _run(b: SessionBuilder, warm_shape=(32, 32), capture_shape=(64, 32), miss=True,
         warm=True, second_miss=False):  # fmt: skip
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    if warm:
        h = b.alloc(H)
        _op(b, "ttnn.add", x, w, h, line=10, shape=warm_shape, phase=Phase.PREP)  # as stored
        y = b.alloc(Y)
        b.op("ttnn.relu", [h], [y], line=11, phase=Phase.PREP)
        b.free(h)
        b.free(y)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    call = _op(b, "ttnn.add", x, w, h, line=10, shape=capture_shape)
    if miss:
        _miss(b, call)
    y = b.alloc(Y)
    relu = b.op("ttnn.relu", [h], [y], line=11)
    if second_miss:
        _miss(b, relu)
    b.end_trace(tid, line=21)
    b.execute(tid, line=30)
    b.release(tid, line=31)
    return tid


def test_capture_with_another_shape_than_the_warm_up_names_the_field_and_the_warm_up(analyze_both):
    b = SessionBuilder()
    _run(b)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR013", 10)]
    f = findings[0]
    assert "`ttnn.add` compiled inside the capture of trace 0" in f.message
    assert "warm-up call at model.py:10" in f.message
    assert "input 0 shape [64, 32] (warm-up: [32, 32])" in f.message
    assert f.evidence["warm_up"] == "model.py:10"


def test_op_never_warmed_up(analyze_both):
    b = SessionBuilder()
    _run(b, warm=False)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR013", 10)]
    assert "No call of ttnn.add at this line (nor in the prep run) ran before the capture" in findings[0].message


def test_same_key_as_the_warm_up_says_the_cache_was_emptied(analyze_both):
    b = SessionBuilder()
    _run(b, capture_shape=(32, 32))
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR013", 10)]
    assert "program cache was emptied since" in findings[0].message


def test_no_growth_no_finding(analyze_both):
    b = SessionBuilder()
    _run(b, capture_shape=(32, 32), miss=False)
    assert analyze_both(b) == []


def test_several_compiles_in_one_capture_are_one_finding(analyze_both):
    b = SessionBuilder()
    _run(b, second_miss=True)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR013", 10)]
    assert "Also compiled in this capture: ttnn.relu at model.py:11." in findings[0].message


def test_growth_after_the_capture_is_not_tr013(analyze_both):
    b = SessionBuilder()
    _run(b, capture_shape=(32, 32), miss=False)
    x = b.alloc(X + 0x10000)
    call = b.op("ttnn.gelu", [x], [b.alloc(X + 0x20000)], line=40)
    _miss(b, call)
    assert "TR013" not in {f.rule for f in analyze_both(b)}


def test_warm_up_written_at_other_lines_is_named_from_the_prep_run(analyze_both):
    """The warm-up is a copy of the captured block at lines 40-41 (its prep run, as the store
    tags it): no call at the captured line ran before, so the prep run's call is the warm-up."""
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    h = b.alloc(H)
    _op(b, "ttnn.add", x, w, h, line=40, phase=Phase.PREP)
    y = b.alloc(Y)
    b.op("ttnn.relu", [h], [y], line=41, phase=Phase.PREP)
    b.free(h)
    b.free(y)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    _miss(b, _op(b, "ttnn.add", x, w, h, line=10, shape=(64, 32)))
    b.op("ttnn.relu", [h], [b.alloc(Y)], line=11)
    b.end_trace(tid, line=21)
    b.execute(tid, line=30)
    b.release(tid, line=31)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR013", 10)]
    assert "warm-up call at model.py:40" in findings[0].message
    assert "input 0 shape [64, 32] (warm-up: [32, 32])" in findings[0].message
