"""The first, in-memory ttnn-visualizer exporter, kept as the reference the streaming one
(`ttrecord/export/visualizer.py`) must match byte for byte. Not part of the package.

A session as a TT-NN report folder that ttnn-visualizer opens: DIR/db.sqlite + DIR/config.json.

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
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ttrecord import __version__
from ttrecord.analysis.check import findings_for
from ttrecord.events import CALL_KINDS, CallSite, Event, Kind, Status, TensorRef
from ttrecord.export import ExportSummary
from ttrecord.store.ttnn_report_schema import BUFFER_LAYOUTS, BUFFER_TYPES, DEVICE_COLUMNS, SCHEMA
from ttrecord.store.reader import BufferRow, Session

DESCRIPTION = "TT-NN report folder (db.sqlite + config.json) that ttnn-visualizer opens"
OUTPUT = "folder"
DEFAULT_SUFFIX = "-visualizer"
DB_NAME = "db.sqlite"
CONFIG_NAME = "config.json"

# Calls that are not operations in the TT-NN report sense.
_NOT_OPERATIONS = frozenset({Kind.DEVICE_OPEN, Kind.DEVICE_CLOSE})


def _ttnn_enum(prefix: str, value: str | None) -> str | None:
    """'BFLOAT16' -> 'DataType.BFLOAT16', the way ttnn prints its enums into reports.

    Other names (a torch dtype such as 'float32') are not ttnn enums and stay as recorded.
    """
    if not value:
        return None
    name = value.split("::")[-1]
    return f"{prefix}.{name}" if "." not in value and name.isupper() else value


def _memory_layout(ref: TensorRef) -> str | None:
    text = (ref.memory_config or "").upper()
    for name in BUFFER_LAYOUTS:
        if name in text:
            return name
    return None


def _memory_config(ref: TensorRef) -> str | None:
    """ttnn's MemoryConfig repr, which the visualizer parses; kept as is when already one."""
    if ref.memory_config and ref.memory_config.startswith("MemoryConfig("):
        return ref.memory_config
    if ref.buffer is None:
        return None
    layout = _memory_layout(ref) or "INTERLEAVED"
    return (f"MemoryConfig(memory_layout=TensorMemoryLayout::{layout},"
            f"buffer_type=BufferType::{ref.buffer.buffer_type},shard_spec=std::nullopt)")  # fmt: skip


@dataclass
class _Tensors:
    """Report tensor ids: ttnn's own id while it names one tensor, a fresh id otherwise.

    A recorded tensor id can outlive the buffer it named (a test double numbering tensors by
    address, an id reused after a free), and a host tensor may have no id at all; the report
    needs one id per (tensor, placement), so the placement is part of the key.
    """

    ids: dict[tuple, int] = field(default_factory=dict)
    taken: set[int] = field(default_factory=set)
    rows: list[tuple] = field(default_factory=list)
    pending: list[tuple[tuple, TensorRef]] = field(default_factory=list)

    def key(self, ref: TensorRef, seq: int, pos: str) -> tuple:
        buf = ref.buffer
        place = (buf.device, buf.buffer_type, buf.address) if buf else ("host",)
        if ref.tensor_id is None and buf is None:
            return ("anon", seq, pos)  # a host value with no identity: one row per use
        return (ref.tensor_id, *place)

    def note(self, ref: TensorRef, seq: int, pos: str) -> tuple:
        key = self.key(ref, seq, pos)
        if key not in self.ids:
            self.ids[key] = -1  # assigned in resolve(), once every recorded id is known
            self.pending.append((key, ref))
            if ref.tensor_id is not None:
                self.taken.add(ref.tensor_id)
        return key

    def resolve(self, device_index: dict[int, int]) -> None:
        used: set[int] = set()
        fresh = max(self.taken, default=-1) + 1
        for key, ref in self.pending:
            tid = ref.tensor_id
            if tid is None or tid in used:
                tid, fresh = fresh, fresh + 1
            used.add(tid)
            self.ids[key] = tid
            buf = ref.buffer
            self.rows.append((
                tid,
                f"Shape([{', '.join(str(d) for d in ref.shape)}])",
                _ttnn_enum("DataType", ref.dtype),
                _ttnn_enum("Layout", ref.layout),
                _memory_config(ref),
                device_index.get(buf.device, buf.device) if buf else None,
                buf.address if buf else None,
                BUFFER_TYPES.get(buf.buffer_type) if buf else None,
            ))  # fmt: skip


def _frames(site: CallSite) -> list[tuple[str, int, str]]:
    """The call site, then its callers (the recorded stack may or may not repeat the site)."""
    first = (site.file, site.line, site.function)
    callers = [tuple(f) for f in site.stack]
    return callers if callers and callers[0] == first else [first, *callers]


