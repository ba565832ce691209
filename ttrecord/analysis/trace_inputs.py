"""TR005 stale or freed trace input and TR006 input/output aliasing.

A trace's inputs are the device buffers its captured ops read that existed before the capture.
Rules:
- TR005 (freed): an input buffer is freed after the capture read it, and the trace is replayed
  afterwards (before release_trace). Reported at the call that freed it; a later free at that
  address is another tensor's.
- TR005 (stale): before an execute_trace, the program wrote new data to the device as a *new*
  tensor with the shape, dtype and buffer type of a trace input, used that tensor for nothing
  before the replay, and did not write into the captured input since the previous replay (no
  `copy_host_to_device_tensor` or `ttnn.copy` into it). Reported at the write that made the
  new tensor.
- TR006 (shared inputs): two different tensors the trace takes as inputs share device memory.
- TR006 (output is an input): a captured op writes into a buffer the trace also reads as an
  input, so each replay starts from the previous replay's result.
- TR006 (overwritten output): the program reads one trace output several times after a single
  replay although it ran the trace several times since its last read, i.e. it expected the
  earlier replays' results to still be there; every replay writes the same buffer.

Why replay breaks: the trace reads and writes the addresses it captured. A freed input's
address is reused by other tensors, so replay computes on whatever lives there now; a new input
tensor sits at another address the trace never reads, so replay computes on the old data; and
aliased buffers make one replay's output the next replay's input or overwrite earlier results.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from ttrecord.analysis.context import Access, Context, TraceInfo, buffer_key
from ttrecord.analysis.rules import finding, range_evidence, where
from ttrecord.events import Event, Kind, Phase, TensorRef
from ttrecord.findings import Finding, Severity


def detect_stale_inputs(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR005."""
    traces = [t for t in ctx.traces if t.end is not None]
    return _freed_and_stale(events, ctx, traces) if traces else []


