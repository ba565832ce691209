"""TR014 compile after capture while the trace is live.

A program compiled for the first time after `end_trace_capture`, while the trace is still live,
gets its kernel binaries allocated in device memory the allocator believes free, possibly over
memory the trace writes on every replay: garbage output (vLLM on Tenstorrent compiled decode
between prefill captures; tt-metal's model tests had the same ordering bug). The fix is in the
warm-up order: compile every path before the first capture.

The recorder notes a `program_cache_miss` under a call that grew the device's program cache
while a trace was live (see TR013 for misses inside a capture), and the buffers that call left
allocated that are none of its outputs (the kernel binaries, as the ledger sees them). Rule:
a warning, one per call site, naming the op and the live trace(s). A binary that overlaps a
range a live trace reads, writes or creates and is alive at a replay is an allocation over
trace memory, reported once, by TR004 at the same line (its finding names the overlap); TR014
then stays silent so that one mistake gives one finding. A compile whose
binaries are not visible is not reported: the 0.81.1 mock device lists no kernel-binary buffer
and the emulator does not allocate them, and a finding on every first call after a capture
(e.g. the `ttnn.copy` that refreshes a captured input) would be disproved by most runs.
"""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis.context import Context, TraceInfo, buffer_key
from ttrecord.analysis.rules import finding, range_evidence, where
from ttrecord.events import BufferRef, Event, Kind, Phase
from ttrecord.findings import Finding


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    reported: set = set()
    misses: dict[int, Event] = {}  # compiling call seq -> its note
    binaries: dict[int, list[BufferRef]] = {}
    for ev in events:
        if ev.kind is Kind.NOTE and ev.name == "program_cache_miss" and ev.parent is not None:
            if ev.phase is not Phase.CAPTURE:  # inside a capture: TR013
                misses[ev.parent] = ev
        elif (ev.kind is Kind.ALLOC and ev.parent in misses and ev.buffer is not None
              and not (ev.args or {}).get("temporary")):  # fmt: skip
            binaries.setdefault(ev.parent, []).append(ev.buffer)
    for seq, note in misses.items():
        call = ctx.calls.get(seq)
        live = [t for t in ctx.traces if t.device == note.device and t.live_at(note.seq)]
        outputs = {buffer_key(t.buffer) for t in call.outputs if t.buffer} if call else set()
        bins = [b for b in binaries.get(seq, ()) if buffer_key(b) not in outputs]
        if call is None or not live or not bins:
            continue
        if any(t.footprint.hits(b) for b in bins for t in live):
            continue  # an allocation over trace memory: TR004
        call = ctx.outermost(call)
        site = ctx.site(call)
        key = (site.file, site.line) if site else call.seq
        if key in reported:
            continue
        reported.add(key)
        findings.append(_finding(ctx, call, note, live, bins))
    return findings


def _finding(ctx: Context, call: Event, note: Event, live: list[TraceInfo],
             bins: list[BufferRef]) -> Finding:  # fmt: skip
    traces = ", ".join(f"trace {t.trace_id} (captured at {where(ctx, t.begin)})" for t in live)
    message = (
        f"`{call.name}` compiled after capture while {traces} is live on device {note.device}:"
        f" its program was not in the program cache, and the call left {len(bins)} buffer(s)"
        " that are none of its outputs (kernel binaries)"
    )
    evidence: dict = {"op": call.name, "traces": [t.trace_id for t in live],
                      "binaries": [range_evidence(b)["range"] for b in bins]}  # fmt: skip
    message += (", allocated while the trace's memory counts as free: a later compile or"
                " allocation can land on memory the trace writes.")  # fmt: skip
    fix = (f"Run `{call.name}` with these shapes and configs once before the first"
           " begin_trace_capture (compile every path first, then capture), or release the trace"
           " before compiling new ops.")  # fmt: skip
    return finding("TR014", ctx, call, message, fix=fix, related=[t.begin.seq for t in live],
                   evidence=evidence, trace=live[0].trace_id)  # fmt: skip
