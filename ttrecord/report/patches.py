"""Suggested patches: where the fix is mechanical, the edit itself, against the stored source.

Two fixes are mechanical enough to write out:
- TR005, new input data put into a new device tensor before `execute_trace`: the line
  `new = ttnn.from_torch(..., device=dev)` (or `new = ttnn.to_device(host, dev)`) becomes a
  host tensor and a copy into the captured input, whose Python name is read from the line
  that made it (`x = ttnn.from_torch(...)` → `x`):
      new = ttnn.from_torch(...)
      ttnn.copy_host_to_device_tensor(new, x)
- TR001, a read written between `begin_trace_capture` and `end_trace_capture` in the function
  that captures: the line moves after the `execute_trace` that follows the capture (or after
  `end_trace_capture` when none does).
Anything less certain (a read inside a helper, a line spanning several lines, an input whose
name is not a plain assignment) gets no patch: a wrong patch is worse than none.

A patch is one contiguous block of whole lines replaced (`Patch`), rendered as a unified diff
for `patch -p0` from the run's folder (text, JSON) and as a SARIF `fixes` replacement.
"""

from __future__ import annotations

import ast
import difflib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ttrecord.store.finding_rows import first_maker, next_execute_line

if TYPE_CHECKING:
    from ttrecord.findings import Finding
    from ttrecord.store.reader import Session


@dataclass(frozen=True)
class Patch:
    file: str
    first: int  # first line replaced (1-based)
    last: int  # last line replaced
    old: list[str]  # the stored source, whole
    new_block: list[str]  # what replaces lines first..last
    description: str

    def new_lines(self) -> list[str]:
        return [*self.old[: self.first - 1], *self.new_block, *self.old[self.last:]]

    def diff(self, cwd: str | None) -> str:
        name = _relative(self.file, cwd)
        old = [ln + "\n" for ln in self.old]
        new = [ln + "\n" for ln in self.new_lines()]
        return "".join(difflib.unified_diff(old, new, fromfile=name, tofile=name, n=2))


def _relative(file: str, cwd: str | None) -> str:
    if cwd and os.path.isabs(file):
        rel = os.path.relpath(file, cwd)
        if not rel.startswith(".."):
            return rel
    return file


def _statement(line: str) -> ast.stmt | None:
    """The one statement a source line holds, or None (several lines, a compound statement)."""
    try:
        body = ast.parse(line.strip()).body
    except SyntaxError:
        return None
    if len(body) != 1 or isinstance(body[0], (ast.If, ast.For, ast.While, ast.With, ast.Try,
                                               ast.FunctionDef, ast.ClassDef)):  # fmt: skip
        return None
    return body[0]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _comment(line: str, stmt: ast.stmt) -> str:
    """The line's trailing comment (kept on the rewritten line), with its spacing."""
    code = line.strip()
    rest = code[stmt.end_col_offset or len(code):] if stmt.lineno == stmt.end_lineno else ""
    return rest if rest.lstrip().startswith("#") else ""


def _assigned_name(line: str) -> str | None:
    stmt = _statement(line)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _input_name(session: Session, f: Finding) -> str | None:
    """The Python name of the captured input TR005 names: the target of the line whose call
    made the buffer at that address before the capture."""
    captured = f.evidence.get("captured_input")
    if not isinstance(captured, dict) or "address" not in captured:
        return None
    try:
        address = int(str(captured["address"]).split()[0], 0)
    except ValueError:
        return None
    maker = first_maker(session, address, captured.get("buffer_type"),
                        f.events[0] if f.events else 1 << 62)  # fmt: skip
    if maker is None:
        return None
    text = session.source(maker[0])
    lines = text.splitlines() if text else []
    line = maker[1]
    return _assigned_name(lines[line - 1]) if line and 0 < line <= len(lines) else None


