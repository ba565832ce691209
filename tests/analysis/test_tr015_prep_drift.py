"""TR015: the capture runs another path than its prep run (aligned as `diff --prep` aligns)."""

from ttrecord.events import Kind, Phase
from ttrecord.testing import SessionBuilder, tensor

from analysis_helpers import H, W, X, Y, rules_at


def _add(b: SessionBuilder, x, w, out, line: int, shape=(32, 32), **fields):
    return b._add(Kind.OP, "ttnn.add", line, inputs=(tensor(x, shape), tensor(w, shape)),
                  outputs=(tensor(out, shape),), **fields)  # fmt: skip


def _session(b: SessionBuilder, prep_shape=(32, 32), capture_shape=(32, 32), extra_op=False,
             prep_extra=False, miss=False):  # fmt: skip
    """Prep run (tagged as the store tags it) then capture: add (line 10), relu (line 11),
    and in the capture optionally a multiply (line 12) between them."""
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    h = b.alloc(H)
    _add(b, x, w, h, 10, prep_shape, phase=Phase.PREP)
    if prep_extra:
        b.op("ttnn.multiply", [h], [b.alloc(H + 0x4000)], line=12, phase=Phase.PREP)
    y = b.alloc(Y)
    b.op("ttnn.relu", [h], [y], line=11, phase=Phase.PREP)
    b.free(h)
    b.free(y)
    tid = b.begin_trace(line=20)
    h = b.alloc(H)
    call = _add(b, x, w, h, 10, capture_shape)
    if miss:
        b._add(Kind.NOTE, "program_cache_miss", None, parent=call.seq, args={"new_entries": 1})
    if extra_op:
        b.op("ttnn.multiply", [h], [b.alloc(H + 0x8000)], line=12)
    b.op("ttnn.relu", [h], [b.alloc(Y + 0x8000)], line=11)
    b.end_trace(tid, line=21)
    b.execute(tid, line=30)
    b.release(tid, line=31)


def test_same_path_is_clean(analyze_both):
    b = SessionBuilder()
    _session(b)
    assert analyze_both(b) == []


def test_other_shape_is_reported_at_the_captured_call(analyze_both):
    b = SessionBuilder()
    _session(b, capture_shape=(64, 32))
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR015", 10)]
    f = findings[0]
    assert "differs from its prep run (model.py:10–11)" in f.message
    assert "input 0 shape [64, 32] (prep run: [32, 32])" in f.message
    assert f.events[1:] != []  # the prep run's call is related


def test_op_only_in_the_capture(analyze_both):
    b = SessionBuilder()
    _session(b, extra_op=True)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR015", 12)]
    assert "`ttnn.multiply` runs in the capture but not in the prep run" in findings[0].message


def test_op_only_in_the_prep_run(analyze_both):
    b = SessionBuilder()
    _session(b, prep_extra=True)
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR015", 12)]
    assert "ran in the prep run but not in the capture" in findings[0].message


def test_divergence_that_compiled_is_left_to_tr013(analyze_both):
    b = SessionBuilder()
    _session(b, capture_shape=(64, 32), miss=True)
    assert rules_at(analyze_both(b)) == [("TR013", 10)]


def test_moved_addresses_alone_are_not_a_divergence(analyze_both):
    """The capture's intermediates sit elsewhere than the prep run's (which are still alive)."""
    b = SessionBuilder()
    _session(b)  # the capture's relu writes Y + 0x8000, the prep run's wrote Y
    assert analyze_both(b) == []


# -- the prep run as the store finds it (by aligning op sequences), read back through a Session --


def _stored(b: SessionBuilder, tmp_path, name: str = "s.db"):
    from ttrecord.analysis import analyze
    from ttrecord.store.reader import Session

    with Session.open(b.write(tmp_path / name)) as s:
        return analyze(s)


def _block(b: SessionBuilder, x, w, line0: int, shape=(32, 32)):
    """add (line0), relu (line0 + 1): the step, written out at its own lines."""
    h = b.alloc(H)
    _add(b, x, w, h, line0, shape)
    y = b.alloc(Y)
    b.op("ttnn.relu", [h], [y], line=line0 + 1)
    b.free(h)
    return y


def _copied_block_session(capture_shape=(32, 32), between: bool = True) -> SessionBuilder:
    """Warm-up at lines 10-11; capture of a copy of those statements at lines 30-31; between
    them the warm-up's output is read back and deallocated and an input re-made."""
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    y = _block(b, x, w, 10)
    if between:
        b.d2h(y, line=12)
        b.op("ttnn.deallocate", [y], [], line=13)
        b.h2d(x, line=14, name="from_torch")
    b.free(y)
    tid = b.begin_trace(line=20)
    _block(b, x, w, 30, capture_shape)
    b.end_trace(tid, line=32)
    b.execute(tid, line=40)
    b.release(tid, line=41)
    return b


def test_copied_warm_up_block_is_the_prep_run(tmp_path):
    """The warm-up is a copy of the captured statements at other lines, with a readback, a
    deallocate and a re-made input before the capture: same path, no finding."""
    assert _stored(_copied_block_session(), tmp_path) == []


def test_copied_warm_up_block_that_warmed_another_shape(tmp_path):
    findings = _stored(_copied_block_session(capture_shape=(64, 32)), tmp_path)
    assert rules_at(findings) == [("TR015", 30)]
    assert "differs from its prep run (model.py:10–11)" in findings[0].message
    assert "input 0 shape [64, 32] (prep run: [32, 32])" in findings[0].message


def test_capture_without_warm_up_gets_no_prep_finding(tmp_path):
    """Nothing eager repeats the captured ops (weights made, then the capture): no prep run,
    no TR015 (whatever compiles in the capture is TR013's), and no crash."""
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    b.op("ttnn.to_layout", [w], [b.alloc(Y + 0x4000)], line=5)
    tid = b.begin_trace(line=20)
    _block(b, x, w, 30)
    b.end_trace(tid, line=32)
    b.execute(tid, line=40)
    b.release(tid, line=41)
    assert [f.rule for f in _stored(b, tmp_path)] == []


def test_each_capture_is_compared_with_its_own_warm_up(tmp_path):
    """Prefill per sequence length and decode, each warmed up by a wrapper at other lines right
    before its capture; only the decode capture runs another shape than its warm-up."""
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    cases = (((32, 32), (32, 32)), ((64, 32), (64, 32)), ((1, 32), (2, 32)))
    for k, (warm, captured) in enumerate(cases):
        line0 = 100 * (k + 1)
        b.free(_block(b, x, w, line0, warm))
        tid = b.begin_trace(line=line0 + 10)
        _block(b, x, w, line0 + 20, captured)
        b.end_trace(tid, line=line0 + 30)
        b.execute(tid, line=line0 + 40)
        b.release(tid, line=line0 + 50)
    findings = _stored(b, tmp_path)
    assert rules_at(findings) == [("TR015", 320)]
    assert "(model.py:300–301)" in findings[0].message
