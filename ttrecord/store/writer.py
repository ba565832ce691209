"""Writes a session file from completed events.

This is the store's hot path: the recorder's supervisor feeds it every event of a run, so rows
go in with prepared `executemany` batches (one transaction per batch) while sqlite-utils owns
the schema. The writer also derives the tables that summarise the event stream (buffers with
their alloc/free pairing, traces, devices) as events arrive, so readers never rebuild them.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

from ttrecord.events import BufferRef, CallSite, Event, Kind, Phase, SessionStatus, TensorRef
from ttrecord.findings import Finding
from ttrecord.store import prep, schema
from ttrecord.store.lifetimes import BufferPairing
from ttrecord.store.storable import storable_fields

_EVENT_SQL = (
    "INSERT OR REPLACE INTO events (seq, parent, t_ns, dur_ns, thread, kind, name, phase, device,"
    " cq, trace, callsite, status, error, args, region, buffer)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_TENSOR_SQL = (
    "INSERT INTO tensors (seq, role, pos, tensor_id, storage, shape, dtype, layout,"
    " memory_config, buffer, device, buffer_type, address, size)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_MAX_SOURCE_BYTES = 1 << 20
_LOCK_WAIT_SECONDS = 120.0


# sqlite3 binds int, float and str directly but sends every other value, None included, through
# its adapter lookup, which fails after two attribute lookups: about 0.15 µs per NULL, and half
# of an event row's columns are NULL. A registered adapter is found at the first lookup;
# `{}.get` is a C function that returns None for any key, so the value still binds as NULL.
# The registry is the process's: other connections only get the same NULLs faster.
_NO_ADAPTATION: dict[None, None] = {}
sqlite3.register_adapter(type(None), _NO_ADAPTATION.get)

# One encoder for every call: json.dumps with options builds a new encoder each time.
_encode = json.JSONEncoder(default=repr, separators=(",", ":")).encode


def _json(value: Any) -> str | None:
    if value is None:
        return None
    return _encode(value)


class SessionWriter:
    """Appends events to one session file. Not thread-safe: one writer per file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        # Another process may hold the write lock for a while (a reader's transaction, a
        # copy tool): wait for it rather than give up recording.
        self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                     timeout=_LOCK_WAIT_SECONDS)  # fmt: skip
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self.db = sqlite_utils.Database(self._conn)
        schema.create(self.db)
        self._callsites: dict[CallSite, int] = {}
        self._site_objects: dict[int, tuple[CallSite, int]] = {}  # id(site) -> (site, row id)
        # Alloc/free pairing (the rule the analysis uses too); rows go to _new_buffers.
        self._pairing = BufferPairing(self._open_buffer, self._end_buffer)
        self._live = self._pairing.live  # place -> (buffer id, size), read on the hot path
        self._traces: dict[tuple[int | None, int | None], int] = {}  # (device, trace_id) -> traces.id
        self._next_trace = 1
        self._trace_ops: dict[int, int] = {}
        self._trace_runs: dict[int, int] = {}
        self._executed: set[int] = set()  # traces whose execution count changed in this batch
        self._shapes: dict[tuple[int, ...], str] = {}
        self._new_buffers: list[list] = []  # rows to insert; free_seq (last) set if freed
        self._pending_buffers: dict[int, list] = {}  # buffer id -> its row in _new_buffers
        self._freed: list[tuple[int, int]] = []  # (free seq, buffer id)

    # -- session row -------------------------------------------------------------------

    def start(
        self,
        script: str,
        argv: list[str],
        backend: str,
        backend_reason: str = "",
        ttnn_version: str | None = None,
        options: dict[str, Any] | None = None,
        session_id: str | None = None,
        started_at: float | None = None,
        pid: int | None = None,
    ) -> None:
        """Write the session row with status `running`, so a reader can open the file at once."""
        self.db.table("session").insert(
            storable_fields({
                "format": schema.FORMAT,
                "schema_version": schema.SCHEMA_VERSION,
                "id": session_id or uuid.uuid4().hex,
                "script": script,
                "argv": _json(argv),
                "cwd": os.getcwd(),
                "python": sys.version.split()[0],
                "ttnn_version": ttnn_version,
                "backend": backend,
                "backend_reason": backend_reason,
                "host": socket.gethostname(),
                "pid": pid if pid is not None else os.getpid(),
                "started_at": started_at if started_at is not None else time.time(),
                "status": str(SessionStatus.RUNNING),
                "options": _json(options or {}),
            }),
            replace=True,
        )

    def update_session(self, **fields: Any) -> None:
        """Set columns of the session row (backend chosen late, ttnn version, ...)."""
        self.db.table("session").update(schema.FORMAT, storable_fields(fields))

    def finish(
        self,
        status: SessionStatus,
        exit_code: int | None = None,
        signal: int | None = None,
        error_type: str | None = None,
        error_message: str | None = None,
        traceback: str | None = None,
        last_call: int | None = None,
    ) -> None:
        """Close the session: derive prep runs, keep source snippets, write the final status."""
        schema.create_indexes(self.db)
        with self._transaction():
            prep.tag_prep_runs(self._conn)
            self._store_sources()
        self.update_session(
            status=str(status),
            ended_at=time.time(),
            exit_code=exit_code,
            signal=signal,
            error_type=error_type,
            error_message=error_message,
            traceback=traceback,
            last_call=last_call,
        )
        self.seal()

    def seal(self) -> None:
        """Make the file self-contained: WAL folded in and journal mode back to DELETE, so it
        reads from read-only places and readers create no -wal/-shm files beside it."""
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try:
            self._conn.execute("PRAGMA journal_mode = DELETE")
        except sqlite3.OperationalError:  # a reader still has it open: stays WAL, still readable
            pass

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # The connection is in autocommit mode (so PRAGMAs work anywhere); batch explicitly.
        self._conn.execute("BEGIN")
        try:
            yield
        except BaseException:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.OperationalError:  # SQLite rolled back already (a full disk)
                pass
            raise
        self._conn.execute("COMMIT")

    # -- events --------------------------------------------------------------------------

    def add(self, events: Iterable[Event]) -> int:
        """Insert a batch of completed events in one transaction; returns how many."""
        event_rows: list[tuple] = []
        tensor_rows: list[tuple] = []
        append_event = event_rows.append
        track, callsite_id, tensor_rows_of = self._track, self._callsite_id, self._tensor_rows
        alloc, free = self._pairing.alloc, self._pairing.free
        op, capture, kind_alloc, kind_free = Kind.OP, Phase.CAPTURE, Kind.ALLOC, Kind.FREE
        with self._transaction():
            for ev in events:
                kind, phase, status, seq = ev.kind, ev.phase, ev.status, ev.seq
                # Allocations and frees (most events after ops) go straight to the pairing; an
                # eager op (the commonest event) changes no derived table.
                if kind is kind_alloc and ev.buffer is not None:
                    buffer_id: int | None = alloc(ev.buffer, seq, phase)
                elif kind is kind_free and ev.buffer is not None:
                    buffer_id = free(ev.buffer, seq)
                elif kind is op and phase is not capture:
                    buffer_id = None
                else:
                    buffer_id = track(ev)
                site = ev.callsite
                # Enums bind as their `_value_` text: sqlite3 binds a str subclass only after a
                # failed adapter lookup, which costs more than the rest of the row.
                append_event(
                    (
                        seq,
                        ev.parent,
                        ev.t_ns,
                        ev.dur_ns,
                        ev.thread,
                        getattr(kind, "_value_", kind),
                        ev.name,
                        getattr(phase, "_value_", phase),
                        ev.device,
                        ev.cq,
                        ev.trace,
                        None if site is None else callsite_id(site),
                        getattr(status, "_value_", status),
                        ev.error,
                        _json(ev.args) if ev.args else None,
                        ev.region,
                        buffer_id,
                    )
                )
                if ev.inputs:
                    tensor_rows_of(seq, phase, "in", ev.inputs, tensor_rows)
                if ev.outputs:
                    tensor_rows_of(seq, phase, "out", ev.outputs, tensor_rows)
            self._conn.executemany(_EVENT_SQL, event_rows)
            self._conn.executemany(_TENSOR_SQL, tensor_rows)
            self._flush_buffers()
        return len(event_rows)

    def _flush_buffers(self) -> None:
        self._conn.executemany(
            "INSERT INTO buffers (id, device, buffer_type, address, size, page_size, num_pages,"
            " tensor_id, alloc_seq, alloc_phase, free_seq)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self._new_buffers,
        )
        self._conn.executemany("UPDATE buffers SET free_seq = ? WHERE id = ?", self._freed)
        runs = self._trace_runs
        self._conn.executemany(
            "UPDATE traces SET executions = ? WHERE id = ?",
            [(runs[row], row) for row in self._executed],
        )
        self._executed.clear()
        self._new_buffers.clear()
        self._pending_buffers.clear()
        self._freed.clear()

    def _end_buffer(self, buffer_id: int, seq: int) -> None:
        # A buffer allocated in this batch gets its free_seq in its INSERT (most temporaries
        # live shorter than a batch); older ones are updated at the end of the batch.
        row = self._pending_buffers.pop(buffer_id, None)
        if row is not None:
            row[10] = seq
        else:
            self._freed.append((seq, buffer_id))

    def _shape(self, shape: tuple[int, ...]) -> str:
        text = self._shapes.get(shape)
        if text is None:
            text = self._shapes[shape] = _encode(list(shape))
        return text

    def _callsite_id(self, site: CallSite | None) -> int | None:
        if site is None:
            return None
        # Decoders reuse one CallSite object per site: identity first, equality (hashing the
        # whole stack) only for a new object. Entries keep the object, so ids are not reused.
        seen = self._site_objects.get(id(site))
        if seen is not None and seen[0] is site:
            return seen[1]
        objects = self._site_objects
        if len(objects) > 4096:  # a producer that makes a new object per event: stay bounded
            objects.clear()
        known = self._callsites.get(site)
        if known is not None:
            objects[id(site)] = (site, known)
            return known
        new_id = len(self._callsites) + 1
        self._conn.execute(
            "INSERT INTO callsites (id, file, line, function, stack) VALUES (?, ?, ?, ?, ?)",
            (new_id, site.file, site.line, site.function, _json([list(f) for f in site.stack])),
        )
        self._callsites[site] = new_id
        self._site_objects[id(site)] = (site, new_id)
        return new_id

    def _tensor_rows(self, seq: int, phase: Phase, role: str, refs: tuple[TensorRef, ...],
                     out: list[tuple]) -> None:  # fmt: skip
        """Append the rows of one event's inputs or outputs; a tensor on a place where nothing
        is live begins a buffer there."""
        shapes, live, append = self._shapes, self._live, out.append
        for pos, ref in enumerate(refs):
            buf = ref.buffer
            shape = shapes.get(ref.shape) or self._shape(ref.shape)
            if buf is None:
                append((seq, role, pos, ref.tensor_id, ref.storage, shape, ref.dtype, ref.layout,
                        ref.memory_config, None, None, None, None, None))  # fmt: skip
                continue
            device, buffer_type, address = buf.device, buf.buffer_type, buf.address
            known = live.get((device, buffer_type, address))
            buffer_id = known[0] if known else self._pairing.begin(buf, seq, phase)
            append((seq, role, pos, ref.tensor_id, ref.storage, shape, ref.dtype, ref.layout,
                    ref.memory_config, buffer_id, device, buffer_type, address, buf.size))  # fmt: skip

    # -- derived tables ------------------------------------------------------------------

    def _track(self, ev: Event) -> int | None:
        """Keep buffers/traces/devices in step with the event; returns the event's buffer id."""
        kind = ev.kind
        if kind is Kind.ALLOC and ev.buffer is not None:
            return self._pairing.alloc(ev.buffer, ev.seq, ev.phase)
        if kind is Kind.FREE and ev.buffer is not None:
            return self._pairing.free(ev.buffer, ev.seq)
        if kind is Kind.OP and ev.phase is Phase.CAPTURE and ev.parent is None:
            row = self._traces.get((ev.device, ev.trace)) if ev.device is not None else None
            if row is not None:
                self._trace_ops[row] = self._trace_ops.get(row, 0) + 1
        elif kind is Kind.TRACE_BEGIN and ev.trace is not None:
            self._begin_trace(ev)
        elif kind is Kind.TRACE_END:
            self._set_trace(ev, "end_seq")
        elif kind is Kind.TRACE_EXECUTE:
            row = self._traces.get((ev.device, ev.trace))
            if row is not None:  # written once per batch: replay loops execute thousands of times
                self._trace_runs[row] = self._trace_runs.get(row, 0) + 1
                self._executed.add(row)
        elif kind is Kind.TRACE_RELEASE:
            self._set_trace(ev, "release_seq")
            self._traces.pop((ev.device, ev.trace), None)
        elif kind is Kind.DEVICE_OPEN and ev.device is not None:
            self._open_device(ev)
        elif kind is Kind.DEVICE_CLOSE and ev.device is not None:
            self._conn.execute("UPDATE devices SET close_seq = ? WHERE id = ?", (ev.seq, ev.device))
        return None

    def _open_buffer(self, buffer_id: int, buf: BufferRef, seq: int, phase: Phase) -> None:
        row = [
            buffer_id,
            buf.device,
            buf.buffer_type,
            buf.address,
            buf.size,
            buf.page_size,
            buf.num_pages,
            buf.tensor_id,
            seq,
            getattr(phase, "_value_", phase),
            None,  # free_seq
        ]
        self._new_buffers.append(row)
        self._pending_buffers[buffer_id] = row

    def _begin_trace(self, ev: Event) -> None:
        row = self._next_trace
        self._next_trace += 1
        self._traces[(ev.device, ev.trace)] = row
        self._conn.execute(
            "INSERT INTO traces (id, device, trace_id, cq, begin_seq, ops, executions)"
            " VALUES (?, ?, ?, ?, ?, 0, 0)",
            (row, ev.device, ev.trace, ev.cq, ev.seq),
        )

    def _set_trace(self, ev: Event, column: str) -> None:
        row = self._traces.get((ev.device, ev.trace))
        if row is None:
            return
        self._conn.execute(
            f"UPDATE traces SET {column} = ?, ops = ? WHERE id = ?",
            (ev.seq, self._trace_ops.get(row, 0), row),
        )

    def _open_device(self, ev: Event) -> None:
        args = ev.args or {}
        self.db.table("devices").insert(
            {
                "id": ev.device,
                "arch": args.get("arch"),
                "num_dram_banks": args.get("num_dram_banks"),
                "num_l1_banks": args.get("num_l1_banks"),
                "trace_region_size": args.get("trace_region_size"),
                "open_seq": ev.seq,
                "info": _json(args.get("info")),
            },
            replace=True,
        )

    def _store_sources(self) -> None:
        """Keep the text of every file with a call site, for viewers on another machine."""
        files = [row[0] for row in self._conn.execute("SELECT DISTINCT file FROM callsites")]
        for file in files:
            path = Path(file)
            try:
                if path.stat().st_size > _MAX_SOURCE_BYTES:
                    continue
                text = path.read_text(errors="replace")
            except OSError:
                continue
            self._conn.execute(
                "INSERT OR REPLACE INTO sources (file, text) VALUES (?, ?)", (file, text)
            )


