"""Aligns two op sequences so inserted and removed ops do not shift every later pair.

Ops are compared by key (op name, call site); the n-th occurrence of a key in one run is paired
with an occurrence in the other by a shortest-edit-script (Myers) diff, not by its number, so
one extra call early on leaves the rest aligned. Model code repeats a few call sites thousands
of times (one per layer), which is where `difflib.SequenceMatcher` turns quadratic (or, with
autojunk, ignores the repeated keys altogether); Myers' O((N+M)·D) greedy search stays fast
when the runs differ in a few places, and long equal stretches are skipped with numpy.
When the runs differ in more than `max_edits` places, the alignment falls back to pairing
(key, occurrence) anchors along their longest increasing subsequence, with small Myers diffs
between the anchors: O(n log n), exact for occurrence-preserving changes.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import chain

import numpy as np

Pair = tuple[int | None, int | None]

DEFAULT_MAX_EDITS = 1000
_GAP_MAX_EDITS = 200
_GAP_BUDGET = 2_000_000  # sum of squared edit bounds over all gaps


def align(
    a: Sequence[Hashable], b: Sequence[Hashable], max_edits: int = DEFAULT_MAX_EDITS
) -> tuple[list[Pair], str]:
    """Pairs of indices (i, j), (i, None) for ops only in A, (None, j) only in B, in order.

    Also returns the method used: "identical", "myers" or "anchored".
    """
    codes: dict[Hashable, int] = {}
    ca = np.fromiter((codes.setdefault(k, len(codes)) for k in a), dtype=np.int64, count=len(a))
    cb = np.fromiter((codes.setdefault(k, len(codes)) for k in b), dtype=np.int64, count=len(b))
    matches, method = align_codes(ca, cb, max_edits)
    return _with_gaps(matches, len(ca), len(cb)), method


def align_codes(ca: np.ndarray, cb: np.ndarray, max_edits: int = DEFAULT_MAX_EDITS
                ) -> tuple[list[tuple[int, int]], str]:  # fmt: skip
    """The matched (i, j) pairs of two int-coded sequences, in order, and the method."""
    n, m = len(ca), len(cb)
    if n == m and np.array_equal(ca, cb):
        return [(i, i) for i in range(n)], "identical"
    prefix = _common_prefix(ca, cb)
    suffix = _common_suffix(ca[prefix:], cb[prefix:])
    mid_a, mid_b = ca[prefix : n - suffix], cb[prefix : m - suffix]
    matches = _myers(mid_a, mid_b, max_edits)
    method = "myers"
    if matches is None:
        matches = _anchored(mid_a, mid_b)
        method = "anchored"
    head = [(i, i) for i in range(prefix)]
    tail = [(n - suffix + t, m - suffix + t) for t in range(suffix)]
    shifted = [(i + prefix, j + prefix) for i, j in matches]
    return head + shifted + tail, method


def gap_positions(matches: list[tuple[int, int]], n: int, m: int) -> list[int]:
    """Positions k in [(-1, -1), *matches, (n, m)] where an unmatched op follows entry k."""
    if not matches:
        return [0] if n or m else []
    arr = np.fromiter(chain.from_iterable(matches), dtype=np.int64,
                      count=2 * len(matches)).reshape(-1, 2)  # fmt: skip
    full = np.vstack(([[-1, -1]], arr, [[n, m]]))
    step = np.diff(full, axis=0)
    return list(np.flatnonzero((step[:, 0] != 1) | (step[:, 1] != 1)).tolist())


def _with_gaps(matches: Iterable[tuple[int, int]], n: int, m: int) -> list[Pair]:
    """Interleave the unmatched ops: A's first, then B's, between consecutive matches."""
    out: list[Pair] = []
    i = j = 0
    for pair in chain(matches, [(n, m)]):
        mi, mj = pair
        if mi > i:
            out.extend((x, None) for x in range(i, mi))
        if mj > j:
            out.extend((None, y) for y in range(j, mj))
        if mi < n and mj < m:
            out.append(pair)
        i, j = mi + 1, mj + 1
    return out


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    k = min(len(a), len(b))
    diff = np.flatnonzero(a[:k] != b[:k])
    return int(diff[0]) if len(diff) else k


def _common_suffix(a: np.ndarray, b: np.ndarray) -> int:
    return _common_prefix(a[::-1], b[::-1])


def _snake(a: np.ndarray, b: np.ndarray, al: list[int], bl: list[int], x: int, y: int) -> int:
    """Follow a diagonal of equal keys from (x, y); returns the x where it ends."""
    n, m = len(al), len(bl)
    stop = min(n - x, m - y, 16) + x
    while x < stop and al[x] == bl[y]:
        x += 1
        y += 1
    if x < stop or x >= n or y >= m:
        return x
    step = 256
    while x < n and y < m:  # a long equal stretch: compare in growing numpy chunks
        k = min(step, n - x, m - y)
        diff = np.flatnonzero(a[x : x + k] != b[y : y + k])
        if len(diff):
            return x + int(diff[0])
        x += k
        y += k
        step *= 4
    return x


def _myers(a: np.ndarray, b: np.ndarray, max_edits: int) -> list[tuple[int, int]] | None:
    """Matched (i, j) pairs of a shortest edit script, or None if it needs more than max_edits."""
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return []
    al, bl = a.tolist(), b.tolist()
    limit = min(n + m, max_edits)
    off = limit + 1
    v = [0] * (2 * limit + 3)
    history: list[list[int]] = []  # v[k] for k in -d-1..d+1, before step d
    for d in range(limit + 1):
        history.append(v[off - d - 1 : off + d + 2])
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]
            else:
                x = v[off + k - 1] + 1
            y = x - k
            if x < n and y < m and al[x] == bl[y]:
                x = _snake(a, b, al, bl, x, y)
            v[off + k] = x
            if x >= n and x - k >= m:
                return _backtrack(history, n, m)
    return None


def _backtrack(history: list[list[int]], n: int, m: int) -> list[tuple[int, int]]:
    matches: list[tuple[int, int]] = []
    x, y = n, m
    for d in range(len(history) - 1, -1, -1):
        snap = history[d]

        def at(k: int, d: int = d, snap: list[int] = snap) -> int:
            return snap[k + d + 1]

        k = x - y
        if d == 0:
            prev_x = prev_y = 0
        else:
            prev_k = k + 1 if k == -d or (k != d and at(k - 1) < at(k + 1)) else k - 1
            prev_x = at(prev_k)
            prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x -= 1
            y -= 1
            matches.append((x, y))
        x, y = prev_x, prev_y
    matches.reverse()
    return matches


def _anchored(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """(key, occurrence) anchors on their longest increasing subsequence, Myers between them."""
    al, bl = a.tolist(), b.tolist()
    where_b: dict[tuple[int, int], int] = {}
    seen: dict[int, int] = {}
    for j, key in enumerate(bl):
        occ = seen.get(key, 0)
        seen[key] = occ + 1
        where_b[(key, occ)] = j
    seen.clear()
    candidates: list[tuple[int, int]] = []
    for i, key in enumerate(al):
        occ = seen.get(key, 0)
        seen[key] = occ + 1
        j = where_b.get((key, occ), -1)
        if j >= 0:
            candidates.append((i, j))
    anchors = _longest_increasing(candidates)
    matches: list[tuple[int, int]] = []
    budget = _GAP_BUDGET  # bounds the total search when the runs barely resemble each other
    pi = pj = 0
    for i, j in [*anchors, (len(al), len(bl))]:
        if i > pi and j > pj:
            edits = min(i - pi + j - pj, _GAP_MAX_EDITS)
            if edits * edits <= budget:
                budget -= edits * edits
                gap = _myers(a[pi:i], b[pj:j], edits) or []
                matches.extend((pi + gi, pj + gj) for gi, gj in gap)
        if i < len(al):
            matches.append((i, j))
        pi, pj = i + 1, j + 1
    return matches


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of (i, j) pairs (i increasing) whose j also increase."""
    tails: list[int] = []  # smallest j ending an increasing run of each length
    tail_at: list[int] = []  # index into pairs of that run's last element
    back = [-1] * len(pairs)
    for idx, (_, j) in enumerate(pairs):
        pos = bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(idx)
        else:
            tails[pos] = j
            tail_at[pos] = idx
        back[idx] = tail_at[pos - 1] if pos else -1
    out: list[tuple[int, int]] = []
    idx = tail_at[-1] if tail_at else -1
    while idx >= 0:
        out.append(pairs[idx])
        idx = back[idx]
    out.reverse()
    return out


