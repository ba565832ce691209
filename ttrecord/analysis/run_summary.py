"""What `ttrecord report` shows besides the findings: events per phase and kind, one row per
captured trace (where it was captured, ops, replays, bytes a replay writes, state, the results
of verified replays, the size of its trace buffer) and each device's trace region (its
high-water mark against `trace_region_size`, per DRAM bank and in total, as TR016 counts them).

Worked out together with the findings and stored with them (`analysis.check`), because on a
long run it is the expensive part of a report: counting a million events scans the whole event
table, and the bytes a replay writes need the lifetimes of every buffer a capture wrote. A
report of a session whose stored findings are current reads this instead.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ttrecord.analysis.context import Context, TraceInfo, buffer_key
from ttrecord.analysis.rules import where
from ttrecord.analysis.baked_list import baked_values
from ttrecord.analysis.trace_region import Region
from ttrecord.events import Kind

if TYPE_CHECKING:
    from ttrecord.store.reader import Session


@dataclass(frozen=True)
class TraceSummary:
    device: int | None
    trace_id: int
    captured: str  # `model.py:27-29`: where the capture ran
    ops: int
    replays: int
    bytes_per_replay: int
    state: str  # "released" | "not released" | "never ended"
    verified: dict[str, int] = field(default_factory=dict)  # replay check result -> count
    # Its trace (command) buffer in the trace region, total over the DRAM banks and per bank;
    # for a capture that did not fit, what it needed beyond the live traces. None: no trace
    # buffer recorded (a capture that raised otherwise, or a session recorded before them).
    buffer_bytes: int | None = None
    buffer_per_bank: int | None = None
    fits: bool = True  # False: end_trace_capture raised "Creating trace buffers ..."
    # every scalar and shape its captured ops were called with (`baked_list.baked_values`)
    baked: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class RegionSummary:
    """One device's trace region: its size and the high-water mark of live trace buffers,
    total and per DRAM bank (ttnn's message and `trace_region_size` count totals; the
    allocator reports per bank), and what a capture that did not fit needed."""

    device: int | None
    dram_banks: int
    size: int | None  # trace_region_size (None: not known)
    size_per_bank: int | None
    high_water: int
    high_water_per_bank: int
    needed: int | None = None  # all trace buffers with the capture that did not fit
    needed_per_bank: int | None = None
    needed_by: int | None = None  # that capture's trace id


@dataclass(frozen=True)
class RunSummary:
    counts: dict[tuple[str, str], int]  # (phase, kind) -> events
    traces: list[TraceSummary]
    regions: list[RegionSummary] = field(default_factory=list)  # devices with trace buffers

    @property
    def events(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        return {"counts": [[p, k, n] for (p, k), n in sorted(self.counts.items())],
                "traces": [asdict(t) for t in self.traces],
                "regions": [asdict(r) for r in self.regions]}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSummary:
        """Also a summary stored before trace sizes were counted: its traces have no buffer
        sizes and it has no regions (the report then shows none)."""
        return cls(counts={(p, k): n for p, k, n in data["counts"]},
                   traces=[TraceSummary(**t) for t in data["traces"]],
                   regions=[RegionSummary(**r) for r in data.get("regions", [])])  # fmt: skip


def summarize(session: Session, ctx: Context) -> RunSummary:
    """The run summary of a session, from the context its analysis derived."""
    devices = session.devices()
    banks = {d.id: {"DRAM": d.num_dram_banks, "L1": d.num_l1_banks} for d in devices}
    sizes = _written_bytes(session, ctx)
    verified = _verified(ctx, ctx.traces)
    traces = []
    for t in ctx.traces:
        written: dict[tuple, int] = {}
        for acc in t.accesses:
            if acc.role == "read" or acc.buffer.buffer_type == "TRACE":
                continue
            key = buffer_key(acc.buffer)
            full = sizes.get((*key, acc.seq))
            if full is None:  # no page count recorded: a full bank-local footprint per bank
                full = acc.buffer.size * (banks.get(acc.buffer.device, {}).get(acc.buffer.buffer_type) or 1)
            written[key] = full
        state = "released" if t.release else ("never ended" if t.end is None else "not released")
        traces.append(TraceSummary(t.device, t.trace_id, _span(ctx, t), t.ops, len(t.executes),
                                   sum(written.values()), state, verified.get(id(t), {}),
                                   *_buffer(ctx.trace_regions.get(t.device), t),
                                   baked_values(ctx, t)))  # fmt: skip
    return RunSummary(session.counts(), traces, _regions(ctx.trace_regions))


def _buffer(reg: Region | None, t: TraceInfo) -> tuple[int | None, int | None, bool]:
    """A trace's buffer in the region: (total, per bank, fits), as TR016 counted it."""
    if reg is None:
        return None, None, True
    for misfit in reg.misfits:
        if misfit.end.trace == t.trace_id and (t.end is None or misfit.end.seq == t.end.seq):
            own = misfit.own
            return own, reg.per_bank(own) if own is not None else None, False
    size = reg.sizes.get(t.trace_id)
    return (size, reg.per_bank(size), True) if size is not None else (None, None, True)


