"""TR004 allocation over trace memory and TR010 overlapping trace regions.

Rules, on bank-local footprints `[address, address + size)` of one device and buffer type:
- TR004: a buffer allocated after `end_trace_capture` of a trace that is not released,
  overlapping a range that trace reads or writes, and still allocated when `execute_trace` of
  that trace runs. Allocations freed before the next replay, on another device or buffer type,
  or made after `release_trace` are safe and not reported.
- TR010: two traces live at once on one device where one trace writes a range that overlaps a
  buffer the other trace created and keeps (an output the program holds), or where their trace
  buffers overlap.

Why replay breaks: a trace replays with every address baked in, including the intermediates
freed when capture ended. The allocator hands those addresses out again, so a replay writes
its intermediates over whatever now lives there: the new tensor is silently corrupted (or the
trace reads garbage and the device hangs). Real ttnn only warns ("Allocating device buffers is
potentially unsafe due to the existence of an active trace") and the damage depends on layout.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ttrecord.analysis import layout_luck, referrer_text
from ttrecord.analysis.compile_after_capture import kernel_binaries
from ttrecord.analysis.context import Access, Context, TraceInfo, buffer_key
from ttrecord.analysis.rules import finding, range_evidence, where
from ttrecord.analysis.value_flow import Use
from ttrecord.events import ACKNOWLEDGE_CORRUPTIBLE as ACKNOWLEDGE
from ttrecord.events import BufferRef, Event, Kind, NoteKind, Phase, Status
from ttrecord.findings import Finding, Severity

_MAX_RANGES = 4  # trace ranges listed in one finding's evidence


def detect_allocations(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR004: every allocation outside a capture, with when it ended (its free, or the next
    allocation at its address), asked of each trace it can be over (`trace_overlap`)."""
    traces = [t for t in ctx.traces if t.end is not None and t.executes]
    if not traces:
        return []
    allocs: list[tuple[Event, int]] = []  # (allocation, its index in events), in seq order
    ends: list[int | None] = []
    open_: dict[tuple[int, str, int], int] = {}  # address -> its allocation's position
    compiled: set[int] = set()  # calls that compiled (TR014 owns their binaries)
    acked: dict[int, Event] = {}  # allocation position -> its acknowledgement (call or scope)
    scopes: dict[int | None, list[Event]] = {}  # device -> open corruptible scopes
    for i, ev in enumerate(events):
        kind = ev.kind
        if kind is Kind.ALLOC:
            if ev.buffer is None or ev.phase is Phase.CAPTURE:
                continue
            key = buffer_key(ev.buffer)
            if key in open_:
                ends[open_[key]] = ev.seq
            open_[key] = len(allocs)
            inside = scopes.get(ev.buffer.device)
            if inside:
                acked[len(allocs)] = inside[-1]
            allocs.append((ev, i))
            ends.append(None)
        elif kind is Kind.OP and ev.parent is None and ev.name.endswith(ACKNOWLEDGE):
            for ref in ev.inputs:
                at = open_.get(buffer_key(ref.buffer)) if ref.buffer is not None else None
                if at is not None:
                    acked.setdefault(at, ev)
        elif kind is Kind.NOTE and ev.name in (NoteKind.CORRUPTIBLE_SCOPE_BEGIN, NoteKind.CORRUPTIBLE_SCOPE_END):
            stack = scopes.setdefault((ev.args or {}).get("device"), [])
            if ev.name == NoteKind.CORRUPTIBLE_SCOPE_BEGIN:
                stack.append(ev)
            elif stack:
                stack.pop()
        elif kind is Kind.FREE and ev.buffer is not None:
            at = open_.pop(buffer_key(ev.buffer), None)
            if at is not None:
                ends[at] = ev.seq
        elif kind is Kind.NOTE and ev.name == NoteKind.PROGRAM_CACHE_MISS and ev.parent is not None:
            compiled.add(ev.parent)
    hits: list[tuple[int, int, int, TraceInfo, Event, int, Event | None]] = []
    clear: dict[int, list[tuple[TraceInfo, int]]] = {}  # allocation position -> (trace, replay)
    for t in traces:
        window = t.window
        cut = window.suspects(allocs, _alloc_seq)
        for n, (alloc, index) in enumerate(allocs[cut], cut.start):
            buf = alloc.buffer
            assert buf is not None
            replay = window.replay_over(buf.device, buf.buffer_type, buf.address, buf.end,
                                        alloc.seq, ends[n])  # fmt: skip
            # A buffer on exactly an input's range is the trace's input (tt-metal's executors
            # free it and allocate one of the same spec); whether it was written before each
            # replay is TR005's question.
            if replay is not None and (_is_input_range(ctx, t, alloc) or _is_binary(ctx, alloc, compiled)):
                continue
            if replay is not None and t.footprint.hits(_placed(ctx, events, alloc, index)):  # its banks, too
                hits.append((replay, alloc.seq, window.end, t, alloc, index, acked.get(n)))
                continue
            alive = window.replay_alive(buf.device, buf.buffer_type, alloc.seq, ends[n])
            if alive is not None and buf.buffer_type != "TRACE" and not _is_binary(ctx, alloc, compiled) \
                    and not (n in acked and _acknowledged_for(ctx, acked[n], t)):
                clear.setdefault(n, []).append((t, alive))
    hits.sort(key=lambda h: h[:3])  # by replay, as the replays reveal them
    notes = referrer_text.notes_by_execute(events) if hits else {}
    ctx.flow.prefetch(buffer_key(h[4].allocation) for h in hits)
    findings = []
    for replay, _, _, trace, alloc, index, ack in hits:
        execute = trace.executes[bisect.bisect_left(trace.window.executes, replay)]
        maker = _allocating_call(ctx, events, alloc, index)
        placed = _placed(ctx, events, alloc, index)
        accesses = trace.footprint.overlapping(placed)
        f = _allocation_finding(ctx, alloc, maker, trace, accesses, execute)
        referrer_text.add_holders(ctx, f, notes, trace, alloc, _end_of(ends, allocs, alloc))
        harm = _consequence(ctx, trace, alloc, placed, _end_of(ends, allocs, alloc), accesses)
        if ack is not None and _acknowledged_for(ctx, ack, trace):
            findings.append(_acknowledged(ctx, f, ack))
        elif ack is not None:
            findings.append(_acknowledged_elsewhere(ctx, f, ack))
        elif harm is None:
            findings.append(_latent(ctx, f, trace, alloc, accesses, execute))
        else:
            read_as = harm.pop("read_as_input", None)
            f.evidence["corrupted"] = harm
            f.message += f" {harm['what']}"
            if read_as:
                f.links["read_as_input"] = read_as
            findings.append(f)
    paths = {layout_luck.path_key(ctx, _allocating_call(ctx, events, h[4], h[5])) for h in hits}
    return findings + _clear_of_traces(ctx, events, allocs, clear, {h[1] for h in hits}, paths)