class _Writer:
    def __init__(self, session: Session, conn: sqlite3.Connection) -> None:
        self.session = session
        self.conn = conn
        self.info = session.info()
        self.tensors = _Tensors()
        self.sources: dict[str, int] = {}
        self.lines: dict[str, list[str]] = {}
        self.io: list[tuple[str, int, int, tuple]] = []  # (table, op id, index, tensor key)
        self.sharded: list[tuple[int, TensorRef, str]] = []  # (seq, tensor, memory layout)
        self.counts = {"operations": 0, "buffers": 0, "errors": 0}
        # Device ids renumbered 0.. in order, as ttnn's report importer does: the visualizer
        # indexes per-device lists by id.
        recorded = {d.id for d in session.devices()} | {r.buffer.device for r in session.buffers()}
        self.device_index = {d: i for i, d in enumerate(sorted(recorded))}
        self.t0: int | None = None
        self.last_nested: dict[int, int] = {}  # call seq -> seq of its last nested event

    def run(self) -> dict[str, int]:
        self.conn.executescript(SCHEMA)
        ops = self._operations()
        self._buffers(ops)
        self.tensors.resolve(self.device_index)
        self.conn.executemany("INSERT INTO tensors VALUES (?,?,?,?,?,?,?,?)", self.tensors.rows)
        for table, op_id, index, key in self.io:
            self.conn.execute(f"INSERT INTO {table} VALUES (?,?,?)",
                              (op_id, index, self.tensors.ids[key]))  # fmt: skip
        self._devices()
        self._metadata()
        self.counts["tensors"] = len(self.tensors.rows)
        return self.counts

    # -- operations ----------------------------------------------------------------------

    def _operations(self) -> list[tuple[int, int]]:
        """Write one operation per top-level call; returns (operation id, seq) in order."""
        ops: list[tuple[int, int]] = []
        for ev in self._top_level_calls():
            op_id = len(ops) + 1
            ops.append((op_id, ev.seq))
            dur = ev.dur_ns / 1e9 if ev.dur_ns is not None else None
            self.conn.execute("INSERT INTO operations VALUES (?,?,?)", (op_id, _op_name(ev), dur))
            self.conn.executemany("INSERT INTO operation_arguments VALUES (?,?,?)",
                                  [(op_id, k, v) for k, v in _arguments(ev)])  # fmt: skip
            for table, refs, role in (("input_tensors", ev.inputs, "in"),
                                      ("output_tensors", ev.outputs, "out")):  # fmt: skip
                for index, ref in enumerate(refs):
                    key = self.tensors.note(ref, ev.seq, f"{role}{index}")
                    self.io.append((table, op_id, index, key))
                    layout = _memory_layout(ref)
                    if ref.buffer is not None and layout not in (None, "INTERLEAVED"):
                        self.sharded.append((ev.seq, ref, layout))
            trace = self._stack_trace(ev.callsite) if ev.callsite else None
            if trace is not None:
                self.conn.execute("INSERT INTO stack_traces VALUES (?,?,?)", (op_id, *trace))
            if ev.status is not Status.OK:
                self._error(op_id, ev, trace[0] if trace else None)
        self.counts["operations"] = len(ops)
        return ops

    def _top_level_calls(self) -> Iterator[Event]:
        for ev in self.session.iter_events():
            if self.t0 is None:
                self.t0 = ev.t_ns
            if ev.parent is not None:
                self.last_nested[ev.parent] = ev.seq
            if ev.parent is None and ev.kind in CALL_KINDS and ev.kind not in _NOT_OPERATIONS:
                yield ev

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
            self.conn.execute("INSERT INTO source_files VALUES (?,?,?)",
                              (self.sources[file], file, text))  # fmt: skip
        return self.sources[file]

    def _source_line(self, file: str, line: int) -> str | None:
        if file not in self.lines:
            self.lines[file] = (self.session.source(file) or "").splitlines()
        lines = self.lines[file]
        return lines[line - 1].strip() if 0 < line <= len(lines) else None

    def _error(self, op_id: int, ev: Event, stack: str | None) -> None:
        message = ev.error or f"the call {ev.status} (the process ended inside it)"
        kind = "TT_FATAL" if "TT_FATAL" in message else str(ev.status)
        wall = self.info.started_at + (ev.t_ns - (self.t0 or ev.t_ns)) / 1e9
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall))
        self.conn.execute("INSERT INTO errors VALUES (?,?,?,?,?,?)",
                          (op_id, _op_name(ev), kind, message, stack, stamp))  # fmt: skip
        self.counts["errors"] += 1

    # -- buffers -------------------------------------------------------------------------

    def _buffers(self, ops: list[tuple[int, int]]) -> None:
        """After each operation, every buffer live then (what ttnn's get_buffers() reports).

        The snapshot is taken after the operation's last nested event, the moment ttnn takes
        it; an allocation or free recorded between two calls (a tensor garbage-collected by
        Python) shows up in the next operation's snapshot, as it would in ttnn's report.
        """
        rows = self.session.buffers()
        layouts = self._buffer_layouts(rows)
        starts = sorted(rows, key=lambda r: r.alloc_seq)
        ends = sorted((r for r in rows if r.free_seq is not None), key=lambda r: r.free_seq)
        live: dict[int, BufferRow] = {}
        a = f = 0
        for op_id, seq in ops:
            until = max(seq, self.last_nested.get(seq, seq))
            while a < len(starts) and starts[a].alloc_seq <= until:
                live[starts[a].id] = starts[a]
                a += 1
            while f < len(ends) and ends[f].free_seq <= until:
                live.pop(ends[f].id, None)
                f += 1
            batch = [
                (op_id, self.device_index[r.buffer.device], r.buffer.address, r.buffer.size,
                 BUFFER_TYPES[r.buffer.buffer_type], layouts.get(r.id))
                for r in sorted(live.values(), key=lambda r: (r.buffer.device, r.buffer.address))
                if r.buffer.buffer_type in BUFFER_TYPES
            ]  # fmt: skip
            self.conn.executemany("INSERT INTO buffers VALUES (?,?,?,?,?,?)", batch)
            self.counts["buffers"] += len(batch)

    def _buffer_layouts(self, rows: list[BufferRow]) -> dict[int, int]:
        """buffers.id -> TensorMemoryLayout: sharded when a tensor living in it says so."""
        by_place: dict[tuple, list[BufferRow]] = {}
        for row in rows:
            b = row.buffer
            by_place.setdefault((b.device, b.buffer_type, b.address), []).append(row)
        layouts = {row.id: BUFFER_LAYOUTS["INTERLEAVED"] for row in rows}
        for seq, ref, name in self.sharded:
            b = ref.buffer
            for row in by_place.get((b.device, b.buffer_type, b.address), ()):
                if row.alloc_seq <= seq and (row.free_seq is None or seq <= row.free_seq):
                    layouts[row.id] = BUFFER_LAYOUTS[name]
        return layouts

    # -- devices and metadata ------------------------------------------------------------

    def _devices(self) -> None:
        for d in self.session.devices():
            values = {c: d.info.get(c) for c in DEVICE_COLUMNS}
            values["device_id"] = self.device_index[d.id]
            if values["l1_num_banks"] is None:
                values["l1_num_banks"] = d.num_l1_banks
            # Unknown geometry is 0, as ttnn's own report importer writes it.
            row = [values[c] if values[c] is not None else 0 for c in DEVICE_COLUMNS]
            self.conn.execute(f"INSERT INTO devices VALUES ({','.join('?' * len(row))})", row)

    def _metadata(self) -> None:
        info = self.info
        findings = findings_for(self.session, store=False).findings  # the findings every reader takes
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
        self.conn.executemany("INSERT INTO report_metadata VALUES (?,?)",
                              [(k, None if v is None else str(v)) for k, v in meta.items()])  # fmt: skip


def _op_name(ev: Event) -> str:
    """ttnn reports name operations by their Python path, e.g. 'ttnn.add'."""
    return ev.name if "." in ev.name else f"ttnn.{ev.name}"


def _arguments(ev: Event) -> list[tuple[str, str]]:
    args = [(str(k), v if isinstance(v, str) else json.dumps(v, default=str))
            for k, v in (ev.args or {}).items()]  # fmt: skip
    if ev.trace is not None:
        args.append(("ttrecord_trace_id", str(ev.trace)))
    args.append(("ttrecord_phase", str(ev.phase)))
    args.append(("ttrecord_seq", str(ev.seq)))
    return args


def _finding(f: Any) -> dict[str, Any]:
    return {"rule": f.rule, "severity": str(f.severity), "title": f.title, "message": f.message,
            "file": f.file, "line": f.line, "fix": f.fix, "events": f.events}  # fmt: skip


def export(session: Session, out: str | os.PathLike[str]) -> ExportSummary:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    db_path = folder / DB_NAME
    db_path.unlink(missing_ok=True)
    conn = sqlite3.connect(db_path)
    try:
        with conn:
            counts = _Writer(session, conn).run()
    finally:
        conn.close()
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
