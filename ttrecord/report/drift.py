"""Drift reports as rich renderables for the terminal (`ttrecord diff`) and the UI.

Everything here only reads a report; `to_renderables` is what the command prints, and the
sentence helpers (`summary_line`, `cause_sentence`, `fmt_change`) are shared with the UI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ttrecord.analysis.drift.model import CapturedOp, DriftReport, FieldChange, PairStatus
from ttrecord.terminal import PathCell


def fmt_value(field: str, value: Any) -> str:
    if value is None:
        return "-"
    if field == "address" and isinstance(value, int):
        return f"0x{value:x}"
    if isinstance(value, tuple):
        return "x".join(str(v) for v in value) or "()"
    return str(value)


def fmt_change(c: FieldChange) -> str:
    return f"{c.slot} {c.field} {fmt_value(c.field, c.a)} → {fmt_value(c.field, c.b)}"


def short_site(file: str, line: int) -> str:
    """file:line, relative to the current folder when the file is inside it."""
    path = Path(file)
    if path.is_absolute():
        try:
            file = str(path.relative_to(Path.cwd()))
        except ValueError:
            pass
    return f"{file}:{line}"


def _side(op: CapturedOp | None) -> str:
    if op is None:
        return "—"
    return f"{op.name} at {short_site(op.file, op.line)} (#{op.occurrence + 1}, event {op.seq})"


def cause_sentence(report: DriftReport) -> str | None:
    """One sentence naming the allocation that most likely shifted the layout."""
    cause = report.cause
    if cause is None:
        return None
    if cause.difference is None and cause.reordered is not None:
        a, b = cause.reordered.a, cause.reordered.b
        assert a is not None and b is not None
        return (f"the ops run in another order: {a.name} ({short_site(a.file, a.line)}) is op"
                f" {a.index + 1} of A and op {b.index + 1} of B ({short_site(b.file, b.line)}),"
                " so the allocator hands out their outputs in another order")  # fmt: skip
    diff = cause.difference
    assert diff is not None  # a cause is a reordering or a live difference
    buf = diff.live.buffer
    has, lacks = ("B", "A") if diff.run == "b" else ("A", "B")
    call = f" ({diff.live.call})" if diff.live.call else ""
    made = (f"allocated at {short_site(diff.live.file, diff.live.line)}{call},"
            f" event {diff.live.alloc_seq}")  # fmt: skip
    took = ""
    if cause.displaced is not None:
        took = (f" (where {lacks} put this tensor)" if cause.displaced == buf.address
                else f" (over {lacks}'s 0x{cause.displaced:x})")  # fmt: skip
    if cause.counterpart is not None:
        return (
            f"{has} keeps a {buf.size:,}-byte {buf.buffer_type} buffer live at 0x{buf.address:x}{took}"
            f" before the capture, {made}; {lacks} keeps its counterpart at"
            f" 0x{cause.counterpart.buffer.address:x}"
        )
    return (
        f"{has} has a {buf.size:,}-byte {buf.buffer_type} buffer live at 0x{buf.address:x}{took}"
        f" before the capture, which {lacks} does not: {made}"
    )


def other_op_sentence(report: DriftReport) -> str | None:
    """When the first divergence is an op one side runs where the other runs another one."""
    k = report.first_divergence
    if k is None or k + 1 >= len(report.pairs):
        return None
    this, after = report.pairs[k], report.pairs[k + 1]
    if this.status is PairStatus.ONLY_A and after.status is PairStatus.ONLY_B:
        a, b = this.a, after.b
    elif this.status is PairStatus.ONLY_B and after.status is PairStatus.ONLY_A:
        a, b = after.a, this.b
    else:
        return None
    assert a is not None and b is not None
    return (f"the runs call different ops here: A {a.name} at {short_site(a.file, a.line)},"
            f" B {b.name} at {short_site(b.file, b.line)}")


def summary_line(report: DriftReport) -> Text:
    """The verdict in one sentence: drift or not, and how many ops of each kind."""
    counts = {s: report.count(s) for s in PairStatus}
    text = Text()
    if not report.drift and report.mode == "prep" and counts[PairStatus.CHANGED]:
        text.append("No input drift", style="bold green")
        text.append(
            f": the capture reads the same buffers from outside the run as its prep run;"
            f" {counts[PairStatus.CHANGED]:,} of {len(report.pairs):,} ops read or write"
            " intermediates elsewhere (buffers the prep run allocated are still live)."
        )
        return text
    if not report.drift:
        text.append("No drift", style="bold green")
        text.append(f": {counts[PairStatus.SAME]:,} ops aligned, every buffer in place.")
        return text
    text.append("Drift", style="bold red")
    if report.mode == "prep":
        text.append(f": {len(report.changed_inputs):,} ops read different buffers from outside"
                    " the run than in the prep run;")  # fmt: skip
    aligned = counts[PairStatus.SAME] + counts[PairStatus.CHANGED]
    text.append(
        f"{'' if report.mode == 'prep' else ':'} {counts[PairStatus.CHANGED]:,} of {aligned:,}"
        f" aligned ops changed, {counts[PairStatus.ONLY_A]:,} only in A,"
        f" {counts[PairStatus.ONLY_B]:,} only in B."
    )
    return text


def alignment_sentence(report: DriftReport) -> str:
    """How the ops were paired and how sure that is: exactly, by signature, unmatched."""
    m = report.matched()
    if report.key == "call_site":
        how = "the same ops at the same call sites in the same order"
    else:
        search = "" if report.method == "identical" else f"; {report.method} search"
        how = f"what ran (op, order, tensor signature{search}), call sites as a tie-break"
    parts = [f"{m['exact']:,} exact (same op, call site and tensor signature)"]
    for kind, words in (("signature", "by tensor signature at another call site"),
                        ("call_site", "at the same call site with other tensors"),
                        ("op", "as the same op at another call site with other tensors"),
                        ("reordered", "reordered (same signature, another order)")):  # fmt: skip
        if m[kind]:
            parts.append(f"{m[kind]:,} {words}")
    return (f"Aligned by {how}: {', '.join(parts)}; unmatched: {m['unmatched_a']:,} only in A,"
            f" {m['unmatched_b']:,} only in B.")


def _first(report: DriftReport) -> list[RenderableType]:
    if report.first_divergence is None:
        return []
    pair = report.pairs[report.first_divergence]
    out: list[RenderableType] = [Text("\nFirst divergence", style="bold")]
    if pair.status is PairStatus.ONLY_A:
        out.append(Text(f"  only in A: {_side(pair.a)}"))
    elif pair.status is PairStatus.ONLY_B:
        out.append(Text(f"  only in B: {_side(pair.b)}"))
    else:
        out.append(Text(f"  {_side(pair.a)}; B event {pair.b.seq}"))  # type: ignore[union-attr]
        out.extend(Text(f"    {fmt_change(c)}", style="yellow") for c in pair.changes[:8])
    sentence = cause_sentence(report) or other_op_sentence(report)
    if sentence:
        out.append(Text("Likely cause", style="bold"))
        out.append(Text(f"  {sentence}", style="red"))
    elif pair.status is PairStatus.CHANGED:
        out.append(Text("  No extra or missing live allocation before the capture explains it;"
                        " the layouts differ by freed and reused memory.",
                        style="dim"))  # fmt: skip
    return out


def _groups_table(report: DriftReport) -> Table | None:
    if not report.groups:
        return None
    table = Table("device", "buffer type", "buffers", "moved", "drift", "offsets (B − A)",
                  title="Drift by device and buffer type", title_justify="left")  # fmt: skip
    for g in report.groups:
        offsets = ", ".join(f"{off:+,} ×{n}" for off, n in g.offsets[:4])
        if len(g.offsets) > 4:
            offsets += f", … {len(g.offsets) - 4} more"
        style = {"unchanged": "green", "constant_offset": "yellow"}.get(g.kind, "red")
        table.add_row(str(g.device), g.buffer_type, f"{g.buffers:,}", f"{g.moved:,}",
                      Text(g.kind.replace("_", " "), style=style), offsets or "-")  # fmt: skip
    return table


def _live_table(report: DriftReport, limit: int) -> Table | None:
    if not report.live_differences:
        return None
    table = Table("run", "buffer", "address", "bytes", "allocated by", "event",
                  title="Live before the capture in one run only",
                  title_justify="left")  # fmt: skip
    for d in report.live_differences[:limit]:
        b = d.live.buffer
        table.add_row(d.run.upper(), b.buffer_type, f"0x{b.address:x}", f"{b.size:,}",
                      PathCell(short_site(d.live.file, d.live.line),
                               prefix=f"{d.live.call} " if d.live.call else ""),
                      str(d.live.alloc_seq))  # fmt: skip
    if len(report.live_differences) > limit:
        table.caption = f"… {len(report.live_differences) - limit} more"
    return table


def _overlap_text(report: DriftReport) -> list[RenderableType]:
    o = report.overlaps
    if not o.checked:
        return [Text("\nReplay overlap: not checked (a prep run, or a capture that never"
                     " ended, has no replay).", style="dim")]  # fmt: skip
    lines: list[RenderableType] = [
        Text("\nTrace ranges over buffers live in the other run's replay", style="bold")
    ]
    for run, other, n in (("A", "B", o.a_over_b), ("B", "A", o.b_over_a)):
        style = "red" if n else "green"
        lines.append(Text(f"  {run}'s trace over {other}'s live buffers: {n:,}", style=style))
    for ex in o.examples[:5]:
        lines.append(Text(
            f"    {ex.trace_run.upper()} {ex.buffer_type} 0x{ex.address:x}+{ex.size:,} (op event"
            f" {ex.op_seq}) overlaps 0x{ex.other_address:x}+{ex.other_size:,} (event"
            f" {ex.other_alloc_seq})", style="dim"))  # fmt: skip
    return lines


def _ops_table(report: DriftReport, limit: int) -> Table | None:
    rows = [(k, p) for k, p in enumerate(report.pairs) if p.status is not PairStatus.SAME]
    if not rows:
        return None
    table = Table("#", "A event", "B event", "op", "call site", "what differs",
                  title="Ops that differ", title_justify="left")  # fmt: skip
    for k, p in rows[:limit]:
        op = p.a or p.b
        assert op is not None
        if p.status is PairStatus.CHANGED:
            what = Text("; ".join(fmt_change(c) for c in p.changes[:3]), style="yellow")
            if len(p.changes) > 3:
                what.append(f"; … {len(p.changes) - 3} more")
        else:
            what = Text("only in A" if p.status is PairStatus.ONLY_A else "only in B", style="red")
        table.add_row(str(k), str(p.a.seq) if p.a else "—", str(p.b.seq) if p.b else "—",
                      op.name, PathCell(short_site(op.file, op.line)), what)  # fmt: skip
    if len(rows) > limit:
        table.caption = f"… {len(rows) - limit:,} more (--limit, or --format json for all)"
    return table


def to_renderables(report: DriftReport, limit: int = 50) -> RenderableType:
    """Everything `ttrecord diff` prints, top to bottom."""
    a_ops = sum(1 for p in report.pairs if p.a is not None)
    b_ops = sum(1 for p in report.pairs if p.b is not None)
    head = Text()
    for name, ref, ops, end in (("A", report.a, a_ops, "\n"), ("B", report.b, b_ops, "")):
        head.append(f"{name} ", style="bold")
        head.append(f"{ref.label} (device {ref.device}, trace {ref.trace_id}, {ops:,} ops){end}")
    parts: list[RenderableType | None] = [head, summary_line(report),
                                          Text(alignment_sentence(report), style="dim"),
                                          *_first(report)]  # fmt: skip
    if report.drift:
        parts += [_groups_table(report), _live_table(report, limit), *_overlap_text(report),
                  _ops_table(report, limit)]  # fmt: skip
    elif report.mode == "prep":
        parts.append(_ops_table(report, limit))
    elif report.overlaps.a_over_b or report.overlaps.b_over_a:
        parts += _overlap_text(report)
    return Group(*(p for p in parts if p is not None))
