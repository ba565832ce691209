"""`ttrecord report --format json`: what the terminal report shows, as one versioned object.

The same facts as ttrecord.report.summary (status, the call that died, backend, devices,
event counts, traces, findings), computed the same way, for scripts and CI that want the run's
outcome and its traces without parsing a table. Its JSON Schema is
docs/report-json.schema.json (described in docs/report-json.md); additions keep VERSION,
changes to existing keys bump it. Findings have check's shape (docs/check-json.md).
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from ttrecord import ttnn_versions
from ttrecord.analysis import STEPS
from ttrecord.progress import Progress
from ttrecord.analysis.run_summary import RegionSummary, TraceSummary
from ttrecord.report.jsonfmt import finding_dict
from ttrecord.report.summary import findings_and_summary
from ttrecord.store.reader import Session
from ttrecord.report import drive
from ttrecord.report.outcome import of_session
from ttrecord.store.rows import SessionInfo

VERSION = 1  # the contract version of this document

_ABNORMAL = ("crashed", "hung", "error", "running", "interrupted")


def document(path: str, quiet: bool = False) -> dict[str, Any]:
    """The report of the session at `path` (findings computed and stored as `report` does)."""
    with Session.open(path) as session:
        info = session.info()
        with Progress("reading the session", total=STEPS, quiet=quiet) as bar:
            findings, summary = findings_and_summary(session, bar.step)
        last = session.last_call() if info.status in _ABNORMAL else None
        site = last.callsite if last is not None else None
        by_severity = {"error": 0, "warning": 0, "info": 0}
        by_rule: dict[str, int] = {}
        for f in findings:
            by_severity[str(f.severity)] += 1
            by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
        counts = summary.counts
        return {
            "version": VERSION,
            "session": str(path),
            "script": info.script,
            "argv": list(info.argv),
            "cwd": info.cwd,
            "host": info.host,
            "started_at": info.started_at,
            "ended_at": info.ended_at,
            "status": info.status,
            "exit_code": info.exit_code,
            "signal": info.signal,
            "error": ({"type": info.error_type, "message": info.error_message}
                      if info.error_type or info.error_message else None),  # fmt: skip
            "recording_stopped": (info.options or {}).get("recording_stopped"),
            "last_call": None if last is None else {
                "event": last.seq, "name": last.name,
                "file": site.file if site else None, "line": site.line if site else None,
                "function": site.function if site else None,
            },  # fmt: skip
            "backend": {"name": info.backend, "ttnn_version": info.ttnn_version,
                        **_ttnn_release(info), "reason": info.backend_reason},  # fmt: skip
            "devices": [
                {"id": d.id, "arch": d.arch, "dram_banks": d.num_dram_banks,
                 "l1_banks": d.num_l1_banks, "trace_region_size": d.trace_region_size,
                 "opened_at_event": d.open_seq, "closed_at_event": d.close_seq}
                for d in session.devices()
            ],  # fmt: skip
            "events": {
                "total": sum(counts.values()),
                "by_phase_and_kind": [{"phase": p, "kind": k, "count": n}
                                      for (p, k), n in sorted(counts.items())],  # fmt: skip
            },
            "traces": [_trace(t, verified=any(t.verified for t in summary.traces))
                       for t in summary.traces],  # fmt: skip
            "trace_regions": [_region(r) for r in summary.regions],
            "nothing_to_judge": empty.why if (empty := of_session(session)) is not None else None,
            "drive": [p.to_json() for p in drive.plans(session)],
            "findings": [finding_dict(f) for f in findings],
            "summary": {"total": len(findings), "by_severity": by_severity,
                        "by_rule": dict(sorted(by_rule.items()))},  # fmt: skip
        }


def render(path: str, out: TextIO, quiet: bool = False) -> None:
    json.dump(document(path, quiet), out, indent=2, default=repr)
    out.write("\n")


def _trace(t: TraceSummary, verified: bool) -> dict[str, Any]:
    """One trace as the traces table shows it; `verified` is None without --verify-replay."""
    return {"device": t.device, "trace": t.trace_id, "captured": t.captured, "ops": t.ops,
            "replays": t.replays, "bytes_per_replay": t.bytes_per_replay, "state": t.state,
            "verified": dict(sorted(t.verified.items())) if verified else None,
            "trace_buffer": None if t.buffer_bytes is None else {
                "total": t.buffer_bytes, "per_bank": t.buffer_per_bank, "fits": t.fits},
            "baked_values": list(t.baked)}  # fmt: skip


def _region(r: RegionSummary) -> dict[str, Any]:
    """A device's trace region as the "Trace region" table shows it (bytes: total over the DRAM
    banks and per bank)."""
    return {"device": r.device, "dram_banks": r.dram_banks,
            "size": {"total": r.size, "per_bank": r.size_per_bank},
            "high_water": {"total": r.high_water, "per_bank": r.high_water_per_bank},
            "did_not_fit": None if r.needed is None else {
                "trace": r.needed_by, "needed": r.needed, "needed_per_bank": r.needed_per_bank}}  # fmt: skip


def _ttnn_release(info: SessionInfo) -> dict[str, Any]:
    """The release number and the build apart ("0.81.1", "cp312-…, sfpi 7.89.0"); the emulator
    names the release whose API it follows, and has no build."""
    version = info.ttnn_version or ""
    parsed = ttnn_versions.release(version)
    build = version.partition("(")[2].rstrip(")") if info.backend == "ttnn" else ""
    return {"ttnn_release": ".".join(map(str, parsed)) if parsed else None, "ttnn_build": build or None}