def _new_tensor_to_copy(session: Session, f: Finding, lines: list[str]) -> Patch | None:
    line = f.line or 0
    text = lines[line - 1]
    stmt = _statement(text)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)):  # fmt: skip
        return None
    call, target = stmt.value, stmt.targets[0].id
    func = ast.unparse(call.func)
    prefix = func.rsplit(".", 1)[0] + "." if "." in func else ""
    name = _input_name(session, f)
    if name is None or name == target:
        return None
    if func.endswith("from_torch"):
        kept = [kw for kw in call.keywords if kw.arg != "device"]
        if len(kept) == len(call.keywords):
            return None
        host: ast.expr = ast.Call(func=call.func, args=call.args, keywords=kept)
    elif func.endswith("to_device") and call.args:
        host = call.args[0]
    else:
        return None
    indent = _indent(text)
    comment = _comment(text, stmt)
    block = [f"{indent}{target} = {ast.unparse(host)}{comment}",
             f"{indent}{prefix}copy_host_to_device_tensor({target}, {name})"]  # fmt: skip
    return Patch(f.file or "", line, line, lines, block,
                 f"Copy the new data into the captured input `{name}` instead of making a new"
                 " device tensor.")  # fmt: skip


def _capture_lines(session: Session, f: Finding) -> tuple[int, int, int | None] | None:
    """(begin line, end line, line of the first execute_trace after it) of the finding's
    capture, when all three are in the finding's file and function."""
    for t in session.traces():
        if (t.device, t.trace_id) != (f.device, f.trace) or t.end_seq is None:
            continue
        begin, end = session.event(t.begin_seq), session.event(t.end_seq)
        sites = [e.callsite if e is not None else None for e in (begin, end)]
        if any(s is None or (s.file, s.function) != (f.file, f.function) for s in sites):
            return None
        execute = next_execute_line(session, t.end_seq, t.device, t.trace_id, f.file or "",
                                    f.function or "")  # fmt: skip
        return (sites[0].line, sites[1].line, execute)  # type: ignore[union-attr]
    return None


def _read_after_replay(session: Session, f: Finding, lines: list[str]) -> Patch | None:
    line = f.line or 0
    where = _capture_lines(session, f)
    if where is None or _statement(lines[line - 1]) is None:
        return None
    begin, end, execute = where
    if not begin < line < end:
        return None
    after = execute if execute is not None and execute > end else end
    indent = _indent(lines[end - 1])
    if _indent(lines[line - 1]) != indent or _indent(lines[after - 1]) != indent:
        return None
    block = [*lines[line: after], lines[line - 1]]
    what = "execute_trace" if after == execute else "end_trace_capture"
    return Patch(f.file or "", line, after, lines, block,
                 f"Move the read after {what}: read the captured output once the replay ran.")


def suggest(session: Session, f: Finding) -> Patch | None:
    """The mechanical fix of a finding, against the stored source, or None."""
    if not f.file or not f.line or f.rule not in ("TR005", "TR001"):
        return None
    text = session.source(f.file)
    lines = text.splitlines() if text is not None else []
    if not 0 < f.line <= len(lines):
        return None
    if f.rule == "TR005" and "new_tensor" in f.evidence:
        return _new_tensor_to_copy(session, f, lines)
    if f.rule == "TR001":
        return _read_after_replay(session, f, lines)
    return None


def suggest_all(session: Session, findings: list[Finding]) -> list[Patch | None]:
    return [suggest(session, f) for f in findings]


def sarif_fix(p: Patch, artifact: dict[str, Any]) -> dict[str, Any]:
    """A SARIF `fix`: the block of whole lines replaced by the new one."""
    return {
        "description": {"text": p.description},
        "artifactChanges": [{
            "artifactLocation": artifact,
            "replacements": [{
                "deletedRegion": {"startLine": p.first, "startColumn": 1,
                                  "endLine": p.last + 1, "endColumn": 1},
                "insertedContent": {"text": "".join(ln + "\n" for ln in p.new_block)},
            }],
        }],
    }  # fmt: skip