def _clear_of_traces(ctx: Context, events: Sequence[Event], allocs: list[tuple[Event, int]],
                     clear: dict[int, list[tuple[TraceInfo, int]]], over: set[int],
                     paths: set[tuple]) -> list[Finding]:  # fmt: skip
    """TR004 latent (`layout_luck`): allocations alive at a replay of a live trace that landed
    clear of its memory (and of every other live trace's: an overlap is the finding above). A
    call path that also allocated over a trace has that finding, with the same fix."""
    occurrences = []
    for n in sorted(clear):
        alloc, index = allocs[n]
        if alloc.seq in over:
            continue
        maker = _allocating_call(ctx, events, alloc, index)
        if paths and layout_luck.path_key(ctx, maker) in paths:
            continue
        replays = []
        for t, seq in sorted(clear[n], key=lambda c: c[1]):
            execute = t.executes[bisect.bisect_left(t.window.executes, seq)]
            replays.append((t, execute))
        occurrences.append(layout_luck.Occurrence(maker, [_placed(ctx, events, alloc, index)],
                                                  replays, [alloc.seq]))  # fmt: skip
    return [layout_luck.allocation_finding(ctx, same) for same in layout_luck.group(ctx, occurrences)]


def _end_of(ends: list[int | None], allocs: list[tuple[Event, int]], alloc: Event) -> int | None:
    i = bisect.bisect_left(allocs, alloc.seq, key=_alloc_seq)
    return ends[i]


