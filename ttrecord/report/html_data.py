"""What the HTML report draws, as one JSON-ready dict built from a session.

The memory map has to carry every buffer of a run (300,000 in a million-event decode loop)
and still open in a browser in a few seconds, so buffers travel as columns of small integers
per (device, memory kind): allocation seqs as deltas, addresses relative to the map's lowest,
and the call behind each allocation as an index into a table of distinct call sites (a decode
loop repeats a few dozen). Findings, traces and the trace ranges come from the same analysis
`ttrecord check` answers (`findings_for`), so the picture and the terminal never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ttrecord.analysis.check import findings_for
from ttrecord.meshes import device_label, meshes_of
from ttrecord.analysis.context import TraceInfo
from ttrecord.findings import Finding
from ttrecord.report import drive, keep_going
from ttrecord.report.lead import change_indexes
from ttrecord.report.outcome import of_session
from ttrecord.report.result import changed_line
from ttrecord.report.text import chain, flatten
from ttrecord.store.picture_rows import buffer_origins, phase_changes
from ttrecord.store.reader import MapRow, Session, SessionInfo, map_buffer_rows

PHASES = ("eager", "prep", "capture", "replay")
_PHASE_INDEX = {p: i for i, p in enumerate(PHASES)}
_EXCERPT = 2  # source lines shown either side of a finding's line


class _Interner:
    """Distinct values -> small indexes, in first-seen order."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def __call__(self, value: Any) -> int:
        i = self.index.get(value)
        if i is None:
            i = self.index[value] = len(self.index)
        return i

    @property
    def values(self) -> list[Any]:
        return list(self.index)


def build_payload(session: Session) -> dict[str, Any]:
    """Everything the page shows, from one session (its findings as `report` finds them)."""
    info = session.info()
    result = findings_for(session, store=True)
    findings, ctx = result.findings, result.context()
    seqs = session.seq_range()
    last = seqs[1] if seqs else 0
    origins = buffer_origins(session)
    callsites = session.callsites()
    sites = _Interner()
    maps: list[dict] = []
    locate: dict[int, list[tuple[int, int]]] = {f.events[0]: [] for f in findings if f.events}
    for key, rows in sorted(map_buffer_rows(session).items()):
        maps.append(_map_columns(len(maps), key, rows, origins, callsites, sites, locate))
    map_index = {(m["device"], m["type"]): m["index"] for m in maps}
    ranges = _trace_ranges(ctx.traces, map_index, last)
    changed = sorted({f.file for f in findings if f.file and session.source_changed_on_disk(f.file)})
    return {
        "changedOnDisk": changed_line(changed) if changed else None,
        "info": _info(session, info, last),
        "phases": list(PHASES),
        "phaseChanges": [[seq, _PHASE_INDEX.get(p, 0)] for seq, p in phase_changes(session)],
        "lastSeq": last,
        "sites": [list(s) for s in sites.values],
        "maps": maps,
        "traces": _traces(ctx.traces),
        "drive": [p.to_json() for p in drive.plans(session)],
        "ranges": ranges,
        "findings": [dict(_finding(session, f, k), keepGoing=went) for f, k, went in zip(
            findings, change_indexes(session, findings), keep_going.messages(session, findings),
            strict=True)],  # fmt: skip
        "hazards": _hazards(findings, maps, locate, ranges),
    }


