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
disk), the few enclosing slices (captures, audit regions) are merged in, and each event is
written as JSON text from pieces encoded once (`perfetto_rows`). Memory stays flat whatever
the session's size; the bytes are those a whole-document `json.dump` would write.
"""

from __future__ import annotations

import gc
import heapq
import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from ttrecord.analysis.check import findings_for
from ttrecord.events import Kind
from ttrecord.export import ExportSummary
from ttrecord.store.perfetto_rows import DEVICE_PID_BASE, HOST_PID, HOST_TID
from ttrecord.export.perfetto_rows import (
    Encoder,
    fields,
    instant_text,
    number,
    slice_text,
    value,
)
from ttrecord.store import perfetto_rows as rows
from ttrecord.store.reader import Session

DESCRIPTION = "Chrome trace-event JSON for ui.perfetto.dev: a track per device and command queue"
OUTPUT = "file"
DEFAULT_SUFFIX = ".trace.json"

COUNTER_NAME = "live bytes per bank"
_CNAME = {"error": "terrible", "warning": "bad", "info": "generic_work"}
_CHUNK = 4096  # events per write

Track = tuple[int, int]  # (pid, tid)
Progress = Callable[[int], None]  # called with the number of events just written
# A slice until it is placed: [track, start ns, end ns, name JSON, cat JSON, args members].
_Slice = list


def track_of(device: int | None, cq: int | None) -> Track:
    """The (pid, tid) a call on this device and command queue is drawn on."""
    if device is None:
        return (HOST_PID, HOST_TID)
    return (DEVICE_PID_BASE + device, (cq or 0) + 1)


class _Layout:
    """What the streams share: the time origin, the session's end, the enclosing slices."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.encoder = Encoder(session.callsites())
        self.t0 = rows.first_t_ns(session)
        last, backwards, ties = rows.time_order(session)
        self.t_last = last
        self.in_order = backwards == 0  # time never goes back along seq (one clock, one thread)
        self.increasing = self.in_order and ties == 0  # and no two events at the same time
        self.tracks = rows.tracks(session)
        self.traces = session.traces()
        self.findings = findings_for(session, store=False).findings  # a never-checked session's too
        needed = {t.begin_seq for t in self.traces} | {t.end_seq for t in self.traces}
        needed |= {f.events[0] for f in self.findings if f.events}
        self.seen: dict[int, tuple[int, int, Track]] = {
            seq: (t, end, (pid, tid))
            for seq, t, end, pid, tid in rows.event_points(session, (s for s in needed if s is not None))
        }
        self.counts: Counter[str] = Counter()  # events written per phase ("X", "i", "C")

    def enclosing(self) -> list[tuple[tuple, _Slice]]:
        """Captures and audit regions as (sort key, slice) pairs."""
        out: list[tuple[tuple, _Slice]] = []
        regions: dict[str, list[tuple[int, Track]]] = defaultdict(list)
        for seq, kind, name, region_col, args, t_ns, dur_ns, pid, tid in rows.region_rows(self.session):
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
               args: dict[str, Any], order: tuple) -> tuple[tuple, _Slice]:  # fmt: skip
        if end is None:
            end = max(self.t_last, start)
            args.setdefault("unfinished", True)
        item = [track, start, end, json.dumps(name), json.dumps(cat), fields(args)]
        return (track, start, -end, False, order), item


def _slices(layout: _Layout) -> Iterator[str]:
    """Every slice, track by track, parents before children, clipped to their parents."""
    session, t_last, enc = layout.session, layout.t_last, layout.encoder

    def calls() -> Iterator[tuple[tuple, _Slice]]:
        tracks: list[Track | None] = [*sorted(layout.tracks)] if layout.increasing else [None]
        string = enc.string
        for one in tracks:
            for row in rows.call_rows(session, t_last, one):
                pid, tid, start, end, unfinished = row[:5]
                args = enc.args(row, 5)
                if unfinished:
                    args.append('"unfinished":true')
                track = (pid, tid)
                yield (track, start, -end, True, (0, row[5], 0)), [
                    track, start, end, string(row[7]), string(f"{row[6]},{row[8]}"), args
                ]  # fmt: skip

    def replays() -> Iterator[tuple[tuple, _Slice]]:
        for pid, tid, start, end, unfinished, seq, trace in rows.replay_rows(session, t_last):
            args = [f'"trace":{value(trace)}', f'"execute_seq":{seq}']
            if unfinished:
                args.append('"unfinished":true')
            track = (pid, tid)
            yield (track, start, -end, False, (0, seq, 1)), [
                track, start, end, json.dumps(f"replay trace {trace}"), '"replay"', args
            ]  # fmt: skip

    t0 = layout.t0 or 0
    track: Track | None = None
    open_ends: list[int] = []
    n = 0
    for _, (this, start, end, name, cat, args) in heapq.merge(calls(), replays(),
                                                             layout.enclosing()):  # fmt: skip
        if this != track:  # keys are unique, so the merge never compares the slices
            track, open_ends = this, []
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        if open_ends and end > open_ends[-1]:
            args.append(f'"clipped_from_ns":{end - start}')
            end = open_ends[-1]
        open_ends.append(end)
        n += 1
        yield slice_text(name, cat, (start - t0) / 1000, (end - start) / 1000, this[0], this[1],
                         args)  # fmt: skip
    layout.counts["X"] += n


