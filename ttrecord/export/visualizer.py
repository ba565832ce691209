"""A session as a TT-NN report folder that ttnn-visualizer opens: DIR/db.sqlite + DIR/config.json.

The tables are created with the exact DDL of the report databases TT-NN writes (the `.schema`
of a current report: ttnn's `graph_report.py` / `database.py`, and ttnn-visualizer's own record
of report schemas, `tests/report_schemas.py` SCHEMA_V2_1), so the visualizer's queries run on
the export unchanged. What maps:

- every top-level call the program made (ops, transfers, trace calls, syncs) -> `operations`,
  numbered 1.. in call order, duration in seconds; scalar arguments -> `operation_arguments`;
- the tensors a call read and wrote -> `tensors`, `input_tensors`, `output_tensors`;
- the allocator's live buffers after each operation -> `buffers` (the bank-local size ttrecord
  records is exactly ttnn's `max_size_per_bank`), which drives the visualizer's memory views;
- the call site and its stack -> `stack_traces` in Python traceback form, the source text kept
  in the session -> `source_files`;
- calls that raised (TT_FATAL ...), died or hung -> `errors`; device geometry -> `devices`;
  session facts and ttrecord's findings (JSON) -> `report_metadata`.

docs/exports.md lists what has no place in this schema.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ttrecord import __version__
from ttrecord.analysis.check import findings_for
from ttrecord.events import CallSite
from ttrecord.export import ExportSummary
from ttrecord.store import ttnn_report_db as rows
from ttrecord.store.reader import Session
from ttrecord.store.ttnn_report_db import CallRow, ReportDatabase, tensor_items
from ttrecord.store.ttnn_report_schema import BUFFER_LAYOUTS, BUFFER_TYPES, DEVICE_COLUMNS

DESCRIPTION = "TT-NN report folder (db.sqlite + config.json) that ttnn-visualizer opens"
OUTPUT = "folder"
DEFAULT_SUFFIX = "-visualizer"
DB_NAME = "db.sqlite"
CONFIG_NAME = "config.json"

_INTERLEAVED = BUFFER_LAYOUTS["INTERLEAVED"]
_SHARDED_BATCH = 2000


def _ttnn_enum(prefix: str, value: str | None) -> str | None:
    """'BFLOAT16' -> 'DataType.BFLOAT16', the way ttnn prints its enums into reports.

    Other names (a torch dtype such as 'float32') are not ttnn enums and stay as recorded.
    """
    if not value:
        return None
    name = value.split("::")[-1]
    return f"{prefix}.{name}" if "." not in value and name.isupper() else value


def _has_buffer(t: dict[str, Any]) -> bool:
    return t["address"] is not None and t["buffer_type"] is not None


def _memory_layout(t: dict[str, Any]) -> str | None:
    text = (t["memory_config"] or "").upper()
    for name in BUFFER_LAYOUTS:
        if name in text:
            return name
    return None


def _memory_config(t: dict[str, Any]) -> str | None:
    """ttnn's MemoryConfig repr, which the visualizer parses; kept as is when already one."""
    if t["memory_config"] and t["memory_config"].startswith("MemoryConfig("):
        return str(t["memory_config"])
    if not _has_buffer(t):
        return None
    layout = _memory_layout(t) or "INTERLEAVED"
    return (f"MemoryConfig(memory_layout=TensorMemoryLayout::{layout},"
            f"buffer_type=BufferType::{t['buffer_type']},shard_spec=std::nullopt)")  # fmt: skip


def _tensor_key(t: dict[str, Any], seq: int, pos: str) -> str:
    """Report tensor identity: ttnn's own id and the placement (a recorded id can outlive the
    buffer it named, and a host tensor may have no id at all); a host value with no identity
    is one row per use. The report id itself is given at the end (`write_tensors`)."""
    buffered = _has_buffer(t)
    if t["tensor_id"] is None and not buffered:
        return json.dumps(["anon", seq, pos])
    place = [t["device"], t["buffer_type"], t["address"]] if buffered else ["host"]
    return json.dumps([t["tensor_id"], *place])


def _frames(site: CallSite) -> list[tuple[str, int, str]]:
    """The call site, then its callers (the recorded stack may or may not repeat the site)."""
    first = (site.file, site.line, site.function)
    callers = [(f[0], f[1], f[2]) for f in site.stack]
    return callers if callers and callers[0] == first else [first, *callers]


