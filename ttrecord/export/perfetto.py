"""A session as Chrome trace-event JSON, the format ui.perfetto.dev (and chrome://tracing) opens.

Layout: one process per device and one thread per command queue, so each (device, cq) pair is
one track; calls with no device go to a "host" process. Calls are complete slices ("X"),
trace captures and replays are slices enclosing the calls they contain, allocations and frees
are instants ("i") with a "live bytes per bank" counter ("C") per buffer type next to them,
and findings are instants pinned to the event that caused them.

Perfetto draws a track as a stack of slices and drops a slice that partially overlaps its
parent, so slices are put in order and a child that would poke out of its parent (two Python
threads on one queue, clock jitter) is clipped to the parent's end and says so in its args.
Time is kept in integer nanoseconds until the last step, then written in microseconds from the
first event.

A long run has millions of events, so nothing is held per event: SQLite returns narrow rows
already in output order (slices by track and start, instants by time; its sorter spills to
disk), the few enclosing slices (captures, audit regions) are merged in, and the document is
written in chunks through the C JSON encoder (`jsonstream`). Memory stays flat whatever the
session's size; the bytes are those a whole-document `json.dump` would write.
"""

from __future__ import annotations

import gc
import heapq
import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import Any

from ttrecord.events import CALL_KINDS, Kind
from ttrecord.export import ExportSummary
from ttrecord.jsonstream import CHUNK, ArrayWriter
from ttrecord.store.reader import Session

DESCRIPTION = "Chrome trace-event JSON for ui.perfetto.dev: a track per device and command queue"
OUTPUT = "file"
DEFAULT_SUFFIX = ".trace.json"

HOST_PID = 1
DEVICE_PID_BASE = 100  # pid = DEVICE_PID_BASE + device id (viewers treat pid 0 specially)
HOST_TID = 1
COUNTER_NAME = "live bytes per bank"
_CNAME = {"error": "terrible", "warning": "bad", "info": "generic_work"}

Track = tuple[int, int]  # (pid, tid)
Progress = Callable[[int], None]  # called with the number of rows just written


def track_of(device: int | None, cq: int | None) -> Track:
    """The (pid, tid) a call on this device and command queue is drawn on."""
    if device is None:
        return (HOST_PID, HOST_TID)
    return (DEVICE_PID_BASE + device, (cq or 0) + 1)


