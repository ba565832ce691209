"""TR010 for dynamic trace regions: a trace's command buffer placed on memory another live
trace's captured ops write (tt-metal #48869).

With `trace_region_size=0` ttnn keeps no trace region: `end_trace_capture` places each trace's
command buffer top-down in DRAM (PR #36999). In a nearly full DRAM the buffer can land in a
live trace's freed intermediate; every replay of that trace then writes over the commands, and
the next replay of the other trace runs them corrupted (or hangs). Releases from 0.76 on
(PR #50503) refuse such a buffer ("... overlaps with DRAM activity captured by another live
trace", which TR016 reports); earlier releases place it silently, so this follows the
placements `trace_region.scan` found (`Context.trace_regions`) against each live trace's
written ranges.

Severity by consequence: an error when a replay of the writing trace came after the capture
and a replay of the other trace after it (the commands it ran were overwritten); info when the
replays never came in that order.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ttrecord.analysis.context import Access, Context, TraceInfo
from ttrecord.analysis.rules import finding, range_evidence, where
from ttrecord.analysis.trace_region import scan
from ttrecord.events import BufferRef, Event
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    regions = ctx.trace_regions if events is ctx.events else scan(events)
    dynamic = {device for device, reg in regions.items() if reg.dynamic and reg.placements}
    if not dynamic:
        return []
    traces = [t for t in ctx.traces if t.end is not None and t.device in dynamic]
    findings = []
    for later in traces:
        assert later.end is not None
        buf = regions[later.device].placements.get(later.trace_id)
        if buf is None:
            continue
        for earlier in traces:
            if earlier is later or not earlier.live_at(later.end.seq):
                continue
            hits = [a for a in earlier.footprint.overlapping(buf) if a.role != "read"]
            if hits:  # the op that made or wrote it (an allocation's own access names no line)
                hit = min(hits, key=lambda a: (ctx.calls.get(a.seq) is None, a.seq))
                findings.append(_finding(ctx, earlier, later, buf, hit))
                break  # one finding per placed buffer
    return findings


def _replayed_over(earlier: TraceInfo, later: TraceInfo) -> tuple[Event, Event] | None:
    """A replay of `earlier` after `later`'s capture, then a replay of `later` (before either
    is released): the commands that replay ran were overwritten."""
    assert later.end is not None
    until = min(r.seq for r in (earlier.release, later.release) if r is not None) \
        if earlier.release or later.release else None  # fmt: skip
    writes = [e for e in earlier.executes if e.seq > later.end.seq and (until is None or e.seq < until)]
    if not writes:
        return None
    runs = [e.seq for e in later.executes]
    i = bisect.bisect_right(runs, writes[0].seq)
    if i == len(runs) or (until is not None and runs[i] > until):
        return None
    return writes[0], later.executes[i]


def _finding(ctx: Context, earlier: TraceInfo, later: TraceInfo, buf: BufferRef, hit: Access) -> Finding:
    assert later.end is not None
    op = ctx.calls.get(hit.seq)
    by = f"`{op.name}` at {where(ctx, op)}" if op is not None else f"event {hit.seq}"
    how = "creates" if hit.role == "new" else "writes"
    a, b = earlier.trace_id, later.trace_id
    message = (
        f"end_trace_capture at {where(ctx, later.end)} placed trace {b}'s command buffer"
        f" (trace_region_size=0: top-down in DRAM) at [{buf.address:#x}, {buf.end:#x}), inside"
        f" memory live trace {a} (captured at {where(ctx, earlier.begin)}) writes on every replay:"
        f" {by} {how} [{hit.buffer.address:#x}, {hit.buffer.end:#x}) there. Each replay of trace"
        f" {a} overwrites trace {b}'s commands, so the next replay of trace {b} runs corrupted"
        f" commands or hangs (tt-metal #48869). ttnn 0.76 and later refuse this capture (\"...overlaps"
        f" with DRAM activity captured by another live trace\"); earlier releases place it silently."
    )  # fmt: skip
    evidence = {"trace_buffer": range_evidence(buf), "other_trace": a,
                "other_access": {**range_evidence(hit.buffer), "by": by, "role": hit.role}}  # fmt: skip
    order = _replayed_over(earlier, later)
    severity = Severity.ERROR
    if order is not None:
        message += (f" Here trace {a} was replayed at {where(ctx, order[0])} and trace {b} after it at"
                    f" {where(ctx, order[1])}, on overwritten commands.")  # fmt: skip
        evidence["replays"] = {"overwrote": order[0].seq, "ran": order[1].seq}
    else:
        severity = Severity.INFO
        why = (f"no replay of trace {b} followed a replay of trace {a} while both were live, so it"
               " never ran overwritten commands")  # fmt: skip
        message += f" Latent in this run: {why}; replaying trace {b} after trace {a} would."
        evidence["latent"] = why
    fix = (f"Open the device with a non-zero trace_region_size (a fixed region keeps trace buffers"
           f" apart from tensors), release trace {a} before capturing trace {b}, or leave DRAM free"
           " above both captures.")  # fmt: skip
    return finding("TR010", ctx, later.end, message, fix=fix, severity=severity,
                   related=[hit.seq, earlier.end.seq] if earlier.end else [hit.seq],
                   evidence=evidence, trace=b)  # fmt: skip
