"""Aligns two runs by what ran (op, order, tensor signature), with the call site as a weight.

Keys made of (op, file, line) break as soon as the code is edited: an inserted line shifts every
later line, a moved helper or a renamed file changes every key, and nothing aligns. What stays
is what ran: each op's name and its tensors' storage, shapes, dtypes, layouts, memory configs,
buffer types and roles (input, output, or output written in place over an input). So:

1. identical call-site sequences pair one to one (the common case: two captures of one session,
   or two runs of unchanged code) at no extra cost;
2. otherwise the ops are aligned on signatures (Myers, or anchored when they differ in many
   places: both near-linear when the runs differ in a few places);
3. in each gap left, ops at the same call site pair up (same line, other tensors); then, where
   repeated signatures make several alignments equally long, each unmatched run slides to
   where the call sites agree best (same file and line, same function and line within it,
   same function);
4. ops still unmatched on both sides with equal signatures ran in another order: they pair as
   "reordered".
With `by_name` (a prep run against its capture, where the warm-up may be a copy of the captured
block at other lines), ops unmatched on both sides in a gap then pair by op name alone ("op":
the same op, its tensors compared as changes).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from operator import itemgetter
from dataclasses import dataclass
from pathlib import PurePath

import numpy as np

from .align import DEFAULT_MAX_EDITS, align, align_codes, gap_positions, slide
from .model import CapturedOp

EXACT = "exact"  # same op, call site and tensor signature
SIGNATURE = "signature"  # same op and tensor signature, another call site
CALL_SITE = "call_site"  # same op and call site, other tensors (shape, dtype, layout, …)
REORDERED = "reordered"  # same op and tensor signature, run in another order
SITE = "site"  # same call site, tensors not compared yet (identical call-site sequences)
OP = "op"  # same op, another call site and other tensors (`by_name`: a prep run)

Row = tuple[int | None, int | None, str]  # (i, j, match kind); "" for an unmatched op


@dataclass(frozen=True, slots=True)
class OpAlignment:
    rows: list[Row]  # in display order: A's order, B-only ops where they fall
    method: str  # "identical" | "myers" | "anchored": the search that paired most ops
    key: str  # "call_site" (identical call sites) | "signature"


def signature_codes(a: Sequence[CapturedOp], b: Sequence[CapturedOp]
                    ) -> tuple[list[int], list[int]]:  # fmt: skip
    """One small int per op; equal ints mean equal signatures. Captures reuse a few tensor
    tuples thousands of times, so the signature is computed once per distinct (name, inputs,
    outputs) objects, found by identity (the zips and maps run in C)."""
    codes: dict[tuple, int] = {}
    cache: dict[tuple, int] = {}

    def side(ops: Sequence[CapturedOp]) -> list[int]:
        idents = list(zip(map(_name, ops), map(id, map(_ins, ops)), map(id, map(_outs, ops))))
        found = list(map(cache.get, idents))
        for k, code in enumerate(found):
            if code is None:
                ident = idents[k]
                code = cache.get(ident)
                if code is None:
                    code = cache[ident] = codes.setdefault(op_signature(ops[k]), len(codes))
                found[k] = code
        return found  # type: ignore[return-value]

    return side(a), side(b)


_name, _ins, _outs = itemgetter(2), itemgetter(6), itemgetter(7)


def op_signature(op: CapturedOp) -> tuple:
    """What the op did, without where it was called or where its buffers are."""
    ins, outs = op.inputs, op.outputs
    read = {(t[5], t[6]) for t in ins if t[6] is not None}
    return (
        op.name,
        tuple(t[:6] for t in ins),  # storage, shape, dtype, layout, memory config, buffer type
        tuple((*t[:6], t[6] is not None and (t[5], t[6]) in read) for t in outs),  # in place?
    )


class _Sites:
    """Call-site features of one run's ops: function-relative lines survive lines inserted
    above the function, a renamed file keeps its functions."""

    def __init__(self, ops: Sequence[CapturedOp]) -> None:
        first: dict[tuple[str, str], int] = {}
        for op in ops:
            key = (op.file, op.function)
            if op.line < first.get(key, 1 << 62):
                first[key] = op.line
        self.ops = ops
        self.first = first


def site_score(x: CapturedOp, y: CapturedOp, sx: _Sites, sy: _Sites) -> int:
    """How much two ops' call sites agree: same function 2, and the same line within it 2
    more; same file (or file name) 1, and the same line 4 more."""
    score = 0
    if x.function == y.function:
        score += 2
        if x.line - sx.first[(x.file, x.function)] == y.line - sy.first[(y.file, y.function)]:
            score += 2
    if x.file == y.file:
        score += 1 + (4 if x.line == y.line else 0)
    elif PurePath(x.file).name == PurePath(y.file).name:
        score += 1
    return score


def align_ops(a: Sequence[CapturedOp], b: Sequence[CapturedOp],
              max_edits: int = DEFAULT_MAX_EDITS, by_name: bool = False) -> OpAlignment:  # fmt: skip
    """Pair the ops of two runs (see the module docstring); rows say how each pair matched.

    Identical call sites give kind SITE: the same call site, the tensors not yet compared
    (`compare.pair_op_lists` makes it EXACT or CALL_SITE, since it compares them anyway).
    """
    ka = [op[2:5] for op in a]  # (name, file, line)
    kb = [op[2:5] for op in b]
    n, m = len(a), len(b)
    if ka == kb:
        return OpAlignment([(i, i, SITE) for i in range(n)], "identical", "call_site")
    sa, sb = signature_codes(a, b)
    ca, cb = np.array(sa, dtype=np.int64), np.array(sb, dtype=np.int64)
    matches, method = align_codes(ca, cb, max_edits)
    sites: list[_Sites] = []

    def score(i: int, j: int) -> int:
        if not sites:  # only where equal signatures leave a choice
            sites.extend((_Sites(a), _Sites(b)))
        return site_score(a[i], b[j], sites[0], sites[1])

    gaps = gap_positions(matches, n, m)
    same_site = _same_site_in_gaps(matches, ka, kb, max_edits, gaps)
    if same_site:
        matches = sorted([*matches, *same_site])
        gaps = gap_positions(matches, n, m)
    same_name: list[tuple[int, int]] = []
    if by_name and gaps:
        names_a, names_b = [op[2] for op in a], [op[2] for op in b]
        same_name = _same_site_in_gaps(matches, names_a, names_b, max_edits, gaps)
        if same_name:
            matches = sorted([*matches, *same_name])
            gaps = gap_positions(matches, n, m)
    matches, gaps = slide(matches, sa, sb, score, n, m, gaps)
    same_site_set = set(same_site)
    rows: list[Row] = []
    bounds = [(-1, -1), *matches, (n, m)]
    start = 0  # first entry of `matches` not yet in rows
    only_a: list[int] = []  # positions in rows of ops unmatched in A, and in B
    only_b: list[int] = []
    for k in gaps:  # unmatched ops between matches[k - 1] and matches[k]
        rows += _diagonal(matches[start:k], ka, kb)
        (i0, j0), (i1, j1) = bounds[k], bounds[k + 1]
        only_a += range(len(rows), len(rows) + i1 - i0 - 1)
        rows += [(x, None, "") for x in range(i0 + 1, i1)]
        only_b += range(len(rows), len(rows) + j1 - j0 - 1)
        rows += [(None, y, "") for y in range(j0 + 1, j1)]
        start = k
    rows += _diagonal(matches[start:], ka, kb)
    if same_site_set or same_name:
        same_name_set = set(same_name)
        rows = [(i, j, CALL_SITE) if (i, j) in same_site_set else
                (i, j, OP) if (i, j) in same_name_set else (i, j, kind)
                for i, j, kind in rows]  # fmt: skip
    if only_a and only_b:
        rows = _pair_reordered(rows, only_a, only_b, sa, sb)
    return OpAlignment(rows, method, "signature")


def _diagonal(matches: list[tuple[int, int]], ka: list, kb: list) -> list[Row]:
    return [(i, j, EXACT if ka[i] == kb[j] else SIGNATURE) for i, j in matches]


def _same_site_in_gaps(matches: list[tuple[int, int]], ka: list, kb: list, max_edits: int,
                       gaps: list[int]) -> list[tuple[int, int]]:  # fmt: skip
    """Between signature matches, ops unmatched on both sides that share a call site (or
    whatever `ka`, `kb` key them by). `gaps`: the gap positions of `matches` (`gap_positions`)."""
    found: list[tuple[int, int]] = []
    bounds = [(-1, -1), *matches, (len(ka), len(kb))]
    for k in gaps:
        (pi, pj), (i, j) = bounds[k], bounds[k + 1]
        pi, pj = pi + 1, pj + 1
        if i > pi and j > pj:
            gap, _ = align(ka[pi:i], kb[pj:j], max_edits)
            found += [(pi + x, pj + y) for x, y in gap if x is not None and y is not None]
    return found


def _pair_reordered(rows: list[Row], only_a: list[int], only_b: list[int], sa: list[int],
                    sb: list[int]) -> list[Row]:  # fmt: skip
    """Pair ops left unmatched on both sides that have equal signatures, k-th with k-th (rows
    at positions `only_a`, `only_b`): the pair takes the A op's row, the B op's row goes."""
    waiting: dict[int, list[int]] = defaultdict(list)  # signature -> B rows, latest first
    for pos in reversed(only_b):
        waiting[sb[rows[pos][1]]].append(pos)  # type: ignore[index]
    drop: list[int] = []
    for pos in only_a:
        i = rows[pos][0]
        queue = waiting.get(sa[i])  # type: ignore[index]
        if queue:
            b_pos = queue.pop()
            rows[pos] = (i, rows[b_pos][1], REORDERED)
            drop.append(b_pos)
    if len(drop) < 64:
        for pos in sorted(drop, reverse=True):
            del rows[pos]
        return rows
    dropped = set(drop)
    return [r for k, r in enumerate(rows) if k not in dropped]