def _consequence(ctx: Context, trace: TraceInfo, alloc: Event, buf: BufferRef, free: int | None,
                 accesses: list[Access]) -> dict | None:  # fmt: skip
    """What the recording shows changed (asked of `ctx.flow`), or None when nothing used did:
    a value of the buffer read after a replay of `trace` wrote over it, or a value the program
    wrote into the buffer that a replay then took as the trace's input."""
    from ttrecord.analysis.value_flow import WRITE

    flow = ctx.flow
    line = flow.window(buf, alloc.seq, free)
    seqs = trace.window.executes
    lo = bisect.bisect_right(seqs, alloc.seq)
    replays = seqs[lo:len(seqs) if free is None else bisect.bisect_left(seqs, free)]
    if any(a.role != "read" for a in accesses):
        writes = [s for s, k in line if k == WRITE]
        previous = None
        for r in replays:
            # The value after this replay was already followed from the previous one, unless
            # the program wrote the buffer in between (then this replay damages it afresh).
            if previous is not None and not any(previous < w < r for w in writes):
                continue
            previous = r
            use = flow.first_use(buf, r, free, ignore_writes_of=trace)
            if use is not None:
                at = next((e for e in trace.executes if e.seq == r), None)
                # Read as a replay's input: that trace's captured input held the overwritten
                # value because nothing refreshed it (TR005's cause, when it was stale).
                read_as = (_inputs_read(ctx, use.event, buf)
                           if use.how == "replay input" and use.event is not None else set())  # fmt: skip
                return {"replay": r, "used": use.seq, "how": use.how, "read_as_input": read_as,
                        "what": (f"The replay at {where(ctx, at) if at else r} overwrote it and"
                                 f" the program then used the overwritten value: {use.describe(ctx)}.")}  # fmt: skip
    if any(a.role == "read" for a in accesses) and trace.read_inputs.hits(buf):
        for s, k in line:
            if k == WRITE and any(s < r for r in replays):
                r = next(r for r in replays if r > s)
                ev = ctx.calls.get(s) or ctx.facts.event(s)
                what = f"`{ev.name}` at {where(ctx, ev)}" if ev is not None else f"event {s}"
                return {"replay": r, "written": s, "how": "replay input",
                        "what": (f"{what} wrote this buffer and the replay then read that value"
                                 " as the trace's input.")}  # fmt: skip
    return None


def _inputs_read(ctx: Context, execute: Event, buf: BufferRef) -> set:
    """(trace key, input buffer key) of the captured inputs on `buf`'s range that the replay
    `execute` read."""
    for t in ctx.traces:
        if t.key == (execute.device, execute.trace) and t.end is not None and t.live_at(execute.seq):
            return {(t.key, buffer_key(a.buffer)) for a in t.read_inputs.overlapping(buf)}
    return set()


