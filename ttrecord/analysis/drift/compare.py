"""Compares aligned ops tensor by tensor and summarises how the buffers moved.

Only what a replay depends on is compared: where each input and output lives (address, bank
size, buffer type) and what it is (storage, shape, dtype, layout, memory config). Tensor ids
are per-run names and never compared.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ttrecord.events import TensorRef

from .model import CapturedOp, DriftGroup, FieldChange, OpPair

_FIELDS = ("storage", "shape", "dtype", "layout", "memory_config", "buffer_type", "address", "size")


def _signature(t: TensorRef) -> tuple:
    b = t.buffer
    if b is None:
        return (t.storage, t.shape, t.dtype, t.layout, t.memory_config, None, None, None)
    return (t.storage, t.shape, t.dtype, t.layout, t.memory_config, b.buffer_type, b.address, b.size)


def compare_ops(a: CapturedOp, b: CapturedOp) -> tuple[FieldChange, ...]:
    """Every field that differs between two aligned ops' tensors, inputs first."""
    changes: list[FieldChange] = []
    for role, ta, tb in (("in", a.inputs, b.inputs), ("out", a.outputs, b.outputs)):
        if len(ta) != len(tb):
            changes.append(FieldChange(role, "count", len(ta), len(tb)))
        for pos, (x, y) in enumerate(zip(ta, tb)):
            sx, sy = _signature(x), _signature(y)
            if sx == sy:
                continue
            slot = f"{role}{pos}"
            changes.extend(
                FieldChange(slot, name, vx, vy)
                for name, vx, vy in zip(_FIELDS, sx, sy)
                if vx != vy
            )
    return tuple(changes)


def drift_groups(pairs: list[OpPair]) -> list[DriftGroup]:
    """Per device and buffer type: how many of A's buffers moved, and by which offsets.

    A constant offset (every moved buffer shifted by the same amount) is the signature of one
    extra or missing allocation below them; several offsets mean the layout was reshuffled.
    """
    moves: dict[tuple[int, str], dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for pair in pairs:
        if pair.a is None or pair.b is None:
            continue
        for ta, tb in ((pair.a.inputs, pair.b.inputs), (pair.a.outputs, pair.b.outputs)):
            for x, y in zip(ta, tb):
                bx, by = x.buffer, y.buffer
                if bx is None or by is None or bx.buffer_type != by.buffer_type:
                    continue
                moves[(bx.device, bx.buffer_type)][bx.address].add(by.address)
    groups = []
    for (device, btype), targets in sorted(moves.items()):
        offsets: Counter[int] = Counter()
        moved = 0
        for address, new in targets.items():
            deltas = {n - address for n in new}
            if deltas != {0}:
                moved += 1
                offsets.update(d for d in deltas if d != 0)
        if moved == 0:
            kind = "unchanged"
        elif len(offsets) == 1:
            kind = "constant_offset"
        else:
            kind = "reshuffled"
        groups.append(
            DriftGroup(device, btype, len(targets), moved, kind, tuple(offsets.most_common()))
        )
    return groups
