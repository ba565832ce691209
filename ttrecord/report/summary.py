"""`ttrecord report`: a one-screen account of a recorded run, rendered with rich.

Order follows the questions people ask: did it finish (and if not, which call died, on which
line), what ran it (real ttnn or the emulator, said plainly), on which devices, what it did
(events per phase and kind), which traces it captured and replayed, and what is wrong
(findings by severity, each with its line of code). Findings stored by `ttrecord check` (or an
earlier report) are reused when their stamp says this analysis computed them on this very
session content; otherwise they are computed fresh, the same way `check` computes them, and
stored. So the report never shows a stale analysis.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ttrecord import terminal, textsafe
from ttrecord.analysis import STEPS
from ttrecord.analysis.check import findings_for
from ttrecord.analysis.run_summary import RegionSummary, RunSummary, TraceSummary
from ttrecord.events import kind_label
from ttrecord.findings import Finding, Severity
from ttrecord.meshes import Mesh, device_label, meshes_of
from ttrecord.progress import Progress
from ttrecord.report import keep_going
from ttrecord.report.lead import capture_sites, change_index
from ttrecord.report.text import STYLE, chain, location, source
from ttrecord.store.reader import DeviceRow, Session, SessionInfo

_STATUS_STYLE = {"ok": "bold green", "running": "bold yellow", "interrupted": "bold yellow",
                 "error": "bold red", "crashed": "bold red", "hung": "bold red"}  # fmt: skip


def render_report(path: str, out: TextIO, quiet: bool = False) -> None:
    console = textsafe.console(file=out)  # session text is data; ttrecord.terminal's width
    with Session.open(path) as session:
        info = session.info()
        with Progress("reading the session", total=STEPS, quiet=quiet) as bar:
            findings, summary = findings_and_summary(session, bar.step)
        info = textsafe.clean_deep(info)  # long texts cut, controls shown escaped
        findings = textsafe.clean_deep(findings)
        devices = session.devices()
        for part in (_header(info, console.width), _status(info, session, console.width),
                     _backend(info)):  # fmt: skip
            # paths shortened from the middle (file name and line stay), other text wrapped
            # under the start of its line
            for line in part.split("\n"):
                indent = len(line.plain) - len(line.plain.lstrip(" "))
                console.print(Padding(line[indent:], (0, 0, 0, indent), expand=False))
        meshes = meshes_of(devices)
        if devices:
            console.print(_devices(devices, meshes))
        console.print(_counts(summary.counts))
        if summary.traces:
            console.print(_traces(textsafe.clean_deep(summary.traces), console.width))
        for region in summary.regions:
            console.print(_region(region, [t for t in summary.traces if t.device == region.device],
                                  device_label(region.device, meshes)))  # fmt: skip
        for t in summary.traces:
            if t.baked:
                console.print(_baked(textsafe.clean_deep(t), device_label(t.device, meshes)))
        _drive(console, session, meshes)
        from ttrecord.report.outcome import of_session
        from ttrecord.report.result import changed_line

        changed = sorted({f.file for f in findings
                          if f.file and session.source_changed_on_disk(f.file)})  # fmt: skip
        if changed:  # said once: the lines shown are the ones that ran
            console.print(Text(changed_line(changed), style="yellow"))
        empty = of_session(session)
        if empty is not None and not findings:
            console.print(Text.assemble(("Nothing to judge: ", "bold yellow"), empty.why))
            return
        _findings(console, findings, session)
        if empty is not None:
            console.print(Text(empty.why, style="yellow"))


def findings_and_summary(session: Session,
                         on_step: Callable[[str], None] | None = None,
                         ) -> tuple[list[Finding], RunSummary]:  # fmt: skip
    """The session's findings and run summary (`findings_for`), stored for the next report and
    the UI when computed now (quietly skipped when the file is read-only or busy)."""
    result = findings_for(session, store=True, on_step=on_step)
    return result.findings, result.summary()


def _header(info: SessionInfo, width: int) -> Text:
    took = f", {info.ended_at - info.started_at:.1f} s" if info.ended_at else ""
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.started_at))
    cwd = terminal.shorten_path(str(info.cwd), max(width - 40, 20))
    return Text.assemble(("ttrecord session ", "bold"),
                         terminal.shorten_path(str(info.path), width - 17), "\n",
                         f"  script {' '.join(info.argv) or info.script}\n",
                         f"  started {started}{took}, in {cwd} on {info.host}")  # fmt: skip


def _status(info: SessionInfo, session: Session, width: int = 80) -> Text:
    text = Text.assemble("  status ", (info.status.upper(), _STATUS_STYLE.get(info.status, "bold")))
    if info.exit_code is not None:
        text.append(f" (exit code {info.exit_code}")
        text.append(f", signal {info.signal})" if info.signal else ")")
    if info.error_type or info.error_message:
        message = f"{info.error_type or 'error'}: {info.error_message or ''}".replace("\n", "\n    ")
        text.append(f"\n  {message}", style="red")
    stopped = (info.options or {}).get("recording_stopped")
    if stopped and stopped != info.error_message:  # the session holds only part of the run
        text.append(f"\n  partial recording: {stopped}", style="bold red")
    if info.status in ("crashed", "hung", "error", "running", "interrupted"):
        last, verb = session.last_call(), {"crashed": "died in", "hung": "hung in"}.get(
            info.status, "last call"
        )
        if last is None and info.status == "error":  # the program died of a call that raised
            raised = session.last_raised_seq()
            last, verb = (session.event(raised) if raised is not None else None), "raised in"
            first_line = (info.error_message or "").splitlines()[:1]
            if last is not None and not (first_line and first_line[0] in (last.error or "")):
                last = None  # a raise the program caught; it died of something else
        if last is not None:
            site = last.callsite
            text.append(f"\n  {verb} ", style="red")
            text.append(f"`{last.name}`", style="bold red")
            if site is not None:
                used = len(verb) + len(last.name) + 9 + len(site.function or "") + 4
                at = terminal.where(site.file, site.line, max(width - used, 20))
                text.append(f" at {at} in {site.function}", style="red")
                src = _line(session, site.file, site.line)
                if src:
                    lead = f"\n    {site.line:>5} | "
                    text.append(lead + terminal.fit(src.strip(), width - len(lead) + 1),
                                style="bold")  # fmt: skip
            if last.error and last.error.strip() != message_of(info):
                text.append(f"\n  {last.error}", style="red")
    return text


def message_of(info: SessionInfo) -> str:
    return f"{info.error_type or 'error'}: {info.error_message or ''}".strip()


def _backend(info: SessionInfo) -> Text:
    if info.backend not in ("emulator", "ttnn"):  # it never loaded: name none
        return Text.assemble("  backend ", ("none", "bold red"), " (no backend ran: ",
                             info.backend_reason or "it never loaded", ")")  # fmt: skip
    if info.backend == "emulator":
        what = Text.assemble("  backend ", ("emulator", "bold magenta"),
                             " (ttrecord's hardware-free ttnn stand-in: no Tenstorrent device ran"
                             " this program)")  # fmt: skip
    else:
        version = f" {info.ttnn_version}" if info.ttnn_version else ""
        mock = "mock device" in (info.backend_reason or "")
        what = Text.assemble("  backend ", (f"ttnn{version}", "bold"),
                             " (mock device: real ttnn without hardware, ops compute nothing)"
                             if mock else " (real device)")  # fmt: skip
    if info.backend_reason:
        what.append(f"; {info.backend_reason}", style="dim")
    return what


def _devices(devices: list[DeviceRow], meshes: dict[int, Mesh]) -> Table:
    """The devices opened; with their chips' device ids (and the mesh's shape) when recorded:
    ttnn's own id of a mesh, `open_device(device_id=0)`'s included, is not a chip's."""
    table = Table(title="Devices", title_justify="left")
    cols = ["device", "arch", "DRAM banks", "L1 banks", "trace region", "opened", "closed"]
    if meshes:
        cols.insert(1, "chips")
    for col in cols:
        table.add_column(col, justify="left" if col in ("arch", "chips") else "right")
    for d in devices:
        region = f"{d.trace_region_size:,} B" if d.trace_region_size is not None else "-"
        cells = [str(d.id), d.arch or "-", _opt(d.num_dram_banks), _opt(d.num_l1_banks),
                 region, _opt(d.open_seq, "#"), _opt(d.close_seq, "#")]  # fmt: skip
        if meshes:
            mesh = meshes.get(d.id) if d.id is not None else None
            cells.insert(1, "-" if mesh is None else mesh.ids_text())
        table.add_row(*cells)
    return table


