"""Picks captures out of sessions and loads what a diff needs from them through the reader.

A capture is the events between a TRACE_BEGIN and its TRACE_END on one device; captures are
numbered 1, 2, … in begin order within a session. Its prep run is the eager pass the store
tagged `prep` before it (the same ops, run once to compile and allocate; `store/prep.py` finds
it by aligning op sequences), which must use the very input buffers the capture bakes in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ttrecord.errors import TtrecordError
from ttrecord.events import CALL_KINDS, BufferRef, Event, Kind
from ttrecord.store.prep import MEMORY_ONLY
from ttrecord.store.reader import EventFilter, Session, TraceRow, capture_op_rows, op_tensors

from .model import Capture, CapturedOp, CaptureRef, LiveBuffer, Tensor

_SEQS_PER_QUERY = 900  # stays under SQLite's bound-parameter limit
_CALLS = frozenset(str(k) for k in CALL_KINDS)
_TARGET = re.compile(r"^(?P<path>.+):(?P<number>\d+)$")
_new = tuple.__new__  # builds NamedTuples without their Python-level __new__ (hot loops)
_NO_SITE = ("?", 0, "?")


@dataclass(frozen=True, slots=True)
class CaptureSpec:
    """One side of a diff as the user named it: a session file and a capture number."""

    path: str
    number: int | None = None  # None: the first capture

    @classmethod
    def parse(cls, text: str) -> CaptureSpec:
        """`S.db` or `S.db:N` (a file that really is named `S.db:N` wins)."""
        match = _TARGET.match(text)
        if match and not Path(text).exists():
            number = int(match["number"])
            if number < 1:
                raise TtrecordError(f"{text}: capture numbers start at 1")
            return cls(match["path"], number)
        return cls(text)


def resolve_targets(
    targets: Sequence[str], captures: Sequence[int] = (), prep: bool = False
) -> tuple[CaptureSpec, CaptureSpec | None]:
    """Turn the command line's sessions and --capture numbers into the two sides of a diff.

    Returns (A, B), or (capture, None) for --prep. Raises TtrecordError for combinations that
    do not name exactly two op sequences.
    """
    specs = [CaptureSpec.parse(t) for t in targets]
    if any(n < 1 for n in captures):
        raise TtrecordError("capture numbers start at 1")
    if not 1 <= len(specs) <= 2:
        raise TtrecordError("give one or two session files")
    if any(s.number is not None for s in specs) and captures:
        raise TtrecordError("give capture numbers either as FILE:N or with --capture, not both")
    if prep:
        if len(specs) != 1 or len(captures) > 1:
            raise TtrecordError(
                "--prep compares one capture with its own prep run: give one session"
            )
        spec = specs[0]
        return CaptureSpec(spec.path, captures[0] if captures else spec.number), None
    if len(specs) == 1:
        if len(captures) != 2:
            raise TtrecordError(
                "one session: name two captures with --capture N --capture M (or use --prep)"
            )
        return CaptureSpec(specs[0].path, captures[0]), CaptureSpec(specs[0].path, captures[1])
    if len(captures) > 2:
        raise TtrecordError("at most two --capture numbers")
    if len(captures) == 1:
        captures = [captures[0], captures[0]]
    if captures:
        specs = [CaptureSpec(s.path, n) for s, n in zip(specs, captures)]
    return specs[0], specs[1]


def pick_trace(session: Session, number: int | None) -> tuple[int, TraceRow]:
    traces = session.traces()
    name = session.path.name
    if not traces:
        raise TtrecordError(f"{name}: no trace capture in this session")
    n = number or 1
    if n > len(traces):
        plural = "capture" if len(traces) == 1 else "captures"
        raise TtrecordError(f"{name}: has {len(traces)} {plural}; there is no capture {n}")
    return n, traces[n - 1]


def load_capture(session: Session, number: int | None = None, prep: bool = False,
                 frees: bool = True) -> Capture:  # fmt: skip
    """The ops of capture `number` (or of its prep run) and the allocator state around it.
    A prep run is loaded without its frees and bare allocations (`ttnn.deallocate` of the
    warm-up's outputs before the capture, `allocate_tensor_on_device`: they compute nothing,
    `store.prep.MEMORY_ONLY`); `frees=False` leaves them out of a capture too."""
    n, trace = pick_trace(session, number)
    ref = CaptureRef(
        str(session.path), n, trace.device, trace.trace_id, trace.begin_seq, trace.end_seq, prep
    )
    if prep:
        after = _previous_capture_end(session, trace)
        ops = _load_ops(session, "prep", trace.device, after, trace.begin_seq, frees=False)
        if not ops:
            raise TtrecordError(
                f"{session.path.name}: capture {n} has no prep run (no eager run of its ops,"
                " by op names and tensor signatures, between the previous capture and its"
                " begin_trace_capture)"
            )
        start = ops[0].seq
    else:
        end = trace.end_seq if trace.end_seq is not None else 1 << 62
        ops = _load_ops(session, "capture", trace.device, trace.begin_seq, end, frees=frees)
        start = trace.begin_seq
    # Only buffers live at the capture's start or during its replays matter to the diff: two
    # narrow queries, since one spanning both would return every buffer the capture made.
    live = _live_at(session, trace.device, start)
    replay = [] if prep else _replay_live(session, trace)
    return Capture(ref, ops, live, replay, has_replay=not prep and trace.end_seq is not None)


def _previous_capture_end(session: Session, trace: TraceRow) -> int:
    ends = [
        t.end_seq or t.begin_seq
        for t in session.traces()
        if t.device == trace.device and t.begin_seq < trace.begin_seq
    ]
    return max(ends, default=0)


def _load_ops(
    session: Session, phase: str, device: int, after: int, before: int, frees: bool = True
) -> list[CapturedOp]:
    """The top-level ops of `phase` on `device` with `after < seq < before`, as CapturedOps."""
    sites: dict[int | None, tuple[str, int, str]] = {cid: (s.file, s.line, s.function) for cid, s in session.callsites().items()}
    # One Tensor per distinct value and one decode per distinct tensors text: captures reuse
    # a few buffers thousands of times, so this saves most of the time and memory, and equal
    # tensors compare by identity.
    unique: dict[tuple, Tensor] = {}
    decoded: dict[str, tuple[tuple[Tensor, ...], tuple[Tensor, ...]]] = {}
    seen: dict[tuple[str, str, int], int] = {}
    new = _new
    ops: list[CapturedOp] = []
    for seq, name, site, text in capture_op_rows(session, phase, device, after, before):
        if not frees and name.rsplit(".", 1)[-1] in MEMORY_ONLY:
            continue
        tensors = decoded.get(text)
        if tensors is None:
            ins, outs = op_tensors(text)
            tensors = decoded[text] = (
                tuple(unique.setdefault(t, new(Tensor, t)) for t in ins),
                tuple(unique.setdefault(t, new(Tensor, t)) for t in outs),
            )
        file, line, function = sites.get(site, _NO_SITE)
        key = (name, file, line)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        ops.append(new(CapturedOp, (seq, len(ops), name, file, line, function, *tensors,
                                    occurrence)))  # fmt: skip
    return ops


def _live_at(session: Session, device: int, seq: int) -> list[LiveBuffer]:
    """Tensor buffers live just before `seq`, each with the call that allocated it (kernel
    binaries, which no tensor holds, follow compile order, not the program's data)."""
    rows = session.buffers(device, live_from=seq, live_until=seq)
    held = session.tensor_buffers(r.id for r in rows)
    rows = [r for r in rows if r.id in held]
    makers = _allocating_calls(session, [r.alloc_seq for r in rows])
    out = []
    for r in rows:
        call = makers.get(r.alloc_seq)
        site = call.callsite if call is not None else None
        out.append(
            LiveBuffer(
                buffer=r.buffer,
                alloc_seq=r.alloc_seq,
                call=call.name if call is not None else "",
                file=site.file if site else "?",
                line=site.line if site else 0,
                function=site.function if site else "?",
            )
        )
    return out


def _allocating_calls(session: Session, seqs: list[int]) -> dict[int, Event]:
    """For each allocation seq: the call that made it (its parent, the event itself when the
    buffer was first seen as a call's output, else the nearest call before it)."""
    events = _events_by_seq(session, seqs)
    parents = _events_by_seq(session, [e.parent for e in events.values() if e.parent is not None])
    calls = EventFilter(kinds=_CALLS, top_level=True)
    out: dict[int, Event] = {}
    for seq in seqs:
        ev = events.get(seq)
        if ev is None:
            continue
        if ev.kind is not Kind.ALLOC:
            out[seq] = ev
        elif ev.parent is not None and ev.parent in parents:
            out[seq] = parents[ev.parent]
        else:
            before = session.event_index(seq, calls)
            if before:
                out[seq] = session.events(calls, limit=1, offset=before - 1)[0]
    return out


def _events_by_seq(session: Session, seqs: list[int]) -> dict[int, Event]:
    found: dict[int, Event] = {}
    unique = sorted(set(seqs))
    for start in range(0, len(unique), _SEQS_PER_QUERY):
        chunk = frozenset(unique[start : start + _SEQS_PER_QUERY])
        for ev in session.events(EventFilter(seqs=chunk), limit=len(chunk)):
            found[ev.seq] = ev
    return found


def _replay_stop(trace: TraceRow) -> int:
    """Where the trace stops being replayable: its release, or the end of the session."""
    return trace.release_seq if trace.release_seq is not None else 1 << 62


def _replay_live(session: Session, trace: TraceRow) -> list[tuple[BufferRef, int]]:
    """Buffers live at some point while the trace could be replayed: from the end of the
    capture until it is released (or the session ends)."""
    if trace.end_seq is None:
        return []
    rows = session.buffers(trace.device, live_from=trace.end_seq, live_until=_replay_stop(trace))
    return [(r.buffer, r.alloc_seq) for r in rows]
