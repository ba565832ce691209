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
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ttrecord.events import CALL_KINDS, Event, Kind, Status, TensorRef
from ttrecord.export import ExportSummary
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


def track_of(device: int | None, cq: int | None) -> Track:
    """The (pid, tid) a call on this device and command queue is drawn on."""
    if device is None:
        return (HOST_PID, HOST_TID)
    return (DEVICE_PID_BASE + device, (cq or 0) + 1)


@dataclass
class _Slice:
    track: Track
    start: int  # ns
    end: int | None  # ns; None until the session's last time is known
    name: str
    cat: str
    args: dict[str, Any]
    enclosing: bool = False  # captures/replays sort before the calls they contain


@dataclass
class _Trace:
    """Everything gathered in one pass over the events."""

    t0: int | None = None
    t_last: int = 0
    slices: list[_Slice] = field(default_factory=list)
    instants: list[dict[str, Any]] = field(default_factory=list)
    counters: list[dict[str, Any]] = field(default_factory=list)
    tracks: set[Track] = field(default_factory=set)
    seen: dict[int, tuple[int, int, Track]] = field(default_factory=dict)  # seq -> start, end, track
    replays: dict[int, _Slice] = field(default_factory=dict)  # execute seq -> enclosing slice


def _tensor_text(ref: TensorRef) -> str:
    shape = "x".join(str(d) for d in ref.shape) or "scalar"
    meta = " ".join(p for p in (shape, ref.dtype, ref.layout) if p)
    buf = ref.buffer
    if buf is None:
        return f"{ref.storage} {meta}"
    return f"{buf.buffer_type}@{buf.address:#x} {buf.size}B/bank {meta}"


def _call_args(ev: Event) -> dict[str, Any]:
    args: dict[str, Any] = {"seq": ev.seq, "kind": str(ev.kind), "phase": str(ev.phase)}
    if ev.callsite is not None:
        site = ev.callsite
        args["callsite"] = f"{site.file}:{site.line} ({site.function})"
    for key in ("trace", "parent", "region"):
        value = getattr(ev, key)
        if value is not None:
            args[key] = value
    if ev.status is not Status.OK:
        args["status"] = str(ev.status)
    if ev.error:
        args["error"] = ev.error
    if ev.args:
        args["args"] = ev.args
    if ev.inputs:
        args["inputs"] = [_tensor_text(t) for t in ev.inputs]
    if ev.outputs:
        args["outputs"] = [_tensor_text(t) for t in ev.outputs]
    return args


def _event_track(ev: Event) -> Track:
    if ev.buffer is not None:
        return track_of(ev.buffer.device, ev.cq)
    return track_of(ev.device, ev.cq)


