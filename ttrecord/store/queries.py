"""The set-based questions the analysis and the report ask of a session, as typed methods.

`Session` inherits them (`reader.py` stays the paging API for viewers). Each answers for the
whole run in a few indexed queries, so the analysis of a million-event session never
materialises its eager ops, allocations and frees. The SQL behind the analysis lives here and
nowhere else: a schema change is one edit in `ttrecord/store/`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

from ttrecord.errors import SessionError

# Events every detector scans in full (see `analysis/loading.py`): every call that is not an
# op or transfer, everything inside a capture or audit region.
_CORE = (
    "kind NOT IN ('op', 'alloc', 'free', 'h2d', 'd2h') OR phase = 'capture' OR region IS NOT NULL"
)
# More of that selection a rule can ask for by name in `Rule.facts`.
CORE_PARTS = {
    "trace_buffers": "buffer IN (SELECT id FROM buffers WHERE buffer_type = 'TRACE')",
    "prep_runs": "(phase = 'prep' AND kind = 'op' AND parent IS NULL)",
    "compile_allocations": "(kind = 'alloc' AND parent IN (SELECT parent FROM events"
    " WHERE kind = 'note' AND name = 'program_cache_miss'))",  # what a compiling call left
    # ttnn's trace allocation tracker opt-outs (TR004 reports an acknowledged buffer as info)
    "tracker_opt_outs": "(kind = 'note' AND name IN ('corruptible_scope_begin', 'corruptible_scope_end'))"
    " OR (kind = 'op' AND parent IS NULL AND name LIKE '%acknowledge_corruptible')",
}
_LIFE = "b.alloc_seq, b.free_seq, b.id, b.device, b.buffer_type, b.address, b.size"
# Buffer accesses outside captures, by which side of a call they are on.
_ACCESS = {
    "reads": "t.role = 'in' AND e.kind = 'd2h'",
    "uses": "t.role = 'in'",
    "writes": "(t.role = 'out' OR (t.role = 'in' AND e.kind = 'h2d'))",
}
_USER_CALL = "parent IS NULL AND callsite IS NOT NULL AND kind IN (SELECT value FROM json_each(?))"


class BufferLife(NamedTuple):
    """One stored buffer's lifetime and place."""

    alloc_seq: int
    free_seq: int | None
    id: int
    device: int
    buffer_type: str
    address: int
    size: int


class EagerCallGroup(NamedTuple):
    """Eager or prep calls of one op at one call site with the same argument text."""

    file: str
    line: int
    function: str
    name: str
    args: str  # JSON text as stored
    first_seq: int
    calls: int  # how many calls
    stack: str | None = None  # the call site's callers (JSON), so a call path can be told apart


def core_condition(parts: Iterable[str] | None = None) -> str:
    """The SQL condition on `events` (its columns unqualified: no other table of a query may
    have them) that selects the core events and the `CORE_PARTS` named (all when None)."""
    names = CORE_PARTS.keys() if parts is None else parts
    return " OR ".join([_CORE, *(CORE_PARTS[n] for n in sorted(names))])


def _ids(values: Iterable[Any]) -> str:
    return json.dumps(sorted(set(values)))