def _latent(ctx: Context, f: Finding, trace: TraceInfo, alloc: Event, accesses: list[Access],
            execute: Event) -> Finding:  # fmt: skip
    """The overlap is real but no value the program uses changed in this run: information that
    says why this run was safe and what would make it corrupt."""
    writes = any(a.role != "read" for a in accesses)
    f.severity = Severity.INFO
    if execute.status is not Status.OK:
        why = (f"execute_trace at {where(ctx, execute)} raised (e.g. ttnn's trace allocation"
               " tracker refused the replay because of this buffer), so the replay never ran")
        would = "the same program replays over this buffer wherever the replay is not refused"
    elif writes:
        why = ("nothing read this buffer after a replay wrote over it (whatever used it did so"
               " before the replay, or nothing did), so no value the program uses changed")
        would = "reading it after a replay, or keeping it longer, would give the trace's bytes"
    else:
        why = ("the program wrote nothing into this buffer before a replay read its range, so the"
               " trace still read the bytes its input left there")
        would = "writing this tensor before a replay would change what the trace computes"
    f.message += f" Latent in this run: {why}; {would}."
    f.evidence["latent"] = {"why": why, "would_corrupt": would}
    f.fix = ("Nothing was corrupted in this run. To make it safe by construction: deallocate this"
             " tensor before the next execute_trace (it was only needed before it), allocate it"
             f" before begin_trace_capture (at {where(ctx, trace.begin)}), or release the trace"
             " first.")  # fmt: skip
    return f


def _acknowledged_for(ctx: Context, ack: Event, trace: TraceInfo) -> bool:
    """The trace an acknowledgement speaks for: those captured inside the
    `corruptible_allocation_scope` it was made in, else the last trace captured on the device
    before it. A buffer acknowledged for one trace is still an error over another (#57299)."""
    device = ack.device if ack.kind is Kind.OP else (ack.args or {}).get("device", ack.device)
    if ack.kind is Kind.NOTE:  # a scope: the traces captured inside it, if any
        scope_end = next((e for e in ctx.events if e.kind is Kind.NOTE and e.name == NoteKind.CORRUPTIBLE_SCOPE_END
                          and e.seq > ack.seq), None)  # fmt: skip
        inside = [t for t in ctx.traces if t.end is not None and t.begin.seq > ack.seq
                  and (scope_end is None or t.end.seq < scope_end.seq)]  # fmt: skip
        if inside:
            return trace in inside
    live = [t for t in ctx.traces if t.end is not None and t.live_at(ack.seq)
            and (device is None or t.device == device)]  # fmt: skip
    return bool(live) and trace is max(live, key=lambda t: t.ended.seq)


def _acknowledged_elsewhere(ctx: Context, f: Finding, ack: Event) -> Finding:
    how = ("acknowledged it as corruptible with `acknowledge_corruptible`" if ack.kind is Kind.OP
           else "allocated it inside `corruptible_allocation_scope`")  # fmt: skip
    f.message += (f" The program {how} at {where(ctx, ack)}, but for another trace: this overlap"
                  f" is with trace {f.trace}, which the acknowledgement does not cover.")
    f.evidence["acknowledged"] = {"how": how, "event": ack.seq, "at": where(ctx, ack),
                                  "covers_this_trace": False}  # fmt: skip
    f.events.append(ack.seq)
    return f


def _acknowledged(ctx: Context, f: Finding, ack: Event) -> Finding:
    """The same overlap, acknowledged with ttnn's trace allocation tracker: the program said
    the replay may overwrite this buffer, so it is information, not an error."""
    how = ("acknowledged it as corruptible with `acknowledge_corruptible`" if ack.kind is Kind.OP
           else "allocated it inside `corruptible_allocation_scope`")  # fmt: skip
    f.severity = Severity.INFO
    f.message = (f"{f.message.rstrip('.')}. The program {how} at {where(ctx, ack)}, so this is"
                 " expected: the buffer's contents after a replay are the trace's, not the program's.")  # fmt: skip
    f.evidence["acknowledged"] = {"how": how, "event": ack.seq, "at": where(ctx, ack)}
    f.events.append(ack.seq)
    f.fix = ("None needed if nothing reads this buffer after a replay expecting its own values;"
             " otherwise allocate it before the capture.")
    return f