class _Builder:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.out = _Trace()
        self.traces = session.traces()
        self.findings = session.findings()
        needed = {t.begin_seq for t in self.traces} | {t.end_seq for t in self.traces}
        needed |= {f.events[0] for f in self.findings if f.events}
        self.needed = {s for s in needed if s is not None}
        # Buffer lifetimes as the writer paired them (including frees it inferred).
        points: list[tuple[int, int, int, str]] = []
        for row in session.buffers():
            buf = row.buffer
            points.append((row.alloc_seq, buf.size, buf.device, buf.buffer_type))
            if row.free_seq is not None:
                points.append((row.free_seq, -buf.size, buf.device, buf.buffer_type))
        points.sort(key=lambda p: p[0])
        self.points = points
        self.next_point = 0
        self.live: dict[int, dict[str, int]] = defaultdict(dict)
        self.regions: dict[str, list[tuple[int, Track]]] = defaultdict(list)

    def run(self) -> _Trace:
        for ev in self.session.iter_events():
            self._event(ev)
        self._enclosing_captures()
        self._close_open_regions()
        self._findings()
        return self.out

    def _event(self, ev: Event) -> None:
        out = self.out
        if out.t0 is None:
            out.t0 = ev.t_ns
        track = _event_track(ev)
        out.tracks.add(track)
        end = ev.t_ns + ev.dur_ns if ev.dur_ns is not None else ev.t_ns
        out.t_last = max(out.t_last, end)
        if ev.seq in self.needed:
            out.seen[ev.seq] = (ev.t_ns, end, track)
        self._counters(ev)
        if ev.parent is not None and ev.parent in out.replays:
            replay = out.replays[ev.parent]
            replay.end = max(replay.end or 0, end)
        if ev.kind in CALL_KINDS:
            dur_end = end if ev.dur_ns is not None else None  # a call that never returned
            out.slices.append(_Slice(track, ev.t_ns, dur_end, ev.name, f"{ev.kind},{ev.phase}",
                                     _call_args(ev)))  # fmt: skip
            if ev.kind is Kind.TRACE_EXECUTE:
                replay = _Slice(track, ev.t_ns, dur_end, f"replay trace {ev.trace}", "replay",
                                {"trace": ev.trace, "execute_seq": ev.seq}, enclosing=True)  # fmt: skip
                out.replays[ev.seq] = replay
                out.slices.append(replay)
        elif ev.kind in (Kind.REGION_BEGIN, Kind.REGION_END):
            self._region(ev, track)
        else:
            self._instant(ev, track)

    def _instant(self, ev: Event, track: Track) -> None:
        args = _call_args(ev)
        name = ev.name
        if ev.buffer is not None:
            buf = ev.buffer
            args.update(buffer_type=buf.buffer_type, address=buf.address, size_per_bank=buf.size)
            name = f"{ev.kind} {buf.buffer_type} {buf.size}B @ {buf.address:#x}"
        self.out.instants.append(
            {"name": name, "cat": str(ev.kind), "ph": "i", "s": "t", "ts": ev.t_ns,
             "pid": track[0], "tid": track[1], "args": args}
        )  # fmt: skip

    def _counters(self, ev: Event) -> None:
        changed: set[int] = set()
        while self.next_point < len(self.points) and self.points[self.next_point][0] <= ev.seq:
            _, delta, device, btype = self.points[self.next_point]
            live = self.live[device]
            live[btype] = live.get(btype, 0) + delta
            changed.add(device)
            self.next_point += 1
        for device in sorted(changed):
            pid = track_of(device, 0)[0]
            self.out.counters.append(
                {"name": COUNTER_NAME, "ph": "C", "ts": ev.t_ns, "pid": pid,
                 "args": dict(sorted(self.live[device].items()))}
            )  # fmt: skip

    def _region(self, ev: Event, track: Track) -> None:
        region = (ev.args or {}).get("region") or ev.region or ev.name
        if ev.kind is Kind.REGION_BEGIN:
            self.regions[region].append((ev.t_ns, track))
            return
        if self.regions[region]:
            start, begin_track = self.regions[region].pop()
            end = ev.t_ns + (ev.dur_ns or 0)
            self.out.slices.append(_Slice(begin_track, start, end, f"audit region {region}",
                                          "region", {"region": region}, enclosing=True))  # fmt: skip

    def _close_open_regions(self) -> None:
        for region, opened in self.regions.items():
            for start, track in opened:
                self.out.slices.append(_Slice(track, start, None, f"audit region {region}",
                                              "region", {"region": region, "unterminated": True},
                                              enclosing=True))  # fmt: skip

    def _enclosing_captures(self) -> None:
        for t in self.traces:
            if t.begin_seq not in self.out.seen:
                continue
            start, _, track = self.out.seen[t.begin_seq]
            end = self.out.seen[t.end_seq][1] if t.end_seq in self.out.seen else None
            args = {"trace": t.trace_id, "ops": t.ops, "executions": t.executions,
                    "begin_seq": t.begin_seq, "end_seq": t.end_seq, "release_seq": t.release_seq}  # fmt: skip
            if end is None:
                args["unterminated"] = True
            self.out.slices.append(_Slice(track, start, end, f"capture trace {t.trace_id}",
                                          "capture", args, enclosing=True))  # fmt: skip

    def _findings(self) -> None:
        for f in self.findings:
            culprit = self.out.seen.get(f.events[0]) if f.events else None
            t, _, track = culprit if culprit else (self.out.t0 or 0, 0, (HOST_PID, HOST_TID))
            where = f"{f.file}:{f.line}" if f.file else None
            args: dict[str, Any] = {"rule": f.rule, "severity": str(f.severity),
                                    "message": f.message, "fix": f.fix, "events": f.events}  # fmt: skip
            if where:
                args["where"] = where
            if f.evidence:
                args["evidence"] = f.evidence
            self.out.instants.append(
                {"name": f"{f.rule} {f.title}", "cat": f"finding,{f.severity}", "ph": "i",
                 "s": "t" if culprit else "g", "ts": t, "pid": track[0], "tid": track[1],
                 "cname": _CNAME.get(str(f.severity), "generic_work"), "args": args}
            )  # fmt: skip


def _nest(slices: list[_Slice], t_last: int) -> list[_Slice]:
    """Order each track's slices parent-first and clip any child that outlives its parent."""
    by_track: dict[Track, list[_Slice]] = defaultdict(list)
    for s in slices:
        if s.end is None:
            s.end = max(t_last, s.start)
            s.args.setdefault("unfinished", True)
        by_track[s.track].append(s)
    ordered: list[_Slice] = []
    for track in sorted(by_track):
        items = sorted(by_track[track], key=lambda s: (s.start, -s.end, not s.enclosing))
        open_ends: list[int] = []
        for s in items:
            while open_ends and open_ends[-1] <= s.start:
                open_ends.pop()
            if open_ends and s.end > open_ends[-1]:
                s.args["clipped_from_ns"] = s.end - s.start
                s.end = open_ends[-1]
            open_ends.append(s.end)
            ordered.append(s)
    return ordered


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


def build(session: Session) -> dict[str, Any]:
    """The whole trace as a JSON-ready dict: {"traceEvents": [...], "otherData": {...}}."""
    raw = _Builder(session).run()
    t0 = raw.t0 or 0

    def us(t_ns: int) -> float:
        return (t_ns - t0) / 1000

    events = _metadata(session, raw.tracks)
    for s in _nest(raw.slices, raw.t_last):
        events.append({"name": s.name, "cat": s.cat, "ph": "X", "ts": us(s.start),
                       "dur": (s.end - s.start) / 1000, "pid": s.track[0], "tid": s.track[1],
                       "args": s.args})  # fmt: skip
    for item in sorted(raw.instants + raw.counters, key=lambda e: e["ts"]):
        events.append({**item, "ts": us(item["ts"])})
    info = session.info()
    other = {"ttrecord_session": info.id, "script": info.script, "backend": info.backend,
             "status": info.status, "first_event_t_ns": t0}  # fmt: skip
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}


def export(session: Session, out: str | os.PathLike[str]) -> ExportSummary:
    trace = build(session)
    path = Path(out)
    with path.open("w") as fh:
        json.dump(trace, fh, separators=(",", ":"), default=str)
    phases = defaultdict(int)
    for ev in trace["traceEvents"]:
        phases[ev["ph"]] += 1
    return ExportSummary(
        str(path),
        {"slices": phases["X"], "instants": phases["i"], "counter samples": phases["C"]},
    )