def replace_findings(path: str | os.PathLike[str], findings: Iterable[Finding],
                     stamp: tuple[str, str] | None = None,
                     summary: dict[str, Any] | None = None) -> int:  # fmt: skip
    """Store the analysis' findings, replacing earlier ones, so viewers need not recompute.
    `stamp`: (analysis version, session fingerprint) they were computed with; readers reuse
    the findings only while both still match (`Session.findings_stamp`). `summary`: the run
    summary worked out with them (JSON-able), reused under the same stamp
    (`Session.stored_summary`). A file that cannot be written raises SessionError (its
    message is SQLite's reason)."""
    from ttrecord.errors import SessionError

    from ttrecord.store.opening import require_regular_file

    require_regular_file(Path(path))
    try:
        db = sqlite_utils.Database(os.fspath(path))
        db.execute("PRAGMA trusted_schema = OFF")
        db.execute("PRAGMA foreign_keys = OFF")
    except sqlite3.Error as exc:
        raise SessionError(str(exc)) from None
    try:
        rows = [
            {
                "rule": f.rule,
                "severity": str(f.severity),
                "title": f.title,
                "message": f.message,
                "file": f.file,
                "line": f.line,
                "function": f.function,
                "stack": _json([list(s) for s in f.stack]),
                "events": _json(list(f.events)),
                "evidence": _json(f.evidence),
                "fix": f.fix,
                "device": f.device,
                "trace": f.trace,
            }
            for f in findings
        ]
        with db.conn:
            _verify_findings_schema(db)  # in the writing transaction: nothing changes it after
            db.execute("DELETE FROM findings")
            if rows:
                db.table("findings").insert_all(rows)
            db.execute(
                "CREATE TABLE IF NOT EXISTS findings_stamp"
                " (analysis_version TEXT, fingerprint TEXT, stored_at REAL)"
            )
            db.execute("DELETE FROM findings_stamp")
            # The run summary is only as current as the stamp it is stored under.
            db.execute("CREATE TABLE IF NOT EXISTS run_summary (summary TEXT)")
            db.execute("DELETE FROM run_summary")
            if stamp is not None:
                db.execute("INSERT INTO findings_stamp VALUES (?, ?, ?)", (*stamp, time.time()))
                if summary is not None:
                    db.execute("INSERT INTO run_summary VALUES (?)", (_json(summary),))
        return len(rows)
    except sqlite3.Error as exc:
        raise SessionError(str(exc)) from None
    finally:
        db.close()


def _verify_findings_schema(db: sqlite_utils.Database) -> None:
    """Write findings only into tables ttrecord made: a file holding a trigger (which would
    run on the write: delete events, rewrite the session) or a view in place of a table is
    not written to. Raises SessionError."""
    from ttrecord.errors import SessionError

    db.execute("BEGIN IMMEDIATE")
    triggers = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]
    if triggers:
        raise SessionError(f"the file holds triggers ttrecord does not create ({', '.join(triggers[:3])})")
    kinds = dict(db.execute("SELECT name, type FROM sqlite_master").fetchall())
    for name in ("findings", "findings_stamp", "run_summary"):
        if kinds.get(name, "table") != "table":
            raise SessionError(f"{name} is a {kinds[name]}, not a table ttrecord made")
    expected = set(schema.TABLES["findings"]["columns"])
    have = {r[1] for r in db.execute("PRAGMA table_info(findings)")}
    if have and not expected <= have:
        raise SessionError("the findings table is not the one ttrecord made")
