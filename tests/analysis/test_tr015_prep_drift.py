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
