"""Explains drift: which allocation shifted the layout, and where baked addresses now land.

The allocator places every buffer by what is live at that moment, so the layout a capture
bakes in is decided by the buffers live when it begins. Pairing those buffers between the two
runs (by buffer type, size and the call that made them, in allocation order) leaves the extra
and missing ones, and the ones kept at another address; the likely cause of the first
divergence is the unpaired buffer that now sits where the other run put the diverging tensor,
else the nearest unpaired one the allocator placed before it, else a kept one that sits there.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from ttrecord.events import BufferRef

from .align import align, slide
from .model import (
    Capture,
    Cause,
    FieldChange,
    LiveBuffer,
    LiveDifference,
    OpPair,
    Overlap,
    OverlapSummary,
)

MAX_OVERLAP_EXAMPLES = 200


def pair_live(a: list[LiveBuffer], b: list[LiveBuffer],
              moves: dict[tuple, set[tuple]] | None = None, same_session: bool = False,
              ) -> tuple[list[LiveDifference], list[tuple[LiveBuffer, LiveBuffer]]]:  # fmt: skip
    """Pair the buffers live before each run's capture: the unpaired ones, and the pairs that
    sit at other addresses.

    Within one session a buffer is itself (same allocation event). Across sessions, a buffer
    that aligned ops use in the same slot is the same tensor in both runs (`moves`, from
    `compare.buffer_moves`): that survives any edit of the code. The rest pair by buffer
    type, size and allocating call, in allocation order, with the call site as a tie-break
    only: an inserted line shifts every later line, and must not unpair what it shifted.
    """
    a = sorted(a, key=lambda lb: lb.alloc_seq)
    b = sorted(b, key=lambda lb: lb.alloc_seq)
    if same_session:
        where = {lb.alloc_seq: j for j, lb in enumerate(b)}
        paired = {i: where[lb.alloc_seq] for i, lb in enumerate(a) if lb.alloc_seq in where}
    else:
        paired = _paired_by_use(a, b, moves or {})
    rest_a = [i for i in range(len(a)) if i not in paired]
    taken = set(paired.values())
    rest_b = [j for j in range(len(b)) if j not in taken]
    ka = [_live_signature(a[i]) for i in rest_a]
    kb = [_live_signature(b[j]) for j in rest_b]
    rows, _ = align(ka, kb)
    matches = [(x, y) for x, y in rows if x is not None and y is not None]
    matches, _ = slide(matches, ka, kb,
                       lambda x, y: _live_site_score(a[rest_a[x]], b[rest_b[y]]),
                       len(ka), len(kb))  # fmt: skip
    paired.update((rest_a[x], rest_b[y]) for x, y in matches)
    taken = set(paired.values())
    unpaired = [LiveDifference("a", a[i]) for i in range(len(a)) if i not in paired]
    unpaired += [LiveDifference("b", b[j]) for j in range(len(b)) if j not in taken]
    moved = [(a[i], b[j]) for i, j in sorted(paired.items())
             if a[i].buffer.address != b[j].buffer.address]  # fmt: skip
    return unpaired, moved


def _live_signature(live: LiveBuffer) -> tuple:
    return (live.buffer.buffer_type, live.buffer.size, live.call)


def _live_site_score(x: LiveBuffer, y: LiveBuffer) -> int:
    score = 2 if x.function == y.function else 0
    if x.file == y.file:
        score += 1 + (4 if x.line == y.line else 0)
    elif Path(x.file).name == Path(y.file).name:
        score += 1
    return score


def _paired_by_use(a: list[LiveBuffer], b: list[LiveBuffer],
                   moves: dict[tuple, set[tuple]]) -> dict[int, int]:  # fmt: skip
    """Index pairs of live buffers that aligned ops use in the same slot, one to one."""
    if not moves:
        return {}
    where_b = {(lb.buffer.buffer_type, lb.buffer.address): j for j, lb in enumerate(b)}
    targets: dict[tuple, set[tuple]] = defaultdict(set)  # devices may be numbered differently
    for (_, btype, address, _), seen in moves.items():
        targets[(btype, address)].update((t[1], t[2]) for t in seen)
    paired: dict[int, int] = {}
    taken: set[int] = set()
    for i, lb in enumerate(a):
        found = targets.get((lb.buffer.buffer_type, lb.buffer.address), ())
        js = {where_b[t] for t in found if t in where_b}
        if len(js) == 1:
            (j,) = js
            if j not in taken:
                paired[i] = j
                taken.add(j)
    return paired


def reordered_cause(pairs: list[OpPair]) -> Cause | None:
    """When no allocation explains the divergence: the first pair of ops that ran in another
    order (the allocator then hands their outputs out in another order too)."""
    for pair in pairs:
        if pair.match == "reordered":
            return Cause(None, displaced=None, reordered=pair)
    return None


def _moved_buffer(pair: OpPair) -> tuple[FieldChange, BufferRef, BufferRef] | None:
    """The first tensor of an aligned pair whose address changed, with both buffers."""
    assert pair.a is not None and pair.b is not None
    for change in pair.changes:
        if change.field != "address":
            continue
        role = "in" if change.slot.startswith("in") else "out"
        pos = int(change.slot[len(role) :])
        ta = (pair.a.inputs if role == "in" else pair.a.outputs)[pos]
        tb = (pair.b.inputs if role == "in" else pair.b.outputs)[pos]
        if ta.buffer is not None and tb.buffer is not None:
            return change, ta.buffer, tb.buffer
    return None


def _covers(live: BufferRef, tensor: BufferRef) -> bool:
    """Same buffer type and intersecting ranges; devices are not compared, since the two runs
    may number their devices differently."""
    return (live.buffer_type == tensor.buffer_type and live.address < tensor.end
            and tensor.address < live.end)  # fmt: skip


def likely_cause(pair: OpPair, differences: list[LiveDifference],
                 moved_live: Sequence[tuple[LiveBuffer, LiveBuffer]] = ()) -> Cause | None:  # fmt: skip
    """The live buffer that best explains the first divergent pair's moved address.

    In order: an unpaired buffer sitting where the other run put the tensor; the nearest
    unpaired one on the side the allocator fills from (it pushed everything after it, possibly
    through other buffers); a buffer both runs keep that one run keeps exactly there; the
    latest unpaired one of that buffer type.
    """
    if pair.a is None or pair.b is None:
        return None
    moved = _moved_buffer(pair)
    if moved is None:
        return None
    _, ba, bb = moved
    for diff in differences:
        if _covers(diff.live.buffer, ba if diff.run == "b" else bb):
            return Cause(diff, displaced=(ba if diff.run == "b" else bb).address)
    nearest = _nearest_unpaired(ba, bb, differences)
    if nearest is not None:
        return Cause(nearest, displaced=None)
    for live_a, live_b in moved_live:
        if _covers(live_b.buffer, ba):
            return Cause(LiveDifference("b", live_b), displaced=ba.address, counterpart=live_a)
        if _covers(live_a.buffer, bb):
            return Cause(LiveDifference("a", live_a), displaced=bb.address, counterpart=live_b)
    same_type = [d for d in differences if d.live.buffer.buffer_type == ba.buffer_type]
    if same_type:
        return Cause(max(same_type, key=lambda d: d.live.alloc_seq), displaced=None)
    return None


def _nearest_unpaired(ba: BufferRef, bb: BufferRef,
                      differences: list[LiveDifference]) -> LiveDifference | None:  # fmt: skip
    """The unpaired buffer closest to the tensor on the side the allocator fills from: below
    it for bottom-up DRAM, above it for top-down L1."""
    top_down = ba.buffer_type.startswith("L1")
    candidates = []
    for d in differences:
        live, own = d.live.buffer, (bb if d.run == "b" else ba)
        if live.buffer_type != ba.buffer_type:
            continue
        if (live.address >= own.end) if top_down else (live.address <= own.address):
            candidates.append((abs(live.address - own.address), -d.live.alloc_seq, d))
    return min(candidates, key=lambda c: c[:2])[2] if candidates else None


def _trace_ranges(capture: Capture) -> dict[tuple, int]:
    """(device, buffer type, address, size) of every buffer the ops use -> first op seq."""
    ranges: dict[tuple, int] = {}
    seen: set[int] = set()  # tensor tuples are shared between ops: each is read once
    for op in capture.ops:
        for tensors in (op[6], op[7]):
            if id(tensors) in seen:
                continue
            seen.add(id(tensors))
            for t in tensors:
                if t[6] is not None:  # address
                    key = (t[8], t[5], t[6], t[7])  # device, buffer type, address, size
                    if key not in ranges:
                        ranges[key] = op[0]
    return ranges


def _stable_ranges(moves: dict[tuple, set[tuple]]) -> set[tuple]:
    """Ranges every aligned pair keeps in place: the other run's buffer there is the same one."""
    stable: set[tuple] = set()
    unstable: set[tuple] = set()
    for ka, targets in moves.items():
        for kb in targets:
            (stable if ka[1:] == kb[1:] else unstable).update((ka, kb))
    return stable - unstable


