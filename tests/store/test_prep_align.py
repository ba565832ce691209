"""The prep run is found by aligning op sequences (`store.prep`), not by walking back lines."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ttrecord.events import Kind
from ttrecord.store.prep import align_prep
from ttrecord.testing import SessionBuilder, tensor

MM, RELU, ADD = ("ttnn.matmul", "a"), ("ttnn.relu", "a"), ("ttnn.add", "a")
STEP = [MM, RELU, ADD]


def prep_of(captured, eager) -> list[int] | None:
    found = align_prep(captured, eager)
    return None if found is None else [i for i, _ in found.pairs]


def test_warm_up_right_before_the_capture():
    assert prep_of(STEP, STEP) == [0, 1, 2]


def test_the_copy_nearest_the_capture_is_the_prep_run():
    """An eager reference loop ran the same step: the last copy is the warm-up."""
    assert prep_of(STEP, STEP * 3) == [6, 7, 8]


def test_a_block_of_other_ops_between_warm_up_and_capture():
    copied_out = [("ttnn.to_memory_config", "b"), ("ttnn.clone", "b"), ("ttnn.sum", "b")]
    assert prep_of(STEP, STEP + copied_out) == [0, 1, 2]


def test_other_shapes_in_the_warm_up_still_align_by_name():
    """TR015's case: the prep run warmed other shapes; it is still the prep run."""
    warm = [("ttnn.matmul", "32"), ("ttnn.relu", "32"), ("ttnn.add", "32")]
    cap = [("ttnn.matmul", "64"), ("ttnn.relu", "64"), ("ttnn.add", "64")]
    found = align_prep(cap, warm)
    assert found is not None and found.pairs == [(0, 0), (1, 1), (2, 2)]


def test_an_op_only_in_the_warm_up_is_inside_the_prep_run():
    warm = [MM, ("ttnn.multiply", "a"), RELU, ADD]
    found = align_prep(STEP, warm)
    assert found is not None and (found.first, found.last) == (0, 3)
    assert [i for i, _ in found.pairs] == [0, 2, 3]


def test_an_op_only_in_the_capture_leaves_the_rest_aligned():
    cap = [MM, ("ttnn.multiply", "a"), RELU, ADD]
    assert prep_of(cap, STEP) == [0, 1, 2]


def test_the_matching_signature_wins_over_the_nearer_name():
    """Warm-ups of two sequence lengths, then the capture of the first: by signature."""
    p128 = [("ttnn.matmul", "128"), ("ttnn.softmax", "128")]
    p256 = [("ttnn.matmul", "256"), ("ttnn.softmax", "256")]
    assert prep_of(p128, p128 + p256) == [0, 1]


def test_no_warm_up_before_an_unrelated_block():
    """Weights prepared eagerly, then a capture of other ops: no prep run, whatever one op shares."""
    weights = [("ttnn.to_layout", "w"), ("ttnn.to_memory_config", "w"), ("ttnn.add", "w"),
               ("ttnn.typecast", "w"), ("ttnn.to_layout", "w")]  # fmt: skip
    cap = [("ttnn.matmul", "x"), ("ttnn.relu", "x"), ("ttnn.add", "x"), ("ttnn.softmax", "x")]
    assert align_prep(cap, weights) is None
    assert align_prep(cap, []) is None
    assert align_prep([], weights) is None


def test_a_scattered_match_is_no_prep_run():
    """Two of four captured ops, each found among many other ops: not a warm-up."""
    cap = [("ttnn.matmul", "x"), ("ttnn.relu", "x"), ("ttnn.gelu", "x"), ("ttnn.softmax", "x")]
    other = [("ttnn.zeros", str(i)) for i in range(6)]
    eager = [cap[0], *other, cap[1], *other]
    assert align_prep(cap, eager) is None


def test_a_long_capture_aligns_within_bounded_work():
    """1,000 ops captured, 1,000 other eager ops before the warm-up, 100 after it."""
    step = [(f"ttnn.op{i % 7}", str(i % 13)) for i in range(1000)]
    before = [(f"ttnn.eager{i % 5}", "e") for i in range(1000)]
    after = [("ttnn.clone", "c")] * 100
    found = align_prep(step, before + step + after)
    assert found is not None and (found.first, found.last) == (1000, 1999)
    assert len(found.pairs) == 1000


# -- through the writer: which events a closed session tags `prep` -----------------------------