def _info(session: Session, info: SessionInfo, last: int) -> dict[str, Any]:
    last_call = session.last_call() if info.status in ("crashed", "hung", "running") else None
    site = last_call.callsite if last_call is not None else None
    devices = session.devices()
    meshes = meshes_of(devices)
    return {
        "path": info.path, "script": info.script, "argv": info.argv, "cwd": info.cwd,
        "host": info.host, "python": info.python, "status": info.status,
        "exitCode": info.exit_code, "signal": info.signal, "errorType": info.error_type,
        "errorMessage": info.error_message, "backend": info.backend,
        "backendReason": info.backend_reason, "ttnnVersion": info.ttnn_version,
        "startedAt": info.started_at, "endedAt": info.ended_at, "events": last,
        "lastCall": None if last_call is None else {
            "seq": last_call.seq, "name": last_call.name,
            "file": site.file if site else None, "line": site.line if site else None,
        },
        "devices": [
            {"id": d.id, "arch": d.arch, "dramBanks": d.num_dram_banks, "l1Banks": d.num_l1_banks,
             "traceRegion": d.trace_region_size, "label": device_label(d.id, meshes),
             "chips": meshes[d.id].chips_text() if d.id in meshes else None}
            for d in devices
        ],
        "counts": [[p, k, n] for (p, k), n in sorted(session.counts().items())],
        "nothingToJudge": empty.why if (empty := of_session(session)) is not None else None,
    }  # fmt: skip


def _map_columns(index: int, key: tuple[int, str], rows: list[MapRow], origins: dict,
                 callsites: dict, sites: _Interner, locate: dict) -> dict[str, Any]:  # fmt: skip
    """One (device, memory kind)'s buffers as delta-coded columns, in allocation order.

    `locate` maps the seqs findings point at to the (map, row) of the buffers whose
    allocation or free those calls were, filled here to spare a second pass."""
    lo = min(r.address for r in rows)
    hi = max(r.address + r.size for r in rows)
    alloc, life, addr, size, phase, origin, tensor = [], [], [], [], [], [], []
    prev = 0
    for i, r in enumerate(rows):
        bid, address, nbytes, a_seq, f_seq = r.id, r.address, r.size, r.alloc_seq, r.free_seq
        a_phase, page_size, pages, tensor_id = r.alloc_phase, r.page_size, r.num_pages, r.tensor_id
        alloc.append(a_seq - prev)
        prev = a_seq
        life.append(-1 if f_seq is None else f_seq - a_seq)
        addr.append(address - lo)
        size.append(nbytes)
        phase.append(_PHASE_INDEX.get(a_phase or "eager", 0))
        o = origins.get(bid)
        call_seq, name, site_id, free_call = (o.alloc_call, o.name, o.callsite, o.free_call) if o else (a_seq, None, None, None)
        site = callsites.get(site_id) if site_id is not None else None
        total = page_size * pages if page_size and pages else None
        origin.append(sites((name, site.file if site else None, site.line if site else None,
                             site.function if site else None, o.tensor if o else None, total)))  # fmt: skip
        tensor.append(-1 if tensor_id is None else tensor_id)
        for seq in {call_seq, a_seq, free_call, f_seq}:
            if seq in locate:
                locate[seq].append((index, i))
    return {
        "index": index, "device": key[0], "type": key[1], "lo": lo, "hi": hi, "n": len(rows),
        "alloc": alloc, "life": life, "addr": addr, "size": size, "phase": phase,
        "origin": origin, "tensor": tensor,
    }  # fmt: skip


def _trace_ranges(traces: Sequence[TraceInfo], map_index: dict, last: int) -> list[dict]:
    """Each trace's read and write ranges, owned from its capture until its release."""
    out = []
    for ti, t in enumerate(traces):
        until = t.release.seq if t.release is not None else last
        seen: dict[tuple, None] = {}
        for acc in t.accesses:
            buf = acc.buffer
            m = map_index.get((buf.device, buf.buffer_type))
            if m is None or buf.buffer_type == "TRACE":
                continue
            seen[(m, buf.address, buf.end, 0 if acc.role == "read" else 1)] = None
        for m, address, end, writes in seen:
            out.append({"m": m, "a": address, "e": end, "w": writes, "t": ti,
                        "from": t.begin.seq, "until": until})  # fmt: skip
    return out


