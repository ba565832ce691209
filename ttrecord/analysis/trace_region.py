"""TR016 trace region too small or nearly full.

A captured trace's commands live in a buffer in the device's trace region, whose size is fixed
when the device opens (`trace_region_size`). ttnn learns that a capture does not fit only at
`end_trace_capture`, which raises "Creating trace buffers of size NB on MeshDevice M, but only
KB is allocated for trace region." The region is split over the DRAM banks, so the allocator
report shows per-bank sizes while the message and `trace_region_size` are totals: both are
shown here.

Rules, per device, following the trace-buffer allocations (children of `end_trace_capture`)
and their frees (`release_trace`):
- an `end_trace_capture` that raised the trace-region message is an error;
- otherwise a high-water mark of live trace buffers above 90% of the region is a warning (the
  next trace, or a longer sequence length, will not fit).
Both are pinned to the `open_device` call, where `trace_region_size` is set.

`scan` is the one account of the region: `report` shows its sizes per trace and device
(`run_summary`), from the same pass (`Context.trace_regions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import finding, hexdec, where
from ttrecord.analysis.trace_region_messages import CAUSES, TraceFit, parse
from ttrecord.events import BufferRef, Event, Kind, Status
from ttrecord.findings import Finding, Severity

WARN_FRACTION = 0.9


@dataclass(frozen=True)
class Misfit:
    """A capture that did not fit: what ttnn's message said (one of the wordings of
    `trace_region_messages`), and what was live then."""

    end: Event  # the end_trace_capture that raised
    fit: TraceFit
    live: int  # trace buffers (total) already live when it raised

    @property
    def needed(self) -> int | None:
        """All trace buffers with this one (total over banks), per a fixed region's message."""
        return self.fit.values.get("needed")

    @property
    def mesh(self) -> int | None:
        return self.fit.values.get("device")

    @property
    def allocated(self) -> int | None:
        return self.fit.values.get("allocated")

    @property
    def own(self) -> int | None:
        """This capture's own trace buffer: what it needed beyond the live ones."""
        return None if self.needed is None else max(self.needed - self.live, 0)