Score = Callable[[int, int], int]
MAX_SLIDE = 64  # steps an unmatched run may move to where the call sites agree best


def slide(matches: list[tuple[int, int]], a: Sequence[Hashable], b: Sequence[Hashable],
          score: Score, n: int, m: int, gaps: list[int] | None = None
          ) -> tuple[list[tuple[int, int]], list[int]]:  # fmt: skip
    """Break ties between equally long alignments by the call sites (a weight, not a key).

    Where equal keys repeat (three projections with the same shapes), an op inserted among
    them can be left unmatched at several places with the same number of matches; Myers picks
    one arbitrarily. Each one-sided unmatched run is moved along the diagonal around it (at
    most MAX_SLIDE steps either way) to where `score(i, j)` of the pairs it changes is
    highest; ties keep it where it is. O(gaps × MAX_SLIDE). `gaps`: from `gap_positions`.
    Returns the matches and their gap positions after sliding.
    """
    if gaps is None:
        gaps = gap_positions(matches, n, m)
    if not gaps:
        return matches, gaps
    out = [(-1, -1), *matches, (n, m)]
    moved: list[int] = []
    for k in gaps:
        (i0, j0), (i1, j1) = out[k], out[k + 1]
        gap_a, gap_b = i1 - i0 - 1, j1 - j0 - 1
        shift = 0
        if gap_a and gap_b or not (gap_a or gap_b):
            pass  # ops unmatched on both sides (nothing equivalent to slide), or merged away
        elif gap_b:
            shift = _slide_run(out, k, a, b, score, swap=False)
        else:
            shift = _slide_run(out, k, b, a, lambda j, i: score(i, j), swap=True)
        moved.append(k + shift)
    return out[1:-1], sorted(set(moved))


