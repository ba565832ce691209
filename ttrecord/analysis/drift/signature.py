"""Aligns two runs by what ran (op, order, tensor signature), with the call site as a weight.

Keys made of (op, file, line) break as soon as the code is edited: an inserted line shifts every
later line, a moved helper or a renamed file changes every key, and nothing aligns. What stays
is what ran: each op's name and its tensors' storage, shapes, dtypes, layouts, memory configs,
buffer types and roles (input, output, or output written in place over an input). So:

1. identical call-site sequences pair one to one (the common case: two captures of one session,
   or two runs of unchanged code) at no extra cost;
2. otherwise the ops are aligned on signatures (Myers, or anchored when they differ in many
   places: both near-linear when the runs differ in a few places); where repeated signatures
   make several alignments equally long, each unmatched run slides to where the call sites
   agree best (same file and line, same function and line within it, same function);
3. in each gap left, ops at the same call site pair up (same line, other tensors);
4. ops still unmatched on both sides with equal signatures ran in another order: they pair as
   "reordered".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from .align import DEFAULT_MAX_EDITS, align, slide, with_gaps
from .model import CapturedOp

EXACT = "exact"  # same op, call site and tensor signature
SIGNATURE = "signature"  # same op and tensor signature, another call site
CALL_SITE = "call_site"  # same op and call site, other tensors (shape, dtype, layout, …)
REORDERED = "reordered"  # same op and tensor signature, run in another order
MATCH_KINDS = (EXACT, SIGNATURE, CALL_SITE, REORDERED)

Row = tuple[int | None, int | None, str]  # (i, j, match kind); "" for an unmatched op


@dataclass(frozen=True, slots=True)
class OpAlignment:
    rows: list[Row]  # in display order: A's order, B-only ops where they fall
    method: str  # "identical" | "myers" | "anchored": the search that paired most ops
    key: str  # "call_site" (identical call sites) | "signature"


def signature_codes(a: Sequence[CapturedOp], b: Sequence[CapturedOp]) -> tuple[list[int], list[int]]:
    """One small int per op; equal ints mean equal signatures. Captures reuse a few tensor
    tuples thousands of times, so the signature is computed once per distinct tuple pair."""
    codes: dict[tuple, int] = {}
    cache: dict[tuple, int] = {}

    def code(op: CapturedOp) -> int:
        ident = (op[2], id(op[6]), id(op[7]))
        found = cache.get(ident)
        if found is None:
            found = cache[ident] = codes.setdefault(op_signature(op), len(codes))
        return found

    return [code(op) for op in a], [code(op) for op in b]


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
    """How much two ops' call sites agree: same file and line 4, same function 2 and the same
    line within it 2 more, same file name 1."""
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
              max_edits: int = DEFAULT_MAX_EDITS) -> OpAlignment:  # fmt: skip
    """Pair the ops of two runs (see the module docstring); rows say how each pair matched."""
    ka = [op[2:5] for op in a]  # (name, file, line)
    kb = [op[2:5] for op in b]
    if ka == kb:
        return OpAlignment([(i, i, EXACT) for i in range(len(a))], "identical", "call_site")
    sa, sb = signature_codes(a, b)
    pairs, method = align(sa, sb, max_edits)
    matches = [(i, j) for i, j in pairs if i is not None and j is not None]
    sites_a, sites_b = _Sites(a), _Sites(b)
    matches = slide(matches, sa, sb,
                    lambda i, j: site_score(a[i], b[j], sites_a, sites_b), len(a), len(b))  # fmt: skip
    kinds = {(i, j): EXACT if ka[i] == kb[j] else SIGNATURE for i, j in matches}
    for i, j in _same_site_in_gaps(matches, ka, kb, max_edits):
        kinds[(i, j)] = CALL_SITE
    matches = sorted(kinds)
    rows: list[Row] = [(i, j, kinds[(i, j)] if i is not None and j is not None else "")
                       for i, j in with_gaps(matches, len(a), len(b))]  # fmt: skip
    return OpAlignment(_pair_reordered(rows, sa, sb), method, "signature")


def _same_site_in_gaps(matches: list[tuple[int, int]], ka: list, kb: list,
                       max_edits: int) -> list[tuple[int, int]]:  # fmt: skip
    """Between signature matches, ops unmatched on both sides that share a call site."""
    found: list[tuple[int, int]] = []
    pi = pj = 0
    for i, j in [*matches, (len(ka), len(kb))]:
        if i > pi and j > pj:
            gap, _ = align(ka[pi:i], kb[pj:j], max_edits)
            found += [(pi + x, pj + y) for x, y in gap if x is not None and y is not None]
        pi, pj = i + 1, j + 1
    return found


def _pair_reordered(rows: list[Row], sa: list[int], sb: list[int]) -> list[Row]:
    """Pair ops left unmatched on both sides that have equal signatures, k-th with k-th: the
    pair takes the A op's row, the B op's own row goes."""
    waiting: dict[int, list[int]] = defaultdict(list)
    for i, j, _ in rows:
        if i is None:
            waiting[sb[j]].append(j)  # type: ignore[index]
    if not waiting:
        return rows
    for queue in waiting.values():
        queue.reverse()  # pop() takes the earliest
    taken: set[int] = set()
    out: list[Row] = []
    for i, j, kind in rows:
        if j is None:
            queue = waiting.get(sa[i])  # type: ignore[index]
            if queue:
                j = queue.pop()
                taken.add(j)
                kind = REORDERED
        out.append((i, j, kind))
    return [r for r in out if not (r[0] is None and r[1] in taken)]