def _alloc_seq(item: tuple[Event, int]) -> int:
    return item[0].seq


def _is_binary(ctx: Context, alloc: Event, compiled: set[int]) -> bool:
    """A buffer a compiling call left that is none of its outputs: its kernel binaries."""
    call = ctx.calls.get(alloc.parent) if alloc.parent in compiled else None
    return call is not None and bool(kernel_binaries(call, [alloc]))


def _is_input_range(ctx: Context, trace: TraceInfo, alloc: Event) -> bool:
    """The allocation holds a tensor of an input's spec on exactly that input's range."""
    inputs = trace.__dict__.get("_inputs_by_key")
    if inputs is None:
        inputs = trace.__dict__["_inputs_by_key"] = {buffer_key(a.buffer): a for a in trace.inputs()}
    acc = inputs.get(buffer_key(alloc.allocation))
    return acc is not None and ctx.same_spec(alloc, acc)


def _allocating_call(ctx: Context, events: Sequence[Event], alloc: Event, index: int) -> Event:
    """The user's call that made the buffer: the alloc's caller, else the call that output it."""
    if alloc.parent is not None or alloc.callsite is not None:
        return ctx.outermost(alloc)
    key = buffer_key(alloc.allocation)
    for ev in events[index + 1 : index + 64]:
        if ev.seq >= alloc.seq + 64:  # the next 63 of the run, not of the events loaded
            break
        if any(r.buffer is not None and buffer_key(r.buffer) == key for r in ev.outputs):
            return ctx.outermost(ev)
    return alloc


def _placed(ctx: Context, events: Sequence[Event], alloc: Event, index: int) -> BufferRef:
    """The allocated buffer on the cores of the tensor that holds it (a sharded output of the
    call that made it: `ttrecord.placement`); as allocated (every bank) when none says."""
    buf = alloc.allocation
    key = buffer_key(buf)
    calls = [ctx.calls.get(alloc.parent)] if alloc.parent is not None else []
    calls += [ev for ev in events[index + 1 : index + 64] if ev.seq < alloc.seq + 64]
    for ev in calls:
        for r in ev.outputs if ev is not None else ():
            if r.buffer is not None and r.buffer.cores is not None and buffer_key(r.buffer) == key:
                return buf.placed(r.buffer.cores)
    return buf


def _describe_accesses(ctx: Context, accesses: list[Access]) -> list[dict]:
    """One entry per trace range, with how the trace uses it (created/written/read by which op)."""
    ranges: dict[tuple, dict] = {}
    for acc in accesses:
        k = (buffer_key(acc.buffer), acc.buffer.size)
        desc = ranges.get(k)
        if desc is None:
            if len(ranges) >= _MAX_RANGES:
                continue
            desc = ranges[k] = {**range_evidence(acc.buffer), "used_by": [], "events": []}
        call = ctx.calls.get(acc.seq)
        role = {"read": "read", "write": "written", "new": "created"}[acc.role]
        use = f"{role} by `{call.name}` at {where(ctx, call)}" if call else role
        if use not in desc["used_by"]:
            desc["used_by"].append(use)
            desc["events"].append(acc.seq)
    return list(ranges.values())


