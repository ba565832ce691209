"""What `ttrecord report` shows besides the findings: events per phase and kind, and one row
per captured trace (where it was captured, ops, replays, bytes a replay writes, state, and the
results of verified replays).

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


@dataclass(frozen=True)
class RunSummary:
    counts: dict[tuple[str, str], int]  # (phase, kind) -> events
    traces: list[TraceSummary]

    @property
    def events(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        return {"counts": [[p, k, n] for (p, k), n in sorted(self.counts.items())],
                "traces": [asdict(t) for t in self.traces]}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSummary:
        return cls(counts={(p, k): n for p, k, n in data["counts"]},
                   traces=[TraceSummary(**t) for t in data["traces"]])  # fmt: skip


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
                                   sum(written.values()), state, verified.get(id(t), {})))  # fmt: skip
    return RunSummary(session.counts(), traces)


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
