"""Alignment by what ran: signatures pair ops, call sites only break ties, nothing is lost."""

from __future__ import annotations

import random

from ttrecord.analysis.drift.align import align
from ttrecord.analysis.drift.model import CapturedOp, Tensor
from ttrecord.analysis.drift.signature import align_ops, signature_codes


def _tensor(shape: str, address: int) -> Tensor:
    return Tensor("device", shape, "BFLOAT16", "TILE", "DRAM interleaved", "DRAM", address,
                  2048, 0)  # fmt: skip


def _op(name: str, line: int, shape: str = "[32,32]", function: str = "f", file: str = "m.py",
        address: int = 0x1000) -> CapturedOp:  # fmt: skip
    return CapturedOp(0, 0, name, file, line, function, (_tensor(shape, 0x800),),
                      (_tensor(shape, address),))  # fmt: skip


def _index(ops: list[CapturedOp]) -> list[CapturedOp]:
    return [op._replace(seq=k, index=k) for k, op in enumerate(ops)]


def _lcs_length(a, b) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def test_an_inserted_op_among_identical_ones_is_placed_by_its_call_site():
    """GIVEN q, k, v projections with one signature in `f`, and B calling one more projection
    of that signature from helper `g` between k and v WHEN aligned THEN the helper's call is the
    op only in B, and q, k, v pair with themselves (plain Myers leaves v unmatched instead)."""
    a = _index([_op("ttnn.linear", 10), _op("ttnn.linear", 11), _op("ttnn.linear", 12)])
    b = _index([_op("ttnn.linear", 10), _op("ttnn.linear", 11),
                _op("ttnn.linear", 40, function="g"), _op("ttnn.linear", 12)])  # fmt: skip
    rows = align_ops(a, b).rows
    assert rows == [(0, 0, "exact"), (1, 1, "exact"), (None, 2, ""), (2, 3, "exact")]
    plain, _ = align(*signature_codes(a, b))
    assert plain != [(i, j) for i, j, _ in rows]  # the call sites decided


def test_shifted_lines_and_a_renamed_file_still_pair_every_op_by_signature():
    """GIVEN B: the same ops from a renamed file, every line 3 lower WHEN aligned
    THEN every op pairs, by signature."""
    a = _index([_op("ttnn.matmul", 10), _op("ttnn.relu", 11), _op("ttnn.add", 12)])
    b = _index([op._replace(file="v2/m2.py", line=op.line + 3) for op in a])
    alignment = align_ops(a, b)
    assert alignment.key == "signature"
    assert alignment.rows == [(0, 0, "signature"), (1, 1, "signature"), (2, 2, "signature")]


def test_the_same_call_site_with_other_shapes_pairs_by_call_site():
    """GIVEN B where the op at line 11 now works on another shape, and an extra op at the end
    WHEN aligned THEN that op pairs with its call site ("call_site"), not left unmatched."""
    a = _index([_op("ttnn.matmul", 10), _op("ttnn.relu", 11), _op("ttnn.add", 12)])
    b = _index([_op("ttnn.matmul", 10), _op("ttnn.relu", 11, shape="[64,32]"),
                _op("ttnn.add", 12), _op("ttnn.add", 13)])  # fmt: skip
    rows = align_ops(a, b).rows
    assert rows == [(0, 0, "exact"), (1, 1, "call_site"), (2, 2, "exact"), (None, 3, "")]


def test_a_different_op_never_pairs():
    """GIVEN B calling silu where A called gelu, on the same line WHEN aligned
    THEN gelu is only in A and silu only in B."""
    a = _index([_op("ttnn.matmul", 10), _op("ttnn.gelu", 11), _op("ttnn.add", 12)])
    b = _index([_op("ttnn.matmul", 10), _op("ttnn.silu", 11), _op("ttnn.add", 12)])
    assert align_ops(a, b).rows == [(0, 0, "exact"), (1, None, ""), (None, 1, ""),
                                    (2, 2, "exact")]  # fmt: skip


def test_random_edits_give_a_valid_alignment_as_long_as_the_signature_lcs():
    """GIVEN random op sequences over a few names, shapes and functions, edited at random
    (inserted, removed and swapped ops, lines shifted) WHEN aligned THEN every op of each side
    appears exactly once; pairs not reordered keep both orders; signature pairs have equal
    signatures; and as many ops pair by signature as the longest common subsequence allows
    (unless the call sites are identical: then ops pair one to one)."""
    rng = random.Random(21)
    names, shapes, functions = ["ttnn.add", "ttnn.matmul"], ["[32,32]", "[64,32]"], ["f", "g"]
    for _ in range(300):
        a = _index([_op(rng.choice(names), rng.randint(1, 6), rng.choice(shapes),
                        rng.choice(functions)) for _ in range(rng.randint(0, 20))])  # fmt: skip
        b = list(a)
        for _ in range(rng.randint(0, 4)):
            roll = rng.random()
            if b and roll < 0.3:
                b.pop(rng.randrange(len(b)))
            elif len(b) > 1 and roll < 0.5:
                k = rng.randrange(len(b) - 1)
                b[k], b[k + 1] = b[k + 1], b[k]
            else:
                b.insert(rng.randint(0, len(b)), _op(rng.choice(names), rng.randint(1, 9),
                                                     rng.choice(shapes)))  # fmt: skip
        shift = rng.choice([0, 0, 1])
        b = _index([op._replace(line=op.line + shift) for op in b])
        alignment = align_ops(a, b)
        rows = alignment.rows
        if alignment.key == "call_site":  # identical call sites pair one to one
            assert rows == [(i, i, "site") for i in range(len(a))]
            continue
        assert sorted(i for i, _, _ in rows if i is not None) == list(range(len(a)))
        assert sorted(j for _, j, _ in rows if j is not None) == list(range(len(b)))
        ordered = [(i, j) for i, j, kind in rows if kind not in ("", "reordered")]
        assert ordered == sorted(ordered)
        assert [j for _, j in ordered] == sorted(j for _, j in ordered)
        sa, sb = signature_codes(a, b)
        by_signature = [(i, j) for i, j, kind in rows if kind in ("exact", "signature")]
        assert all(sa[i] == sb[j] for i, j in by_signature)
        assert len(by_signature) == _lcs_length(sa, sb)
