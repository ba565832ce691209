"""Drift reports as the documented JSON structure (docs/diff-json.md).

The structure is versioned and validated against docs/diff-json.schema.json in the tests; additions keep
the version, changes bump it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from ttrecord.jsonstream import ArrayWriter

from ttrecord.analysis.drift.model import (
    CapturedOp,
    CaptureRef,
    Cause,
    DriftReport,
    FieldChange,
    LiveBuffer,
    OpPair,
    Overlap,
    PairStatus,
)

JSON_VERSION = 1
INDENT_MAX_ROWS = 2000  # larger documents are written on one line, streamed


def _capture_json(ref: CaptureRef, ops: int) -> dict[str, Any]:
    return {
        "path": ref.path,
        "capture": ref.number,
        "prep": ref.prep,
        "device": ref.device,
        "trace_id": ref.trace_id,
        "begin_seq": ref.begin_seq,
        "end_seq": ref.end_seq,
        "ops": ops,
    }


def _op_json(op: CapturedOp | None) -> dict[str, Any] | None:
    if op is None:
        return None
    return {
        "seq": op.seq,
        "index": op.index,
        "name": op.name,
        "file": op.file,
        "line": op.line,
        "function": op.function,
        "occurrence": op.occurrence,
    }


def _change_json(c: FieldChange) -> dict[str, Any]:
    fix: Callable[[Any], Any] = (lambda v: list(v) if isinstance(v, tuple) else v)  # noqa: E731
    return {"slot": c.slot, "field": c.field, "a": fix(c.a), "b": fix(c.b)}


def _pair_json(index: int, pair: OpPair) -> dict[str, Any]:
    return {
        "index": index,
        "status": str(pair.status),
        "a": _op_json(pair.a),
        "b": _op_json(pair.b),
        "changes": [_change_json(c) for c in pair.changes],
        "match": pair.match or None,
    }


def _live_json(run: str, live: LiveBuffer) -> dict[str, Any]:
    b = live.buffer
    return {
        "run": run,
        "device": b.device,
        "buffer_type": b.buffer_type,
        "address": b.address,
        "size": b.size,
        "alloc_seq": live.alloc_seq,
        "call": live.call,
        "file": live.file,
        "line": live.line,
        "function": live.function,
    }


def _cause_json(cause: Cause | None) -> dict[str, Any] | None:
    if cause is None:
        return None
    diff = cause.difference
    if diff is None:  # ops that ran in another order
        pair = cause.reordered
        swapped = {"a": _op_json(pair.a), "b": _op_json(pair.b)} if pair else None
        return {"kind": "reordered_ops", "allocation": None, "displaced_address": None,
                "counterpart": None, "reordered": swapped}
    if cause.counterpart is not None:
        kind = "moved_allocation"
    else:
        kind = "extra_allocation" if diff.run == "b" else "missing_allocation"
    other = "a" if diff.run == "b" else "b"
    return {
        "kind": kind,
        "allocation": _live_json(diff.run, diff.live),
        "displaced_address": cause.displaced,
        "counterpart": _live_json(other, cause.counterpart) if cause.counterpart else None,
        "reordered": None,
    }


def _overlap_json(o: Overlap) -> dict[str, Any]:
    return {
        "trace_run": o.trace_run,
        "device": o.device,
        "buffer_type": o.buffer_type,
        "address": o.address,
        "size": o.size,
        "op_seq": o.op_seq,
        "live_address": o.other_address,
        "live_size": o.other_size,
        "live_alloc_seq": o.other_alloc_seq,
    }


def _rows(report: DriftReport, all_ops: bool) -> Iterator[dict[str, Any]]:
    for k, p in enumerate(report.pairs):
        if all_ops or p.status is not PairStatus.SAME:
            yield _pair_json(k, p)

def _matched_json(report: DriftReport) -> dict[str, int]:
    counts = report.matched()
    return {k: counts[k] for k in ("exact", "signature", "call_site", "op", "reordered")}


def to_json(report: DriftReport, all_ops: bool = False) -> dict[str, Any]:
    """The documented JSON structure; `ops` lists only differing rows unless all_ops."""
    return {**_head(report), "ops": list(_rows(report, all_ops))}


def write_json(report: DriftReport, out: TextIO, all_ops: bool = False) -> None:
    """`to_json` written to `out` (and a newline): indented when it lists at most
    INDENT_MAX_ROWS ops, else on one line, its ops encoded a few thousand at a time so a
    300,000-row document is never held in memory (the bytes are those of `json.dumps`)."""
    rows = sum(1 for p in report.pairs if all_ops or p.status is not PairStatus.SAME)
    if rows <= INDENT_MAX_ROWS:
        # Indented output goes through json's pure-Python encoder: only for small reports.
        out.write(json.dumps(to_json(report, all_ops), indent=2) + "\n")
        return
    head = json.dumps(_head(report))
    out.write(head[:-1] + ', "ops": ')
    writer = ArrayWriter(out, separators=(", ", ": "))
    for row in _rows(report, all_ops):
        writer.add(row)
    writer.close()
    out.write("}\n")


def _head(report: DriftReport) -> dict[str, Any]:
    """Every key of the document but `ops` (which comes last)."""
    n_a = sum(1 for p in report.pairs if p.a is not None)
    n_b = sum(1 for p in report.pairs if p.b is not None)
    first = report.first_divergence
    counts = {str(s): 0 for s in PairStatus}
    for p in report.pairs:
        counts[str(p.status)] += 1
    return {
        "version": JSON_VERSION,
        "mode": report.mode,
        "drift": report.drift,
        "a": _capture_json(report.a, n_a),
        "b": _capture_json(report.b, n_b),
        "alignment": {"method": report.method, **counts, "key": report.key,
                      "matched": _matched_json(report)},
        "first_divergence": _pair_json(first, report.pairs[first]) if first is not None else None,
        "cause": _cause_json(report.cause),
        "changed_inputs": list(report.changed_inputs),
        "live_differences": [_live_json(d.run, d.live) for d in report.live_differences],
        "drift_by_buffer_type": [
            {
                "device": g.device,
                "buffer_type": g.buffer_type,
                "buffers": g.buffers,
                "moved": g.moved,
                "kind": g.kind,
                "offsets": [{"offset": off, "buffers": n} for off, n in g.offsets],
            }
            for g in report.groups
        ],
        "replay_overlaps": {
            "checked": report.overlaps.checked,
            "a_over_b": report.overlaps.a_over_b,
            "b_over_a": report.overlaps.b_over_a,
            "examples": [_overlap_json(o) for o in report.overlaps.examples],
        },
    }