# SQL pieces. An event with a buffer (alloc, free) is drawn on its buffer's device.
_DEV = "CASE WHEN b.id IS NOT NULL THEN b.device ELSE e.device END"
_PID = f"CASE WHEN {_DEV} IS NULL THEN {HOST_PID} ELSE {DEVICE_PID_BASE} + {_DEV} END"
_TID = f"CASE WHEN {_DEV} IS NULL THEN {HOST_TID} ELSE coalesce(e.cq, 0) + 1 END"
_FROM = "FROM events e LEFT JOIN buffers b ON b.id = e.buffer"
_CALLS = ", ".join(f"'{k}'" for k in sorted(CALL_KINDS))
_REGIONS = f"'{Kind.REGION_BEGIN}', '{Kind.REGION_END}'"
_TENSORS = (
    "(SELECT json_group_array(json_array(t.role, t.pos, t.storage, t.shape, t.dtype, t.layout,"
    " t.buffer_type, t.address, t.size)) FROM tensors t WHERE t.seq = e.seq)"
)
# Columns every call or instant row starts with (see `_Rows.args`).
_COMMON = (
    "e.seq, e.kind, e.name, e.phase, e.callsite, e.trace, e.parent, e.region, e.status,"
    f" e.error, e.args, {_TENSORS}"
)
_END = "coalesce(e.t_ns + e.dur_ns, max(:t_last, e.t_ns))"  # a call that never returned: to the end
_CALL_SQL = (
    f"SELECT {_PID} AS pid, {_TID} AS tid, e.t_ns AS start, {_END} AS stop, e.dur_ns IS NULL,"
    f" {_COMMON} {_FROM} WHERE e.kind IN ({_CALLS}) ORDER BY pid, tid, start, -stop, e.seq"
)
# A replay encloses its execute_trace call and every event recorded as its child.
_REPLAY_SQL = (
    "SELECT pid, tid, t, CASE WHEN raw IS NULL THEN max(:t_last, t) ELSE raw END AS stop,"
    " raw IS NULL, seq, trace FROM ("
    f"SELECT {_PID} AS pid, {_TID} AS tid, e.t_ns AS t, e.seq AS seq, e.trace AS trace,"
    " CASE WHEN child IS NULL THEN e.t_ns + e.dur_ns WHEN e.dur_ns IS NULL THEN max(0, child)"
    " ELSE max(e.t_ns + e.dur_ns, child) END AS raw FROM (SELECT e.*, (SELECT"
    " max(c.t_ns + coalesce(c.dur_ns, 0)) FROM events c WHERE c.parent = e.seq AND c.seq > e.seq)"
    f" AS child FROM events e WHERE e.kind = '{Kind.TRACE_EXECUTE}') e"
    " LEFT JOIN buffers b ON b.id = e.buffer) ORDER BY pid, tid, t, -stop, seq"
)
_INSTANT_SQL = (
    f"SELECT e.t_ns, {_PID}, {_TID}, b.buffer_type, b.address, b.size, b.id IS NOT NULL,"
    f" {_COMMON} {_FROM} WHERE e.kind NOT IN ({_CALLS}, {_REGIONS})"
)
# Where live bytes change: each allocation and free, at the first event from its seq on.
_POINTS_SQL = (
    "SELECT p.delta, p.device, p.btype, e.seq, e.t_ns FROM (SELECT seq, delta, device, btype,"
    " (SELECT seq FROM events WHERE seq >= p.seq ORDER BY seq LIMIT 1) AS at FROM ("
    "SELECT alloc_seq AS seq, size AS delta, device, buffer_type AS btype FROM buffers UNION ALL"
    " SELECT free_seq, -size, device, buffer_type FROM buffers WHERE free_seq IS NOT NULL) p) p"
    " JOIN events e ON e.seq = p.at ORDER BY p.seq"
)
_AT_SQL = (
    f"SELECT e.seq, e.t_ns, coalesce(e.t_ns + e.dur_ns, e.t_ns), {_PID}, {_TID} {_FROM}"
    " WHERE e.seq IN (SELECT value FROM json_each(?))"
)


class _Rows:
    """Turns narrow event rows into the args Perfetto shows, decoding repeated texts once."""

    _MAX_CACHE = 50_000  # distinct texts kept; a long run repeats a few thousand at most

    def __init__(self, session: Session) -> None:
        self.sites = {
            cid: f"{s.file}:{s.line} ({s.function})" for cid, s in session.callsites().items()
        }
        self._tensors: dict[str, tuple[list[str], list[str]]] = {}
        self._args: dict[str, Any] = {}

    def args(self, row: tuple, at: int) -> dict[str, Any]:
        """`_COMMON` columns starting at `at` as the args dict of a call or instant."""
        (seq, kind, _name, phase, site, trace, parent, region, status, error, args,
         tensors) = row[at : at + 12]  # fmt: skip
        out: dict[str, Any] = {"seq": seq, "kind": kind, "phase": phase}
        if site is not None and site in self.sites:
            out["callsite"] = self.sites[site]
        if trace is not None:
            out["trace"] = trace
        if parent is not None:
            out["parent"] = parent
        if region is not None:
            out["region"] = region
        if status != "ok":
            out["status"] = status
        if error:
            out["error"] = error
        if args:
            value = self._parsed(args)
            if value:
                out["args"] = value
        if tensors != "[]":
            ins, outs = self._tensor_texts(tensors)
            if ins:
                out["inputs"] = ins
            if outs:
                out["outputs"] = outs
        return out

    def _parsed(self, text: str) -> Any:
        value = self._args.get(text)
        if value is None:
            if len(self._args) > self._MAX_CACHE:
                self._args.clear()
            value = self._args[text] = json.loads(text)
        return value

    def _tensor_texts(self, text: str) -> tuple[list[str], list[str]]:
        found = self._tensors.get(text)
        if found is None:
            if len(self._tensors) > self._MAX_CACHE:
                self._tensors.clear()
            ins: list[str] = []
            outs: list[str] = []
            for role, _pos, storage, shape, dtype, layout, btype, addr, size in sorted(
                json.loads(text), key=lambda r: (r[0], r[1])
            ):
                dims = "x".join(str(d) for d in json.loads(shape)) if shape else ""
                meta = " ".join(p for p in (dims or "scalar", dtype, layout) if p)
                if addr is None or btype is None:
                    desc = f"{storage} {meta}"
                else:
                    desc = f"{btype}@{addr:#x} {size}B/bank {meta}"
                (ins if role == "in" else outs).append(desc)
            found = self._tensors[text] = (ins, outs)
        return list(found[0]), list(found[1])