class _Writer:
    def __init__(self, session: Session, db: ReportDatabase) -> None:
        self.session = session
        self.db = db
        self.info = session.info()
        self.callsites = session.callsites()
        self.sources: dict[str, int] = {}
        self.lines: dict[str, list[str]] = {}
        self.counts = {"operations": 0, "buffers": 0, "errors": 0}
        # Device ids renumbered 0.. in order, as ttnn's report importer does: the visualizer
        # indexes per-device lists by id.
        recorded = {d.id for d in session.devices()} | rows.buffer_devices(session)
        self.device_index = {d: i for i, d in enumerate(sorted(recorded))}
        self.t0 = rows.first_t_ns(session)
        self.sharded = False

    def run(self) -> dict[str, int]:
        self._operations()
        self._buffers()
        self.counts["tensors"] = self.db.write_tensors()
        self._devices()
        self._metadata()
        return self.counts

    # -- operations ----------------------------------------------------------------------

    def _operations(self) -> None:
        """Write one operation per top-level call, numbered 1.. in call order."""
        op_id = 0
        parsed: dict[str, dict[str, Any]] = {}  # argument texts repeat in a loop
        for call in rows.call_rows(self.session):
            op_id += 1
            dur = call.dur_ns / 1e9 if call.dur_ns is not None else None
            args = {}
            if call.args:
                if call.args not in parsed:
                    if len(parsed) > 10_000:
                        parsed.clear()
                    parsed[call.args] = json.loads(call.args)
                args = parsed[call.args] or {}
            self.db.add_operation(op_id, _op_name(call.name), dur, call.until,
                                  _arguments(call, args))  # fmt: skip
            counts = {"in": 0, "out": 0}
            for t in tensor_items(call.tensors):
                role = "in" if t["role"] == "in" else "out"
                index = counts[role]
                counts[role] += 1
                self._tensor(t, call.seq, role, op_id, index)
            site = self.callsites.get(call.callsite) if call.callsite is not None else None
            trace = self._stack_trace(site) if site else None
            if trace is not None:
                self.db.add_stack_trace(op_id, *trace)
            if call.status != "ok":
                self._error(op_id, call, trace[0] if trace else None)
        self.counts["operations"] = op_id

    def _tensor(self, t: dict[str, Any], seq: int, role: str, op_id: int, index: int) -> None:
        key = _tensor_key(t, seq, f"{role}{index}")
        buffered = _has_buffer(t)
        self.db.note_tensor(key, t["tensor_id"], (
            f"Shape([{', '.join(str(d) for d in (json.loads(t['shape']) if t['shape'] else ()))}])",
            _ttnn_enum("DataType", t["dtype"]),
            _ttnn_enum("Layout", t["layout"]),
            _memory_config(t),
            self.device_index.get(t["device"], t["device"]) if buffered else None,
            t["address"] if buffered else None,
            BUFFER_TYPES.get(t["buffer_type"]) if buffered else None,
        ))  # fmt: skip
        self.db.note_io(role == "in", op_id, index, key)
        layout = _memory_layout(t)
        if buffered and layout not in (None, "INTERLEAVED"):
            self.db.note_sharded(seq, t["device"], t["buffer_type"], t["address"], layout)
            self.sharded = True

    def _stack_trace(self, site: CallSite) -> tuple[str, int | None]:
        """Python traceback text, innermost frame first as ttnn writes it, and its source id."""
        lines = []
        for file, line, function in _frames(site):
            text = f'  File "{file}", line {line}, in {function}'
            code = self._source_line(file, line)
            lines.append(text + (f"\n    {code}" if code else ""))
        return "\n".join(lines), self._source_id(_frames(site)[0][0])

    def _source_id(self, file: str) -> int | None:
        if file not in self.sources:
            text = self.session.source(file)
            if text is None:
                return None
            self.sources[file] = len(self.sources) + 1
            self.db.add_source(self.sources[file], file, text)
        return self.sources[file]

    def _source_line(self, file: str, line: int) -> str | None:
        if file not in self.lines:
            self.lines[file] = (self.session.source(file) or "").splitlines()
        lines = self.lines[file]
        return lines[line - 1].strip() if 0 < line <= len(lines) else None

    def _error(self, op_id: int, call: CallRow, stack: str | None) -> None:
        message = call.error or f"the call {call.status} (the process ended inside it)"
        kind = "TT_FATAL" if "TT_FATAL" in message else str(call.status)
        wall = self.info.started_at + (call.t_ns - (self.t0 or call.t_ns)) / 1e9
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall))
        self.db.add_error(op_id, _op_name(call.name), kind, message, stack, stamp)
        self.counts["errors"] += 1

    # -- buffers -------------------------------------------------------------------------

    def _buffers(self) -> None:
        """After each operation, every buffer live then (what ttnn's get_buffers() reports).

        The snapshot is taken after the operation's last nested event, the moment ttnn takes
        it; an allocation or free recorded between two calls (a tensor garbage-collected by
        Python) shows up in the next operation's snapshot, as it would in ttnn's report.
        Buffers stream in by allocation and free order; only the live ones are held.
        """
        layouts = self._sharded_layouts() if self.sharded else {}
        starts = rows.buffer_starts(self.session)
        ends = rows.buffer_ends(self.session)
        start, end = next(starts, None), next(ends, None)
        live: dict[int, tuple[int, str, int, int]] = {}  # id -> (device, type, address, size)
        index, types = self.device_index, BUFFER_TYPES
        for op_id, until in self.db.operations():
            while start is not None and start[5] <= until:
                live[start[0]] = (start[1], start[2], start[3], start[4])
                start = next(starts, None)
            while end is not None and end[1] <= until:
                live.pop(end[0], None)
                end = next(ends, None)
            batch = [
                (op_id, index[device], address, size, types[btype], layouts.get(bid, _INTERLEAVED))
                for bid, (device, btype, address, size) in sorted(live.items(), key=lambda kv: (kv[1][0], kv[1][2]))
                if btype in types
            ]  # fmt: skip
            self.db.add_buffers(batch)
            self.counts["buffers"] += len(batch)

    def _sharded_layouts(self) -> dict[int, int]:
        """buffers.id -> TensorMemoryLayout of the buffers a sharded tensor lived in (the
        others are interleaved), the last such tensor deciding."""
        layouts: dict[int, int] = {}
        batch: list[tuple[int, int, str, int, str]] = []

        def apply() -> None:
            places: dict[tuple[int, str], set[int]] = {}
            for _, device, btype, address, _ in batch:
                places.setdefault((device, btype), set()).add(address)
            at: dict[tuple[int, str, int], list] = {}
            for (device, btype), addresses in places.items():
                for b in sorted(self.session.buffers_at(device, btype, addresses),
                                key=lambda b: (b.alloc_seq, b.id)):  # fmt: skip
                    at.setdefault((b.device, b.buffer_type, b.address), []).append(b)
            for seq, device, btype, address, name in batch:
                for b in at.get((device, btype, address), ()):
                    if b.alloc_seq <= seq and (b.free_seq is None or seq <= b.free_seq):
                        layouts[b.id] = BUFFER_LAYOUTS[name]
            batch.clear()

        for row in self.db.sharded():
            batch.append(row)
            if len(batch) >= _SHARDED_BATCH:
                apply()
        apply()
        return layouts

    # -- devices and metadata ------------------------------------------------------------

    def _devices(self) -> None:
        for d in self.session.devices():
            values = {c: d.info.get(c) for c in DEVICE_COLUMNS}
            values["device_id"] = self.device_index[d.id]
            if values["l1_num_banks"] is None:
                values["l1_num_banks"] = d.num_l1_banks
            # Unknown geometry is 0, as ttnn's own report importer writes it.
            self.db.add_device([values[c] if values[c] is not None else 0 for c in DEVICE_COLUMNS])

    def _metadata(self) -> None:
        info = self.info
        findings = findings_for(self.session, store=False).findings
        meta: dict[str, Any] = {
            "generator": f"ttrecord {__version__}",
            "ttrecord_session_id": info.id,
            "ttrecord_session_path": info.path,
            "script": info.script,
            "argv": json.dumps(info.argv),
            "backend": info.backend,
            "ttnn_version": info.ttnn_version,
            "status": info.status,
            "started_at": info.started_at,
            "ttrecord_findings": json.dumps([_finding(f) for f in findings]),
            "ttrecord_device_ids": json.dumps({i: d for d, i in self.device_index.items()}),
        }
        self.db.add_metadata((k, None if v is None else str(v)) for k, v in meta.items())


