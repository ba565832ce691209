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

import bisect
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from ttrecord import textsafe
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ttrecord.analysis import STEPS, analyze_session
from ttrecord.analysis.context import Context, TraceInfo, buffer_key
from ttrecord.analysis.facts import SessionFacts
from ttrecord.analysis.loading import _CORE
from ttrecord.analysis.version import analysis_version
from ttrecord.analysis.rules import where
from ttrecord.events import Kind, Phase
from ttrecord.findings import Finding, Severity
from ttrecord.progress import Progress
from ttrecord.report import store_findings
from ttrecord.report.text import STYLE
from ttrecord.store.reader import DeviceRow, Session, SessionInfo

_STATUS_STYLE = {"ok": "bold green", "running": "bold yellow", "interrupted": "bold yellow",
                 "error": "bold red", "crashed": "bold red", "hung": "bold red"}  # fmt: skip


def render_report(path: str, out: TextIO, quiet: bool = False) -> None:
    # Piped or redirected output has no terminal width; rich would assume 80 columns, too
    # narrow for the tables, so files get 120.
    tty = hasattr(out, "isatty") and out.isatty()
    console = textsafe.console(file=out, width=None if tty else 120)  # session text is data
    with Session.open(path) as session:
        info = session.info()
        with Progress("reading the session", total=STEPS, quiet=quiet) as bar:
            findings, ctx, stamp = _findings_and_context(session, bar.step)
        if stamp is not None and info.status != "running":
            # Computed now: stored for the next report and the UI (quietly skipped when the
            # file is read-only or busy; a session still being recorded changes anyway).
            store_findings(path, findings, stamp, say_why=False)
        info = textsafe.clean_deep(info)  # long texts cut, controls shown escaped
        findings = textsafe.clean_deep(findings)
        devices = session.devices()
        for part in (_header(info), _status(info, session), _backend(info)):
            console.print(part, soft_wrap=True)  # paths and lines stay whole (and clickable)
        if devices:
            console.print(_devices(devices))
        console.print(_counts(session.counts()))
        if ctx.traces:
            console.print(_traces(ctx, ctx.traces, devices, _written_bytes(session, ctx)))
        _findings(console, findings, session)


def current_findings(session: Session) -> list[Finding] | None:
    """The stored findings when the current analysis computed them on this very content
    (their stamp matches), else None: stale, never checked, or stored without a stamp."""
    stamp = session.findings_stamp()
    if stamp is None or stamp != (analysis_version(), session.fingerprint()):
        return None
    return session.findings()


def _findings_and_context(session: Session, on_step: Callable[[str], None] | None) -> tuple[list[Finding], Context, tuple | None]:
    """Stored findings when current (and the part of the session the traces table needs),
    else a fresh analysis and the stamp to store it with."""
    stored = current_findings(session)
    if stored is not None:
        return stored, _traces_context(session), None
    stamp = (analysis_version(), session.fingerprint())
    findings, ctx = analyze_session(session, on_step)
    return findings, ctx, stamp


@dataclass(frozen=True, slots=True)
class _Replay:
    """An execute_trace call as the traces table counts it (a replay loop has 100,000s)."""

    seq: int