def _allocation_finding(ctx: Context, alloc: Event, maker: Event, trace: TraceInfo,
                        accesses: list[Access], execute: Event) -> Finding:  # fmt: skip
    buf = alloc.buffer
    assert buf is not None
    first = next((a for a in accesses if a.role != "read" and a.seq in ctx.calls),
                 next((a for a in accesses if a.seq in ctx.calls), accesses[0]))  # fmt: skip
    call = ctx.calls.get(first.seq)
    writes = first.role != "read"
    what = f"`{maker.name}`" if maker is not alloc else "This allocation"
    consequence = (
        "so the replay writes over it: the tensor's contents are silently replaced"
        if writes
        else "so the replay reads it as its own input: whatever the program stores in this"
        " tensor changes what the trace computes"
    )
    message = (
        f"{what} allocates {buf.buffer_type} [{buf.address:#x}, {buf.end:#x}) on device"
        f" {buf.device} after trace {trace.trace_id} was captured, over"
        f" [{first.buffer.address:#x}, {first.buffer.end:#x}), which the trace"
        f" {'writes' if writes else 'only reads'}"
        + (f" (`{call.name}` at {where(ctx, call)})" if call else "")
        + f". The buffer is still allocated when execute_trace runs at {where(ctx, execute)},"
        f" {consequence}."
    )
    evidence = {
        "allocated": range_evidence(buf),
        "trace_ranges": _describe_accesses(ctx, accesses),
        "trace": trace.trace_id,
        "device": buf.device,
        "captured": f"{where(ctx, trace.begin)} to {where(ctx, trace.ended)}",
        "execute": {"event": execute.seq, "at": where(ctx, execute)},
    }
    fix = (
        f"Allocate this tensor before begin_trace_capture (at {where(ctx, trace.begin)}) and reuse"
        " it, deallocate it before the next execute_trace, or call ttnn.release_trace"
        f"(device, {trace.trace_id}) before allocating."
    )
    evidence["trace_access"] = "writes" if writes else "reads"
    f = finding("TR004", ctx, maker, message, fix=fix, trace=trace.trace_id, evidence=evidence,
                related=[alloc.seq, execute.seq, first.seq])  # fmt: skip
    if not writes:  # only over inputs the trace reads: those inputs were freed (TR005)
        f.links["over_inputs"] = {(trace.key, buffer_key(a.buffer)) for a in accesses}
    return f