def _traces(traces: Sequence[TraceInfo]) -> list[dict]:
    return [
        {"device": t.device, "id": t.trace_id, "cq": t.begin.cq if t.begin.cq is not None else 0,
         "begin": t.begin.seq, "end": t.end.seq if t.end else None,
         "release": t.release.seq if t.release else None, "ops": t.ops,
         "executes": _deltas([e.seq for e in t.executes]),
         "executeCqs": sorted({e.cq if e.cq is not None else 0 for e in t.executes})}
        for t in traces
    ]  # fmt: skip


def _deltas(values: list[int]) -> list[int]:
    return [v - (values[i - 1] if i else 0) for i, v in enumerate(values)]


def _excerpt(session: Session, file: str | None, line: int | None) -> list[list[Any]]:
    """The recorded source lines around `line` (the session's copy: the lines that ran)."""
    if not file or not line:
        return []
    text = session.source(file)
    if text is None:
        return []
    lines = text.splitlines()
    lo, hi = max(1, line - _EXCERPT), min(len(lines), line + _EXCERPT)
    return [[n, lines[n - 1]] for n in range(lo, hi + 1)]


def _finding(session: Session, f: Finding, change: int = 0) -> dict[str, Any]:
    """A finding for the page; `chain` is its frames from the line to change (report.lead)
    down to the ttnn call, then those above it, each with its recorded source."""
    steps = chain(f, change)
    return {
        "rule": f.rule, "severity": str(f.severity), "title": f.title, "message": f.message,
        "fix": f.fix, "file": f.file, "line": f.line, "function": f.function,
        "seq": f.events[0] if f.events else None, "events": f.events[:50],
        "device": f.device, "trace": f.trace, "excerpt": _excerpt(session, f.file, f.line),
        "chain": [{"lead": lead.strip().rstrip(":"), "file": file, "line": line,
                   "function": function, "excerpt": _excerpt(session, file, line)}
                  for lead, (file, line, function) in steps],
        "evidence": [[k, v] for k, v in flatten(f.evidence)],
    }  # fmt: skip


_DECIMAL = re.compile(r"\((\d+)\)")


def _address(value: Any) -> int | None:
    """An address from evidence: an int, or text like `0x101080 (1052800)`."""
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        m = _DECIMAL.search(value)
        if m:
            return int(m.group(1))
        try:
            return int(value.split()[0], 0)
        except (ValueError, IndexError):
            return None
    return None


def _hazards(findings: list[Finding], maps: list[dict], locate: dict,
             ranges: list[dict]) -> list[dict]:  # fmt: skip
    """The buffers findings are about: those the culprit call (a finding's first event)
    allocated or freed, narrowed to the address its evidence names when it names one, with
    the trace ranges each one overlaps while both exist."""
    by_map: dict[int, list[int]] = {}
    for ri, r in enumerate(ranges):
        by_map.setdefault(r["m"], []).append(ri)
    starts = {m["index"]: _starts(m["alloc"]) for m in maps}
    out = []
    for fi, f in enumerate(findings):
        if not f.events:
            continue
        hits = locate.get(f.events[0], [])
        named = f.evidence.get("allocated") if isinstance(f.evidence, dict) else None
        want = _address(named.get("address")) if isinstance(named, dict) else None
        if want is not None:
            exact = [(m, i) for m, i in hits if maps[m]["lo"] + maps[m]["addr"][i] == want]
            hits = exact or hits
        for m, i in hits[:20]:
            mp = maps[m]
            address = mp["lo"] + mp["addr"][i]
            end = address + mp["size"][i]
            born = starts[m][i]
            died = born + mp["life"][i] if mp["life"][i] >= 0 else None
            over = [ri for ri in by_map.get(m, ()) if ranges[ri]["a"] < end and address < ranges[ri]["e"]
                    and ranges[ri]["from"] < (died if died is not None else born + 1)
                    and born < ranges[ri]["until"]]  # fmt: skip
            out.append({"f": fi, "m": m, "i": i, "ranges": over[:20]})
    return out


def _starts(deltas: list[int]) -> list[int]:
    out, total = [], 0
    for d in deltas:
        total += d
        out.append(total)
    return out