class _Layout:
    """What the streams share: the time origin, the session's end, the enclosing slices."""

    def __init__(self, session: Session) -> None:
        self.session = session
        first = session.query("SELECT t_ns FROM events ORDER BY seq LIMIT 1")
        self.t0 = first[0][0] if first else None
        (last, backwards), = session.query(
            "SELECT max(0, coalesce(max(t_ns + coalesce(dur_ns, 0)), 0)), coalesce(sum(back), 0)"
            " FROM (SELECT t_ns, dur_ns, t_ns < lag(t_ns) OVER (ORDER BY seq) AS back FROM events)"
        )  # fmt: skip
        self.t_last = last
        self.in_order = backwards == 0  # time never goes back along seq (one clock, one thread)
        self.tracks = {
            (pid, tid)
            for pid, tid in session.query(f"SELECT DISTINCT {_PID}, {_TID} {_FROM}")
        }
        self.traces = session.traces()
        self.findings = session.findings()
        needed = {t.begin_seq for t in self.traces} | {t.end_seq for t in self.traces}
        needed |= {f.events[0] for f in self.findings if f.events}
        self.seen: dict[int, tuple[int, int, Track]] = {
            seq: (t, end, (pid, tid))
            for seq, t, end, pid, tid in session.query(
                _AT_SQL, (json.dumps(sorted(s for s in needed if s is not None)),)
            )
        }

    def enclosing(self) -> list[tuple[tuple, dict[str, Any]]]:
        """Captures and audit regions as (sort key, slice) pairs; `end` None until the end."""
        out: list[tuple[tuple, dict[str, Any]]] = []
        regions: dict[str, list[tuple[int, Track]]] = defaultdict(list)
        for seq, kind, name, region_col, args, t_ns, dur_ns, pid, tid in self.session.query(
            f"SELECT e.seq, e.kind, e.name, e.region, e.args, e.t_ns, e.dur_ns, {_PID}, {_TID}"
            f" {_FROM} WHERE e.kind IN ({_REGIONS}) ORDER BY e.seq"
        ):
            parsed = json.loads(args) if args else None
            region = (parsed or {}).get("region") or region_col or name
            if kind == Kind.REGION_BEGIN:
                regions[region].append((t_ns, (pid, tid)))
            elif regions[region]:
                start, track = regions[region].pop()
                out.append(self._slice(track, start, t_ns + (dur_ns or 0), f"audit region {region}",
                                       "region", {"region": region}, (0, seq, 0)))  # fmt: skip
        for i, t in enumerate(self.traces):
            if t.begin_seq not in self.seen:
                continue
            start, _, track = self.seen[t.begin_seq]
            end = self.seen[t.end_seq][1] if t.end_seq in self.seen else None
            args = {"trace": t.trace_id, "ops": t.ops, "executions": t.executions,
                    "begin_seq": t.begin_seq, "end_seq": t.end_seq, "release_seq": t.release_seq}  # fmt: skip
            if end is None:
                args["unterminated"] = True
            out.append(self._slice(track, start, end, f"capture trace {t.trace_id}", "capture",
                                   args, (1, i)))  # fmt: skip
        k = 0
        for region, opened in regions.items():
            for start, track in opened:
                out.append(self._slice(track, start, None, f"audit region {region}", "region",
                                       {"region": region, "unterminated": True}, (2, k)))  # fmt: skip
                k += 1
        return sorted(out, key=lambda pair: pair[0])

    def _slice(self, track: Track, start: int, end: int | None, name: str, cat: str,
               args: dict[str, Any], order: tuple) -> tuple[tuple, dict[str, Any]]:  # fmt: skip
        if end is None:
            end = max(self.t_last, start)
            args.setdefault("unfinished", True)
        item = {"track": track, "start": start, "end": end, "name": name, "cat": cat, "args": args}
        return (track, start, -end, False, order), item


