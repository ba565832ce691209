"""A sample program as a SessionBuilder stream, and the checks a Chrome trace must pass in Perfetto."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import jsonschema

from ttrecord.testing import SessionBuilder

MODEL_SOURCE = """\
import ttnn
device = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
x = ttnn.from_torch(host, device=device)
w = ttnn.from_torch(weights, device=device)
for _ in range(2):
    ttnn.copy_host_to_device_tensor(host, x)
    y = ttnn.matmul(x, w)
tid = ttnn.begin_trace_capture(device)
y = ttnn.matmul(x, w)
out = ttnn.to_torch(y)
ttnn.end_trace_capture(device, tid)
ttnn.execute_trace(device, tid)
ttnn.release_trace(device, tid)
"""


def decode_loop(b: SessionBuilder) -> dict[str, Any]:
    """A warm-up, a capture with a readback inside it (TR001), one replay."""
    b.open_device(line=2)
    x = b.alloc(1048704)
    w = b.alloc(1050752)
    y = None
    for _ in range(2):
        b.h2d(x, line=6)
        if y is not None:
            b.free(y)
        y = b.alloc(1052800)
        b.op("ttnn.matmul", [x, w], [y], line=7, args={"transpose_a": False})
    tid = b.begin_trace(line=8)
    y2 = b.alloc(1054848)
    b.op("ttnn.matmul", [x, w], [y2], line=9, args={"transpose_a": False})
    readback = b.d2h(y2, line=10)
    b.raised("TT_FATAL: Reads are not supported during trace capture.")
    b.end_trace(tid, line=11)
    b.execute(tid, line=12)
    b.release(tid, line=13)
    return {"trace": tid, "readback": readback.seq}


# -- Chrome trace-event format, as Perfetto's JSON importer reads it --------------------------

_NUMBER = {"type": "number"}
_ID = {"type": "integer"}
EVENT_SCHEMA = {
    "type": "object",
    "required": ["ph", "name", "pid"],
    "properties": {"ph": {"enum": ["X", "i", "C", "M"]}, "name": {"type": "string"}, "pid": _ID},
    "allOf": [
        {"if": {"properties": {"ph": {"const": "X"}}},
         "then": {"required": ["ts", "dur", "tid", "cat", "args"],
                  "properties": {"ts": _NUMBER, "dur": {"type": "number", "minimum": 0},
                                 "tid": _ID}}},
        {"if": {"properties": {"ph": {"const": "i"}}},
         "then": {"required": ["ts", "tid", "s"],
                  "properties": {"ts": _NUMBER, "s": {"enum": ["g", "p", "t"]}, "tid": _ID}}},
        {"if": {"properties": {"ph": {"const": "C"}}},
         "then": {"required": ["ts", "args"],
                  "properties": {"ts": _NUMBER,
                                 "args": {"type": "object", "minProperties": 1,
                                          "additionalProperties": {"type": "number",
                                                                   "minimum": 0}}}}},
        {"if": {"properties": {"ph": {"const": "M"}}},
         "then": {"required": ["args"],
                  "properties": {"name": {"enum": ["process_name", "thread_name",
                                                   "process_sort_index"]}}}},
    ],
}  # fmt: skip
TRACE_SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {"traceEvents": {"type": "array", "items": EVENT_SCHEMA}},
}


def check_trace(trace: dict[str, Any]) -> list[str]:
    """Every problem that would make Perfetto drop or misdraw events; empty when sound."""
    problems = [e.message for e in jsonschema.Draft202012Validator(TRACE_SCHEMA).iter_errors(trace)]
    if problems:
        return problems
    events = trace["traceEvents"]
    named_pids = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    named_tracks = {(e["pid"], e["tid"]) for e in events
                    if e["ph"] == "M" and e["name"] == "thread_name"}  # fmt: skip
    by_track: dict[tuple[int, int], list[tuple[int, int, str]]] = defaultdict(list)
    for e in events:
        if e["ph"] in ("X", "i", "C") and e["pid"] not in named_pids:
            problems.append(f"{e['name']}: process {e['pid']} has no process_name")
        if e["ph"] in ("X", "i") and (e["pid"], e["tid"]) not in named_tracks:
            problems.append(f"{e['name']}: track {(e['pid'], e['tid'])} has no thread_name")
        if e["ph"] == "X":
            # Perfetto turns microseconds into integer nanoseconds; nest in those units.
            start = round(e["ts"] * 1000)
            by_track[(e["pid"], e["tid"])].append((start, start + round(e["dur"] * 1000),
                                                   e["name"]))  # fmt: skip
    for track, slices in by_track.items():
        stack: list[tuple[int, int, str]] = []
        for start, end, name in slices:  # in file order: a parent must come before its children
            if stack and start < stack[-1][0]:
                problems.append(f"{name} on {track} is out of time order")
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                problems.append(f"{name} [{start},{end}) partially overlaps {stack[-1][2]}"
                                f" [{stack[-1][0]},{stack[-1][1]}) on {track}")  # fmt: skip
            stack.append((start, end, name))
    return problems


def slices(trace: dict[str, Any], **match: Any) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == "X"
            and all(e.get(k) == v for k, v in match.items())]  # fmt: skip


def encloses(outer: dict[str, Any], inner: dict[str, Any]) -> bool:
    """Same track, and inner's time span lies within outer's (in Perfetto's integer ns)."""

    def span(e: dict[str, Any]) -> tuple[int, int]:
        start = round(e["ts"] * 1000)
        return start, start + round(e["dur"] * 1000)

    (o0, o1), (i0, i1) = span(outer), span(inner)
    same_track = (outer["pid"], outer["tid"]) == (inner["pid"], inner["tid"])
    return same_track and o0 <= i0 and i1 <= o1