def _regions(regions: dict[int | None, Region]) -> list[RegionSummary]:
    """The regions that held a trace buffer or refused one, by device."""
    out = []
    for device, reg in sorted(regions.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
        if not reg.sizes and not reg.misfits:
            continue
        first = reg.misfits[0] if reg.misfits else None
        out.append(RegionSummary(
            device, reg.banks, reg.size, reg.size_per_bank,
            reg.peak, reg.per_bank(reg.peak),
            first.needed if first else None,
            reg.per_bank(first.needed) if first and first.needed is not None else None,
            first.end.trace if first else None,
        ))  # fmt: skip
    return out


def _written_bytes(session: Session, ctx: Context) -> dict[tuple, int]:
    """Bytes of each buffer a capture created or wrote, from the allocator's page counts."""
    ids: dict[tuple, int] = {}  # (device, buffer type, address, seq) -> buffer id
    for t in ctx.traces:
        for acc in t.accesses:
            if acc.role != "read" and acc.buffer.buffer_type != "TRACE":
                lives = ctx.facts.lifetimes(buffer_key(acc.buffer))
                i = bisect.bisect_right(lives, acc.seq, key=lambda life: life[0]) - 1
                if i >= 0:
                    ids[buffer_key(acc.buffer) + (acc.seq,)] = lives[i][2]
    if not ids:
        return {}
    pages = session.buffer_bytes(set(ids.values()))
    return {k: pages[i] for k, i in ids.items() if i in pages}


def _verified(ctx: Context, traces: Sequence[TraceInfo]) -> dict[int, dict[str, int]]:
    """Results of the replays `run --verify-replay` checked, per trace (by id(TraceInfo)):
    a verify event is a child of the execute_trace it checked."""
    by_execute = {ex.seq: t for t in traces for ex in t.executes}
    out: dict[int, dict[str, int]] = {}
    for ev in ctx.events:
        if (ev.kind is Kind.VERIFY and ev.args and ev.parent is not None
                and (t := by_execute.get(ev.parent)) is not None):  # fmt: skip
            counts = out.setdefault(id(t), {})
            result = str(ev.args.get("result"))
            counts[result] = counts.get(result, 0) + 1
    return out


def _span(ctx: Context, t: TraceInfo) -> str:
    """Where a capture ran: `model.py:27-29` (one file), else both ends in full."""
    begin = where(ctx, t.begin)
    if t.end is None:
        return f"{begin}, never ended"
    end = where(ctx, t.end)
    if begin.rsplit(":", 1)[0] == end.rsplit(":", 1)[0]:
        return f"{begin}-{end.rsplit(':', 1)[1]}"
    return f"{begin} to {end}"
