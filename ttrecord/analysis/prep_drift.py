"""TR015 capture differs from its prep run (path instability).

The prep run is the eager pass before `begin_trace_capture` that repeats the captured ops (found
by aligning op names and tensor signatures and tagged `prep` when the session is stored, see
`store/prep.py`; `diff --prep` reads the same tags); it exists to
compile every program and settle every allocation the capture will use. When the capture then
runs other ops, or the same ops on other shapes, dtypes, layouts or memory configs, the prep run
warmed a different path: what the capture compiles or allocates was never rehearsed.

The two op lists are aligned exactly as `ttrecord diff --prep` aligns them
(`drift.pair_ops`); the finding is pinned to the first divergent call. Moved addresses alone
are not a divergence (intermediates may move while the prep run's outputs are alive; TR005 and
the diff cover inputs), and neither is an op one side runs more often than the other when the
other ran it with the same tensors (a captured loop over the warmed-up op compiles nothing new).
Host-only ops are left out (nothing compiles; TR008 covers them in
a capture). A first divergent call that also grew the program cache is left to
TR013, which reports the same mistake with the compile it caused.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence

from ttrecord.analysis.context import Context, TraceInfo
from ttrecord.analysis.drift import pair_ops, unrehearsed
from ttrecord.analysis.drift.model import CapturedOp, OpPair, PairStatus, Tensor
from ttrecord.analysis.rules import finding, where
from ttrecord.events import Event, Kind, NoteKind, Phase, TensorRef
from ttrecord.store.prep import MEMORY_ONLY
from ttrecord.findings import Finding

_PATH_FIELDS = frozenset(("shape", "dtype", "layout", "memory_config", "storage", "count",
                          "buffer_type"))  # fmt: skip


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    prep_ops: list[Event] = []
    captured_ops: list[Event] = []
    compiled: set[int] = set()
    for ev in events:
        if ev.kind is Kind.OP and ev.parent is None:
            if ev.name.rsplit(".", 1)[-1] in MEMORY_ONLY:
                continue  # a free or bare allocation compiles nothing: where it runs cannot diverge
            if ev.phase is Phase.PREP:
                prep_ops.append(ev)
            elif ev.phase is Phase.CAPTURE:
                captured_ops.append(ev)
        elif ev.kind is Kind.NOTE and ev.name == NoteKind.PROGRAM_CACHE_MISS and ev.parent is not None:
            call = ctx.calls.get(ev.parent)
            if call is not None:
                compiled.add(ctx.outermost(call).seq)
    if not prep_ops:
        return []
    prep_seqs = [e.seq for e in prep_ops]
    captured_seqs = [e.seq for e in captured_ops]
    findings = []
    previous_end: dict[int | None, int] = {}
    for t in sorted(ctx.traces, key=lambda t: t.begin.seq):
        if t.end is None:
            continue
        after = previous_end.get(t.device, 0)
        previous_end[t.device] = t.end.seq
        prep = _between(prep_ops, prep_seqs, after, t.begin.seq, t.device)
        if not prep:
            continue
        captured = _between(captured_ops, captured_seqs, t.begin.seq, t.end.seq, t.device)
        f = _first_divergence(ctx, t, prep, captured, compiled)
        if f is not None:
            findings.append(f)
    return findings


def _between(ops: list[Event], seqs: list[int], after: int, before: int,
             device: int | None) -> list[Event]:  # fmt: skip
    """The ops of `device` with after < seq < before (bisect: no pass over the run per trace)."""
    lo, hi = bisect.bisect_right(seqs, after), bisect.bisect_left(seqs, before)
    return [e for e in ops[lo:hi] if e.device == device]


def _first_divergence(ctx: Context, t: TraceInfo, prep: list[Event], captured: list[Event],
                      compiled: set[int]) -> Finding | None:  # fmt: skip
    a, b = _ops(ctx, prep), _ops(ctx, captured)
    pairs, _method, _key = pair_ops(a, b, by_name=True)
    new = set(unrehearsed(pairs))
    for k, pair in enumerate(pairs):
        fields = {c.field for c in pair.changes}
        if pair.status is PairStatus.CHANGED and not fields & _PATH_FIELDS:
            continue
        if pair.status is PairStatus.SAME:
            continue
        if (pair.a is None or pair.b is None) and k not in new:
            continue  # one side repeats an op the other ran: nothing new compiles
        if pair.b is not None and pair.b.seq in compiled:
            return None  # TR013 reports it
        return _finding(ctx, t, pair, prep, k)
    return None


def _finding(ctx: Context, t: TraceInfo, pair: OpPair, prep: list[Event], row: int) -> Finding:
    lines = f"{where(ctx, prep[0])}–{where(ctx, prep[-1]).rsplit(':', 1)[-1]}"
    head = f"The capture of trace {t.trace_id} differs from its prep run ({lines})"
    evidence: dict = {"trace": t.trace_id, "row": row, "prep_run": lines}
    if pair.a is None:
        culprit = ctx.calls[pair.b.seq]  # type: ignore[union-attr]
        detail = f"`{culprit.name}` runs in the capture but not in the prep run"
        evidence["only_in"] = "capture"
    elif pair.b is None:
        culprit = ctx.calls[pair.a.seq]
        detail = f"`{culprit.name}` ran in the prep run but not in the capture"
        evidence["only_in"] = "prep run"
    else:
        culprit = ctx.calls[pair.b.seq]
        diffs = _describe(pair)
        detail = f"`{culprit.name}` runs with " + "; ".join(diffs)
        evidence["differs"] = diffs
    message = (f"{head} at its first divergent call: {detail}. The prep run compiled and"
               " allocated for another path, so this call is compiled or allocated for the first"
               " time inside the capture.")  # fmt: skip
    fix = ("Make the prep run execute exactly the captured sequence (same branch, shapes,"
           " dtypes, layouts and memory configs), e.g. call the same step function with the same"
           " inputs before begin_trace_capture.")  # fmt: skip
    related = [pair.a.seq] if pair.a is not None and pair.a.seq != culprit.seq else []
    return finding("TR015", ctx, culprit, message, fix=fix, related=related, evidence=evidence,
                   trace=t.trace_id)  # fmt: skip


def _describe(pair: OpPair) -> list[str]:
    out = []
    for change in pair.changes:
        if change.field not in _PATH_FIELDS:
            continue
        slot = change.slot
        role = "input" if slot.startswith("in") else "output"
        if change.field == "count":
            out.append(f"{change.b} {role}s (prep run: {change.a})")
            continue
        label = f"{role} {slot.lstrip('inout')} {change.field}"
        now, was = change.b, change.a
        if change.field == "shape":
            now, was = list(now), list(was)
        out.append(f"{label} {now} (prep run: {was})")
    return out


def _ops(ctx: Context, calls: list[Event]) -> list[CapturedOp]:
    """Calls as the diff's CapturedOps (what `drift.capture.load_capture` reads from a file)."""
    seen: dict[tuple, int] = {}
    out: list[CapturedOp] = []
    for ev in calls:
        if not any(t.storage == "device" for t in (*ev.inputs, *ev.outputs)):
            continue  # host work compiles nothing on the device (TR008 covers it in capture)
        site = ctx.site(ev)
        file, line, function = (site.file, site.line, site.function) if site else ("?", 0, "?")
        key = (ev.name, file, line)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        out.append(CapturedOp(ev.seq, len(out), ev.name, file, line, function,
                              tuple(map(_tensor, ev.inputs)), tuple(map(_tensor, ev.outputs)),
                              occurrence))  # fmt: skip
    return out


def _tensor(t: TensorRef) -> Tensor:
    b = t.buffer
    return Tensor(t.storage, json.dumps(list(t.shape), separators=(",", ":")), t.dtype, t.layout,
                  t.memory_config, b.buffer_type if b else None, b.address if b else None,
                  b.size if b else None, b.device if b else None)  # fmt: skip
