"""Every Python scalar and shape a trace's captured ops were called with: the values frozen
into it.

A capture records the device commands one call made, with the host values of that call baked
in: a position id, a slot index, a scale, a shape. Each replay repeats them, whatever the
program would pass now. TR007 reports a value proven to differ between the eager and the
captured calls at one line; a value seen only in the capture (what changes between replays:
tt-metal's "host int position frozen" bugs) is silent there, so `report` lists them all per
trace: the op, the parameter (a keyword's name, or the position of a positional argument), the
value and the line.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from ttrecord.analysis.context import Context, TraceInfo
from ttrecord.analysis.rules import where
from ttrecord.events import Kind, Phase

# Arguments that select where the call runs, not what it computes
_NOT_BAKED = frozenset({"cq_id", "queue_id"})


def baked_values(ctx: Context, t: TraceInfo) -> list[dict[str, Any]]:
    """The scalar and shape arguments of the trace's top-level captured ops, in call order:
    `{"op", "parameter", "value", "line"}` (a shape's value is a list)."""
    if t.end is None:
        return []
    begin, end = t.begin.seq, t.end.seq
    events = ctx.events
    out: list[dict[str, Any]] = []
    for i in range(bisect_right(events, begin, key=lambda e: e.seq), len(events)):
        ev = events[i]
        if ev.seq >= end:
            break
        if (ev.kind is not Kind.OP or ev.parent is not None or ev.phase is not Phase.CAPTURE
                or ev.device != t.device or not ev.args):  # fmt: skip
            continue
        line = where(ctx, ev)
        for key, value in ev.args.items():
            if key in _NOT_BAKED:
                continue
            param = f"positional argument {key}" if key.isdigit() else key
            out.append({"op": ev.name.rsplit(".", 1)[-1], "parameter": param,
                        "value": list(value) if isinstance(value, (tuple, list)) else value,
                        "line": line})  # fmt: skip
    return out