def _slices(layout: _Layout, rows: _Rows) -> Iterator[dict[str, Any]]:
    """Every slice, track by track, parents before children, clipped to their parents."""
    session, t_last = layout.session, layout.t_last

    def calls() -> Iterator[tuple[tuple, dict[str, Any]]]:
        for row in session.query_iter(_CALL_SQL, {"t_last": t_last}):
            pid, tid, start, end, unfinished = row[:5]
            args = rows.args(row, 5)
            if unfinished:
                args["unfinished"] = True
            yield ((pid, tid), start, -end, True, (0, row[5], 0)), {
                "track": (pid, tid), "start": start, "end": end, "name": row[7],
                "cat": f"{row[6]},{row[8]}", "args": args,
            }  # fmt: skip

    def replays() -> Iterator[tuple[tuple, dict[str, Any]]]:
        for pid, tid, start, end, unfinished, seq, trace in session.query_iter(
            _REPLAY_SQL, {"t_last": t_last}
        ):
            args: dict[str, Any] = {"trace": trace, "execute_seq": seq}
            if unfinished:
                args["unfinished"] = True
            yield ((pid, tid), start, -end, False, (0, seq, 1)), {
                "track": (pid, tid), "start": start, "end": end, "name": f"replay trace {trace}",
                "cat": "replay", "args": args,
            }  # fmt: skip

    track: Track | None = None
    open_ends: list[int] = []
    for _, s in heapq.merge(calls(), replays(), layout.enclosing()):  # keys are unique
        if s["track"] != track:
            track, open_ends = s["track"], []
        start, end = s["start"], s["end"]
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        if open_ends and end > open_ends[-1]:
            s["args"]["clipped_from_ns"] = end - start
            end = open_ends[-1]
        open_ends.append(end)
        yield {"name": s["name"], "cat": s["cat"], "ph": "X", "ts": start, "dur": end - start,
               "pid": track[0], "tid": track[1], "args": s["args"]}  # fmt: skip


def _instants(layout: _Layout, rows: _Rows) -> Iterator[tuple[tuple, dict[str, Any]]]:
    # In time order: seq order already is when time never goes back (no sort).
    order = " ORDER BY e.seq" if layout.in_order else " ORDER BY e.t_ns, e.seq"
    for row in layout.session.query_iter(_INSTANT_SQL + order):
        t_ns, pid, tid, btype, address, size, has_buffer = row[:7]
        args = rows.args(row, 7)
        name = row[9]
        if has_buffer:
            args.update(buffer_type=btype, address=address, size_per_bank=size)
            name = f"{row[8]} {btype} {size}B @ {address:#x}"
        yield (t_ns, 0, row[7]), {"name": name, "cat": row[8], "ph": "i", "s": "t", "ts": t_ns,
                                  "pid": pid, "tid": tid, "args": args}  # fmt: skip


def _findings(layout: _Layout) -> list[tuple[tuple, dict[str, Any]]]:
    out = []
    for i, f in enumerate(layout.findings):
        culprit = layout.seen.get(f.events[0]) if f.events else None
        t, _, track = culprit if culprit else (layout.t0 or 0, 0, (HOST_PID, HOST_TID))
        args: dict[str, Any] = {"rule": f.rule, "severity": str(f.severity),
                                "message": f.message, "fix": f.fix, "events": f.events}  # fmt: skip
        if f.file:
            args["where"] = f"{f.file}:{f.line}"
        if f.evidence:
            args["evidence"] = f.evidence
        out.append(((t, 1, i), {
            "name": f"{f.rule} {f.title}", "cat": f"finding,{f.severity}", "ph": "i",
            "s": "t" if culprit else "g", "ts": t, "pid": track[0], "tid": track[1],
            "cname": _CNAME.get(str(f.severity), "generic_work"), "args": args,
        }))  # fmt: skip
    return sorted(out, key=lambda pair: pair[0])


