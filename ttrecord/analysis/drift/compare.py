"""Compares aligned ops tensor by tensor and summarises how the buffers moved.

Only what a replay depends on is compared: where each input and output lives (address, bank
size, buffer type) and what it is (storage, shape, dtype, layout, memory config). Tensor ids
are per-run names and never compared.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from operator import itemgetter

from .model import COMPARED, TENSOR_FIELDS, CapturedOp, DriftGroup, FieldChange, OpPair, Tensor

_ADDRESS = TENSOR_FIELDS.index("address")
_TYPE = TENSOR_FIELDS.index("buffer_type")


_new = tuple.__new__  # builds NamedTuples without their Python-level __new__ (hot path)


_SLOTS = {role: tuple(f"{role}{pos}" for pos in range(64)) for role in ("in", "out")}
_SIZE = _ADDRESS + 1


def _tensor_changes(slot: str, x: Tensor, y: Tensor) -> list[FieldChange]:
    return [
        FieldChange(slot, "shape", x.shape, y.shape) if name == "shape_json"
        else FieldChange(slot, name, x[k], y[k])
        for k, name in enumerate(TENSOR_FIELDS)
        if x[k] != y[k]
    ]  # fmt: skip


def _slot_changes(role: str, ta: tuple, tb: tuple, changes: list[FieldChange]) -> None:
    if len(ta) != len(tb):
        changes.append(FieldChange(role, "count", len(ta), len(tb)))
    slots = _SLOTS[role]
    for pos in range(min(len(ta), len(tb))):
        x, y = ta[pos], tb[pos]
        if x == y:
            continue
        slot = slots[pos] if pos < len(slots) else f"{role}{pos}"
        if x[_ADDRESS] != y[_ADDRESS] and x[_SIZE] == y[_SIZE] and x[:_ADDRESS] == y[:_ADDRESS]:
            changes.append(_new(FieldChange, (slot, "address", x[_ADDRESS], y[_ADDRESS])))
        elif x[:COMPARED] != y[:COMPARED]:  # not just another device
            changes += _tensor_changes(slot, x, y)


def compare_ops(a: CapturedOp, b: CapturedOp) -> tuple[FieldChange, ...]:
    """Every field that differs between two aligned ops' tensors, inputs first."""
    ai, bi, ao, bo = a[6], b[6], a[7], b[7]  # inputs, outputs (hot path: no descriptors)
    if ai == bi and ao == bo:
        return ()
    changes: list[FieldChange] = []
    if ai != bi:
        _slot_changes("in", ai, bi, changes)
    if ao != bo:
        _slot_changes("out", ao, bo, changes)
    return tuple(changes)


_ADDRESS_ONLY = frozenset(("address", "size"))
_field = itemgetter(1)


def pair_op_lists(a: list[CapturedOp], b: list[CapturedOp],
                  rows: list[tuple[int | None, int | None, str]]) -> list[OpPair]:  # fmt: skip
    """OpPairs for an alignment's rows (i, j, match kind), each aligned pair compared. A
    "site" pair (same call site) is "exact" unless its tensors differ in more than where they
    live: then it matched by call site only.

    A capture loops over a few buffers, so the same pair of tensor tuples comes back for most
    ops (`load_capture` shares one tuple per distinct value): each pair is compared once and
    its changes shared, which saves most of the comparing and 60 MB on 300,000 changed ops."""
    pairs: list[OpPair] = []
    append = pairs.append
    seen: dict[tuple[int, int, int, int], tuple[FieldChange, ...]] = {}
    for i, j, kind in rows:
        if i is None:
            append(_new(OpPair, (None, b[j], (), "")))  # type: ignore[index]
        elif j is None:
            append(_new(OpPair, (a[i], None, (), "")))
        else:
            x, y = a[i], b[j]
            key = (id(x[6]), id(y[6]), id(x[7]), id(y[7]))  # the ops keep these alive
            changes = seen.get(key)
            if changes is None:
                changes = seen[key] = compare_ops(x, y)
            if kind == "site":
                kind = ("exact" if not changes or _ADDRESS_ONLY.issuperset(map(_field, changes))
                        else "call_site")  # fmt: skip
            append(_new(OpPair, (x, y, changes, kind)))
    return pairs


def changed_inputs(pairs: list[OpPair]) -> list[int]:
    """Rows whose changed inputs come from outside the run: buffers no earlier op of that run
    wrote (weights, uploaded inputs, caches). Those must be identical between a prep run and
    its capture; intermediates may move while the prep run's outputs are still alive."""
    written_a: set = set()
    written_b: set = set()
    rows = []
    for k, (a, b, changes, _) in enumerate(pairs):
        if changes and a is not None and b is not None and _outside_input_changed(a, b, changes, written_a, written_b):
            rows.append(k)
        if a is not None:
            written_a.update([(t[_TYPE], t[_ADDRESS]) for t in a[7]])
        if b is not None:
            written_b.update([(t[_TYPE], t[_ADDRESS]) for t in b[7]])
    return rows


def _outside_input_changed(a: CapturedOp, b: CapturedOp, changes: tuple[FieldChange, ...],
                           written_a: set, written_b: set) -> bool:  # fmt: skip
    for change in changes:
        slot = change.slot
        if slot == "in":  # a different number of inputs
            return True
        if not slot.startswith("in"):
            continue
        pos = int(slot[2:])
        ta, tb = a.inputs[pos], b.inputs[pos]
        if (ta[_TYPE], ta[_ADDRESS]) not in written_a or (tb[_TYPE], tb[_ADDRESS]) not in written_b:
            return True
    return False


Range = tuple  # (device, buffer type, address, size) of a buffer as ops use it


def buffer_moves(pairs: list[OpPair]) -> dict[Range, set[Range]]:
    """For every buffer range of A the aligned ops use: the ranges B uses in the same slots."""
    moves: dict[Range, set[Range]] = defaultdict(set)
    for pair in pairs:
        a, b = pair.a, pair.b
        if a is None or b is None:
            continue
        for ta, tb in ((a.inputs, b.inputs), (a.outputs, b.outputs)):
            for x, y in zip(ta, tb):
                if x.address is not None or y.address is not None:
                    moves[(x.device, x.buffer_type, x.address, x.size)].add(
                        (y.device, y.buffer_type, y.address, y.size)
                    )
    return moves


def drift_groups(moves: dict[Range, set[Range]]) -> list[DriftGroup]:
    """Per device and buffer type: how many of A's buffers moved, and by which offsets.

    A constant offset (every moved buffer shifted by the same amount) is the signature of one
    extra or missing allocation below them; several offsets mean the layout was reshuffled.
    """
    per_type: dict[tuple, tuple[list[int], Counter[int]]] = {}
    for (device, btype, address, _size), targets in moves.items():
        if address is None:
            continue
        count, offsets = per_type.setdefault((device or 0, btype), ([0, 0], Counter()))
        count[0] += 1
        deltas = {t[2] - address for t in targets if t[2] is not None and t[1] == btype}
        if deltas and deltas != {0}:
            count[1] += 1
            offsets.update(d for d in deltas if d != 0)
    groups = []
    for (device, btype), ((buffers, moved), offsets) in sorted(per_type.items()):
        if moved == 0:
            kind = "unchanged"
        elif len(offsets) == 1:
            kind = "constant_offset"
        else:
            kind = "reshuffled"
        groups.append(DriftGroup(device, btype, buffers, moved, kind, tuple(offsets.most_common())))
    return groups