def detect_overlapping_traces(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR010, following the data (`ctx.flow`): traces sharing memory is only a note, unless a
    value one trace wrote is used (by the host, another trace's replay, or an op whose result
    is used) after the other trace's replay overwrote it; the read is the error, at its line."""
    traces = [t for t in ctx.traces if t.end is not None]
    findings: list[Finding] = []
    unreleased: list[TraceInfo] = []  # earlier traces, in order, not released when `later` began
    for later in traces:
        # Traces come in begin order and every later one ends after it begins, so a trace
        # released by now is live at none of them (a run of many captures stays linear).
        unreleased = [t for t in unreleased if t.release is None or t.release.seq > later.begin.seq]
        for earlier in unreleased:
            if earlier.device != later.device or not earlier.live_at(later.ended.seq):
                continue
            hit = _trace_buffer_overlap(earlier, later)
            if hit is not None:
                findings.append(_overlap_finding(ctx, earlier, later, *hit))
                continue
            overlaps = _kept_overlaps(earlier, later)
            if not overlaps:
                continue
            bad = []
            for writer, keeper, written, kept in overlaps:
                bad += _reads_after_overwrite(ctx, writer, keeper, written, kept)
            if bad:
                findings += bad
            else:
                w, k, written, kept = overlaps[0]
                pair = (written, kept) if w is earlier else (kept, written)
                how = f"trace {w.trace_id} writes over an output trace {k.trace_id} keeps"
                findings.append(_overlap_finding(ctx, earlier, later, *pair, how, note=True))
        unreleased.append(later)
    return findings


def _kept_overlaps(a: TraceInfo, b: TraceInfo) -> list[tuple[TraceInfo, TraceInfo, Access, Access]]:
    """(writer, keeper, the writer's access, the keeper's kept output), at most one per way."""
    out = []
    for writer, keeper in ((a, b), (b, a)):
        hit = _kept_overlap_one(writer, keeper)
        if hit is not None:
            out.append((writer, keeper, *hit))
    return out


def _kept_overlap_one(writer: TraceInfo, keeper: TraceInfo) -> tuple[Access, Access] | None:
    for kept in keeper.kept():
        for w in writer.written.overlapping(kept.buffer):
            if w.role == "write" and buffer_key(w.buffer) == buffer_key(kept.buffer):
                continue  # writing into the other trace's live output: deliberate sharing
            return w, kept
    return None


def _reads_after_overwrite(ctx: Context, writer: TraceInfo, keeper: TraceInfo, written: Access,
                           kept: Access) -> list[Finding]:  # fmt: skip
    """Uses of `keeper`'s output after `writer`'s replay overwrote it, asked of `ctx.flow`: after
    each first replay of `writer` that follows one of `keeper`, the first use of the output's
    value (a host read, a replay reading it as input, or an op whose result is used) before
    `keeper` replays again, the program writes it or frees it. A read whose result nothing uses
    changes no value: the traces then only share memory (the info)."""
    flow = ctx.flow
    key = buffer_key(kept.buffer)
    runs = sorted([(e.seq, 0) for e in keeper.executes] + [(e.seq, 1) for e in writer.executes])
    bad: dict[tuple[str, int] | int, list] = {}  # read site -> [read event, overwriting execute, count, use]
    kept_value = False  # the output holds what `keeper`'s last replay wrote
    for seq, by_writer in runs:
        if not by_writer:
            kept_value = True
            continue
        if not kept_value:
            continue  # already overwritten by an earlier replay of `writer`
        kept_value = False
        if not ctx.facts.existed_before(key, keeper.ended.seq, seq):
            continue  # the output was freed: what lies there now is TR004's
        use = flow.first_use(kept.buffer, seq, ignore_writes_of=writer)
        if use is None:
            continue
        read_seq = use.through[0] if use.through else use.seq
        ev = use.event if not use.through else ctx.calls.get(read_seq) or ctx.facts.event(read_seq)
        if ev is None:
            continue
        site = ctx.site(ev)
        where_key = (site.file, site.line) if site else read_seq
        entry = bad.setdefault(where_key, [ev, seq, 0, use])
        entry[2] += 1
    return [_overwritten_read_finding(ctx, writer, keeper, written, kept, ev, ow, n, use)
            for ev, ow, n, use in bad.values()]  # fmt: skip


def _overwritten_read_finding(ctx: Context, writer: TraceInfo, keeper: TraceInfo,
                              written: Access, kept: Access, read: Event, overwrite: int,
                              count: int, use: Use) -> Finding:  # fmt: skip
    b = kept.buffer
    execute = ctx.calls.get(overwrite) or ctx.facts.event(overwrite)
    at = where(ctx, execute) if execute is not None else f"event {overwrite}"
    message = (
        f"`{read.name}` reads the output trace {keeper.trace_id} wrote ({b.buffer_type}"
        f" [{b.address:#x}, {b.end:#x}) on device {b.device}), but trace {writer.trace_id}'s"
        f" replay at {at} overwrote that range after trace {keeper.trace_id}'s last replay:"
        f" trace {writer.trace_id} writes [{written.buffer.address:#x}, {written.buffer.end:#x})"
        f" there. The value read is trace {writer.trace_id}'s, not trace {keeper.trace_id}'s"
        + (f", and the program used it: {use.describe(ctx)}." if use.through or use.event is not read else ".")
    )
    evidence: dict = {
        "output": range_evidence(b),
        "output_of": keeper.trace_id,
        "overwritten_by": {"trace": writer.trace_id, "execute": overwrite, "at": at},
        "used": {"how": use.how, "event": use.seq, "through": len(use.through)},
        f"trace_{writer.trace_id}": _describe_accesses(ctx, [written])[0],
    }
    if count > 1:
        evidence["occurrences"] = {"count": count, "first": {"event": read.seq, "trace": keeper.trace_id},
                                   "last": {"event": read.seq, "trace": keeper.trace_id}}  # fmt: skip
    fix = (
        f"Read (or ttnn.clone) trace {keeper.trace_id}'s output before replaying trace"
        f" {writer.trace_id}, replay trace {keeper.trace_id} again before reading it, or keep"
        " the outputs both traces write allocated before either capture so they cannot share"
        " memory."
    )
    return finding("TR010", ctx, read, message, fix=fix, trace=keeper.trace_id, evidence=evidence,
                   related=[overwrite, keeper.begin.seq, writer.begin.seq])  # fmt: skip


def _trace_buffer_overlap(a: TraceInfo, b: TraceInfo) -> tuple[Access, Access, str] | None:
    for acc in b.accesses:
        if acc.buffer.buffer_type == "TRACE":
            for other in a.footprint.overlapping(acc.buffer):
                if other.buffer.buffer_type == "TRACE":
                    return other, acc, "trace buffers overlap"
    return None


def _overlap_finding(ctx: Context, a: TraceInfo, b: TraceInfo, acc_a: Access, acc_b: Access,
                     how: str, note: bool = False) -> Finding:  # fmt: skip
    if note:
        message = (
            f"Trace {b.trace_id} (captured at {where(ctx, b.begin)}) and trace {a.trace_id}"
            f" (captured at {where(ctx, a.begin)}) are both live on device {b.device} and share"
            f" memory: trace {a.trace_id} uses {acc_a.buffer.buffer_type}"
            f" [{acc_a.buffer.address:#x}, {acc_a.buffer.end:#x}) and trace {b.trace_id} uses"
            f" [{acc_b.buffer.address:#x}, {acc_b.buffer.end:#x}) ({how}). In this run no value"
            " one trace wrote was read after the other trace's replay overwrote it, so no result"
            " was corrupted; reading an output only after its own trace's replay keeps it so."
        )
        evidence = {"device": b.device, "traces": [a.trace_id, b.trace_id],
                    f"trace_{a.trace_id}": _describe_accesses(ctx, [acc_a])[0],
                    f"trace_{b.trace_id}": _describe_accesses(ctx, [acc_b])[0]}  # fmt: skip
        fix = (
            "Nothing to fix for this run. To make the traces independent, allocate the outputs"
            " both traces keep before either capture, or release one trace before capturing"
            " the other."
        )
        return finding("TR010", ctx, b.ended, message, fix=fix, trace=b.trace_id, evidence=evidence,
                       related=[b.begin.seq, a.begin.seq, acc_a.seq, acc_b.seq],
                       severity=Severity.INFO)  # fmt: skip
    message = (
        f"Trace {b.trace_id} (captured at {where(ctx, b.begin)}) and trace {a.trace_id}"
        f" (captured at {where(ctx, a.begin)}) are both live on device {b.device}, and their"
        f" memory overlaps: trace {a.trace_id} uses {acc_a.buffer.buffer_type}"
        f" [{acc_a.buffer.address:#x}, {acc_a.buffer.end:#x}) and trace {b.trace_id} uses"
        f" [{acc_b.buffer.address:#x}, {acc_b.buffer.end:#x}) ({how}). Replaying one overwrites"
        " what the other produced, so results depend on the order the traces run in."
    )
    evidence = {
        "device": b.device,
        "traces": [a.trace_id, b.trace_id],
        f"trace_{a.trace_id}": _describe_accesses(ctx, [acc_a])[0],
        f"trace_{b.trace_id}": _describe_accesses(ctx, [acc_b])[0],
    }
    fix = (
        f"Release trace {a.trace_id} (ttnn.release_trace) before capturing trace {b.trace_id},"
        " or allocate the outputs both traces keep before either capture so neither can land"
        " on the other's intermediates."
    )
    # Reported where the second trace comes into existence: from then on both are live.
    return finding("TR010", ctx, b.ended, message, fix=fix, trace=b.trace_id, evidence=evidence,
                   related=[b.begin.seq, a.begin.seq, acc_a.seq, acc_b.seq])  # fmt: skip
