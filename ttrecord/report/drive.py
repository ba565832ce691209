"""How to drive a trace: what to copy into before each replay, what to read after it, and a
replay loop written with the program's own names.

A trace replays on the buffers it captured, so a program drives it by copying new data into
the captured inputs (never by making new tensors), calling execute_trace, and reading the
outputs it captured. This module reads those from the session for each capture: the inputs
(device buffers its calls read that none of them made) with the Python name and line where
each was made, the outputs (buffers it made that outlived it) with the line of the capture
that assigned them, and builds the loop from the `begin_trace_capture` line's names.
"""

from __future__ import annotations

import ast
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ttrecord.store.finding_rows import TraceBuffer, first_maker, trace_buffers

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

MAX_TRACES = 3  # a decode loop captures the same lines many times: the first few say it all
MAX_EXAMINED = 100  # captures looked at to find them (each costs two event look-ups)


@dataclass
class Tensor:
    name: str | None  # the Python name it was assigned to, when the line says
    file: str | None
    line: int | None
    shape: list[int]
    dtype: str


@dataclass
class Plan:
    device: int
    trace_id: int
    captured: str  # file:first-last lines of the capture
    inputs: list[Tensor] = field(default_factory=list)
    outputs: list[Tensor] = field(default_factory=list)
    snippet: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _line_text(session: Session, file: str | None, line: int | None) -> str | None:
    text = session.source(file) if file else None
    lines = text.splitlines() if text is not None else []
    return lines[line - 1] if line and 0 < line <= len(lines) else None


def _statement(text: str | None) -> ast.stmt | None:
    try:
        body = ast.parse((text or "").strip()).body
    except SyntaxError:
        return None
    return body[0] if len(body) == 1 else None


def _target(text: str | None) -> str | None:
    stmt = _statement(text)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _tensor(session: Session, buf: TraceBuffer, file: str | None, line: int | None) -> Tensor:
    try:
        shape = [int(n) for n in json.loads(buf[3] or "[]")]
    except (ValueError, TypeError):
        shape = []
    return Tensor(_target(_line_text(session, file, line)), file, line, shape, str(buf[4]))


def _output_site(session: Session, seq: int, function: str | None) -> tuple[str | None, int | None]:
    """The line in the capturing function that led to the call `seq` (its own line, or the
    caller's when the call is inside a helper)."""
    ev = session.event(seq)
    site = ev.callsite if ev is not None else None
    if site is None:
        return None, None
    for file, line, func in [(site.file, site.line, site.function), *site.stack]:
        if func == function:
            return file, line
    return site.file, site.line


def plans(session: Session) -> list[Plan]:
    """How to drive each of the first MAX_TRACES captures that ended (distinct capture lines)."""
    out: list[Plan] = []
    seen: set[tuple] = set()
    for t in session.traces()[:MAX_EXAMINED]:
        if len(out) >= MAX_TRACES:
            break
        if t.end_seq is None:
            continue
        begin = session.event(t.begin_seq)
        site = begin.callsite if begin is not None else None
        end = session.event(t.end_seq)
        end_site = end.callsite if end is not None else None
        key = (site.file, site.line) if site else (t.device, t.trace_id)
        if key in seen:
            continue
        seen.add(key)
        inputs, outputs = trace_buffers(session, t.device, t.begin_seq, t.end_seq)
        plan = Plan(t.device, t.trace_id, _span(site, end_site))
        for buf in inputs:
            made = first_maker(session, buf[1], buf[2], t.begin_seq)
            plan.inputs.append(_tensor(session, buf, *(made or (None, None))))
        for buf in outputs:
            plan.outputs.append(_tensor(session, buf, *_output_site(
                session, buf[5], site.function if site else None)))  # fmt: skip
        plan.snippet = _snippet(plan, _line_text(session, site.file, site.line) if site else None,
                                t.cq)  # fmt: skip
        out.append(plan)
    return out


def _span(begin: Any, end: Any) -> str:
    if begin is None:
        return "?"
    name = str(begin.file).rsplit("/", 1)[-1]
    last = f"-{end.line}" if end is not None and end.file == begin.file else ""
    return f"{name}:{begin.line}{last}"


def _snippet(plan: Plan, begin_line: str | None, cq: int | None) -> str:
    """A replay loop with the program's names (placeholders where the session cannot say)."""
    stmt = _statement(begin_line)
    trace_var, device_var = "trace_id", "device"
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
        if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            trace_var = stmt.targets[0].id
        if stmt.value.args:
            device_var = ast.unparse(stmt.value.args[0])
    rows = ["for step in steps:",
            "    # copy new data INTO the captured inputs: the trace never sees a new tensor"]  # fmt: skip
    for i, t in enumerate(plan.inputs):
        name = t.name or f"captured_input_{i}"
        where = f"  # made at {_where(t)}" if t.file else ""
        rows.append(f"    ttnn.copy_host_to_device_tensor(host_{name}, {name}){where}")
    rows.append(f"    ttnn.execute_trace({device_var}, {trace_var}, cq_id={cq or 0}, blocking=True)")
    for i, t in enumerate(plan.outputs):
        name = t.name or f"captured_output_{i}"
        where = f"  # assigned at {_where(t)}" if t.file else ""
        rows.append(f"    result_{name} = ttnn.to_torch({name}){where}")
    rows.append(f"ttnn.release_trace({device_var}, {trace_var})")
    return "\n".join(rows)


def _where(t: Tensor) -> str:
    return f"{str(t.file).rsplit('/', 1)[-1]}:{t.line}"


def describe(t: Tensor) -> str:
    """`x` [32, 32] BFLOAT16, made at model.py:27 (for the report's lists)."""
    name = f"`{t.name}`" if t.name else "(unnamed)"
    shape = "[" + ", ".join(map(str, t.shape)) + "]"
    return f"{name} {shape} {t.dtype}" + (f", at {_where(t)}" if t.file else "")
