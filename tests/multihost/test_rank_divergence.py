"""TR019 on hand-built captures: which ranks diverge, where, and how it is said."""

from __future__ import annotations

from pathlib import Path

from ttrecord.analysis.drift.model import CapturedOp, Tensor
from ttrecord.analysis.rank_divergence import RankCaptures, detect, is_collective
from ttrecord.findings import Finding, Severity
from ttrecord.launch import Launch
from ttrecord.report.ranks import label_finding
from ttrecord.store.ranks import RankSession

FILE = "/src/model.py"


def tensor(shape: str, address: int = 0x1000) -> Tensor:
    return Tensor("device", shape, "BFLOAT16", "TILE", "interleaved", "DRAM", address, 2048, 0)


def op(name: str, line: int, shape: str = "[32,64]", address: int = 0x1000) -> CapturedOp:
    return CapturedOp(0, 0, name, FILE, line, "step", (tensor(shape, address),), (tensor(shape, address + 0x800),))


def rank(n: int, *captures: list[CapturedOp]) -> RankCaptures:
    return RankCaptures(f"rank {n} (h{n})", Path(f"r{n}.db"), [list(c) for c in captures],
                        [(FILE, 10 + k, "main") for k in range(len(captures))])


STEP = [op("matmul", 20), op("all_gather", 21), op("softmax", 22)]


def test_identical_ranks_give_nothing_even_at_other_addresses():
    moved = [op("matmul", 20, address=0x9000), op("all_gather", 21, address=0x9000), op("softmax", 22, address=0x9000)]
    assert detect([rank(0, STEP), rank(1, moved), rank(2, STEP)]) == []
    assert detect([rank(0, STEP)]) == []


def test_another_shape_names_the_op_on_both_ranks():
    other = [op("matmul", 20, "[64,64]"), op("all_gather", 21), op("softmax", 22)]
    [f] = detect([rank(0, STEP), rank(1, other)])
    assert (f.rule, f.severity, f.line) == ("TR019", Severity.ERROR, 20)
    ev = f.evidence
    assert ev["kind"] == "other_tensors" and ev["op_index"] == 0
    assert ev["reference_op"]["inputs"] == [[32, 64]] and ev["diverging_op"]["inputs"] == [[64, 64]]
    assert "in0 shape [32, 64] vs [64, 64]" in f.message and "model.py:20" in f.message


def test_an_extra_op_without_collective_after_is_a_warning():
    step = [op("matmul", 20), op("softmax", 22)]
    extra = [op("matmul", 20), op("add", 21), op("softmax", 22)]
    [f] = detect([rank(0, step), rank(1, extra)])
    assert f.severity == Severity.WARNING and f.evidence["kind"] == "extra_op" and f.line == 21


def test_the_odd_rank_out_is_reported_not_the_majority():
    """GIVEN three ranks of which rank 0 differs THEN one finding names rank 0, against rank 1."""
    short = [op("matmul", 20), op("softmax", 22)]
    [f] = detect([rank(0, short), rank(1, STEP), rank(2, STEP)])
    assert f.evidence["ranks"] == ["rank 0 (h0)"] and f.evidence["reference"] == "rank 1 (h1)"
    assert f.evidence["kind"] == "missing_op" and f.evidence["reference_op"]["op"] == "all_gather"


def test_two_groups_of_diverging_ranks_give_one_finding_each_in_rank_order():
    a = [op("matmul", 20, "[64,64]"), op("all_gather", 21), op("softmax", 22)]
    b = [op("matmul", 20), op("softmax", 22)]
    found = detect([rank(0, STEP), rank(1, STEP), rank(2, b), rank(3, a), rank(4, b)])
    assert [f.evidence["ranks"] for f in found] == [["rank 2 (h2)", "rank 4 (h4)"], ["rank 3 (h3)"]]


def test_a_capture_missing_on_one_rank_is_pinned_to_the_other_ranks_begin():
    [f] = detect([rank(0, STEP, STEP), rank(1, STEP)])
    assert f.evidence["kind"] == "missing_capture" and f.evidence["capture"] == 2
    assert (f.line, f.severity) == (11, Severity.ERROR)  # its ops hold an all_gather
    assert f.evidence["captures"] == {"rank 0 (h0)": 2, "rank 1 (h1)": 1}


def test_a_capture_that_ends_early_says_so():
    [f] = detect([rank(0, STEP), rank(1, STEP[:1])])
    assert f.evidence["kind"] == "missing_ops" and "nothing more" in f.message


def test_collectives_are_recognised_by_name():
    assert all(is_collective(n) for n in ("all_gather_async", "reduce_scatter_minimal_async",
                                          "all_reduce", "point_to_point", "send_async"))
    assert not any(is_collective(n) for n in ("matmul", "softmax", "sendai", "add"))


def test_a_ranks_own_finding_is_labelled_with_rank_and_host():
    f = Finding("TR001", Severity.ERROR, "Readback in capture", "m", "fix", FILE, 3)
    launched = RankSession(Path("r1.db"), Launch(1, 2, "host-b", "r", "mpich"))
    g = label_finding(f, launched)
    assert g.title == "rank 1 (host-b): Readback in capture"
    assert (g.evidence["rank"], g.evidence["host"]) == (1, "host-b")
    assert label_finding(f, RankSession(Path("x.db"), None)) is f


def test_a_rank_that_stopped_early_is_not_a_divergence_but_another_path_is():
    """GIVEN rank 1 crashed after its first capture THEN the captures it never recorded are no
    finding; the same short rank that finished normally is one."""
    crashed = rank(1, STEP)
    crashed.finished = False
    assert detect([rank(0, STEP, STEP), crashed]) == []
    cut = rank(1, STEP[:2])
    cut.finished = False
    assert detect([rank(0, STEP), cut]) == []
    assert [f.evidence["kind"] for f in detect([rank(0, STEP, STEP), rank(1, STEP)])] == ["missing_capture"]
    other = rank(1, [op("matmul", 20, "[64,64]")])
    other.finished = False
    assert [f.evidence["kind"] for f in detect([rank(0, STEP), other])] == ["other_tensors"]