def _matmul(b: SessionBuilder, x, w, out, line: int, shape=(32, 32)):
    return b._add(Kind.OP, "ttnn.matmul", line, inputs=(tensor(x, shape), tensor(w, shape)),
                  outputs=(tensor(out, shape),))  # fmt: skip


def _phases(b: SessionBuilder, tmp_path: Path) -> dict[int, str]:
    path = tmp_path / "s.db"
    b.write(path)
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT e.seq, e.phase, c.line FROM events e JOIN callsites c"
                            " ON c.id = e.callsite WHERE e.parent IS NULL AND e.kind IN"
                            " ('op', 'h2d', 'd2h') ORDER BY e.seq").fetchall()  # fmt: skip
    return {line: phase for _, phase, line in rows}


def _block(b: SessionBuilder, x, w, line0: int, free: bool = True):
    h = b.alloc(0x101000)
    _matmul(b, x, w, h, line0)
    y = b.alloc(0x101800)
    b.op("ttnn.relu", [h], [y], line=line0 + 1)
    if free:
        b.free(h)
    return y


def test_copied_warm_up_block_with_readback_free_and_new_input(tmp_path):
    """Warm-up at lines 10-11, capture of a copy at lines 30-31; between them the warm-up's
    output is read back and deallocated, an input is re-made and another op runs."""
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(0x100000), b.alloc(0x100800)
    _block(b, x, w, 5)  # an eager reference run long before: not the prep run
    b.d2h(x, line=7)
    y = _block(b, x, w, 10)
    b.d2h(y, line=12)
    b.op("ttnn.deallocate", [y], [], line=13)
    b.free(y)
    b.h2d(x, line=14, name="from_torch")
    b.op("ttnn.sum", [w], [b.alloc(0x102000)], line=15)  # a block of its own
    tid = b.begin_trace(line=20)
    _block(b, x, w, 30)
    b.end_trace(tid, line=32)
    phases = _phases(b, tmp_path)
    assert [phases[n] for n in (5, 6, 7)] == ["eager"] * 3
    assert [phases[n] for n in (10, 11, 12, 13, 14)] == ["prep"] * 5
    assert phases[15] == "eager"
    assert [phases[n] for n in (30, 31)] == ["capture"] * 2


def test_capture_without_warm_up_has_no_prep_run(tmp_path):
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(0x100000), b.alloc(0x100800)
    b.op("ttnn.to_layout", [w], [b.alloc(0x102000)], line=4)
    tid = b.begin_trace(line=20)
    _block(b, x, w, 30)
    b.end_trace(tid, line=32)
    assert "prep" not in _phases(b, tmp_path).values()


def test_each_capture_finds_its_own_warm_up(tmp_path):
    """Prefill per sequence length, then decode: each warm-up right before its capture."""
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(0x100000), b.alloc(0x100800)
    for line0, shape in ((10, (32, 32)), (40, (64, 32)), (70, (1, 32))):
        h = b.alloc(0x101000)
        _matmul(b, x, w, h, line0, shape)  # warm-up through a wrapper at its own line
        b.free(h)
        tid = b.begin_trace(line=line0 + 5)
        h = b.alloc(0x101000)
        _matmul(b, x, w, h, line0 + 10, shape)
        b.end_trace(tid, line=line0 + 15)
        b.execute(tid, line=line0 + 20)
    phases = _phases(b, tmp_path)
    assert [phases[n] for n in (10, 40, 70)] == ["prep"] * 3
    assert [phases[n] for n in (20, 50, 80)] == ["capture"] * 3


def test_the_prep_run_right_before_wins_over_an_earlier_compile_run_of_the_captured_path():
    """Compiled once with a branch taken, prepped without it, captured with it (samples/
    prep_differs.py): the prep run is the pass right before the capture, one op short."""
    with_branch = [("ttnn.add", "a"), ("ttnn.multiply", "a"), ("ttnn.relu", "a")]
    without = [("ttnn.add", "a"), ("ttnn.relu", "a")]
    assert prep_of(with_branch, with_branch + without) == [3, 4]


def test_a_lone_captured_op_in_a_block_before_the_capture_does_not_hide_the_warm_up():
    step = [("ttnn.matmul", "a"), ("ttnn.softmax", "a"), ("ttnn.relu", "a")]
    block = [("ttnn.clone", "b"), ("ttnn.relu", "a"), ("ttnn.sum", "b"), ("ttnn.clone", "b")]
    assert prep_of(step, step + block) == [0, 1, 2]