def _traces_context(session: Session) -> Context:
    """The traces as the analysis derives them, read without their execute_trace calls (the
    bulk of a replay loop), which are then counted in from narrow rows: an execute belongs to
    the latest trace of its device and id begun before it and not released by then."""
    events = session.events_at(
        seq for (seq,) in session.query(
            f"SELECT seq FROM ({_CORE}) WHERE seq NOT IN (SELECT seq FROM events"
            " WHERE kind = 'trace_execute' AND phase != 'capture')"
        )
    )  # fmt: skip
    facts = SessionFacts(session)
    facts.prefetch(
        buffer_key(r.buffer) for e in events if e.phase is Phase.CAPTURE
        for r in e.outputs if r.buffer is not None
    )  # fmt: skip
    info = session.info()
    ctx = Context(events, status=info.status, cwd=info.cwd, backend=info.backend, facts=facts)
    by_key: dict[tuple, list[TraceInfo]] = {}
    for t in ctx.traces:
        by_key.setdefault(t.key, []).append(t)
    for seq, device, trace in session.query(
        "SELECT seq, device, trace FROM events WHERE kind = 'trace_execute' AND phase != 'capture'"
        " ORDER BY seq"
    ):
        for t in reversed(by_key.get((device, trace), ())):
            if t.begin.seq < seq:
                if t.release is None or t.release.seq > seq:
                    t.executes.append(_Replay(seq))  # type: ignore[arg-type]
                break
    return ctx


def _header(info: SessionInfo) -> Text:
    took = f", {info.ended_at - info.started_at:.1f} s" if info.ended_at else ""
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.started_at))
    return Text.assemble(("ttrecord session ", "bold"), info.path, "\n",
                         f"  script {' '.join(info.argv) or info.script}\n",
                         f"  started {started}{took}, in {info.cwd} on {info.host}")  # fmt: skip


def _status(info: SessionInfo, session: Session) -> Text:
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
            raised = session.query("SELECT max(seq) FROM events WHERE status = 'raised'")[0][0]
            last, verb = (session.event(raised) if raised is not None else None), "raised in"
            first_line = (info.error_message or "").splitlines()[:1]
            if last is not None and not (first_line and first_line[0] in (last.error or "")):
                last = None  # a raise the program caught; it died of something else
        if last is not None:
            site = last.callsite
            text.append(f"\n  {verb} ", style="red")
            text.append(f"`{last.name}`", style="bold red")
            if site is not None:
                text.append(f" at {site.file}:{site.line} in {site.function}", style="red")
                src = _line(session, site.file, site.line)
                if src:
                    text.append(f"\n    {site.line:>5} | {src.strip()}", style="bold")
            if last.error and last.error.strip() != message_of(info):
                text.append(f"\n  {last.error}", style="red")
    return text


def message_of(info: SessionInfo) -> str:
    return f"{info.error_type or 'error'}: {info.error_message or ''}".strip()


def _backend(info: SessionInfo) -> Text:
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


def _devices(devices: list[DeviceRow]) -> Table:
    table = Table(title="Devices", title_justify="left")
    for col in ("device", "arch", "DRAM banks", "L1 banks", "trace region", "opened", "closed"):
        table.add_column(col, justify="right" if col not in ("arch",) else "left")
    for d in devices:
        region = f"{d.trace_region_size:,} B" if d.trace_region_size is not None else "-"
        table.add_row(str(d.id), d.arch or "-", _opt(d.num_dram_banks), _opt(d.num_l1_banks),
                      region, _opt(d.open_seq, "#"), _opt(d.close_seq, "#"))  # fmt: skip
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
        table.add_row(kind, *(f"{n:,}" if n else "" for n in row), f"{sum(row):,}")
    return table


def _written_bytes(session: Session, ctx: Context) -> dict[tuple, int]:
    """Bytes of each buffer a capture created or wrote, from the allocator's page counts."""
    ids: dict[tuple, int] = {}  # (device, buffer type, address, seq) -> buffer id
    facts = ctx.facts
    assert isinstance(facts, SessionFacts)  # the context was loaded from the session
    for t in ctx.traces:
        for acc in t.accesses:
            if acc.role != "read" and acc.buffer.buffer_type != "TRACE":
                lives = facts.lifetimes(buffer_key(acc.buffer))
                i = bisect.bisect_right(lives, acc.seq, key=lambda life: life[0]) - 1
                if i >= 0:
                    ids[buffer_key(acc.buffer) + (acc.seq,)] = lives[i][2]
    if not ids:
        return {}
    pages = {
        buffer_id: page_size * num_pages
        for buffer_id, page_size, num_pages in session.query(
            "SELECT id, page_size, num_pages FROM buffers WHERE id IN"
            " (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(ids.values()))),),
        )
        if page_size and num_pages
    }
    return {k: pages[i] for k, i in ids.items() if i in pages}


