"""Compares aligned ops tensor by tensor and summarises how the buffers moved.

Only what a replay depends on is compared: where each input and output lives (address, bank
size, buffer type) and what it is (storage, shape, dtype, layout, memory config). Tensor ids
are per-run names and never compared.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from .model import COMPARED, TENSOR_FIELDS, CapturedOp, DriftGroup, FieldChange, OpPair

_ADDRESS = TENSOR_FIELDS.index("address")


def _tensor_changes(slot: str, x: tuple, y: tuple) -> list[FieldChange]:
    if x[:_ADDRESS] == y[:_ADDRESS] and x[_ADDRESS + 1 : COMPARED] == y[_ADDRESS + 1 : COMPARED]:
        return [FieldChange(slot, "address", x[_ADDRESS], y[_ADDRESS])]  # the common case
    return [
        FieldChange(slot, "shape", x.shape, y.shape) if name == "shape_json"
        else FieldChange(slot, name, x[k], y[k])
        for k, name in enumerate(TENSOR_FIELDS)
        if x[k] != y[k]
    ]  # fmt: skip


def compare_ops(a: CapturedOp, b: CapturedOp) -> tuple[FieldChange, ...]:
    """Every field that differs between two aligned ops' tensors, inputs first."""
    changes: list[FieldChange] = []
    for role, ta, tb in (("in", a.inputs, b.inputs), ("out", a.outputs, b.outputs)):
        if len(ta) != len(tb):
            changes.append(FieldChange(role, "count", len(ta), len(tb)))
        for pos, (x, y) in enumerate(zip(ta, tb)):
            if x[:COMPARED] != y[:COMPARED]:
                changes += _tensor_changes(f"{role}{pos}", x, y)
    return tuple(changes)


def changed_inputs(pairs: list[OpPair]) -> list[int]:
    """Rows whose changed inputs come from outside the run: buffers no earlier op of that run
    wrote (weights, uploaded inputs, caches). Those must be identical between a prep run and
    its capture; intermediates may move while the prep run's outputs are still alive."""
    written: tuple[set, set] = (set(), set())
    rows = []
    for k, pair in enumerate(pairs):
        if pair.a is not None and pair.b is not None and _outside_input_changed(pair, written):
            rows.append(k)
        for side, op in ((0, pair.a), (1, pair.b)):
            if op is not None:
                written[side].update((t.buffer_type, t.address) for t in op.outputs)
    return rows


def _outside_input_changed(pair: OpPair, written: tuple[set, set]) -> bool:
    for change in pair.changes:
        if change.slot == "in":  # a different number of inputs
            return True
        if not change.slot.startswith("in"):
            continue
        pos = int(change.slot[2:])
        for op, seen in ((pair.a, written[0]), (pair.b, written[1])):
            t = op.inputs[pos]  # type: ignore[union-attr]
            if (t.buffer_type, t.address) not in seen:
                return True
    return False


def tensor_pairs(pairs: list[OpPair]):
    """(A tensor, B tensor) for every tensor slot of every aligned pair."""
    for pair in pairs:
        a, b = pair.a, pair.b
        if a is None or b is None:
            continue
        yield from zip(a.inputs, b.inputs)
        yield from zip(a.outputs, b.outputs)


def drift_groups(pairs: list[OpPair]) -> list[DriftGroup]:
    """Per device and buffer type: how many of A's buffers moved, and by which offsets.

    A constant offset (every moved buffer shifted by the same amount) is the signature of one
    extra or missing allocation below them; several offsets mean the layout was reshuffled.
    """
    moves: dict[tuple, set[int]] = defaultdict(set)  # (device, type, A address) -> B addresses
    for x, y in tensor_pairs(pairs):
        if x.address is not None and y.address is not None and x.buffer_type == y.buffer_type:
            moves[(x.device, x.buffer_type, x.address)].add(y.address)
    per_type: dict[tuple, tuple[list[int], Counter[int]]] = {}
    for (device, btype, address), new in moves.items():
        count, offsets = per_type.setdefault((device, btype), ([0, 0], Counter()))
        count[0] += 1
        deltas = {n - address for n in new}
        if deltas != {0}:
            count[1] += 1
            offsets.update(d for d in deltas if d != 0)
    groups = []
    for (device, btype), ((buffers, moved), offsets) in sorted(
        per_type.items(), key=lambda kv: (kv[0][0] if kv[0][0] is not None else -1, kv[0][1])
    ):
        if moved == 0:
            kind = "unchanged"
        elif len(offsets) == 1:
            kind = "constant_offset"
        else:
            kind = "reshuffled"
        groups.append(
            DriftGroup(device or 0, btype, buffers, moved, kind, tuple(offsets.most_common()))
        )
    return groups