@dataclass
class Region:
    """One device's trace region over the run: what TR016 decides on and what `report` shows
    (`run_summary`)."""

    open_ev: Event | None
    size: int | None  # trace_region_size (total over banks)
    banks: int
    used: int = 0  # live trace buffers, total bytes
    peak: int = 0
    peak_at: Event | None = None
    sizes: dict[int, int] = field(default_factory=dict)  # trace id -> buffer bytes (total)
    live: dict[tuple, int] = field(default_factory=dict)  # buffer key -> total bytes
    misfits: list[Misfit] = field(default_factory=list)
    # trace_region_size=0: trace buffers are DRAM buffers placed top-down; each trace's
    # buffer, and the lowest address live trace buffers reached (their bank-local bottom)
    placements: dict[int, BufferRef] = field(default_factory=dict)
    lowest: int | None = None

    @property
    def dynamic(self) -> bool:
        """No fixed region: ttnn places each trace buffer top-down in DRAM (PR #36999)."""
        return self.size == 0

    def per_bank(self, total: int) -> int:
        return -(-total // self.banks)

    @property
    def size_per_bank(self) -> int | None:
        """trace_region_size per DRAM bank (the region is taken from the top of each)."""
        return self.size // self.banks if self.size else None


def scan(events: Sequence[Event]) -> dict[int | None, Region]:
    """Each device's trace region, following the trace-buffer allocations (children of
    `end_trace_capture`), their frees (`release_trace`) and captures that did not fit."""
    regions: dict[int | None, Region] = {}
    ends: set[int] = set()  # end_trace_capture calls: a dynamic trace buffer is their child
    for ev in events:
        kind = ev.kind
        if kind is Kind.DEVICE_OPEN and ev.status is Status.OK:
            args = ev.args or {}
            size = args.get("trace_region_size")
            regions[ev.device] = Region(ev, int(size) if isinstance(size, int) else None,
                                        int(args.get("num_dram_banks") or 1))  # fmt: skip
        elif kind is Kind.ALLOC and ev.buffer is not None and (
            ev.buffer.buffer_type == "TRACE" or (ev.parent in ends and ev.buffer.buffer_type == "DRAM"
                                                 and _region(regions, ev.device).dynamic)
        ):  # fmt: skip
            reg = _region(regions, ev.device)
            nbytes = _total(ev.buffer, reg.banks)
            reg.live[_key(ev.buffer)] = nbytes
            reg.used += nbytes
            if ev.trace is not None:
                reg.sizes[ev.trace] = reg.sizes.get(ev.trace, 0) + nbytes
                if reg.dynamic:
                    reg.placements[ev.trace] = ev.buffer
            if reg.dynamic and (reg.lowest is None or ev.buffer.address < reg.lowest):
                reg.lowest = ev.buffer.address
            if reg.used > reg.peak:
                reg.peak, reg.peak_at = reg.used, ev
        elif kind is Kind.FREE and ev.buffer is not None and ev.buffer.buffer_type in ("TRACE", "DRAM"):
            holder = regions.get(ev.device)
            if holder is not None and _key(ev.buffer) in holder.live:
                holder.used -= holder.live.pop(_key(ev.buffer))
        elif kind is Kind.TRACE_END:
            ends.add(ev.seq)
            fit = parse(ev.error) if ev.status is Status.RAISED and ev.error else None
            if fit is not None:
                reg = _region(regions, ev.device)
                if reg.size is None:
                    reg.size = 0 if fit.dynamic else fit.values.get("allocated")
                reg.misfits.append(Misfit(ev, fit, reg.used))
    return regions


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    regions = ctx.trace_regions if events is ctx.events else scan(events)
    findings: list[Finding] = []
    for reg in regions.values():
        if reg.misfits:  # one finding: the first capture that failed (the run ends there)
            findings.append(_too_small(ctx, reg, reg.misfits[0]))
        elif reg.size and reg.peak > WARN_FRACTION * reg.size:
            findings.append(_nearly_full(ctx, reg))
    return findings


def _region(regions: dict[int | None, Region], device: int | None) -> Region:
    reg = regions.get(device)
    if reg is None:
        reg = regions[device] = Region(None, None, 1)
    return reg


def _key(buf: BufferRef) -> tuple:
    return (buf.device, buf.buffer_type, buf.address)


def _total(buf: BufferRef, banks: int) -> int:
    """A trace buffer's size as ttnn counts it (all banks); `buf.size` is the per-bank footprint."""
    if buf.page_size and buf.num_pages:
        return buf.page_size * buf.num_pages
    return buf.size * banks


def _sizes(reg: Region, total: int) -> str:
    return f"{total:,} B ({reg.per_bank(total):,} B per DRAM bank over {reg.banks} banks)"


def _evidence(reg: Region, needed: int | None = None) -> dict:
    ev: dict = {"trace_region_size": reg.size, "dram_banks": reg.banks,
                "high_water": reg.peak, "high_water_per_bank": reg.per_bank(reg.peak),
                "trace_sizes": {str(t): s for t, s in sorted(reg.sizes.items())}}  # fmt: skip
    if reg.size:
        ev["region_per_bank"] = reg.size_per_bank
    if needed is not None:
        ev["needed"] = needed
        ev["needed_per_bank"] = reg.per_bank(needed)
    return ev


def _too_small(ctx: Context, reg: Region, misfit: Misfit) -> Finding:
    if misfit.fit.dynamic:
        return _no_room(ctx, reg, misfit)
    end, needed, allocated = misfit.end, misfit.needed or 0, misfit.allocated or 0
    others = f"; live traces already hold {_sizes(reg, misfit.live)}" if misfit.live else ""
    culprit = reg.open_ev or end
    message = (
        f"end_trace_capture at {where(ctx, end)} needs {_sizes(reg, needed)} of trace buffers"
        f"{others}, but trace_region_size is {_sizes(reg, allocated)}."
        f" ttnn: \"{misfit.fit.text}.\""
    )
    fix = (f"Open the device with trace_region_size of at least {needed} (plus headroom for"
           " longer sequences), or release a trace before capturing the next.")  # fmt: skip
    return finding("TR016", ctx, culprit, message, fix=fix, related=[end.seq],
                   evidence=_evidence(reg, needed), trace=end.trace)  # fmt: skip


def _nearly_full(ctx: Context, reg: Region) -> Finding:
    assert reg.size and reg.open_ev is not None
    percent = 100.0 * reg.peak / reg.size
    per_trace = ", ".join(f"trace {t}: {s:,} B" for t, s in sorted(reg.sizes.items()))
    at = reg.peak_at
    message = (
        f"Live trace buffers reach {_sizes(reg, reg.peak)}, {percent:.0f}% of trace_region_size"
        f" {_sizes(reg, reg.size)} ({per_trace}). A longer sequence or one more trace will fail"
        " at end_trace_capture with \"Creating trace buffers of size ... but only ... is"
        " allocated for trace region\"."
    )
    fix = "Open the device with a larger trace_region_size (at least 10% headroom)."
    return finding("TR016", ctx, reg.open_ev, message, fix=fix, severity=Severity.WARNING,
                   related=[at.parent or at.seq] if at else (), evidence=_evidence(reg))  # fmt: skip


def _no_room(ctx: Context, reg: Region, misfit: Misfit) -> Finding:
    """trace_region_size=0: the top-down trace buffer landed below DRAM the capture (or a live
    trace's capture) used, and ttnn refused it."""
    end, fit = misfit.end, misfit.fit
    address, mark = fit.values["address"], fit.mark
    live = [f"trace {t} at {hexdec(b.address)}" for t, b in sorted(reg.placements.items())]
    message = (
        f"end_trace_capture at {where(ctx, end)} found no room for its trace buffer: with"
        f" trace_region_size=0 ttnn places it top-down in DRAM, and it landed at {hexdec(address)},"
        f" below {CAUSES[fit.kind]} (up to {hexdec(mark)}), which a replay would overwrite"
        f" (live trace buffers: {', '.join(live) or 'none'}). ttnn: \"{fit.text}.\""
    )
    fix = ("Open the device with a non-zero trace_region_size (a fixed region is reserved before"
           " any tensor), or leave DRAM free above what the capture allocates (a smaller KV cache),"
           " or release the other live trace first.")  # fmt: skip
    evidence = _evidence(reg)
    evidence.update({"dynamic": True, "message": fit.kind, "trace_buffer_address": hexdec(address),
                     "high_water_mark": hexdec(mark),
                     "live_trace_buffers": {str(t): hexdec(b.address) for t, b in reg.placements.items()}})
    return finding("TR016", ctx, reg.open_ev or end, message, fix=fix, related=[end.seq],
                   evidence=evidence, trace=end.trace)  # fmt: skip