def _op_name(name: str) -> str:
    """ttnn reports name operations by their Python path, e.g. 'ttnn.add'."""
    return name if "." in name else f"ttnn.{name}"


def _arguments(call: CallRow, args: dict[str, Any]) -> list[tuple[str, str]]:
    out = [(str(k), v if isinstance(v, str) else json.dumps(v, default=str))
           for k, v in args.items()]  # fmt: skip
    if call.trace is not None:
        out.append(("ttrecord_trace_id", str(call.trace)))
    out.append(("ttrecord_phase", str(call.phase)))
    out.append(("ttrecord_seq", str(call.seq)))
    return out


def _finding(f: Any) -> dict[str, Any]:
    return {"rule": f.rule, "severity": str(f.severity), "title": f.title, "message": f.message,
            "file": f.file, "line": f.line, "fix": f.fix, "events": f.events}  # fmt: skip


def export(session: Session, out: str | os.PathLike[str]) -> ExportSummary:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    db_path = folder / DB_NAME
    db_path.unlink(missing_ok=True)
    db = ReportDatabase(db_path)
    done = False
    try:
        counts = _Writer(session, db).run()
        done = True
    finally:
        db.close(commit=done)
    info = session.info()
    config = {
        "report_name": Path(info.script).stem or info.id,
        "report_path": str(folder.resolve()),
        "enable_graph_report": False,
        "enable_detailed_buffer_report": False,
        "enable_detailed_tensor_report": False,
        "enable_comparison_mode": False,
        "enable_fast_runtime_mode": False,
        "enable_logging": True,
        "ttrecord_session": str(Path(info.path).resolve()),
    }
    (folder / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n")
    return ExportSummary(str(folder), counts)