def _slide_run(out: list[tuple[int, int]], k: int, a: Sequence[Hashable], b: Sequence[Hashable],
               score: Score, swap: bool) -> int:  # fmt: skip
    """Slide the run of b-only items between out[k] and out[k + 1] (coordinates (i, j); with
    `swap`, the entries of `out` are (j, i)); returns how far it moved (down positive)."""

    def get(pos: int) -> tuple[int, int]:
        x, y = out[pos]
        return (y, x) if swap else (x, y)

    def put(pos: int, i: int, j: int) -> None:
        out[pos] = (j, i) if swap else (i, j)

    (i0, j0), (i1, j1) = get(k), get(k + 1)
    best, best_gain, gain = 0, 0, 0
    for t in range(MAX_SLIDE):  # down: b[j0+1+t] takes a[i1+t] from b[j1+t]
        pos = k + 1 + t
        if (pos >= len(out) - 1 or get(pos) != (i1 + t, j1 + t) or b[j0 + 1 + t] != a[i1 + t]
                or b[j1 + t] != a[i1 + t]):  # only pairs of equal keys move
            break
        gain += score(i1 + t, j0 + 1 + t) - score(i1 + t, j1 + t)
        if gain > best_gain:
            best, best_gain = t + 1, gain
    gain = 0
    for t in range(MAX_SLIDE):  # up: b[j1-1-t] takes a[i0-t] from b[j0-t]
        pos = k - t
        if (pos <= 0 or get(pos) != (i0 - t, j0 - t) or b[j1 - 1 - t] != a[i0 - t]
                or b[j0 - t] != a[i0 - t]):
            break
        gain += score(i0 - t, j1 - 1 - t) - score(i0 - t, j0 - t)
        if gain > best_gain:
            best, best_gain = -(t + 1), gain
    for t in range(best):
        put(k + 1 + t, i1 + t, j0 + 1 + t)
    for t in range(-best):
        put(k - t, i0 - t, j1 - 1 - t)
    return best