def _traces(
    ctx: Context, traces: Sequence[TraceInfo], devices: list[DeviceRow], sizes: dict[tuple, int]
) -> Table:
    banks = {d.id: {"DRAM": d.num_dram_banks, "L1": d.num_l1_banks} for d in devices}
    verified = _verified(ctx, traces)
    table = Table(title="Traces", title_justify="left")
    columns = ["device", "trace", "captured", "ops", "replays", "bytes per replay", "state"]
    if verified:
        columns.insert(5, "verified")
    for col in columns:
        table.add_column(col, justify="left" if col in ("captured", "state") else "right",
                         no_wrap=col == "captured")  # fmt: skip
    for t in traces:
        written: dict[tuple, int] = {}
        for acc in t.accesses:
            if acc.role == "read" or acc.buffer.buffer_type == "TRACE":
                continue
            key = buffer_key(acc.buffer)
            full = sizes.get((*key, acc.seq))
            if full is None:  # no page count recorded: a full bank-local footprint per bank
                full = acc.buffer.size * (banks.get(acc.buffer.device, {}).get(acc.buffer.buffer_type) or 1)
            written[key] = full
        span = _span(ctx, t)
        state = "released" if t.release else ("never ended" if t.end is None else "not released")
        cells = [str(t.device), str(t.trace_id), span, str(t.ops), str(len(t.executes)),
                 f"{sum(written.values()):,}", state]  # fmt: skip
        if verified:
            results = verified.get(id(t), {})
            cells.insert(5, ", ".join(f"{n} {r}" for r, n in sorted(results.items())) or "-")
        table.add_row(*cells)
    return table


def _verified(ctx: Context, traces: Sequence[TraceInfo]) -> dict[int, dict[str, int]]:
    """Results of the replays `run --verify-replay` checked, per trace (by id(TraceInfo)):
    a verify event is a child of the execute_trace it checked."""
    by_execute: dict[int | None, TraceInfo] = {ex.seq: t for t in traces for ex in t.executes}
    out: dict[int, dict[str, int]] = {}
    for ev in ctx.events:
        if ev.kind is Kind.VERIFY and ev.args and (t := by_execute.get(ev.parent)) is not None:
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
    for sev in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in findings if f.severity is sev]
        if not group:
            continue
        console.print(Text(f"{len(group)} {sev}{'s' if len(group) != 1 else ''}", style=STYLE[sev]))
        for f in group:
            loc = f"{f.file}:{f.line}" if f.file else "(no call site)"
            times = f" x{f.occurrences}" if f.occurrences > 1 else ""
            head = Text.assemble("  ", (f"{f.rule}{times}", "bold"), f" {f.title}  ", (loc, "cyan"))
            console.print(head, soft_wrap=True)
            src = _line(session, f.file, f.line)
            if src is not None:
                line = Text(f"    {f.line:>5} | {src.strip()}", style="bold")
                console.print(line, soft_wrap=True)
            for file, lineno, function in f.callers[:2]:
                console.print(Text.assemble("    called from ", (f"{file}:{lineno}", "cyan"),
                                            f" in {function}"), soft_wrap=True)  # fmt: skip
            console.print(Padding(Text(f.message), (0, 0, 0, 4), expand=False))
            for item in f.folded:
                console.print(Padding(Text.assemble(
                    ("also caused by this: ", "dim"), (item["rule"], "bold"),
                    f" {item['title']} at {item['at']} ({item['why']})"), (0, 0, 0, 4), expand=False))  # fmt: skip
            console.print(
                Padding(Text.assemble(("fix: ", "green"), f.fix), (0, 0, 0, 4), expand=False)
            )