def _opt(value: int | None, prefix: str = "") -> str:
    return f"{prefix}{value}" if value is not None else "-"


def _counts(counts: dict[tuple[str, str], int]) -> Table:
    phases = [p for p in ("eager", "prep", "capture", "replay") if any(k[0] == p for k in counts)]
    kinds = sorted(  # most frequent first; ties by name, so every run prints the same table
        {k for _, k in counts}, key=lambda k: (-sum(n for (p, kk), n in counts.items() if kk == k), k)
    )
    table = Table(title=f"Events ({sum(counts.values()):,})", title_justify="left")
    table.add_column("kind")
    for p in phases:
        table.add_column(p, justify="right")
    table.add_column("total", justify="right", style="bold")
    for kind in kinds:
        row = [counts.get((p, kind), 0) for p in phases]
        table.add_row(Text(kind_label(kind)), *(f"{n:,}" if n else "" for n in row), f"{sum(row):,}")
    return table


def _traces(traces: list[TraceSummary], width: int = 80) -> Table:
    verified = any(t.verified for t in traces)
    table = Table(title="Traces", title_justify="left")
    columns = ["device", "trace", "captured", "ops", "replays", "bytes per replay", "state"]
    if verified:
        columns.insert(5, "verified")
    for col in columns:
        table.add_column(col, justify="left" if col in ("captured", "state") else "right",
                         no_wrap=col in ("captured", "state"))  # fmt: skip
    rows: list[list[str]] = []
    same: dict[tuple[str, ...], list[int]] = {}  # a long run's identical traces: one row
    for t in traces:
        cells = [str(t.device), str(t.trace_id), t.captured, str(t.ops), str(t.replays),
                 f"{t.bytes_per_replay:,}", t.state]  # fmt: skip
        if verified:
            cells.insert(5, ", ".join(f"{n} {r}" for r, n in sorted(t.verified.items())) or "-")
        key = tuple(c for k, c in enumerate(cells) if k != 1)
        if key not in same:
            same[key] = []
            rows.append(cells)
        same[key].append(t.trace_id)
    for cells in rows:
        ids = same[tuple(c for k, c in enumerate(cells) if k != 1)]
        if len(ids) > 1:
            cells[1] = f"{min(ids)}–{max(ids)} ({len(ids)}×)"
    # The capture's place gets the room the other columns leave (their headers may wrap at
    # spaces); a long path is shortened from the middle, its file name and lines stay.
    at = columns.index("captured")
    others = sum(
        max([max(len(w) for w in col.split()), *(len(r[k]) for r in rows)])
        for k, col in enumerate(columns) if k != at
    ) + 3 * len(columns) + 1  # fmt: skip
    for cells in rows:
        name = cells[at].rsplit("/", 1)[-1]  # the file name and lines always stay whole
        cells[at] = terminal.shorten_path(cells[at], max(width - others, len(name), 12))
        table.add_row(*cells)
    return table


