"""The one query layer over session files, used by the CLI, the analysis and the UI.

`Session.open(path)` refuses anything that is not a readable ttrecord session with a one-line
`SessionError`. Queries return plain dataclasses (`ttrecord.events`, `ttrecord.findings`) and
page with LIMIT/keyset so a viewer never loads a million-event session into memory.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from ttrecord.errors import SessionError
from ttrecord.events import BufferRef, CallSite, Event, TensorRef
from ttrecord.findings import Finding, Severity
from ttrecord.store import liveness, schema, vocabulary
from ttrecord.store import snapshot as snapshot_store
from ttrecord.store.opening import abnormal_message, connect_read_only, read_head
from ttrecord.store.queries import AnalysisQueries, BufferLife, EagerCallGroup, core_condition  # noqa: F401
from ttrecord.store.buffer_rows import (  # noqa: F401  (re-exported)
    MAP_ROW_COLUMNS,
    MapRow,
    map_buffer_rows,
    map_rows_by_id,
    trace_execute_rows,
)
from ttrecord.store.capture_rows import capture_op_rows, op_tensors  # noqa: F401  (re-exported)
from ttrecord.store.map_grid import (  # noqa: F401  (re-exported)
    CellSpan,
    buffer_cells,
    buffers_in_window,
    map_extents,
)
from ttrecord.store.rows import (  # noqa: F401  (re-exported: the reader is the query API)
    BufferRow,
    DeviceRow,
    EventFilter,
    SessionInfo,
    TimelineRow,
    TraceRow,
)

_SQLITE_MAGIC = b"SQLite format 3\x00"
_EVENT_COLUMNS = (
    "seq, parent, t_ns, dur_ns, thread, kind, name, phase, device, cq, trace, callsite,"
    " status, error, args, region, buffer"
)


def _loads(text: str | None, default: Any = None) -> Any:
    return json.loads(text) if text else default


# The mapping's dicts, looked up inline: a function call per row costs as much as the row.
_KINDS, _PHASES, _STATUSES, _kind = (
    vocabulary.KINDS, vocabulary.PHASES, vocabulary.STATUSES, vocabulary.kind
)


@lru_cache(maxsize=4096)
def _shape(text: str | None) -> tuple[int, ...]:
    return tuple(json.loads(text)) if text else ()


# `events_at` and `core_events`: an event with its allocation's buffer (`_events_of_rows`).
_AT_COLUMNS = (
    "e.seq, e.parent, e.t_ns, e.dur_ns, e.thread, e.kind, e.name, e.phase, e.device, e.cq,"
    " e.trace, e.callsite, e.status, e.error, e.args, e.region, b.device, b.buffer_type,"
    " b.address, b.size, b.page_size, b.num_pages, b.tensor_id"
)

# Named, not `SELECT *`: a column added to the table must not shift what is read.
_TENSOR_COLUMNS = (
    "seq, role, tensor_id, storage, shape, dtype, layout, memory_config, device, buffer_type,"
    " address, size"
)


def _tensor_ref(row: sqlite3.Row | tuple) -> TensorRef:
    """A TensorRef from a `_TENSOR_COLUMNS` row."""
    (_, _, tensor_id, storage, shape, dtype, layout, memcfg, device, btype, addr, size) = row
    buffer = None
    if addr is not None and btype is not None:
        buffer = BufferRef.of_tensor(device, btype, addr, size, memcfg, tensor_id)
    return TensorRef(tensor_id, storage, _shape(shape), dtype, layout, memcfg, buffer)


QUERY_SECONDS_ENV = "TTRECORD_QUERY_SECONDS"
DEFAULT_QUERY_SECONDS = 600.0
_PROGRESS_STEPS = 100_000  # SQLite VM steps between two looks at the clock


def query_seconds() -> float:
    """How long one query may run before a reader stops it: a file can be crafted so that a
    query never ends, and a reader must not hang on it (TTRECORD_QUERY_SECONDS, default 600)."""
    try:
        value = float(os.environ.get(QUERY_SECONDS_ENV, ""))
    except ValueError:
        return DEFAULT_QUERY_SECONDS
    return value if value > 0 and math.isfinite(value) else DEFAULT_QUERY_SECONDS


class Session(AnalysisQueries):
    """A read-only view of one session file (the analysis' set-based questions: `queries`)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._limit = query_seconds()
        self._deadline = math.inf
        self._stopped = False
        conn.set_progress_handler(self._over_time, _PROGRESS_STEPS)
        self._callsites: dict[int, CallSite] | None = None
        self._buffers: dict[int, BufferRef] | None = None
        # Set when the status says `running` but no `ttrecord run` records it any more.
        self.abnormal: str | None = None
        # Read from an indexed copy made when the session was opened (it had no indexes).
        self.snapshot = False

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, snapshot: bool = True,
             live: bool = False) -> Session:  # fmt: skip
        """Open a session for reading, or raise SessionError saying why it cannot be read.

        A session without its indexes (still recording, or its recorder was killed) is read
        from an indexed copy (`store.snapshot`), so every reader's work stays bounded; not
        with `snapshot=False` (readers of the session row only) nor, with `live=True`, while
        a run is still recording it (a live view must see new events)."""
        p = Path(path)
        try:
            magic = read_head(p, len(_SQLITE_MAGIC))
        except OSError as exc:
            raise SessionError(f"{p}: cannot be read ({exc.strerror})") from None
        if magic != _SQLITE_MAGIC:
            raise SessionError(f"{p}: not a ttrecord session (not an SQLite file)")
        try:
            conn, row, version = connect_read_only(p)
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{p}: damaged or truncated session ({exc})") from None
        if row is None or row[0] != schema.FORMAT:
            raise SessionError(f"{p}: not a ttrecord session")
        if version > schema.SCHEMA_VERSION:
            raise SessionError(
                f"{p}: written by a newer ttrecord (schema {version}; this one reads up to"
                f" {schema.SCHEMA_VERSION}); upgrade ttrecord"
            )
        session = cls(p, conn)
        if row[1] == "running" and not liveness.being_recorded(p):
            session.abnormal = abnormal_message(p, conn)
        if snapshot and not (live and liveness.being_recorded(p)):
            session._read_indexed_copy()
        return session

    def _read_indexed_copy(self) -> None:
        try:
            if not snapshot_store.missing_indexes(self._conn):
                return
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"{self.path}: damaged or truncated session ({exc})") from None
        copy = snapshot_store.indexed_copy(self._conn)
        if copy is not None:
            self._conn.close()
            self._conn = copy
            copy.set_progress_handler(self._over_time, _PROGRESS_STEPS)
            self.snapshot = True

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _over_time(self) -> int:
        if time.monotonic() > self._deadline:
            self._stopped = True
            return 1  # SQLite stops the statement ("interrupted")
        return 0

    def _failure(self, exc: sqlite3.DatabaseError) -> SessionError:
        if self._stopped:
            self._stopped = False
            return SessionError(f"{self.path}: a query ran longer than {self._limit:g} s and was"
                                f" stopped (a crafted or damaged file?); {QUERY_SECONDS_ENV}"
                                " allows longer")  # fmt: skip
        return SessionError(f"{self.path}: damaged or truncated session ({exc})")

    def _query(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        self._deadline = time.monotonic() + self._limit
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._failure(exc) from None
        finally:
            self._deadline = math.inf

    # -- session -------------------------------------------------------------------------

    def info(self) -> SessionInfo:
        cur = self._conn.execute("SELECT * FROM session")
        names = [d[0] for d in cur.description]
        row = dict(zip(names, cur.fetchone(), strict=True))
        info = SessionInfo(
            path=str(self.path),
            id=row["id"],
            script=row["script"],
            argv=_loads(row["argv"], []),
            cwd=row["cwd"],
            python=row["python"],
            ttnn_version=row["ttnn_version"],
            backend=row["backend"],
            backend_reason=row["backend_reason"],
            host=row["host"],
            pid=row["pid"],
            started_at=row["started_at"],
            ended_at=row["ended_at"],
            status=row["status"],
            exit_code=row["exit_code"],
            signal=row["signal"],
            error_type=row["error_type"],
            error_message=row["error_message"],
            traceback=row["traceback"],
            last_call=row["last_call"],
            options=_loads(row["options"], {}),
        )
        if self.abnormal is not None:  # every reader says so, through the status it shows
            info = dataclasses.replace(info, status="crashed",
                                       error_type=info.error_type or "RecordingStopped",
                                       error_message=info.error_message or self.abnormal)  # fmt: skip
        return info

    def counts(self) -> dict[tuple[str, str], int]:
        """Events per (phase, kind)."""
        rows = self._query("SELECT phase, kind, count(*) FROM events GROUP BY phase, kind")
        return {(phase, kind): n for phase, kind, n in rows}

    def event_count(self, filt: EventFilter | None = None) -> int:
        where, params = (filt or EventFilter()).where()
        return int(self._query(f"SELECT count(*) FROM events e WHERE {where}", params)[0][0])

    # -- events --------------------------------------------------------------------------

    def callsites(self) -> dict[int, CallSite]:
        if self._callsites is None:
            self._callsites = {
                cid: CallSite(file, line, function, tuple(tuple(f) for f in _loads(stack, [])))
                for cid, file, line, function, stack in self._query(
                    "SELECT id, file, line, function, stack FROM callsites"
                )
            }
        return self._callsites

    def _buffer_refs(self) -> dict[int, BufferRef]:
        if self._buffers is None:
            self._buffers = {row.id: row.buffer for row in self.buffers()}
        return self._buffers

    def _event(self, row: tuple, with_buffer: bool = True) -> Event:
        (seq, parent, t_ns, dur_ns, thread, kind, name, phase, device, cq, trace, site,
         status, error, args, region, buffer_id) = row  # fmt: skip
        return Event(
            seq=seq,
            kind=(_KINDS.get(kind) or _kind(kind)),
            name=name,
            phase=_PHASES[phase],
            t_ns=t_ns,
            dur_ns=dur_ns,
            thread=thread,
            device=device,
            cq=cq,
            trace=trace,
            parent=parent,
            callsite=self.callsites().get(site) if site is not None else None,
            status=_STATUSES[status],
            error=error,
            args=_loads(args),
            region=region,
            buffer=self._buffer_refs().get(buffer_id) if with_buffer and buffer_id else None,
        )

    def events(
        self,
        filt: EventFilter | None = None,
        limit: int = 200,
        after_seq: int | None = None,
        offset: int = 0,
        with_tensors: bool = False,
    ) -> list[Event]:
        """One page of events in seq order: keyset paging with `after_seq`, or `offset`."""
        where, params = (filt or EventFilter()).where()
        if after_seq is not None:
            where += " AND e.seq > ?"
            params.append(after_seq)
        rows = self._query(
            f"SELECT {_EVENT_COLUMNS} FROM events e WHERE {where} ORDER BY e.seq"
            " LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        events = [self._event(r) for r in rows]
        if with_tensors and events:
            self._attach_tensors(events)
        return events

    def event_index(self, seq: int, filt: EventFilter | None = None) -> int:
        """Position of an event in a filtered timeline, for jumping to it."""
        where, params = (filt or EventFilter()).where()
        return int(self._query(
            f"SELECT count(*) FROM events e WHERE {where} AND e.seq < ?", [*params, seq]
        )[0][0])

    def event(self, seq: int) -> Event | None:
        rows = self._query(f"SELECT {_EVENT_COLUMNS} FROM events e WHERE seq = ?", (seq,))
        if not rows:
            return None
        ev = self._event(rows[0])
        self._attach_tensors([ev])
        return ev

    def children(self, seq: int) -> list[Event]:
        rows = self._query(
            f"SELECT {_EVENT_COLUMNS} FROM events e WHERE parent = ? ORDER BY seq", (seq,)
        )
        return [self._event(r) for r in rows]

    def _attach_tensors(self, events: list[Event]) -> None:
        by_seq = {ev.seq: ev for ev in events}
        rows = self._query(
            f"SELECT {_TENSOR_COLUMNS} FROM tensors WHERE seq BETWEEN ? AND ? ORDER BY seq, role, pos",
            (min(by_seq), max(by_seq)),
        )
        ins: dict[int, list[TensorRef]] = {}
        outs: dict[int, list[TensorRef]] = {}
        for row in rows:
            if row[0] in by_seq:
                (ins if row[1] == "in" else outs).setdefault(row[0], []).append(_tensor_ref(row))
        for seq, ev in by_seq.items():
            ev.inputs = tuple(ins.get(seq, ()))
            ev.outputs = tuple(outs.get(seq, ()))

    def iter_events(self, batch: int = 20000) -> Iterator[Event]:
        """Every event with its tensors, in seq order, streamed in batches (for the analysis)."""
        after = -1
        while True:
            page = self.events(limit=batch, after_seq=after, with_tensors=True)
            if not page:
                return
            yield from page
            after = page[-1].seq

    def last_call(self) -> Event | None:
        """The call that was running when the program died or hung, if any."""
        seq = self.info().last_call
        return self.event(seq) if seq is not None else None

    # -- derived tables ------------------------------------------------------------------

    def buffers(
        self,
        device: int | None = None,
        buffer_type: str | None = None,
        live_from: int | None = None,
        live_until: int | None = None,
    ) -> list[BufferRow]:
        """Buffers in allocation order; with `live_from`/`live_until`, only those allocated
        before `live_until` and not freed by `live_from` (live at some point in between)."""
        sql = (
            "SELECT id, device, buffer_type, address, size, page_size, num_pages, tensor_id,"
            " alloc_seq, free_seq, alloc_phase FROM buffers WHERE 1"
        )
        params: list[Any] = []
        if device is not None:
            # With a live window the alloc_seq index is the selective one; the device index
            # would visit every buffer of the device (`+` keeps SQLite from using it).
            sql += " AND +device = ?" if live_until is not None else " AND device = ?"
            params.append(device)
        if buffer_type is not None:
            sql += " AND buffer_type = ?"
            params.append(buffer_type)
        if live_until is not None:
            sql += " AND alloc_seq < ?"
            params.append(live_until)
        if live_from is not None:
            sql += " AND (free_seq IS NULL OR free_seq > ?)"
            params.append(live_from)
        rows = self._query(sql + " ORDER BY alloc_seq, id", params)
        return [
            BufferRow(
                id=r[0],
                buffer=BufferRef(r[1], r[2], r[3], r[4], r[5], r[6], r[7]),
                alloc_seq=r[8],
                free_seq=r[9],
                alloc_phase=r[10],
            )
            for r in rows
        ]

    def traces(self) -> list[TraceRow]:
        rows = self._query(
            "SELECT id, device, trace_id, cq, begin_seq, end_seq, release_seq, ops, executions"
            " FROM traces ORDER BY begin_seq"
        )
        return [TraceRow(*r) for r in rows]

    def devices(self) -> list[DeviceRow]:
        rows = self._query(
            "SELECT id, arch, num_dram_banks, num_l1_banks, trace_region_size, open_seq,"
            " close_seq, info FROM devices ORDER BY id"
        )
        return [DeviceRow(*r[:7], info=_loads(r[7], {})) for r in rows]  # type: ignore[misc]  # 7 columns before info

    def findings(self) -> list[Finding]:
        rows = self._query(
            "SELECT id, rule, severity, title, message, file, line, function, stack, events,"
            " evidence, fix, device, trace FROM findings ORDER BY id"
        )
        return [
            Finding(
                id=r[0],
                rule=r[1],
                severity=Severity(r[2]),
                title=r[3],
                message=r[4],
                file=r[5],
                line=r[6],
                function=r[7],
                stack=[tuple(s) for s in _loads(r[8], [])],
                events=_loads(r[9], []),
                evidence=_loads(r[10], {}),
                fix=r[11],
                device=r[12],
                trace=r[13],
            )
            for r in rows
        ]

    def fingerprint(self) -> str:
        """A digest of what the analysis reads (the session row, event, tensor and buffer
        counts and ends, every trace and device row): findings stored with it are current while
        it stays the same. A few indexed aggregates: milliseconds on a million events."""
        import hashlib

        parts = [
            self._query(
                "SELECT id, status, ended_at, exit_code, signal, last_call FROM session"
            ),
            self._query("SELECT count(*), max(seq), max(t_ns) FROM events"),
            self._query("SELECT count(*), max(rowid) FROM tensors"),
            self._query("SELECT count(*), max(id), count(free_seq), total(free_seq) FROM buffers"),
            self._query("SELECT * FROM traces ORDER BY id"),
            self._query("SELECT * FROM devices ORDER BY id"),
        ]
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]

    def findings_stamp(self) -> tuple[str, str] | None:
        """(analysis version, session fingerprint) stored with the findings, if any."""
        try:
            rows = self._conn.execute(
                "SELECT analysis_version, fingerprint FROM findings_stamp"
            ).fetchall()
        except sqlite3.DatabaseError:  # written before stamps existed, or never checked
            return None
        return (rows[0][0], rows[0][1]) if rows else None

    def source(self, file: str) -> str | None:
        """The file's text as it was recorded (kept at record time), else from disk: a line
        number means the line of the file that ran, not of today's edit of it."""
        rows = self._query("SELECT text FROM sources WHERE file = ?", (file,))
        if rows:
            return str(rows[0][0])
        try:
            return Path(file).read_text(errors="replace")
        except OSError:
            return None

    def source_changed_on_disk(self, file: str) -> bool:
        """Whether the file on disk differs from the text recorded with the session (False
        when either is missing: nothing to compare)."""
        rows = self._query("SELECT text FROM sources WHERE file = ?", (file,))
        if not rows:
            return False
        try:
            return bool(Path(file).read_text(errors="replace") != rows[0][0])
        except OSError:
            return False

    # -- queries for viewers ---------------------------------------------------------------

    def timeline(
        self,
        filt: EventFilter | None = None,
        limit: int = 200,
        after_seq: int | None = None,
        offset: int = 0,
    ) -> list[TimelineRow]:
        """One page of flat timeline rows; same paging as `events`, without building Events."""
        where, params = (filt or EventFilter()).where()
        if after_seq is not None:
            where += " AND e.seq > ?"
            params.append(after_seq)
        rows = self._query(
            "SELECT e.seq, e.phase, e.kind, e.name, e.device, e.trace, c.file, c.line, e.dur_ns,"
            " e.status, e.error, b.address,"
            " (SELECT group_concat(t.role || ':' || t.address, ' ') FROM tensors t"
            "  WHERE t.seq = e.seq AND t.address IS NOT NULL), e.cq, json_extract(e.args, '$.queue')"
            " FROM events e LEFT JOIN callsites c ON c.id = e.callsite"
            " LEFT JOIN buffers b ON b.id = e.buffer"
            f" WHERE {where} ORDER BY e.seq LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        out = []
        for *head, tensors, cq, queue in rows:
            pairs = tuple(
                (role, int(addr)) for role, addr in (p.split(":") for p in (tensors or "").split())
            )
            out.append(TimelineRow(*head, pairs, cq, _queue_args(queue)))  # type: ignore[call-arg]  # the SELECT is in field order
        return out

    def uses_queues(self) -> bool:
        """Whether the run named a command queue other than 0, or read without blocking (the
        timeline then shows one lane per queue)."""
        return bool(self._query(
            "SELECT 1 FROM events WHERE kind IN ('sync', 'h2d', 'd2h', 'trace_execute', 'op')"
            " AND (cq > 0 OR json_extract(args, '$.queue.cq') > 0"
            " OR json_extract(args, '$.queue.blocking') = 0) LIMIT 1"
        ))  # fmt: skip

    def phase_counts(self) -> dict[str, int]:
        """Events per phase: one pass over the phase index (counts() sorts every row)."""
        return dict(self._query("SELECT phase, count(*) FROM events GROUP BY phase"))

    def seq_range(self) -> tuple[int, int] | None:
        """First and last seq (two index lookups; min and max in one query scan the table)."""
        first = self._query("SELECT min(seq) FROM events")[0][0]
        if first is None:
            return None
        return first, self._query("SELECT max(seq) FROM events")[0][0]

    def capture_buffers(self) -> list[tuple[int, int, int, str, int]]:
        """(device, trace id, seq, role, buffer id) for every buffer a captured call read ("in")
        or wrote, in one query over the capture phase."""
        return self._query(
            "SELECT e.device, e.trace, e.seq, t.role, t.buffer FROM events e"
            " JOIN tensors t ON t.seq = e.seq WHERE e.phase = 'capture' AND t.buffer IS NOT NULL"
            " ORDER BY e.seq"
        )

    def buffer_users(self, buffer_id: int, limit: int = 500) -> list[tuple[int, str]]:
        """(seq, role) of the calls that read ("in") or wrote ("out") a buffer, in order."""
        return self._query(
            "SELECT DISTINCT seq, role FROM tensors WHERE buffer = ? ORDER BY seq LIMIT ?",
            (buffer_id, limit),
        )

    # -- set-based access for the analysis ----------------------------------------------

    def query(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        """Read-only SQL over the session schema (docs/schema.md). For the set-based questions
        the analysis asks (which allocations overlap a range, which calls share a call site),
        which would otherwise mean materialising every event."""
        return self._query(sql, params)

    def query_iter(self, sql: str, params: tuple | list | dict = ()) -> Iterator[tuple]:
        """`query`, row by row: for reading a whole session in constant memory (exports)."""
        try:  # the limit is per batch: the caller's own work between batches is not SQLite's
            self._deadline = time.monotonic() + self._limit
            cursor = self._conn.execute(sql, params)
            while True:
                self._deadline = time.monotonic() + self._limit
                rows = cursor.fetchmany(1000)
                self._deadline = math.inf
                if not rows:
                    break
                yield from rows
        except sqlite3.DatabaseError as exc:
            raise self._failure(exc) from None
        finally:
            self._deadline = math.inf

    def events_at(self, seqs: Iterable[int], with_tensors: bool = True) -> list[Event]:
        """The events with these seqs (any number, any spread), in seq order, with tensors.

        Unlike `events()`, neither the seqs nor the tensor rows are fetched by range, so a few
        thousand events scattered over a million-event session cost a few thousand rows."""
        wanted = json.dumps(sorted(set(seqs)))
        rows = self._query(
            f"SELECT {_AT_COLUMNS} FROM events e LEFT JOIN buffers b ON b.id = e.buffer"
            " WHERE e.seq IN (SELECT value FROM json_each(?)) ORDER BY e.seq",
            (wanted,),
        )
        events = self._events_of_rows(rows)
        if with_tensors and events:
            self._attach_tensors_at(events, wanted)
        return events

    def core_events(self, parts: Iterable[str] | None = None) -> list[Event]:
        """`events_at(core_event_seqs(parts))` in one pass over the table: the analysis loads
        about a fifth of a long run's events this way (every replay of a decode loop)."""
        rows = self._query(
            f"SELECT {_AT_COLUMNS} FROM events e LEFT JOIN buffers b ON b.id = e.buffer"
            f" WHERE {core_condition(parts)} ORDER BY e.seq"
        )
        events = self._events_of_rows(rows)
        if events:
            self._attach_tensors_at(events, json.dumps([ev.seq for ev in events]))
        return events

    def _attach_tensors_at(self, events: list[Event], wanted: str) -> None:
        """Each event's tensors, by the seqs in `wanted` (a JSON list)."""
        by_seq = {ev.seq: ev for ev in events}
        ins: dict[int, list[TensorRef]] = {}
        outs: dict[int, list[TensorRef]] = {}
        refs: dict[tuple, TensorRef] = {}  # TensorRefs are frozen: one per distinct row
        for row in self._query(
            f"SELECT {_TENSOR_COLUMNS} FROM tensors"
            " WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq, role, pos",
            (wanted,),
        ):
            key = row[2:]
            ref = refs.get(key)
            if ref is None:
                (tensor_id, storage, shape, dtype, layout, memcfg, device, btype, addr,
                 size) = key  # fmt: skip
                buf = None
                if addr is not None and btype is not None:
                    buf = BufferRef.of_tensor(device, btype, addr, size, memcfg, tensor_id)
                ref = refs[key] = TensorRef(
                    tensor_id, storage, tuple(_loads(shape, [])), dtype, layout, memcfg, buf
                )
            (ins if row[1] == "in" else outs).setdefault(row[0], []).append(ref)
        for seq, ev in by_seq.items():
            ev.inputs = tuple(ins.get(seq, ()))
            ev.outputs = tuple(outs.get(seq, ()))

    def _events_of_rows(self, rows: list[tuple]) -> list[Event]:
        """Events from `events_at` rows. A core load builds a few hundred thousand of them
        (every replay of a decode loop), so the loop is written for speed: names bound
        locally, positional construction, one BufferRef per distinct buffer row and one
        parse per distinct argument text (each event still gets its own copy)."""
        sites = self.callsites()
        site_of, kind_of, phases, statuses = sites.get, _KINDS.get, _PHASES, _STATUSES
        parsed: dict[str, Any] = {}  # args texts repeat (every execute_trace has the same)
        buffers: dict[tuple, BufferRef] = {}  # an allocation and its free share the row
        loads = json.loads
        events: list[Event] = []
        append = events.append
        for (seq, parent, t_ns, dur_ns, thread, kind, name, phase, device, cq, trace, site,
             status, error, args, region, *buf) in rows:  # fmt: skip
            buffer = None
            if buf[1] is not None:
                key = tuple(buf)
                buffer = buffers.get(key)
                if buffer is None:
                    buffer = buffers[key] = BufferRef(*buf)
            if args:
                value = parsed.get(args)
                if value is None:
                    value = parsed[args] = loads(args)
                if isinstance(value, dict):
                    value = dict(value)
            else:
                value = None
            append(Event(
                seq, kind_of(kind) or _kind(kind), name, phases[phase], t_ns, dur_ns, thread,
                device, cq, trace, parent, site_of(site) if site is not None else None,
                statuses[status], error, value, (), (), buffer, region,
            ))  # fmt: skip
        return events

def find_sessions(folder: str | os.PathLike[str]) -> list[Path]:
    """Session files directly inside a folder, the most recently started run first (a check
    or a copy changes a file's mtime, not when its run started; other SQLite files are
    skipped)."""
    found: list[tuple[float, Path]] = []
    for path in Path(folder).glob("*.db"):
        try:
            session = Session.open(path, snapshot=False)
        except SessionError:
            continue  # another program's file, or one that cannot be told to be a session
        try:  # (a session whose contents are damaged is listed: readers say so)
            started = float(session.info().started_at or 0.0)
        except Exception:  # noqa: BLE001 - damaged: fall back on the file's time
            started = _mtime(path)
        finally:
            session.close()
        found.append((started, path))
    return [p for _started, p in sorted(found, key=lambda item: item[0], reverse=True)]


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def _queue_args(text: str | None) -> dict | None:
    """The stored `queue` facts of a call (a JSON object), or None for anything else."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