def _overlaps(trace_run: str, ranges: dict, live: list[tuple[BufferRef, int]],
              stable: set, own_until: int | None) -> list[Overlap]:  # fmt: skip
    """Every (trace range, live buffer) overlap. `own_until`: both runs are one session, so a
    live buffer at exactly a trace range allocated by then is the trace's own buffer."""
    by_type: dict[tuple[int, str], list[tuple[int, int, int]]] = defaultdict(list)
    for buf, alloc_seq in live:
        by_type[(buf.device, buf.buffer_type)].append((buf.address, buf.size, alloc_seq))
    for bucket in by_type.values():
        bucket.sort()
    widest = {k: max(s for _, s, _ in v) for k, v in by_type.items()}
    found: list[Overlap] = []
    for (device, btype, address, size), op_seq in ranges.items():
        bucket = by_type.get((device, btype)) or []
        if not bucket:
            continue
        end = address + size
        idx = bisect_left(bucket, (end, -1, -1)) - 1
        while idx >= 0 and bucket[idx][0] + widest[(device, btype)] > address:
            o_addr, o_size, o_seq = bucket[idx]
            idx -= 1
            if o_addr + o_size <= address:
                continue
            if (o_addr, o_size) == (address, size) and (
                (device, btype, address, size) in stable
                or (own_until is not None and o_seq <= own_until)
            ):
                continue  # the same tensor in both runs, or the trace's own buffer
            found.append(Overlap(trace_run, btype, device, address, size, op_seq,
                                 o_addr, o_size, o_seq))  # fmt: skip
    found.sort(key=lambda o: (o.op_seq, o.address))
    return found


def replay_overlaps(a: Capture, b: Capture, moves: dict[tuple, set[tuple]]) -> OverlapSummary:
    """Would one run's trace, replayed in the other run's layout, touch that run's live buffers?"""
    if not (a.has_replay and b.has_replay):
        return OverlapSummary(checked=False)
    stable = _stable_ranges(moves)
    same_file = Path(a.ref.path).resolve() == Path(b.ref.path).resolve()
    a_end = a.ref.end_seq if same_file else None
    b_end = b.ref.end_seq if same_file else None
    a_over_b = _overlaps("a", _trace_ranges(a), b.replay_live, stable, a_end)
    b_over_a = _overlaps("b", _trace_ranges(b), a.replay_live, stable, b_end)
    examples = (a_over_b[: MAX_OVERLAP_EXAMPLES // 2] + b_over_a[: MAX_OVERLAP_EXAMPLES // 2])
    return OverlapSummary(True, len(a_over_b), len(b_over_a), tuple(examples))