def _region(region: RegionSummary, traces: list[TraceSummary], label: str) -> Table:
    """A device's trace region: each trace's buffer, the high-water mark of live trace buffers
    and trace_region_size, in total and per DRAM bank, both, because ttnn's message and
    trace_region_size count totals while the allocator reports per bank."""
    table = Table(title=f"Trace region, {label}, {region.dram_banks} DRAM banks",
                  title_justify="left")  # fmt: skip
    table.add_column("")
    for col in ("total", "per bank", "of region"):
        table.add_column(col, justify="right")

    def row(label: str, total: int | None, per_bank: int | None, style: str = "") -> None:
        share = "-"
        if total is not None and region.size:
            share = f"{100 * total / region.size:.0f}%" if total * 100 >= region.size else "<1%"
        table.add_row(label, _bytes(total), _bytes(per_bank), share, style=style)

    for t in traces:
        if t.fits:
            row(f"trace {t.trace_id}", t.buffer_bytes, t.buffer_per_bank)
        else:
            row(f"trace {t.trace_id}: did not fit", t.buffer_bytes, t.buffer_per_bank, "red")
    if region.needed is not None:
        row(f"needed with trace {region.needed_by}", region.needed, region.needed_per_bank, "red")
    full = region.size is not None and region.high_water > 0.9 * region.size
    row("high-water mark", region.high_water, region.high_water_per_bank, "yellow" if full else "")
    row("trace_region_size", region.size, region.size_per_bank, "bold")
    return table


