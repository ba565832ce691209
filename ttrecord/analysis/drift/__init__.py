"""Address drift between two trace captures: align their ops, compare buffers, explain why.

Pure functions over the store's reader: `load_capture` reads one side, `diff_captures` turns two
sides into a `DriftReport`, `diff_targets` does both for what the user named on the command line
(or in the UI). Output lives in `ttrecord.report.drift` (terminal) and `ttrecord.report.drift_json` (JSON); nothing here prints or imports rich.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ttrecord.analysis import no_cycle_collection
from ttrecord.store.reader import Session

from .align import align
from .capture import CaptureSpec, load_capture, resolve_targets
from .cause import likely_cause, pair_live, reordered_cause, replay_overlaps
from .compare import buffer_moves, changed_inputs, drift_groups, pair_op_lists
from .signature import align_ops, op_signature
from .model import (
    Capture,
    CapturedOp,
    CaptureRef,
    Cause,
    DriftGroup,
    DriftReport,
    FieldChange,
    LiveBuffer,
    LiveDifference,
    OpPair,
    Overlap,
    OverlapSummary,
    PairStatus,
    Tensor,
)

__all__ = [
    "Capture", "CapturedOp", "CaptureRef", "CaptureSpec", "Cause", "DriftGroup", "DriftReport",
    "FieldChange", "LiveBuffer", "LiveDifference", "OpPair", "Overlap", "OverlapSummary",
    "PairStatus", "Tensor", "DIFF_STEPS", "align", "align_ops", "bulk", "diff_captures", "diff_targets",
    "load_capture", "resolve_targets", "unrehearsed",
]  # fmt: skip


def pair_ops(a: list[CapturedOp], b: list[CapturedOp],
             by_name: bool = False) -> tuple[list[OpPair], str, str]:  # fmt: skip
    """Align two op lists by what ran and compare every aligned pair; returns the pairs, the
    search method and what it aligned on (see `signature.align_ops`). `by_name`: a prep run
    (`a`) against its capture, which `diff --prep` and TR015 both align this way."""
    alignment = align_ops(a, b, by_name=by_name)
    return pair_op_lists(a, b, alignment.rows), alignment.method, alignment.key


def unrehearsed(pairs: list[OpPair]) -> list[int]:
    """Rows of ops on one side only whose signature the other side never ran: for a prep run
    and its capture, what one of them compiles that the other did not. A capture that loops
    over the warmed-up op (one warm-up call, k captured calls) repeats what was rehearsed."""
    ran_a = {op_signature(p.a) for p in pairs if p.a is not None}
    ran_b = {op_signature(p.b) for p in pairs if p.b is not None}
    return [k for k, p in enumerate(pairs)
            if (p.a is None and op_signature(p.b) not in ran_a)  # type: ignore[arg-type]
            or (p.b is None and p.a is not None and op_signature(p.a) not in ran_b)]  # fmt: skip


def diff_captures(a: Capture, b: Capture) -> DriftReport:
    """Everything that differs between two loaded captures, and the likely cause."""
    pairs, method, key = pair_ops(a.ops, b.ops, by_name=a.ref.prep)
    inputs = changed_inputs(pairs)
    if a.ref.prep:  # only inputs from outside the run must match between prep and capture,
        # and only ops one side never ran (a captured loop over the warmed-up op is rehearsed)
        first = min([*inputs, *unrehearsed(pairs)], default=None)
    else:
        first = next((k for k, p in enumerate(pairs) if p.status is not PairStatus.SAME), None)
    moves = buffer_moves(pairs)
    same_session = Path(a.ref.path).resolve() == Path(b.ref.path).resolve()
    differences, moved_live = pair_live(a.live_at_start, b.live_at_start, moves, same_session)
    cause = likely_cause(pairs[first], differences, moved_live) if first is not None else None
    if cause is None and first is not None:
        cause = reordered_cause(pairs)
    return DriftReport(
        a=a.ref,
        b=b.ref,
        mode="prep" if a.ref.prep else "captures",
        method=method,
        pairs=pairs,
        first_divergence=first,
        cause=cause,
        changed_inputs=inputs,
        live_differences=differences,
        groups=drift_groups(moves),
        overlaps=replay_overlaps(a, b, moves),
        key=key,
    )


bulk = no_cycle_collection  # one owner of the pause (ttrecord.analysis)


DIFF_STEPS = 3  # for progress bars: reading each side, then comparing


def diff_targets(a: CaptureSpec, b: CaptureSpec | None,
                 on_step: Callable[[str], None] | None = None) -> DriftReport:  # fmt: skip
    """Open the sessions, load both sides and diff them. `b=None`: the prep run of `a` vs `a`.
    `on_step(what)` is called as each of the DIFF_STEPS steps starts (progress bars).

    Raises SessionError / TtrecordError (one line) for files or captures that do not exist.
    """
    step = on_step or (lambda _what: None)
    with bulk():
        return _diff_targets(a, b, step)


def _diff_targets(a: CaptureSpec, b: CaptureSpec | None, step: Callable[[str], None]) -> DriftReport:
    with Session.open(a.path) as sa:
        step("reading the first capture")
        if b is None:
            prep = load_capture(sa, a.number, prep=True)
            step("reading the second capture")
            capture = load_capture(sa, a.number, frees=False)
            step("aligning and comparing ops")
            return diff_captures(prep, capture)
        capture_a = load_capture(sa, a.number)
        if b.path == a.path:
            step("reading the second capture")
            capture_b = load_capture(sa, b.number)
            step("aligning and comparing ops")
            return diff_captures(capture_a, capture_b)
    with Session.open(b.path) as sb:
        step("reading the second capture")
        capture_b = load_capture(sb, b.number)
    step("aligning and comparing ops")
    return diff_captures(capture_a, capture_b)
