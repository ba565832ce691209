"""Inserted and removed ops stay aligned: only they are reported, the rest pair up."""

import random

import pytest

from drift_programs import one_capture
from ttrecord.analysis.drift import align


def _lcs_length(a, b) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def _check(a, b, pairs) -> int:
    assert [i for i, _ in pairs if i is not None] == list(range(len(a)))
    assert [j for _, j in pairs if j is not None] == list(range(len(b)))
    matched = [(i, j) for i, j in pairs if i is not None and j is not None]
    assert all(a[i] == b[j] for i, j in matched)
    return len(matched)


def test_an_inserted_repeat_of_a_call_site_does_not_shift_later_occurrences():
    """GIVEN a layer loop (sites 1,2,3 repeated) and B with one extra call of site 3 early in
    layer 2 WHEN aligned THEN exactly that call is only in B and every other op pairs up."""
    a = [1, 2, 3] * 4
    b = a[:4] + [3] + a[4:]
    pairs, method = align(a, b)
    assert method == "myers"
    assert [p for p in pairs if p[0] is None or p[1] is None] == [(None, 4)]
    assert _check(a, b, pairs) == len(a)


def test_removed_and_inserted_ops_in_a_long_capture():
    """GIVEN 100,000 ops over 20 call sites, B with 4 inserted and 6 removed
    WHEN aligned THEN exactly those 10 are unpaired."""
    a = [i % 20 for i in range(100_000)]
    b = list(a)
    for pos in (99_990, 60_000, 30_000, 5):
        b.insert(pos, 99)
    del b[70_004]
    del b[40_003:40_008]
    pairs, _ = align(a, b)
    assert sum(1 for i, j in pairs if j is None) == 6
    assert sum(1 for i, j in pairs if i is None) == 4
    assert _check(a, b, pairs) == len(a) - 6


@pytest.mark.parametrize("max_edits", [1000, 1])
def test_random_edits_align_to_a_longest_common_subsequence(max_edits):
    """GIVEN random short sequences over a few keys, randomly edited
    WHEN aligned THEN the pairs are a valid alignment, and with the default budget a longest
    one (max_edits=1 forces the anchored fallback, which must still be valid)."""
    rng = random.Random(7)
    for _ in range(400):
        alphabet = rng.randint(1, 4)
        a = [rng.randrange(alphabet) for _ in range(rng.randint(0, 25))]
        b = list(a)
        for _ in range(rng.randint(0, 5)):
            if b and rng.random() < 0.5:
                b.pop(rng.randrange(len(b)))
            else:
                b.insert(rng.randint(0, len(b)), rng.randrange(alphabet))
        pairs, _ = align(a, b, max_edits=max_edits)
        matched = _check(a, b, pairs)
        if max_edits > 1:
            assert matched == _lcs_length(a, b)


def test_inserted_and_removed_ops_between_recorded_captures(run_diff_json, tmp_path):
    """GIVEN A whose step is matmul, relu, softmax and B whose step adds an `add` (line 11)
    and drops the relu (line 12)
    WHEN diffed THEN relu is only in A, add only in B, and matmul and softmax are aligned."""
    a = one_capture(tmp_path / "a.db")
    b = one_capture(tmp_path / "b.db", extra_op=True, skip_relu=True)
    code, report = run_diff_json(a, b, "--all-ops")
    assert code == 1
    rows = [(r["status"], (r["a"] or r["b"])["name"], (r["a"] or r["b"])["line"])
            for r in report["ops"]]  # fmt: skip
    assert rows == [
        ("same", "ttnn.matmul", 10),
        ("only_a", "ttnn.relu", 12),
        ("only_b", "ttnn.add", 11),
        ("same", "ttnn.softmax", 13),  # add's output took relu's address
    ]
    assert report["first_divergence"]["status"] == "only_a"
