"""Turns the native recorder's logs into the event log's records, so a C++ program's session
is built by the same decoder, store and analysis as a Python program's.

Each native record becomes the record the Python recorder would have written for the same
call (recorder/records.py): a hooked call is a Begin/End pair, an allocation a Point with its
buffer, an uncaught exception the program's exception. Phases are decided here from the trace
hooks: between a begin and its end the calls are `capture`; under `--audit-capture` the
begin/end were not passed to tt-metal, and become a would-be capture region
("capture@engine.cpp:131") around the eagerly-run calls instead, as `--audit-region` makes
for a Python function.

In a Python program recorded with --native, a native call reached through ttnn's Python
bindings is the Python recorder's call too: it is dropped here (its stack passes through the
`_ttnn` extension), so nothing is counted twice; the native events kept (calls from the
program's own C++ extensions) are numbered after the Python recorder's.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ttrecord.events import NoteKind
from ttrecord.native.logformat import NativeLogReader, NativeRecord, RecType
from ttrecord.native.roles import ROLES, Role
from ttrecord.native.symbolize import Frame, Symbolizer
from ttrecord.recorder.records import (
    new_begin, new_end, new_exception, new_header, new_point, new_site,
)

# Bank counts of a Blackhole p150, for the bank-local footprint of an allocation (the hooks
# read the buffer's total size and page size only): buffer type -> (name, banks).
_BUFFER_TYPES = {0: ("DRAM", 8), 1: ("L1", 130), 2: ("SYSTEM_MEMORY", 1), 3: ("L1_SMALL", 130),
                 4: ("TRACE", 8)}  # fmt: skip
_NO_ADDRESS = (1 << 64) - 1
_PYTHON_SEQ_BASE = 1 << 40  # native events of a Python program come after its own
_PID_SEQ_SPAN = 1 << 32
_SITE_BASE = 1 << 30  # site ids apart from the Python recorder's
_TRACE_ROLES = {"TRACE_BEGIN", "TRACE_END", "TRACE_REPLAY", "TRACE_RELEASE"}
_CALLERS = 8  # caller frames kept with a native call site


def short_message(text: str) -> str:
    """A TT_FATAL's text without its backtrace: 'TT_FATAL @ file:line: cond / info: what'."""
    head = text.split("\nbacktrace:", 1)[0].strip()
    return re.sub(r"\s*\ninfo:\s*\n", " info: ", head).replace("\n", " ").strip()


def _is_tt_api(path: str) -> bool:
    return os.path.basename(path).startswith(("libtt_metal", "_ttnncpp"))


def short_function(name: str) -> str:
    """`std::vector<float> ns::Class::method<float>(args) const` -> `Class::method`."""
    flat = ""
    depth = 0
    for ch in name.replace("(anonymous namespace)::", ""):  # template arguments out
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            flat += ch
    head = flat.split("(", 1)[0].strip()
    head = head.rsplit(" ", 1)[-1]  # a template's return type comes first
    parts = head.split("::")
    return "::".join(parts[-2:]) if len(parts) > 1 else parts[0]


@dataclass
class _Process:
    reader: NativeLogReader
    seq_base: int
    symbols: Symbolizer = field(default_factory=Symbolizer)
    dropped: set[int] = field(default_factory=set)  # native seqs not turned into events
    kinds: dict[int, str] = field(default_factory=dict)  # open call seq -> role macro