def _instants(layout: _Layout) -> Iterator[tuple[tuple, str]]:
    enc = layout.encoder
    string = enc.string
    t0 = layout.t0 or 0
    # In time order: seq order already is when time never goes back (no sort).
    n = 0
    for row in rows.instant_rows(layout.session, layout.in_order):
        t_ns, pid, tid, btype, address, size, has_buffer = row[:7]
        args = enc.args(row, 7)
        if has_buffer:
            kind_of = string(btype) if isinstance(btype, str) else value(btype)
            args.append(f'"buffer_type":{kind_of},"address":{number(address)},'
                        f'"size_per_bank":{number(size)}')  # fmt: skip
            name = string(f"{row[8]} {btype} {size}B @ {address:#x}")  # loops reuse addresses
        else:
            name = string(row[9])
        n += 1
        yield (t_ns, 0, row[7]), instant_text(name, string(row[8]), (t_ns - t0) / 1000, pid, tid,
                                              args)  # fmt: skip
    layout.counts["i"] += n


def _findings(layout: _Layout) -> list[tuple[tuple, str]]:
    out = []
    t0 = layout.t0 or 0
    for i, f in enumerate(layout.findings):
        culprit = layout.seen.get(f.events[0]) if f.events else None
        t, _, track = culprit if culprit else (t0, 0, (HOST_PID, HOST_TID))
        args: dict[str, Any] = {"rule": f.rule, "severity": str(f.severity),
                                "message": f.message, "fix": f.fix, "events": f.events}  # fmt: skip
        if f.file:
            args["where"] = f"{f.file}:{f.line}"
        if f.evidence:
            args["evidence"] = f.evidence
        out.append(((t, 1, i), value({
            "name": f"{f.rule} {f.title}", "cat": f"finding,{f.severity}", "ph": "i",
            "s": "t" if culprit else "g", "ts": (t - t0) / 1000, "pid": track[0], "tid": track[1],
            "cname": _CNAME.get(str(f.severity), "generic_work"), "args": args,
        })))  # fmt: skip
    layout.counts["i"] += len(out)
    return sorted(out, key=lambda pair: pair[0])


def _counters(layout: _Layout) -> Iterator[tuple[tuple, str]]:
    """Live bytes per bank and buffer type, per device, at each event that changed them
    (buffer lifetimes as the writer paired them, including frees it inferred)."""
    live: dict[int, dict[str, int]] = defaultdict(dict)
    changed: set[int] = set()
    at: int | None = None
    t_at = 0  # set with `at` before any use
    n = 0
    t0 = layout.t0 or 0
    string = layout.encoder.string

    def text(t_ns: int, device: int) -> str:
        counts = ",".join(f"{string(k)}:{v}" for k, v in sorted(live[device].items()))
        return (f'{{"name":"{COUNTER_NAME}","ph":"C","ts":{(t_ns - t0) / 1000!r},'
                f'"pid":{track_of(device, 0)[0]},"args":{{{counts}}}}}')  # fmt: skip

    for delta, device, btype, seq, t_ns in rows.live_points(layout.session):
        if seq != at and changed:
            for dev in sorted(changed):
                n += 1
                yield (t_at, 2, n), text(t_at, dev)
            changed.clear()
        at, t_at = seq, t_ns
        counts = live[device]
        counts[btype] = counts.get(btype, 0) + delta
        changed.add(device)
    for dev in sorted(changed):
        n += 1
        yield (t_at, 2, n), text(t_at, dev)
    layout.counts["C"] += n


def _metadata(session: Session, tracks: set[Track]) -> list[str]:
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
    return [value(ev) for ev in events]


def event_texts(layout: _Layout) -> Iterator[str]:
    """The JSON text of every trace event in file order: metadata, slices by track, then
    instants and counters by time (ties: event instants, findings, counters, each in
    recording order)."""
    yield from _metadata(layout.session, layout.tracks)
    yield from _slices(layout)
    counters = _counters(layout)
    if not layout.in_order:  # counters come in seq order; put them in time order
        counters = iter(sorted(counters, key=lambda pair: pair[0]))
    for _, text in heapq.merge(_instants(layout), _findings(layout), counters):  # unique keys
        yield text


def _other_data(session: Session, layout: _Layout) -> dict[str, Any]:
    info = session.info()
    return {"ttrecord_session": info.id, "script": info.script, "backend": info.backend,
            "status": info.status, "first_event_t_ns": layout.t0 or 0}  # fmt: skip


def build(session: Session) -> dict[str, Any]:
    """The whole trace as a JSON-ready dict: {"traceEvents": [...], "otherData": {...}}.
    For tests and small sessions; `export` streams the same text to a file."""
    layout = _Layout(session)
    events = json.loads("[" + ",".join(event_texts(layout)) + "]")
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": _other_data(session, layout)}


def export(session: Session, out: str | os.PathLike[str], progress: Progress | None = None) -> ExportSummary:
    path = Path(out)
    layout = _Layout(session)
    # Millions of short-lived objects, none cyclic: cyclic-GC passes over them cost an eighth
    # of the time and free nothing (reference counting frees each chunk).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with path.open("w") as fh:
            fh.write('{"traceEvents":[')
            texts = event_texts(layout)
            first = True
            while chunk := list(islice(texts, _CHUNK)):
                if not first:
                    fh.write(",")
                fh.write(",".join(chunk))
                first = False
                if progress is not None:
                    progress(len(chunk))
            other = value(_other_data(session, layout))
            fh.write(f'],"displayTimeUnit":"ns","otherData":{other}}}')
    except BaseException:  # a damaged session read half-way, Ctrl-C: no half-written trace
        path.unlink(missing_ok=True)
        raise
    finally:
        if was_enabled:
            gc.enable()
    counts = layout.counts
    return ExportSummary(
        str(path), {"slices": counts["X"], "instants": counts["i"], "counter samples": counts["C"]}
    )