def _counters(layout: _Layout) -> Iterator[tuple[tuple, dict[str, Any]]]:
    """Live bytes per bank and buffer type, per device, at each event that changed them
    (buffer lifetimes as the writer paired them, including frees it inferred)."""
    live: dict[int, dict[str, int]] = defaultdict(dict)
    changed: set[int] = set()
    at = t_at = None
    n = 0
    for delta, device, btype, seq, t_ns in layout.session.query_iter(_POINTS_SQL):
        if seq != at and changed:
            for dev in sorted(changed):
                n += 1
                yield (t_at, 2, n), _counter(t_at, dev, live[dev])
            changed.clear()
        at, t_at = seq, t_ns
        counts = live[device]
        counts[btype] = counts.get(btype, 0) + delta
        changed.add(device)
    for dev in sorted(changed):
        n += 1
        yield (t_at, 2, n), _counter(t_at, dev, live[dev])


def _counter(t_ns: int, device: int, live: dict[str, int]) -> dict[str, Any]:
    return {"name": COUNTER_NAME, "ph": "C", "ts": t_ns, "pid": track_of(device, 0)[0],
            "args": dict(sorted(live.items()))}  # fmt: skip


def _metadata(session: Session, tracks: set[Track]) -> list[dict[str, Any]]:
    arch = {d.id: d.arch for d in session.devices()}
    events: list[dict[str, Any]] = []
    for pid in sorted({p for p, _ in tracks}):
        if pid == HOST_PID:
            name, order = "host (Python)", 0
        else:
            device = pid - DEVICE_PID_BASE
            name = f"device {device}" + (f" ({arch[device]})" if arch.get(device) else "")
            order = 1 + device
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                       "args": {"sort_index": order}})  # fmt: skip
    for pid, tid in sorted(tracks):
        name = "Python" if pid == HOST_PID else f"CQ {tid - 1}"
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                       "args": {"name": name}})  # fmt: skip
    return events


def trace_events(session: Session, layout: _Layout | None = None) -> Iterator[dict[str, Any]]:
    """Every trace event in file order: metadata, slices by track, then instants and counters
    by time (ties: event instants, findings, counters, each in recording order)."""
    layout = layout or _Layout(session)
    rows = _Rows(session)
    t0 = layout.t0 or 0
    yield from _metadata(session, layout.tracks)
    for s in _slices(layout, rows):
        s["ts"] = (s["ts"] - t0) / 1000
        s["dur"] = s["dur"] / 1000
        yield s
    counters = _counters(layout)
    if not layout.in_order:  # counters come in seq order; put them in time order
        counters = iter(sorted(counters, key=lambda pair: pair[0]))
    stream = heapq.merge(_instants(layout, rows), _findings(layout), counters)  # unique keys
    for _, item in stream:
        item["ts"] = (item["ts"] - t0) / 1000
        yield item


def _other_data(session: Session, layout: _Layout) -> dict[str, Any]:
    info = session.info()
    return {"ttrecord_session": info.id, "script": info.script, "backend": info.backend,
            "status": info.status, "first_event_t_ns": layout.t0 or 0}  # fmt: skip


def build(session: Session) -> dict[str, Any]:
    """The whole trace as a JSON-ready dict: {"traceEvents": [...], "otherData": {...}}.
    For tests and small sessions; `export` streams the same events to a file."""
    layout = _Layout(session)
    events = list(trace_events(session, layout))
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": _other_data(session, layout)}


def export(session: Session, out: str | os.PathLike[str], progress: Progress | None = None) -> ExportSummary:
    path = Path(out)
    layout = _Layout(session)
    phases: Counter[str] = Counter()
    # Millions of short-lived acyclic dicts: cyclic-GC passes over them cost an eighth of the
    # time and free nothing (reference counting frees each chunk).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _write(session, layout, path, phases, progress)
    finally:
        if was_enabled:
            gc.enable()
    return ExportSummary(
        str(path),
        {"slices": phases["X"], "instants": phases["i"], "counter samples": phases["C"]},
    )


def _write(session: Session, layout: _Layout, path: Path, phases: Counter[str],
           progress: Progress | None) -> None:  # fmt: skip
    with path.open("w") as fh:
        fh.write('{"traceEvents":')
        writer = ArrayWriter(fh, separators=(",", ":"), default=str)
        events = trace_events(session, layout)
        while chunk := list(islice(events, CHUNK)):
            phases.update(map(itemgetter("ph"), chunk))
            writer.extend(chunk)
            if progress is not None:
                progress(len(chunk))
        writer.close()
        other = json.dumps(_other_data(session, layout), separators=(",", ":"), default=str)
        fh.write(f',"displayTimeUnit":"ns","otherData":{other}}}')