class NativeDecoder:
    """Reads every `<prefix>.<pid>` log and yields event-log records (see module docstring)."""

    def __init__(self, prefix: str, *, python_program: bool, audit: bool,
                 missing: Iterable[str] = (), ttnn_version: str | None = None) -> None:  # fmt: skip
        self.prefix = prefix
        self.python_program = python_program
        self.audit = audit
        self.ttnn_version = ttnn_version
        self._missing = list(missing)
        self._procs: dict[str, _Process] = {}
        self._sites: dict[tuple, int] = {}
        self._started = False
        self.trace: int | None = None  # trace being captured (real capture)
        self.region: str | None = None  # virtual capture (--audit-capture)
        self._regions = 0
        self._warning_seq = 0

    def poll(self) -> list[tuple]:
        out: list[tuple] = []
        for path in sorted(glob.glob(glob.escape(self.prefix) + ".*")):
            proc = self._procs.get(path)
            if proc is None:
                base = (_PYTHON_SEQ_BASE if self.python_program else 0) + \
                    len(self._procs) * _PID_SEQ_SPAN + 1000
                proc = self._procs[path] = _Process(NativeLogReader(path), base)
            records = list(proc.reader.read())
            if not records:
                continue
            if not self._started:
                self._started = True
                out.extend(self._start(proc))
            for rec in records:
                if rec.type is RecType.MODULE:
                    proc.symbols.add_module(rec.values[0], rec.values[1], rec.values[2], rec.text)
            proc.symbols.resolve({pc for r in records for pc in r.frames})
            for rec in records:
                out.extend(self._convert(proc, rec))
        return out

    def paths(self) -> list[str]:
        return list(self._procs)

    # -- the session's first records ------------------------------------------------------

    def _start(self, proc: _Process) -> list[tuple]:
        out: list[tuple] = []
        if not self.python_program:
            out.append(new_header(backend="ttnn", backend_reason="native recorder: tt-metal"
                                  " calls of the program hooked through LD_PRELOAD",
                                  ttnn_version=self.ttnn_version, pid=proc.reader.pid or 0))  # fmt: skip
        by_macro = {r.macro: r for r in ROLES}
        for macro in self._missing:
            role = by_macro.get(macro)
            if role is None:
                continue
            self._warning_seq += 1
            message = f"{role.what} not recorded: {role.signature or role.name} missing"
            out.append(new_point(seq=proc.seq_base - 1000 + self._warning_seq, parent=None,
                                 t_ns=0, thread=0, kind="warning", name="native_hook_missing",
                                 phase="eager", device=None, trace=None, site_id=None,
                                 args={"message": message, "role": macro}, region=None,
                                 buffer=None))  # fmt: skip
        return out

    # -- one record -----------------------------------------------------------------------

    def _user_frames(self, proc: _Process, frames: tuple[int, ...]) -> tuple[list[Frame], str | None, bool]:
        """(user frames innermost first, the tt API the user called, reached from Python)."""
        user: list[Frame] = []
        api: str | None = None
        from_python = False
        for pc in frames[1:]:  # frame 0 is the hook itself
            m = proc.symbols.module(pc)
            if m is not None and m.from_python:
                from_python = True
            if m is None or m.internal:
                if not user and m is not None and _is_tt_api(m.path):
                    fn = proc.symbols.frames(pc)[-1][2]  # the outermost inlined function
                    if fn and fn != "??":
                        api = short_function(fn)
                continue
            user.extend(proc.symbols.frames(pc))
            if len(user) > _CALLERS:
                break
        return user, api, from_python

    def _site(self, user: list[Frame]) -> tuple[int | None, tuple | None]:
        """The call site id of these user frames, and its Site record when it is new."""
        if not user:
            return None, None
        file, line, function = user[0]
        # callers without a source line (the C runtime's _start) say nothing to the user
        stack = tuple(f for f in user[1:] if f[0] != "??")[:_CALLERS]
        key = (file, line, function, stack)
        site = self._sites.get(key)
        if site is not None:
            return site, None
        site = self._sites[key] = _SITE_BASE + len(self._sites)
        return site, new_site(site_id=site, file=file, line=line,
                              function=short_function(function), stack=stack)  # fmt: skip

    def _convert(self, proc: _Process, rec: NativeRecord) -> list[tuple]:
        if rec.type is RecType.MODULE:
            return []
        seq = proc.seq_base + rec.seq
        parent = proc.seq_base + rec.parent if rec.parent else None
        if rec.type is RecType.END:
            return self._end(proc, rec, seq)
        if rec.type is RecType.TERMINATE:
            return [self._terminate(proc, rec)]
        if rec.role >= len(ROLES):
            return []
        role = ROLES[rec.role]
        user, api, from_python = self._user_frames(proc, rec.frames)
        # Under Python, a call with no user frame at all (its stack ends inside the tt
        # libraries and the interpreter) came through ttnn's bindings as well.
        if self.python_program and (from_python or not user):
            if rec.type is RecType.BEGIN:
                proc.dropped.add(rec.seq)
                proc.kinds[rec.seq] = role.macro
                self._follow_trace(proc, rec, role)  # still decides the phase of what follows
            return []
        site, new = self._site(user)
        out: list[tuple] = [new] if new is not None else []
        if rec.type is RecType.POINT and role.macro == "COMPILE":
            phase = "capture" if self.trace is not None else "eager"
            return out + [new_point(seq=seq, parent=parent, t_ns=rec.t_ns, thread=rec.tid,
                                    kind="note", name=NoteKind.PROGRAM_CACHE_MISS.value, phase=phase,
                                    device=0, trace=self.trace, site_id=site,
                                    args={"native": "jit_build_once",
                                          "build_hash": hex(rec.values[0])},
                                    region=self.region, buffer=None)]  # fmt: skip
        if rec.type is RecType.POINT:
            point = self._buffer_point(rec, role, seq, parent, site)
            return out + [point] if point is not None else []
        if self.audit and role.macro in _TRACE_ROLES:
            proc.dropped.add(rec.seq)
            return out + self._virtual_trace(rec, role, seq, site, user)
        name = api or role.name
        args: dict[str, Any] = {"native": role.name}
        if role.macro in _TRACE_ROLES:
            args.update(trace_id=rec.values[2], cq=rec.values[1])
        elif rec.values[0]:
            args["object"] = hex(rec.values[0])
        if role.macro in ("READ_CORE", "WRITE_CORE"):
            args["bytes"] = rec.values[1]
        phase = "capture" if self.trace is not None and role.macro != "TRACE_BEGIN" else "eager"
        trace = rec.values[2] if role.macro in _TRACE_ROLES else self.trace
        proc.kinds[rec.seq] = role.macro
        out.append(new_begin(seq=seq, parent=None, t_ns=rec.t_ns, thread=rec.tid, kind=role.kind,
                             name=name, phase=phase, device=0, cq=None, trace=trace,
                             site_id=site, args=args, inputs=(), region=self.region))  # fmt: skip
        self._follow_trace(proc, rec, role)
        return out

    def _follow_trace(self, proc: _Process, rec: NativeRecord, role: Role) -> None:
        if self.audit:
            return
        if role.macro == "TRACE_BEGIN":
            self.trace = rec.values[2]
        elif role.macro == "TRACE_END":
            self.trace = None

    def _end(self, proc: _Process, rec: NativeRecord, seq: int) -> list[tuple]:
        raised = rec.values[0] == 1
        if raised and proc.kinds.get(rec.seq) == "TRACE_BEGIN" and not self.audit:
            self.trace = None  # the capture did not start
        proc.kinds.pop(rec.seq, None)
        if rec.seq in proc.dropped:
            proc.dropped.discard(rec.seq)
            return []
        return [new_end(seq=seq, t_ns=rec.t_ns, status="raised" if raised else "ok",
                        error=short_message(rec.text) if raised else None, outputs=(),
                        device=None, trace=None, extra=None)]  # fmt: skip

    def _buffer_point(self, rec: NativeRecord, role: Role, seq: int, parent: int | None,
                      site: int | None) -> tuple | None:  # fmt: skip
        address, size, page, btype = rec.values
        if role.macro not in ("ALLOCATE", "DEALLOCATE") or address == _NO_ADDRESS:
            return None
        type_name, banks = _BUFFER_TYPES.get(btype, (f"type{btype}", 1))
        pages = -(-size // page) if page else 0
        footprint = -(-pages // banks) * page if page else size
        phase = "capture" if self.trace is not None else "eager"
        return new_point(seq=seq, parent=parent, t_ns=rec.t_ns, thread=rec.tid, kind=role.kind,
                         name=role.name, phase=phase, device=0, trace=self.trace, site_id=site,
                         args={"size": size, "native": role.name}, region=self.region,
                         buffer=(0, type_name, address, footprint, page or None, pages or None))  # fmt: skip

    def _virtual_trace(self, rec: NativeRecord, role: Role, seq: int, site: int | None,
                       user: list[Frame]) -> list[tuple]:  # fmt: skip
        """--audit-capture: a begin/end opens/closes a would-be capture region; a replay or
        release of a trace that was never captured is a note."""
        common = dict(seq=seq, parent=None, t_ns=rec.t_ns, thread=rec.tid, phase="eager",
                      device=0, trace=None, site_id=site, buffer=None)  # fmt: skip
        if role.macro == "TRACE_BEGIN":
            where = f"{os.path.basename(user[0][0])}:{user[0][1]}" if user else "?"
            self._regions += 1
            self.region = f"capture@{where}"
            return [new_point(kind="region_begin", name=self.region,
                              args={"region": self.region, "instance": self._regions},
                              region=self.region, **common)]  # fmt: skip
        if role.macro == "TRACE_END":
            region, self.region = self.region, None
            if region is None:
                return []
            return [new_point(kind="region_end", name=region,
                              args={"region": region, "instance": self._regions},
                              region=region, **common)]  # fmt: skip
        return [new_point(kind="note", name=f"{role.name} (not run: --audit-capture)",
                          args={"native": role.name, "trace_id": rec.values[2]},
                          region=self.region, **common)]  # fmt: skip

    def _terminate(self, proc: _Process, rec: NativeRecord) -> tuple:
        user, api, _ = self._user_frames(proc, rec.frames)
        lines = [f"  {file}:{line} in {short_function(fn)}" for file, line, fn in user[:12]]
        if api:
            lines.insert(0, f"  (in {api}, called from the first line below)")
        kind = "TT_FATAL" if "TT_FATAL" in rec.text else "TT_THROW" if "TT_THROW" in rec.text \
            else "C++ exception"
        return new_exception(type=kind, message=short_message(rec.text),
                             traceback="uncaught C++ exception, thrown at:\n" + "\n".join(lines))