class AnalysisQueries:
    """Mixed into `Session`; every method runs on its read-only connection."""

    def _query(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        raise NotImplementedError  # Session's

    # -- what the detectors load ------------------------------------------------------------

    def core_event_seqs(self, parts: Iterable[str] | None = None) -> list[int]:
        """Seqs of the events every detector scans (trace calls, capture and audit-region
        events, calls that are neither ops nor transfers) and the `CORE_PARTS` named (all of
        them when None: what `report` reads)."""
        return [seq for (seq,) in self._query(f"SELECT seq FROM events WHERE {core_condition(parts)}")]

    def last_seq(self) -> int:
        """The last event's seq (0 when there is none)."""
        return self._query("SELECT max(seq) FROM events")[0][0] or 0

    def free_seqs_of(self, alloc_seqs: Iterable[int]) -> set[int]:
        """Seqs of the frees that ended the buffers these allocation events made."""
        return {seq for (seq,) in self._query(
            "SELECT b.free_seq FROM events e JOIN buffers b ON b.id = e.buffer"
            " WHERE e.seq IN (SELECT value FROM json_each(?)) AND b.free_seq IS NOT NULL",
            (_ids(alloc_seqs),),
        )}  # fmt: skip

    def buffers_allocated_within(self, windows: list[list[int]]) -> list[BufferLife]:
        """Buffers allocated strictly inside any of these (after, before) seq windows."""
        return [BufferLife(*r) for r in self._query(
            f"SELECT {_LIFE} FROM json_each(?) w JOIN buffers b"
            " ON b.alloc_seq > json_extract(w.value, '$[0]')"
            " AND b.alloc_seq < json_extract(w.value, '$[1]')",
            (json.dumps(windows),),
        )]  # fmt: skip

    def buffers_at(self, device: int | None, buffer_type: str | None,
                   addresses: Iterable[int]) -> list[BufferLife]:  # fmt: skip
        """Every buffer ever at these addresses of one device and buffer type, by the
        (device, buffer_type, address) index."""
        return [BufferLife(*r) for r in self._query(
            f"SELECT {_LIFE} FROM buffers b WHERE b.device IS ? AND b.buffer_type IS ?"
            " AND b.address IN (SELECT value FROM json_each(?))",
            (device, buffer_type, _ids(addresses)),
        )]  # fmt: skip

    def lifetimes_at(self, device: int | None, buffer_type: str | None,
                     addresses: Iterable[int]) -> list[tuple[int, int, int | None, int]]:  # fmt: skip
        """(address, alloc seq, free seq, buffer id) of every buffer ever at these addresses of
        one device and buffer type, in allocation order: `buffers_at` as plain rows, for the
        analysis' lifetimes (a decode loop puts tens of thousands of buffers on one address)."""
        return self._query(
            "SELECT b.address, b.alloc_seq, b.free_seq, b.id FROM buffers b"
            " WHERE b.device IS ? AND b.buffer_type IS ?"
            " AND b.address IN (SELECT value FROM json_each(?)) ORDER BY b.alloc_seq, b.id",
            (device, buffer_type, _ids(addresses)),
        )

    def new_device_tensors(self, except_buffers: Iterable[int] = ()) -> list[int]:
        """Seqs of the host-to-device calls (outside captures) that made a new device tensor,
        which may be meant as a trace input, other than into `except_buffers` (a decode loop
        copies into its input every step: those rows stay in SQLite)."""
        return [seq for (seq,) in self._query(
            "SELECT t.seq FROM events e JOIN tensors t ON t.seq = e.seq"
            " WHERE e.kind = 'h2d' AND e.phase != 'capture' AND t.role = 'out'"
            " AND t.storage = 'device' AND (t.buffer IS NULL"
            " OR t.buffer NOT IN (SELECT value FROM json_each(?)))",
            (_ids(except_buffers),),
        )]  # fmt: skip

    def buffer_event_seqs(self, buffer_ids: Iterable[int]) -> list[int]:
        """Seqs of the allocation and free events of these buffers."""
        return [seq for (seq,) in self._query(
            "SELECT seq FROM events WHERE buffer IN (SELECT value FROM json_each(?))",
            (_ids(buffer_ids),),
        )]  # fmt: skip

    def first_writers(self, buffer_ids: Iterable[int]) -> list[int]:
        """Seq of the first call that output each of these buffers (the call that made it)."""
        return [seq for (seq,) in self._query(
            "SELECT min(seq) FROM tensors WHERE role = 'out' AND buffer IN"
            " (SELECT value FROM json_each(?)) GROUP BY buffer",
            (_ids(buffer_ids),),
        )]  # fmt: skip

    def tensor_buffers(self, buffer_ids: Iterable[int]) -> set[int]:
        """Those of these buffers some recorded tensor held (not kernel binaries or other
        allocations of the library's own)."""
        return {b for (b,) in self._query(
            "SELECT DISTINCT buffer FROM tensors WHERE buffer IN (SELECT value FROM json_each(?))",
            (_ids(buffer_ids),),
        )}  # fmt: skip

    # -- command queues (TR012) ---------------------------------------------------------------

    def queued_call_seqs(self) -> list[int]:
        """Top-level ops and transfers outside captures on a queue other than 0 or with queue
        facts (a non-blocking read): none in a one-queue program."""
        return [seq for (seq,) in self._query(
            "SELECT seq FROM events WHERE kind IN ('op', 'h2d', 'd2h') AND parent IS NULL"
            " AND phase != 'capture' AND (cq > 0 OR args LIKE '%\"queue\"%')"
        )]  # fmt: skip

    def host_transfer_seqs(self) -> list[int]:
        """Top-level host transfers outside captures (a blocking read is a host wait)."""
        return [seq for (seq,) in self._query(
            "SELECT seq FROM events WHERE kind IN ('h2d', 'd2h') AND parent IS NULL"
            " AND phase != 'capture'"
        )]  # fmt: skip

    def device_ranges_of(self, seqs: Iterable[int]) -> list[tuple[int, str, int, int | None]]:
        """(device, buffer type, address, size) of the device tensors these calls touched."""
        return self._query(
            "SELECT DISTINCT t.device, t.buffer_type, t.address, t.size FROM tensors t"
            " WHERE t.seq IN (SELECT value FROM json_each(?)) AND t.storage = 'device'"
            " AND t.address IS NOT NULL",
            (_ids(seqs),),
        )

    def host_consumers(self, seqs: Iterable[int]) -> list[int]:
        """Top-level calls that take, as a host tensor, the host result of one of `seqs`."""
        return [seq for (seq,) in self._query(
            "SELECT DISTINCT u.seq FROM tensors t JOIN tensors u ON u.tensor_id = t.tensor_id"
            " AND u.role = 'in' AND u.storage = 'host' AND u.seq > t.seq"
            " JOIN events e ON e.seq = u.seq AND e.parent IS NULL"
            " WHERE t.seq IN (SELECT value FROM json_each(?)) AND t.role = 'out'"
            " AND t.storage = 'host'",
            (_ids(seqs),),
        )]  # fmt: skip

    def top_level_ops_over(self, ranges: list[tuple[Any, ...]]) -> list[int]:
        """Top-level eager ops whose buffers overlap one of the (device, buffer type, start,
        end) ranges, through the buffers' (device, buffer_type, address) index: a buffer
        overlapping [start, end) starts in (start - largest size, end)."""
        widest = self._query("SELECT max(size) FROM buffers")[0][0] or 0
        return [seq for (seq,) in self._query(
            "SELECT DISTINCT t.seq FROM json_each(?) w JOIN buffers b"
            " ON b.device = json_extract(w.value, '$[0]')"
            " AND b.buffer_type = json_extract(w.value, '$[1]')"
            " AND b.address < json_extract(w.value, '$[3]')"
            " AND b.address > json_extract(w.value, '$[2]') - ?"
            " AND b.address + b.size > json_extract(w.value, '$[2]')"
            " JOIN tensors t ON t.buffer = b.id JOIN events e ON e.seq = t.seq"
            " WHERE e.kind = 'op' AND e.parent IS NULL AND e.phase != 'capture'",
            (json.dumps(ranges), widest + 1),
        )]  # fmt: skip

    def frees_over(self, ranges: list[tuple[Any, ...]]) -> list[int]:
        """Seqs of the frees (outside captures) of buffers that overlap one of the (device,
        buffer type, start, end) ranges, by the same index as `top_level_ops_over`."""
        widest = self._query("SELECT max(size) FROM buffers")[0][0] or 0
        return [seq for (seq,) in self._query(
            "SELECT DISTINCT b.free_seq FROM json_each(?) w JOIN buffers b"
            " ON b.device = json_extract(w.value, '$[0]')"
            " AND b.buffer_type = json_extract(w.value, '$[1]')"
            " AND b.address < json_extract(w.value, '$[3]')"
            " AND b.address > json_extract(w.value, '$[2]') - ?"
            " AND b.address + b.size > json_extract(w.value, '$[2]')"
            " JOIN events e ON e.seq = b.free_seq WHERE e.phase != 'capture'",
            (json.dumps(ranges), widest + 1),
        )]  # fmt: skip

    # -- facts about the rest of the run -----------------------------------------------------

    def buffer_accesses(self, buffer_ids: Iterable[int], which: str, skip_names: Iterable[str] = (),
                        after: int = -1) -> list[tuple[int, int]]:  # fmt: skip
        """(seq, buffer id) of the calls outside captures that access these buffers as device
        tensors, in seq order: `which` is "reads" (device-to-host), "uses" (any input) or
        "writes" (outputs, and the tensor a host-to-device copy fills), leaving out calls
        named in `skip_names`, from seq `after` on (exclusive)."""
        names = sorted(set(skip_names))
        skip = f" AND e.name NOT IN ({','.join('?' * len(names))})" if names else ""
        return self._query(
            "SELECT DISTINCT t.seq, t.buffer FROM tensors t JOIN events e ON e.seq = t.seq"
            " WHERE t.buffer IN (SELECT value FROM json_each(?)) AND t.storage = 'device'"
            f" AND e.phase != 'capture' AND {_ACCESS[which]}{skip} AND t.seq > ? ORDER BY t.seq",
            (_ids(buffer_ids), *names, after),
        )

    def user_call_before(self, seq: int, kinds: Iterable[str]) -> int | None:
        """Seq of the user's last call (top level, with a call site, of these kinds) before
        `seq`: walks the primary key from `seq` down and stops at the first."""
        rows = self._query(f"SELECT seq FROM events WHERE seq < ? AND {_USER_CALL}"
                           " ORDER BY seq DESC LIMIT 1", (seq, _ids(kinds)))  # fmt: skip
        return rows[0][0] if rows else None

    def user_call_after(self, seq: int, kinds: Iterable[str]) -> int | None:
        """Seq of the user's first call of these kinds after `seq`."""
        rows = self._query(f"SELECT seq FROM events WHERE seq > ? AND {_USER_CALL}"
                           " ORDER BY seq LIMIT 1", (seq, _ids(kinds)))  # fmt: skip
        return rows[0][0] if rows else None

    def user_calls_around(self, seq: int, kinds: Iterable[str]) -> tuple[int | None, int | None]:
        """`user_call_before` and `user_call_after` in one query (asked once per finding)."""
        ids = _ids(kinds)
        rows = self._query(
            f"SELECT (SELECT seq FROM events WHERE seq < ? AND {_USER_CALL} ORDER BY seq DESC LIMIT 1),"
            f" (SELECT seq FROM events WHERE seq > ? AND {_USER_CALL} ORDER BY seq LIMIT 1)",
            (seq, ids, seq, ids),
        )
        return rows[0][0], rows[0][1]

    def eager_call_groups(self) -> list[EagerCallGroup]:
        """The user's eager and prep op calls with arguments, grouped by call site, op name
        and argument text."""
        return [EagerCallGroup(*r) for r in self._query(
            "SELECT c.file, c.line, c.function, e.name, e.args, min(e.seq), count(*), c.stack"
            " FROM events e JOIN callsites c ON c.id = e.callsite"
            " WHERE e.kind = 'op' AND e.parent IS NULL AND e.phase IN ('eager', 'prep')"
            " AND e.args IS NOT NULL GROUP BY e.callsite, e.name, e.args"
        )]  # fmt: skip

    def eager_calls_at(self, file: str, line: int, function: str, name: str) -> list[tuple[int, str, str]]:
        """(seq, args JSON, the call site's callers JSON) of the user's eager and prep calls of
        op `name` at a line, in order: the sequence a call path's positions are counted in."""
        return self._query(
            "SELECT e.seq, e.args, c.stack FROM events e JOIN callsites c ON c.id = e.callsite"
            " WHERE c.file = ? AND c.line = ? AND c.function = ? AND e.name = ? AND e.kind = 'op'"
            " AND e.parent IS NULL AND e.phase IN ('eager', 'prep') AND e.args IS NOT NULL"
            " ORDER BY e.seq",
            (file, line, function, name),
        )

    def call_paths_at(self, file: str, line: int, function: str, name: str) -> list[tuple[int, str]]:
        """(seq, the call site's callers JSON) of every eager and prep call of `name` at a line
        (ops, transfers and allocations alike), in order."""
        return self._query(
            "SELECT e.seq, c.stack FROM events e JOIN callsites c ON c.id = e.callsite"
            " WHERE c.file = ? AND c.line = ? AND c.function = ? AND e.name = ?"
            " AND e.parent IS NULL AND e.phase IN ('eager', 'prep') ORDER BY e.seq",
            (file, line, function, name),
        )

    def last_eager_call(self, file: str, line: int, function: str, name: str,
                        before: int) -> int | None:  # fmt: skip
        """Seq of the last eager or prep call of op `name` at a call site before `before`."""
        rows = self._query(
            "SELECT max(e.seq) FROM events e JOIN callsites c ON c.id = e.callsite"
            " WHERE c.file = ? AND c.line = ? AND c.function = ? AND e.name = ? AND e.kind = 'op'"
            " AND e.parent IS NULL AND e.phase IN ('eager', 'prep') AND e.seq < ?",
            (file, line, function, name, before),
        )
        return rows[0][0] if rows else None

    def last_prep_call(self, name: str, device: int | None, after: int, before: int) -> int | None:
        """Seq of the last prep-run call of op `name` on a device with after < seq < before."""
        rows = self._query(
            "SELECT max(seq) FROM events WHERE seq > ? AND seq < ? AND phase = 'prep'"
            " AND kind = 'op' AND parent IS NULL AND name = ? AND device IS ?",
            (after, before, name, device),
        )
        return rows[0][0] if rows else None

    # -- what the report reads ---------------------------------------------------------------

    def last_raised_seq(self) -> int | None:
        """Seq of the last call that raised, if any."""
        seq: int | None = self._query("SELECT max(seq) FROM events WHERE status = 'raised'")[0][0]
        return seq

    def buffer_bytes(self, buffer_ids: Iterable[int]) -> dict[int, int]:
        """buffer id -> its full size (page size x pages) for those with a page count."""
        return {
            buffer_id: page_size * num_pages
            for buffer_id, page_size, num_pages in self._query(
                "SELECT id, page_size, num_pages FROM buffers WHERE id IN"
                " (SELECT value FROM json_each(?))",
                (_ids(buffer_ids),),
            )
            if page_size and num_pages
        }

    def stored_summary(self) -> dict[str, Any] | None:
        """The run summary stored with the findings (`replace_findings`), if any."""
        try:
            rows = self._query("SELECT summary FROM run_summary")
        except SessionError:  # written before summaries were stored, or never checked
            return None
        return json.loads(rows[0][0]) if rows and rows[0][0] else None

    def export_row_estimate(self) -> int:
        """About how many rows an export writes: one per event and per allocation or free."""
        return int(self._query(
            "SELECT (SELECT count(*) FROM events)"
            " + (SELECT count(*) + count(free_seq) FROM buffers)"
        )[0][0])