def detect_aliasing(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR006."""
    traces = [t for t in ctx.traces if t.end is not None]
    if not traces:
        return []
    findings = []
    for t in traces:
        findings += _aliasing(ctx, t)
    return findings + _overwritten_outputs(events, ctx, traces)


def _freed_and_stale(
    events: Sequence[Event], ctx: Context, traces: list[TraceInfo]
) -> list[Finding]:
    """One pass over the run. A trace's input is the address range it reads, whatever tensor
    holds it: after the captured input is freed, a tensor allocated on exactly that range (the
    same footprint) and written before the replay is the input, as in tt-metal's executors
    that free the input and allocate one of the same spec. A replay while the range is free,
    or held by a tensor nothing wrote, reports the captured input's free."""
    readers: dict[tuple, list[tuple[TraceInfo, Access]]] = {}
    for t in traces:
        for acc in t.inputs():
            readers.setdefault(buffer_key(acc.buffer), []).append((t, acc))
    # Refreshes of the inputs, by address: read at the first question (a freed input, a new
    # tensor of an input's spec), which a program that copies into its inputs never asks.
    writes = _OnDemand(lambda: ctx.facts.writes(set(readers)))
    # id(trace) -> input key -> [free that left the range, its access, holder start or None]
    loose: dict[int, dict[tuple, list]] = {}
    gone: dict[int, set] = {}  # id(trace) -> its captured input buffers freed so far
    fresh: dict[int, list[tuple[Event, Access, TensorRef]]] = {id(t): [] for t in traces}
    last_run = {id(t): t.ended.seq for t in traces}
    by_key: dict[tuple, list[TraceInfo]] = {}
    for t in traces:
        by_key.setdefault(t.key, []).append(t)
    findings: list[Finding] = []
    reported: set[tuple] = set()
    for ev in events:
        kind = ev.kind
        if kind is Kind.FREE and ev.buffer is not None:
            key = buffer_key(ev.buffer)
            for t, acc in readers.get(key, ()):
                if t.release is not None and t.release.seq <= ev.seq:
                    continue
                state = loose.get(id(t), {}).get(key)
                if state is not None:
                    if state[2] is not None and state[2] == t.refilled.get(key):
                        # The capture's own holder of the input went (a rebinding dropped it):
                        # that free, not the one inside the capture, is the mistake.
                        state[0] = ev
                    state[2] = None
                    continue
                if key in gone.get(id(t), ()) or acc.seq >= ev.seq:
                    continue
                loose.setdefault(id(t), {})[key] = [ev, acc, None]
                gone.setdefault(id(t), set()).add(key)
        elif kind is Kind.ALLOC and ev.buffer is not None:
            key = buffer_key(ev.buffer)
            for t, acc in readers.get(key, ()):
                if ev.phase is Phase.CAPTURE and key not in t.refilled:
                    continue  # the capture's own buffer, unless it holds the input (`_refills`)
                state = loose.get(id(t), {}).get(key)
                if state is not None and ctx.same_spec(ev, acc):
                    state[2] = ev.parent if ev.parent is not None else ev.seq
        elif kind is Kind.TRACE_EXECUTE:
            for t in by_key.get((ev.device, ev.trace), ()):
                if not t.live_at(ev.seq):
                    continue
                for key, (free, acc, held_from) in loose.get(id(t), {}).items():
                    if held_from is not None and _any_between(
                        writes.get(key, []), held_from - 1, ev.seq
                    ):
                        continue  # a tensor on the input's range, written: it is the input
                    if held_from is not None and held_from == t.refilled.get(key):
                        # The capture's own holder of the input is alive and was never written:
                        # the free inside the capture is the executor's idiom, the missing
                        # refresh before the replay is the mistake.
                        if (id(t), "unrefreshed", key) not in reported:
                            reported.add((id(t), "unrefreshed", key))
                            findings.append(_unrefreshed_finding(ctx, t, held_from, acc, ev))
                        continue
                    if (id(t), free.seq) not in reported:
                        reported.add((id(t), free.seq))
                        findings.append(_freed_finding(ctx, t, free, acc, ev))
                candidates = fresh[id(t)]
                used = (
                    ctx.facts.uses({buffer_key(o.device_buffer) for _, _, o in candidates})
                    if candidates
                    else {}
                )
                stale: dict[tuple, Finding] = {}  # captured input -> its latest new tensor's
                for h2d, acc, out in candidates:
                    if _any_between(
                        writes.get(buffer_key(acc.buffer), []), last_run[id(t)], ev.seq
                    ):
                        continue  # the captured input was refreshed after all
                    if not _meant_as_input(ctx, t, h2d, acc, writes, loose.get(id(t), {})):
                        continue  # a tensor of the input's spec made for something else
                    if not _any_between(used.get(buffer_key(out.device_buffer), []), h2d.seq, ev.seq):
                        # Unused until the replay: it can only have been meant for the trace.
                        # One per stale replay: grouped by call site with their count.
                        f = _stale_finding(ctx, t, h2d, acc, out, ev)
                        earlier = stale.get(buffer_key(acc.buffer))
                        if earlier is not None:
                            # The latest new tensor before this replay is the data the program
                            # meant it to read; an earlier one is superseded by it (one cause).
                            earlier.links["superseded_in"] = earlier.links.pop("stale_replays")
                        stale[buffer_key(acc.buffer)] = f
                        findings.append(f)
                fresh[id(t)] = []
                last_run[id(t)] = ev.seq
        elif kind is Kind.H2D and ev.phase is not Phase.CAPTURE:
            for out in ev.outputs:
                if out.buffer is not None and out.storage == "device":
                    _note_new_input(ev, out, traces, readers, fresh, gone)
    return findings


def call_path(ctx: Context, ev: Event) -> tuple | None:
    """The user's call path of a call: its line and the callers above it. Two calls through
    one helper line are the same call only when they came the same way."""
    site = ctx.site(ev)
    return (site.file, site.line, site.function, site.stack) if site is not None else None


_WRITERS_ASKED = 4  # the captured input's last writers before the capture that are compared


def _meant_as_input(ctx: Context, t: TraceInfo, made: Event, acc: Access,
                    writes: _OnDemand, loose: dict[tuple, list]) -> bool:  # fmt: skip
    """Evidence that a new tensor of an input's spec was meant as the trace's input: it
    replaced the captured input's last reference (the input went right after it was made),
    nothing ever used it (only the replay came after it), or it was made by the same call path
    that made or filled the captured input before the capture. Without it, the tensor is the program's own (a staging buffer), and what a replay
    does to it is TR004's question."""
    key = buffer_key(acc.buffer)
    state = loose.get(key)
    if state is not None and state[0].seq > made.seq and ctx.site(state[0]) is None:
        return True  # made, then the captured input's last reference went (a rebinding)
    new = next((r.buffer for r in made.outputs if r.buffer is not None and r.storage == "device"
                and r.buffer.buffer_type == acc.buffer.buffer_type), None)  # fmt: skip
    if new is not None and ctx.flow.first_use(new, made.seq) is None:
        return True  # nothing but the replay ever came for it: it was made for the trace
    path = call_path(ctx, made)
    if path is None:
        return False
    before = [s for s in writes.get(key, []) if s < t.begin.seq][-_WRITERS_ASKED:]
    for seq in reversed(before):
        ev = ctx.calls.get(seq) or ctx.facts.event(seq)
        if ev is not None and call_path(ctx, ctx.outermost(ev)) == path:
            return True
    return False


class _OnDemand:
    """Seqs by address, asked of the facts at the first `get`."""

    def __init__(self, ask: Callable[[], dict[tuple, list[int]]]) -> None:
        self._ask = ask
        self._got: dict[tuple, list[int]] | None = None

    def get(self, key: tuple, default: list[int]) -> list[int]:
        if self._got is None:
            self._got = self._ask()
        return self._got.get(key, default)


def _any_between(seqs: list[int], after: int, before: int) -> bool:
    i = bisect.bisect_right(seqs, after)
    return i < len(seqs) and seqs[i] < before


def _note_new_input(ev: Event, out: TensorRef, traces: list[TraceInfo], readers: dict[tuple, list[tuple[TraceInfo, Access]]],
                    fresh: dict[int, list[tuple[Event, Access, TensorRef]]], gone_inputs: dict[int, set]) -> None:
    """An h2d made a new device tensor: remember it if it looks like a live trace input.

    "Looks like" means same shape, dtype and buffer type; an input that was freed is reported
    as freed (and whatever lands on it as an allocation over trace memory), not as stale.
    """
    if buffer_key(out.device_buffer) in readers:
        return
    for t in traces:
        if t.device != out.device_buffer.device or not t.live_at(ev.seq):
            continue
        gone = gone_inputs.get(id(t), set())
        for acc in t.inputs():
            if (
                tuple(acc.shape) == tuple(out.shape)
                and acc.buffer.buffer_type == out.device_buffer.buffer_type
                and (acc.dtype is None or out.dtype is None or acc.dtype == out.dtype)
                and buffer_key(acc.buffer) not in gone
            ):
                fresh[id(t)].append((ev, acc, out))
                break


def _freed_finding(ctx: Context, t: TraceInfo, free: Event, acc: Access, execute: Event) -> Finding:
    reader = ctx.calls.get(acc.seq)
    b = acc.buffer
    message = (
        f"The buffer {b.buffer_type} [{b.address:#x}, {b.end:#x}) on device {b.device} is an"
        f" input of trace {t.trace_id}"
        + (f" (read by `{reader.name}` at {where(ctx, reader)})" if reader else "")
        + (", and it is freed here" if ctx.site(free) is not None
           else ", and it is freed without a ttnn call (its last Python reference went)")
        + f" before execute_trace at {where(ctx, execute)} replays the"
        " trace. The replay still reads that address, which the allocator may already have given"
        " to another tensor: the trace computes on whatever lives there now."
    )
    evidence = {
        "input": range_evidence(b),
        "trace": t.trace_id,
        "device": b.device,
        "read_by": {"event": acc.seq, "at": where(ctx, reader) if reader else None},
        "execute": {"event": execute.seq, "at": where(ctx, execute)},
    }
    fix = (
        "Keep the captured input tensor alive (do not ttnn.deallocate it or drop its last"
        " reference) until after the last execute_trace and ttnn.release_trace; write new data"
        " into it with ttnn.copy_host_to_device_tensor."
    )
    f = finding("TR005", ctx, free, message, fix=fix, trace=t.trace_id, evidence=evidence,
                related=[execute.seq, acc.seq])  # fmt: skip
    f.links["freed_input"] = {(t.key, buffer_key(b))}
    f.links["replayed_stale"] = {t.key}  # the trace's replays computed on it
    if ctx.site(free) is None:  # a dropped reference, not a call
        f.links["dropped_input"] = {(t.key, buffer_key(b))}
    return f


def _unrefreshed_finding(ctx: Context, t: TraceInfo, holder: int, acc: Access, execute: Event) -> Finding:
    """The input freed and allocated again inside the capture (tt-metal's executors) is held by
    that tensor, which nothing wrote before this replay: every replay reads what the capture
    left on the range, not the program's new data."""
    reader = ctx.calls.get(acc.seq)
    b = acc.buffer
    made = _holder_call(ctx, holder, buffer_key(b))
    message = (
        f"Trace {t.trace_id} reads {b.buffer_type} [{b.address:#x}, {b.end:#x}) on device {b.device}"
        + (f" (read by `{reader.name}` at {where(ctx, reader)})" if reader else "")
        + ", its input: the capture freed the input there and"
        + (f" `{made.name}` at {where(ctx, made)}" if made else " a tensor of its spec")
        + " allocated it again on exactly that range, so that tensor is the trace's input. Nothing"
        f" wrote it before execute_trace at {where(ctx, execute)}: the replay reads what the capture"
        " left there, not the data of this step."
    )  # fmt: skip
    evidence = {
        "input": range_evidence(b),
        "trace": t.trace_id,
        "device": b.device,
        "read_by": {"event": acc.seq, "at": where(ctx, reader) if reader else None},
        "execute": {"event": execute.seq, "at": where(ctx, execute)},
        "held_by": {"event": holder, "at": where(ctx, made) if made else None},
    }
    fix = (
        "Write each step's data into that tensor before execute_trace (ttnn.copy_host_to_device_tensor"
        " into it, or an op with output_tensor= it) on every path that replays the trace."
    )
    f = finding("TR005", ctx, execute, message, fix=fix, trace=t.trace_id, evidence=evidence,
                related=[holder, acc.seq])  # fmt: skip
    f.links["replayed_stale"] = {t.key}
    return f


def _holder_call(ctx: Context, seq: int, key: tuple) -> Event | None:
    """The user's call that made the tensor holding an input: the call at `seq`, or for an
    allocation recorded without its caller, the call right after it that output that buffer."""
    ev = ctx.calls.get(seq) or ctx.facts.event(seq)
    if ev is None or ev.kind is not Kind.ALLOC:
        return ev
    if ev.parent is not None:
        return ctx.outermost(ev)
    for s in range(seq + 1, seq + 16):
        call = ctx.calls.get(s)
        if call is not None and any(r.buffer is not None and buffer_key(r.buffer) == key for r in call.outputs):
            return ctx.outermost(call)
    return None


def _stale_finding(ctx: Context, t: TraceInfo, h2d: Event, acc: Access, out: TensorRef, execute: Event) -> Finding:
    b, n = acc.buffer, out.device_buffer
    message = (
        f"`{h2d.name}` writes new data into a new device tensor at {n.buffer_type} {n.address:#x},"
        f" but trace {t.trace_id} reads its input from {b.address:#x}; nothing was written into"
        f" that captured input before execute_trace at {where(ctx, execute)}, so the replay"
        " computes on the old data and ignores the new tensor."
    )
    evidence = {
        "new_tensor": range_evidence(n),
        "captured_input": range_evidence(b),
        "shape": list(out.shape),
        "dtype": out.dtype,
        "trace": t.trace_id,
        "execute": {"event": execute.seq, "at": where(ctx, execute)},
    }
    fix = (
        "Copy the new data into the captured input instead of making a new tensor:"
        " ttnn.copy_host_to_device_tensor(host_tensor, captured_input) (or ttnn.copy(new,"
        " captured_input) for data already on the device) before execute_trace."
    )
    f = finding("TR005", ctx, h2d, message, fix=fix, trace=t.trace_id, evidence=evidence,
                related=[execute.seq, acc.seq])  # fmt: skip
    f.links["stale_input"] = {(t.key, buffer_key(b))}
    f.links["replayed_stale"] = {t.key}
    f.links["stale_replays"] = {(t.key, buffer_key(b), execute.seq)}
    return f


def _aliasing(ctx: Context, t: TraceInfo) -> list[Finding]:
    findings: list[Finding] = []
    made_inside = {a.tensor_id for a in t.accesses if a.role != "read" and a.tensor_id is not None}
    inputs = t.inputs()
    input_keys = {buffer_key(a.buffer) for a in inputs}
    # Two different tensors (made before capture) read by the trace over shared memory.
    owners: dict[tuple, Access] = {}
    for acc in t.accesses:
        if acc.role != "read" or acc.tensor_id is None or acc.tensor_id in made_inside:
            continue
        if buffer_key(acc.buffer) not in input_keys:
            continue
        for other in owners.values():
            if other.tensor_id != acc.tensor_id and other.buffer.overlaps(acc.buffer):
                findings.append(_shared_input_finding(ctx, t, other, acc))
                break
        owners.setdefault(buffer_key(acc.buffer) + (acc.tensor_id,), acc)
    # A captured op writing into a trace input it does not itself read (output_tensor=, copy).
    first_read: dict[tuple[int, str, int], Access] = {}
    for acc in t.accesses:
        if acc.role == "read":
            first_read.setdefault(buffer_key(acc.buffer), acc)
    for acc in t.accesses:
        k = buffer_key(acc.buffer)
        if acc.role != "write" or k not in input_keys:
            continue
        call = ctx.calls.get(acc.seq)
        if call is None or call.kind is not Kind.OP or "cache" in call.name.lower():
            continue  # transfers are TR002; in-place KV-cache updates are the sanctioned state
        if any(r.buffer is not None and buffer_key(r.buffer) == k for r in call.inputs):
            continue  # views and in-place ops read what they write
        findings.append(_output_is_input_finding(ctx, t, call, acc, first_read[k]))
        break
    return findings


def _shared_input_finding(ctx: Context, t: TraceInfo, a: Access, b: Access) -> Finding:
    call = ctx.calls[b.seq]
    message = (
        f"Trace {t.trace_id} takes two different tensors as inputs that share device memory"
        f" ({a.buffer.buffer_type} {a.buffer.address:#x} and {b.buffer.address:#x}). Writing new"
        " data into one before a replay silently changes the other."
    )
    evidence = {"first": range_evidence(a.buffer), "second": range_evidence(b.buffer),
                "tensor_ids": [a.tensor_id, b.tensor_id], "trace": t.trace_id}  # fmt: skip
    return finding("TR006", ctx, call, message, trace=t.trace_id, evidence=evidence,
                   related=[a.seq])  # fmt: skip


def _output_is_input_finding(ctx: Context, t: TraceInfo, call: Event, acc: Access, read: Access) -> Finding:
    b = acc.buffer
    message = (
        f"`{call.name}` writes {b.buffer_type} [{b.address:#x}, {b.end:#x}), which trace"
        f" {t.trace_id} also reads as an input (at {where(ctx, ctx.calls[read.seq])}). Every"
        " replay therefore starts from the previous replay's output instead of the data you"
        " copy in, and the result depends on how many times the trace ran."
    )
    evidence = {"buffer": range_evidence(b), "trace": t.trace_id,
                "written_by": acc.seq, "read_by": read.seq}  # fmt: skip
    fix = (
        "Write the trace's result into a separate output tensor, and copy it into the input"
        " (ttnn.copy) outside the trace if the next step needs it."
    )
    return finding("TR006", ctx, call, message, fix=fix, trace=t.trace_id, evidence=evidence,
                   related=[read.seq])  # fmt: skip


def _overwritten_outputs(
    events: Sequence[Event], ctx: Context, traces: list[TraceInfo]
) -> list[Finding]:
    """The output's value timeline from `ctx.flow` (the replays that write it, the program's own
    writes, its free), and the host reads of it: a host read that comes after two or more
    replays with no read between, and is not the first read since the last replay, read a
    value the earlier replays' results were expected in."""
    from ttrecord.analysis.value_flow import END, READ

    outputs: dict[tuple, tuple[TraceInfo, Access]] = {}
    for t in traces:
        for acc in t.kept():
            outputs.setdefault(buffer_key(acc.buffer), (t, acc))
    if not outputs:
        return []
    runs = [e.seq for t, _ in outputs.values() for e in t.executes]
    if not runs:
        return []  # never replayed: no read can expect an earlier replay's result
    flow = ctx.flow
    flow.prefetch(outputs)
    # a read before the first replay can be no finding, nor change what later reads find
    host_reads = {k: set(seqs) for k, seqs in ctx.facts.reads(set(outputs), after=min(runs)).items()}
    findings: list[Finding] = []
    reported: set = set()
    for k, (t, acc) in outputs.items():
        reads = host_reads.get(k)
        if not reads:
            continue
        until = t.release.seq if t.release is not None else None
        runs_since_read = reads_this_run = backlog = 0
        for seq, kind, trace, _ in flow.steps(acc.buffer, t.ended.seq, until):
            if kind == END:
                break  # the output was freed: what lies there next is another tensor
            if kind != READ:
                if trace is None:  # the program wrote it itself: its own value now
                    runs_since_read = 0
                else:
                    runs_since_read += 1
                reads_this_run = 0
                continue
            if trace is not None or seq not in reads:
                continue  # a replay reading it as input, or an op: not a host read
            if reads_this_run == 0:
                backlog = runs_since_read
            reads_this_run += 1
            runs_since_read = 0
            if reads_this_run >= 2 and backlog >= 2:
                ev = ctx.facts.event(seq)
                site = ctx.site(ev) if ev is not None else None
                where_key = (site.file, site.line) if site else seq
                if ev is not None and (k, where_key) not in reported:
                    reported.add((k, where_key))
                    ref = next(r for r in ev.inputs if r.buffer is not None and buffer_key(r.buffer) == k)
                    findings.append(_overwritten_finding(ctx, t, ev, ref, backlog))
    findings.sort(key=lambda f: f.events[0])
    return findings


def _overwritten_finding(ctx: Context, t: TraceInfo, ev: Event, ref: TensorRef, runs: int) -> Finding:
    b = ref.device_buffer
    message = (
        f"`{ev.name}` reads an output of trace {t.trace_id} ({b.buffer_type} {b.address:#x})"
        f" again after {runs} replays with no read in between. Every replay writes the same"
        " buffer, so all these reads see the last replay's result; the earlier ones were"
        " overwritten."
    )
    evidence = {"output": range_evidence(b), "trace": t.trace_id, "replays_before_read": runs}
    fix = (
        "Read each replay's output (ttnn.to_torch) or ttnn.clone it before the next"
        " execute_trace; a trace's output tensor is one buffer reused by every replay."
    )
    # The consequence is in the recording: the program reads the buffer once per replay it
    # kept, so it used values that later replays had overwritten (outputs never read again
    # are not reported: nothing expected them).
    evidence["consequence"] = (
        f"read {runs} replays' results from one buffer that holds only the last one"
    )
    return finding("TR006", ctx, ev, message, fix=fix, trace=t.trace_id, evidence=evidence,
                   severity=Severity.ERROR)  # fmt: skip