def _drive(console: Console, session: Session, meshes: dict[int, Mesh]) -> None:
    """How to drive each capture: inputs to copy into, outputs to read, a replay loop."""
    from ttrecord.report import drive

    for plan in textsafe.clean_deep(drive.plans(session)):
        console.print(Text(f"How to drive trace {plan.trace_id} ({device_label(plan.device, meshes)}, captured"
                           f" at {plan.captured})", style="bold"))  # fmt: skip
        console.print(Text("  copy new data into these captured inputs before each replay:"))
        for t in plan.inputs or []:
            console.print(Text(f"    {drive.describe(t)}"), soft_wrap=True)
        if not plan.inputs:
            console.print(Text("    (none: the trace reads no buffer made before it)", style="dim"))
        console.print(Text("  read these outputs after it:"))
        for t in plan.outputs or []:
            console.print(Text(f"    {drive.describe(t)}"), soft_wrap=True)
        if not plan.outputs:
            console.print(Text("    (none: nothing it made outlived the capture)", style="dim"))
        room = console.width - 4
        for row in plan.snippet.splitlines():
            code, sep, comment = row.partition("  # ")
            lines = [row] if len(row) <= room or not sep else [
                code[: len(code) - len(code.lstrip())] + "# " + comment, code]  # comment above
            for text in lines:
                console.print(Text("    " + terminal.fit(text, room), style="cyan"), soft_wrap=True)


BAKED_ROWS = 20  # per trace in the text report; `--format json` has them all


def _baked(t: TraceSummary, label: str) -> Table:
    """The Python values a trace's captured ops were called with: each replay repeats them."""
    table = Table(title=f"Values baked into trace {t.trace_id} ({label})",
                  title_justify="left")  # fmt: skip
    for col in ("op", "parameter", "value", "line"):
        table.add_column(col, overflow="fold")
    for row in t.baked[:BAKED_ROWS]:
        table.add_row(str(row["op"]), str(row["parameter"]), repr(row["value"]), str(row["line"]))
    if len(t.baked) > BAKED_ROWS:
        table.add_row("", f"and {len(t.baked) - BAKED_ROWS} more", "", "")
    return table


def _bytes(n: int | None) -> str:
    return f"{n:,} B" if n is not None else "-"


def _line(session: Session, file: str | None, line: int | None) -> str | None:
    if not file or not line:
        return None
    text = session.source(file)
    if text is None:
        return None
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None


def _findings(console: Console, findings: list[Finding], session: Session) -> None:
    if not findings:
        console.print(Text("No trace hazards found.", style="bold green"))
        return
    sites = capture_sites(session, findings)
    went_past = dict(zip(map(id, findings), keep_going.messages(session, findings), strict=True))
    for sev in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in findings if f.severity is sev]
        if not group:
            continue
        console.print(Text(f"{len(group)} {sev}{'s' if len(group) != 1 else ''}", style=STYLE[sev]))
        for f in group:
            times = f" x{f.occurrences}" if f.occurrences > 1 else ""
            head = Text.assemble("  ", (f"{f.rule}{times}", "bold"), f" {f.title}")
            loc = location(console, "  ", f.file, f.line, None)
            if head.cell_len + loc.cell_len <= console.width:  # on one line when it fits
                head.append_text(loc)
                console.print(head, soft_wrap=True)
            else:
                console.print(head)
                console.print(location(console, "    ", f.file, f.line, None), soft_wrap=True)
            if went_past.get(id(f)):  # the run went on where real ttnn would have stopped
                console.print(Padding(Text(keep_going.line(str(went_past[id(f)])), style="magenta"),
                                      (0, 0, 0, 4), expand=False))  # fmt: skip
            # the line to change first, down to the ttnn call, then the fix (report.lead)
            for lead, (file, lineno, function) in chain(f, change_index(f, sites)):
                if lead.strip():
                    console.print(location(console, "  " + lead, file, lineno, function),
                                  soft_wrap=True)  # fmt: skip
                src = _line(session, file, lineno)
                if src is not None and lineno is not None:
                    console.print(source(console, lineno, src.strip()), soft_wrap=True)
            console.print(
                Padding(Text.assemble(("fix: ", "green"), f.fix), (0, 0, 0, 4), expand=False)
            )
            console.print(Padding(Text(f.message), (0, 0, 0, 4), expand=False))
            for item in f.folded:
                at = terminal.shorten_path(str(item["at"]), console.width - 4)
                console.print(Padding(Text.assemble(
                    ("also caused by this: ", "dim"), (item["rule"], "bold"),
                    f" {item['title']} at {at} ({item['why']})"), (0, 0, 0, 4), expand=False))  # fmt: skip
