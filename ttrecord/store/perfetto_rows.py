"""Narrow rows for the Perfetto export, already in the order it writes them (`export/perfetto`).

A million-event session is read in a few streamed passes: calls as slices by track and start
(or per track in seq order when time strictly increases, so no sort of a million wide rows),
replays with the end of their last child, instants and live-bytes points in time order. Every
call or instant row carries `COMMON` columns after its own (see `export.perfetto_rows.Encoder`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ttrecord.events import CALL_KINDS, Kind

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

HOST_PID = 1
DEVICE_PID_BASE = 100  # pid = DEVICE_PID_BASE + device id (viewers treat pid 0 specially)
HOST_TID = 1

# An event with a buffer (alloc, free) is drawn on its buffer's device.
_DEV = "CASE WHEN b.id IS NOT NULL THEN b.device ELSE e.device END"
PID = f"CASE WHEN {_DEV} IS NULL THEN {HOST_PID} ELSE {DEVICE_PID_BASE} + {_DEV} END"
TID = f"CASE WHEN {_DEV} IS NULL THEN {HOST_TID} ELSE coalesce(e.cq, 0) + 1 END"
FROM = "FROM events e LEFT JOIN buffers b ON b.id = e.buffer"
_CALLS = ", ".join(f"'{k}'" for k in sorted(CALL_KINDS))
REGIONS = f"'{Kind.REGION_BEGIN}', '{Kind.REGION_END}'"
_TENSORS = (
    "(SELECT json_group_array(json_array(t.role, t.pos, t.storage, t.shape, t.dtype, t.layout,"
    " t.buffer_type, t.address, t.size)) FROM tensors t WHERE t.seq = e.seq)"
)
# Columns every call or instant row carries after its own (see `Encoder.args`).
COMMON = (
    "e.seq, e.kind, e.name, e.phase, e.callsite, e.trace, e.parent, e.region, e.status,"
    f" e.error, e.args, {_TENSORS}"
)
_END = "coalesce(e.t_ns + e.dur_ns, max(:t_last, e.t_ns))"  # a call that never returned: to the end
CALL_SQL = (
    f"SELECT {PID} AS pid, {TID} AS tid, e.t_ns AS start, {_END} AS stop, e.dur_ns IS NULL,"
    f" {COMMON} {FROM} WHERE e.kind IN ({_CALLS})"
)
CALL_ORDER = " ORDER BY pid, tid, start, -stop, e.seq"
# When time strictly increases along seq, a track's calls are already in slice order: one
# pass per track in seq order (the primary key), no sort of a million wide rows.
TRACK_CALLS = f" AND {PID} = :pid AND {TID} = :tid ORDER BY e.seq"
# A replay encloses its execute_trace call and every event recorded as its child.
REPLAY_SQL = (
    "SELECT pid, tid, t, CASE WHEN raw IS NULL THEN max(:t_last, t) ELSE raw END AS stop,"
    " raw IS NULL, seq, trace FROM ("
    f"SELECT {PID} AS pid, {TID} AS tid, e.t_ns AS t, e.seq AS seq, e.trace AS trace,"
    " CASE WHEN child IS NULL THEN e.t_ns + e.dur_ns WHEN e.dur_ns IS NULL THEN max(0, child)"
    " ELSE max(e.t_ns + e.dur_ns, child) END AS raw FROM (SELECT e.*, (SELECT"
    " max(c.t_ns + coalesce(c.dur_ns, 0)) FROM events c WHERE c.parent = e.seq AND c.seq > e.seq)"
    f" AS child FROM events e WHERE e.kind = '{Kind.TRACE_EXECUTE}') e"
    " LEFT JOIN buffers b ON b.id = e.buffer) ORDER BY pid, tid, t, -stop, seq"
)
INSTANT_SQL = (
    f"SELECT e.t_ns, {PID}, {TID}, b.buffer_type, b.address, b.size, b.id IS NOT NULL,"
    f" {COMMON} {FROM} WHERE e.kind NOT IN ({_CALLS}, {REGIONS})"
)
# Where live bytes change: each allocation and free, at the first event from its seq on.
POINTS_SQL = (
    "SELECT p.delta, p.device, p.btype, e.seq, e.t_ns FROM (SELECT seq, delta, device, btype,"
    " (SELECT seq FROM events WHERE seq >= p.seq ORDER BY seq LIMIT 1) AS at FROM ("
    "SELECT alloc_seq AS seq, size AS delta, device, buffer_type AS btype FROM buffers UNION ALL"
    " SELECT free_seq, -size, device, buffer_type FROM buffers WHERE free_seq IS NOT NULL) p) p"
    " JOIN events e ON e.seq = p.at ORDER BY p.seq"
)
AT_SQL = (
    f"SELECT e.seq, e.t_ns, coalesce(e.t_ns + e.dur_ns, e.t_ns), {PID}, {TID} {FROM}"
    " WHERE e.seq IN (SELECT value FROM json_each(?))"
)

_TRACKS = f"SELECT DISTINCT {PID}, {TID} {FROM}"
_REGION_SQL = (
    f"SELECT e.seq, e.kind, e.name, e.region, e.args, e.t_ns, e.dur_ns, {PID}, {TID}"
    f" {FROM} WHERE e.kind IN ({REGIONS}) ORDER BY e.seq"
)


def first_t_ns(session: Session) -> int | None:
    """The first event's time, the export's time origin."""
    rows = session.query("SELECT t_ns FROM events ORDER BY seq LIMIT 1")
    return rows[0][0] if rows else None


def time_order(session: Session) -> tuple[int, int, int]:
    """(the session's last time, how often time goes back along seq, how often it stands
    still): whether seq order already is time order."""
    (last, backwards, ties), = session.query(
        "SELECT max(0, coalesce(max(t_ns + coalesce(dur_ns, 0)), 0)), coalesce(sum(back), 0),"
        " coalesce(sum(tie), 0) FROM (SELECT t_ns, dur_ns, t_ns < lag(t_ns) OVER w AS back,"
        " t_ns = lag(t_ns) OVER w AS tie FROM events WINDOW w AS (ORDER BY seq))"
    )  # fmt: skip
    return last, backwards, ties


def tracks(session: Session) -> set[tuple[int, int]]:
    """Every (pid, tid) an event is drawn on."""
    return {(pid, tid) for pid, tid in session.query(_TRACKS)}


def event_points(session: Session, seqs: Iterable[int]) -> list[tuple[int, int, int, int, int]]:
    """(seq, start, end, pid, tid) of these events."""
    return session.query(AT_SQL, (json.dumps(sorted(seqs)),))


def region_rows(session: Session) -> list[tuple]:
    """(seq, kind, name, region, args, t_ns, dur_ns, pid, tid) of the audit-region marks."""
    return session.query(_REGION_SQL)


def call_rows(session: Session, t_last: int,
              track: tuple[int, int] | None = None) -> Iterator[tuple[Any, ...]]:  # fmt: skip
    """(pid, tid, start, stop, unfinished, *COMMON) of every call: of one track in seq order,
    or of all tracks in slice order (track, start, longest first)."""
    if track is not None:
        return session.query_iter(CALL_SQL + TRACK_CALLS,
                                  {"t_last": t_last, "pid": track[0], "tid": track[1]})  # fmt: skip
    return session.query_iter(CALL_SQL + CALL_ORDER, {"t_last": t_last})


def replay_rows(session: Session, t_last: int) -> Iterator[tuple[Any, ...]]:
    """(pid, tid, start, stop, unfinished, seq, trace) of every replay, in slice order."""
    return session.query_iter(REPLAY_SQL, {"t_last": t_last})


def instant_rows(session: Session, in_seq_order: bool) -> Iterator[tuple[Any, ...]]:
    """(t_ns, pid, tid, buffer type, address, size, has buffer, *COMMON) of every event that
    is not a call, in time order (seq order when time never goes back: no sort)."""
    order = " ORDER BY e.seq" if in_seq_order else " ORDER BY e.t_ns, e.seq"
    return session.query_iter(INSTANT_SQL + order)


def live_points(session: Session) -> Iterator[tuple[int, int, str, int, int]]:
    """(bytes added or removed, device, buffer type, seq, t_ns) at each allocation and free."""
    return session.query_iter(POINTS_SQL)
