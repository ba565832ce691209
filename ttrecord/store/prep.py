"""Tags the prep run before each capture.

The prep run is the eager pass that compiles kernels and sets up buffers right before
`begin_trace_capture`. Only the capture says which calls belong to it, so it is derived when
the session closes, by aligning op sequences (`align_prep`, the one place that decides it):
the capture's device ops, keyed by op name and tensor signature (shapes, dtypes, layouts,
memory configs; not addresses, not call sites, so a warm-up written as a copy of the captured
statements, or reached through another wrapper, still aligns), against the eager device ops
before it. Between the warm-up and the capture a program commonly frees or reads back the
warm-up's outputs, re-makes an input, or runs a block of other eager ops: frees, transfers and
syncs are not part of what is aligned, and eager ops after the last aligned one are left out
of the prep run. A capture whose ops no eager run before it repeats has no prep run.

`diff --prep`, TR015 and TR007 all read the prep run these tags give, so they agree on it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

# Calls that only allocate or free memory: they compute and compile nothing, so they are not
# aligned, and where a prep run and its capture run them is no divergence (executors free the
# warm-up's outputs before the capture and allocate a persistent input inside it).
MEMORY_ONLY = frozenset(("deallocate", "allocate_tensor_on_device", "empty"))

# How far back from `begin_trace_capture` the warm-up is looked for: eager calls (of any kind)
# per captured op, plus a fixed margin for a block run between the warm-up and the capture.
# A first, narrower look (most warm-ups sit right before their capture) reads fewer rows.
_WINDOW_PER_OP = 4
_WINDOW_MARGIN = 512
_NEAR_PER_OP = 2
_NEAR_MARGIN = 32
# Where an alignment may start: the eager ops nearest the capture that repeat one of its last
# `_ANCHOR_OPS` ops, at most `_ANCHORS` of them; a nearer anchor wins unless a farther one aligns
# more than `_NEARER_SLACK_PER` of the capture (at least one op) more. Edits one alignment may
# spend (unaligned ops on either side): `_EDITS_MARGIN` plus one per `_EDITS_PER_OPS` captured
# ops, at most `_EDITS_MAX`.
_ANCHOR_OPS = 3
_ANCHORS = 8
_NEARER_SLACK_PER = 8
_EDITS_MARGIN = 16
_EDITS_PER_OPS = 8
_EDITS_MAX = 512


@dataclass(frozen=True, slots=True)
class PrepRun:
    """Which of the eager ops (indices into the sequence given to `align_prep`) form the prep
    run, and which captured op each aligned one repeats."""

    pairs: list[tuple[int, int]]  # (eager index, captured index), in order
    first: int  # eager index where the prep run starts
    last: int  # eager index of its last aligned op


def align_prep(captured: Sequence[tuple[str, Hashable]],
               eager: Sequence[tuple[str, Hashable]]) -> PrepRun | None:  # fmt: skip
    """The prep run of a capture among the eager ops before it, or None.

    `captured` and `eager` are (op name, tensor signature) keys in call order; `eager` ends
    right before the capture. Ops are aligned by name and signature; when that leaves captured
    ops unaligned (the warm-up ran other shapes: TR015's case), by name alone if that aligns
    more. The alignment runs backwards from the capture and starts at the nearest eager ops that
    repeat the capture's last ops, so a block run between the warm-up and the capture costs
    nothing and, of several eager copies of the captured ops (an eager reference loop, then the
    warm-up), the nearest one is taken. Accepted when at least half the captured ops align (or
    half the ops the capture names: one warm-up call for a captured loop over it) and the prep
    run is mostly aligned ops (an unrelated earlier block sharing an op is no warm-up).
    Bounded: a few anchors, each a Myers search of at most `_EDITS_MAX` edits.
    """
    if not captured or not eager:
        return None
    best = _anchored(list(reversed(captured)), list(reversed(eager)))
    if len(best) < len(captured):
        by_name = _anchored([k[0] for k in reversed(captured)], [k[0] for k in reversed(eager)])
        if len(by_name) > len(best):
            best = by_name
    n, m = len(eager), len(captured)
    names = {k[0] for k in captured}
    covered = {captured[m - 1 - j][0] for _, j in best}
    if not best or (2 * len(best) < m and 2 * len(covered) < len(names)):
        return None
    pairs = sorted((n - 1 - i, m - 1 - j) for i, j in best)
    first, last = pairs[0][0], pairs[-1][0]
    if (last - first + 1) - len(pairs) > len(pairs):
        return None
    return PrepRun(pairs, first, last)


def _anchored(b: list[Hashable], a: list[Hashable]) -> list[tuple[int, int]]:
    """The alignment of all of `b` (the capture, last op first) against `a` (the eager ops,
    nearest first) from the anchor that aligns about as many ops as the best one with the
    fewest eager ops skipped inside it, then the nearest: an earlier compile run of the captured
    path must not win over the prep run right before the capture that left out one captured op
    (TR015's case), while a lone op of the capture's in a block between warm-up and capture must
    not win over the warm-up behind it."""
    heads = set(b[:_ANCHOR_OPS])
    anchors = []
    for x, key in enumerate(a):
        if key in heads:
            anchors.append(x)
            if len(anchors) == _ANCHORS:
                break
    m = len(b)
    limit = min(_EDITS_MARGIN + m // _EDITS_PER_OPS, _EDITS_MAX)
    tried: list[list[tuple[int, int]]] = []
    for x0 in anchors:
        tried.append([(x0 + i, j) for i, j in _myers(b, a[x0 : x0 + m + limit], limit)])
        if len(tried[-1]) == m and not _skipped(tried[-1]):
            break  # the nearest exact copy
    if not tried:
        return []
    most = max(map(len, tried))
    enough = most - max(1, most // _NEARER_SLACK_PER)
    candidates = [(_skipped(found), k) for k, found in enumerate(tried) if found and len(found) >= enough]
    return tried[min(candidates)[1]] if candidates else []


def _skipped(found: list[tuple[int, int]]) -> int:
    """Eager ops left out between the first and last aligned ones."""
    return found[-1][0] - found[0][0] + 1 - len(found)


def _myers(b: list[Hashable], a: list[Hashable], limit: int) -> list[tuple[int, int]]:
    """Matched (a index, b index) pairs of an alignment that uses all of `b` and a prefix of
    `a` with the fewest edits (Myers' greedy diagonals), the most matches among those; if none
    is found within `limit` edits, the furthest partial one."""
    n, m = len(a), len(b)
    steps: list[dict[int, tuple[int, int | None, int]]] = []  # per d: k -> (x, from k, x0)
    prev: dict[int, int] = {}
    best: tuple[int, int, int] | None = None  # (matches, d, k) using all of b
    partial = (0, 0, 0)  # the same for any point: when nothing uses all of b within `limit`
    for d in range(limit + 1):
        cur: dict[int, tuple[int, int | None, int]] = {}
        for k in range(-d, d + 1, 2):
            if d == 0:
                x, came = 0, None
            else:
                options = []
                if k + 1 in prev and prev[k + 1] - k <= m:  # down: b's op left unmatched
                    options.append((prev[k + 1], k + 1))
                if k - 1 in prev and prev[k - 1] + 1 <= n:  # right: a's op left unmatched
                    options.append((prev[k - 1] + 1, k - 1))
                if not options:
                    continue
                x, came = max(options)
            start = x
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            cur[k] = (x, came, start)
            matches = (x + y - d) // 2
            if y == m and (best is None or matches > best[0]):
                best = (matches, d, k)
            elif matches > partial[0]:
                partial = (matches, d, k)
        steps.append(cur)
        if best is not None:
            break
        prev = {k: v[0] for k, v in cur.items()}
    _, d, k = best or partial
    out: list[tuple[int, int]] = []
    at: int | None = k
    while at is not None:
        x, came_from, start = steps[d][at]
        out.extend((i, i - at) for i in range(x - 1, start - 1, -1))
        at, d = came_from, d - 1
    out.reverse()
    return out


# Signature of one call's tensors without their addresses: what the warm-up must repeat.
_SIGNATURE = (
    "(SELECT json_group_array(json_array(t.role, t.pos, t.storage, t.shape, t.dtype, t.layout,"
    " t.memory_config, t.buffer_type)) FROM (SELECT * FROM tensors t0 WHERE t0.seq = e.seq"
    " ORDER BY t0.role, t0.pos) t)"
)


def _aligned(name: str | None, kind: str, signature: str | None) -> bool:
    """Calls that take part in the alignment: device ops. Frees, transfers, syncs and host-only
    ops compute nothing on the device and commonly stand between a warm-up and its capture."""
    return (kind == "op" and name is not None and name.rsplit(".", 1)[-1] not in MEMORY_ONLY
            and signature is not None and '"device"' in signature)  # fmt: skip


Window = list[tuple[int, str, str | None, str | None]]  # (seq, kind, name, signature), in order


def _look_back(conn: sqlite3.Connection, captured: list[tuple[str, str]], device: int | None,
               begin_seq: int, limit: int) -> tuple[Window, list[tuple[int, tuple[str, str]]], PrepRun | None]:  # fmt: skip
    """The last `limit` eager calls before a capture (back to an earlier capture, replay or prep
    run), its device ops, and the prep run `align_prep` finds among them."""
    window: Window = []
    rows = conn.execute(
        f"SELECT e.seq, e.kind, e.phase, e.name, CASE WHEN e.kind = 'op' THEN {_SIGNATURE} END"
        " FROM events e WHERE e.parent IS NULL AND e.seq < ?"
        " AND e.kind IN ('op', 'h2d', 'd2h', 'sync') AND (e.device IS ? OR e.device IS NULL)"
        " ORDER BY e.seq DESC LIMIT ?",
        (begin_seq, device, limit),
    )
    for seq, kind, phase, name, sig in rows:
        if phase != "eager":
            break  # an earlier capture, replay or prep run: the warm-up is after it
        window.append((seq, kind, name, sig))
    window.reverse()
    ops = [(seq, (str(name), str(sig))) for seq, kind, name, sig in window
           if _aligned(name, kind, sig)]  # fmt: skip
    return window, ops, align_prep(captured, [key for _, key in ops])


def tag_prep_runs(conn: sqlite3.Connection) -> int:
    """Set phase = 'prep' on every prep-run event (and its children); returns how many."""
    tagged = 0
    captures = conn.execute(
        "SELECT device, begin_seq, end_seq FROM traces WHERE end_seq IS NOT NULL ORDER BY begin_seq"
    ).fetchall()
    for device, begin_seq, end_seq in captures:
        captured = [
            (name, sig)
            for name, sig in conn.execute(
                f"SELECT e.name, {_SIGNATURE} FROM events e WHERE e.kind = 'op'"
                " AND e.parent IS NULL AND e.seq > ? AND e.seq < ? AND e.device IS ? ORDER BY e.seq",
                (begin_seq, end_seq, device),
            )
            if _aligned(name, "op", sig)
        ]
        if not captured:
            continue
        near = _NEAR_PER_OP * len(captured) + _NEAR_MARGIN
        window, ops, found = _look_back(conn, captured, device, begin_seq, near)
        if (found is None or len(found.pairs) < len(captured)) and len(window) == near:
            window, ops, found = _look_back(conn, captured, device, begin_seq,
                                            _WINDOW_PER_OP * len(captured) + _WINDOW_MARGIN)
        if found is None:
            continue
        start, stop = ops[found.first][0], ops[found.last][0]
        for seq, kind, _name, _sig in reversed(window):  # its input copies right before it
            if seq < start and kind != "h2d":
                break
            start = min(start, seq)
        # The prep run: its input copies, every call from its first aligned op to its last,
        # then the frees, transfers and syncs up to the capture (unaligned ops there are
        # another block).
        seqs = [(seq,) for seq, kind, name, sig in window
                if start <= seq <= stop or (seq > stop and not _aligned(name, kind, sig))]  # fmt: skip
        before = conn.total_changes
        conn.executemany("UPDATE events SET phase = 'prep' WHERE seq = ? AND phase = 'eager'", seqs)
        conn.executemany(
            "UPDATE events SET phase = 'prep' WHERE parent = ? AND phase = 'eager'", seqs
        )
        tagged += conn.total_changes - before
        conn.execute(
            "UPDATE events SET phase = 'prep' WHERE phase = 'eager' AND kind IN ('alloc', 'free')"
            " AND parent IS NULL AND seq BETWEEN ? AND ?",
            (start, begin_seq),
        )
    if tagged:  # the buffers a prep run allocated are drawn as such (HTML map, TUI)
        conn.execute("UPDATE buffers SET alloc_phase = 'prep' WHERE alloc_phase = 'eager' AND"
                     " alloc_seq IN (SELECT seq FROM events WHERE phase = 'prep')")  # fmt: skip
    return tagged
