"""TR019: the ranks of one multi-host run captured different op sequences.

Every rank of a multi-host mesh program replays its own trace, and the collectives in them
(all_gather, reduce_scatter, all_reduce, send/recv, ...) only complete when every rank reaches
the same one with the same tensors. A rank that took another branch (another shape, one op
more, a collective skipped) records a capture that does not match the others: on replay the
ranks wait for each other forever. This compares the captures of all ranks before that
happens, op by op, the way `ttrecord diff` keys ops (name and tensor signature, never the
addresses or call sites, which differ between hosts and code versions), and names the first op
where each diverging rank leaves the others, with its line on both sides.

The ranks that agree with the most others are the reference (ties: the group holding the
lowest rank); each other group of identical ranks gives one finding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ttrecord.analysis.drift.align import align
from ttrecord.analysis.drift.capture import load_capture
from ttrecord.analysis.drift.compare import compare_ops
from ttrecord.analysis.drift.model import CapturedOp
from ttrecord.analysis.drift.signature import op_signature
from ttrecord.findings import Finding, Severity
from ttrecord.store.ranks import RankSession
from ttrecord.store.reader import Session

RULE_ID = "TR019"
TITLE = "Ranks diverge"
_COLLECTIVE = re.compile(r"all_gather|reduce_scatter|all_reduce|all_to_all|broadcast|"
                         r"point_to_point|ccl|barrier|(?:^|[._])(?:send|recv)(?:_async)?$",
                         re.I)  # fmt: skip


def is_collective(name: str) -> bool:
    """An op every rank must call together (a CCL op)."""
    return bool(_COLLECTIVE.search(name))


@dataclass
class RankCaptures:
    """What one rank captured: per capture, its ops and where it began."""

    label: str
    path: Path
    ops: list[list[CapturedOp]] = field(default_factory=list)
    begins: list[tuple[str, int, str] | None] = field(default_factory=list)  # begin_trace_capture site
    finished: bool = True  # the rank's run ended normally (a crash leaves its captures short)


def load_rank(rank: RankSession) -> RankCaptures:
    """The captured ops of one rank's session, capture by capture."""
    found = RankCaptures(rank.label, rank.path)
    with Session.open(rank.path) as session:
        found.finished = session.info().status == "ok"
        traces = session.traces()
        for number in range(1, len(traces) + 1):
            found.ops.append(load_capture(session, number).ops)
            begin = session.event(traces[number - 1].begin_seq)
            cs = begin.callsite if begin is not None else None
            found.begins.append((cs.file, cs.line, cs.function) if cs is not None else None)
    return found


def detect(ranks: Sequence[RankCaptures]) -> list[Finding]:
    """One finding per group of ranks whose captures differ from the reference ranks'."""
    if len(ranks) < 2:
        return []
    codes: dict[tuple, int] = {}
    keys = [tuple(tuple(codes.setdefault(op_signature(op), len(codes)) for op in ops)
                  for ops in r.ops) for r in ranks]  # fmt: skip
    groups: dict[tuple, list[int]] = {}
    for k, key in enumerate(keys):
        groups.setdefault(key, []).append(k)
    if len(groups) == 1:
        return []
    reference = max(groups.values(), key=lambda g: (len(g), -g[0]))
    findings = []
    for group in groups.values():
        if group is reference:
            continue
        found = _diverging(ranks[reference[0]], [ranks[k] for k in group], keys[reference[0]],
                           keys[group[0]])  # fmt: skip
        if found is not None:
            found.links["order"] = group[0]
            findings.append(found)
    return sorted(findings, key=lambda f: int(f.links["order"]))


def _diverging(ref: RankCaptures, group: list[RankCaptures], ref_key: tuple,
               key: tuple) -> Finding | None:  # fmt: skip
    """The group's first divergence from the reference; None when the only difference is
    that a run which stopped early (crashed, hung, interrupted) recorded less."""
    rank = group[0]
    names = ", ".join(r.label for r in group)
    n = next(i for i in range(max(len(ref_key), len(key)))
             if i >= len(ref_key) or i >= len(key) or ref_key[i] != key[i])  # fmt: skip
    evidence: dict[str, Any] = {"ranks": [r.label for r in group], "reference": ref.label,
                                "capture": n + 1, "session": str(rank.path)}  # fmt: skip
    if n >= len(ref_key) or n >= len(key):
        return _capture_count(ref, group, names, n, evidence)
    a, b = ref.ops[n], rank.ops[n]
    ca, cb = ref_key[n], key[n]
    p = next((i for i in range(min(len(ca), len(cb))) if ca[i] != cb[i]), min(len(ca), len(cb)))
    op_a = a[p] if p < len(a) else None
    op_b = b[p] if p < len(b) else None
    kind, detail = _how(a, b, ca, cb, p)
    if _cut_short(kind, ref, rank):
        return None
    collectives = sorted({op.name for op in [*a[p:], *b[p:]] if is_collective(op.name)})
    hang = bool(collectives)
    evidence.update({
        "op_index": p, "kind": kind,
        "reference_op": _op_evidence(op_a), "diverging_op": _op_evidence(op_b),
        "collectives_after": collectives,
    })  # fmt: skip
    first = f"capture {n + 1} of {names} diverges from {ref.label}'s at op {p + 1}"
    lines = [
        f"{first}: {ref.label} runs {_describe(op_a, len(a))}; {rank.label} runs"
        f" {_describe(op_b, len(b))} ({detail}).",
    ]
    if hang:
        lines.append(f"Collectives from there on ({', '.join(collectives)}) wait for ranks that"
                     " never reach them with matching tensors: the replay hangs (or mixes"
                     " data) on every rank.")  # fmt: skip
    else:
        lines.append("No collective follows, so this replay does not wait on it, but the"
                     " ranks no longer run one program.")  # fmt: skip
    at = op_b or op_a
    site = (at.file, at.line, at.function) if at is not None else rank.begins[n]
    return _finding(Severity.ERROR if hang else Severity.WARNING, " ".join(lines), site, evidence,
                    fix="Make every rank take the same path through the captured code: the same"
                    " shapes, the same ops and every collective, whatever the rank's data;"
                    " branch on rank outside the capture, or pad to a shape all ranks share.")


def _cut_short(kind: str, ref: RankCaptures, rank: RankCaptures) -> bool:
    """Whether the side that has less is a run that stopped early: its missing tail is what it
    never got to record, not another path."""
    if kind in ("missing_ops", "missing_capture"):
        return not rank.finished
    if kind in ("extra_ops", "extra_capture"):
        return not ref.finished
    return False


def _capture_count(ref: RankCaptures, group: list[RankCaptures], names: str, n: int,
                   evidence: dict[str, Any]) -> Finding | None:  # fmt: skip
    rank = group[0]
    have, want = len(rank.ops), len(ref.ops)
    missing = have < want
    if _cut_short("missing_capture" if missing else "extra_capture", ref, rank):
        return None
    site = (ref.begins[n] if missing else rank.begins[n]) or ("?", 0, "?")
    ops = ref.ops[n] if missing else rank.ops[n]
    collectives = sorted({op.name for op in ops if is_collective(op.name)})
    evidence.update({"kind": "missing_capture" if missing else "extra_capture",
                     "captures": {ref.label: want, rank.label: have},
                     "collectives_after": collectives})  # fmt: skip
    where = f"{Path(site[0]).name}:{site[1]}"
    text = (f"{names} captured {have} trace(s), {ref.label} {want}: capture {n + 1}"
            f" (begun at {where} on {ref.label if missing else rank.label}) has no counterpart"
            f" on {rank.label if missing else ref.label}.")  # fmt: skip
    if collectives:
        text += (f" Its collectives ({', '.join(collectives)}) wait for a rank that never"
                 " replays them: the replay hangs.")  # fmt: skip
    return _finding(Severity.ERROR if collectives else Severity.WARNING, text, site, evidence,
                    fix="Capture the same traces on every rank (the same number, in the same"
                    " order); decide what to capture from values all ranks share.")


def _how(a: list[CapturedOp], b: list[CapturedOp], ca: tuple, cb: tuple, p: int) -> tuple[str, str]:
    """What kind of divergence starts at op p (as `diff` aligns the rest)."""
    if p >= len(a):
        return "extra_ops", f"{len(b) - p} op(s) more than the reference"
    if p >= len(b):
        return "missing_ops", f"its capture ends there; the reference has {len(a) - p} op(s) more"
    if a[p].name == b[p].name:
        changes = [c for c in compare_ops(a[p], b[p]) if c.field != "address"]
        shown = "; ".join(f"{c.slot} {c.field} {_value(c.a)} vs {_value(c.b)}" for c in changes[:3])
        return "other_tensors", f"same op, other tensors: {shown or 'another tensor signature'}"
    rows, _method = align(ca[p:], cb[p:])
    first = rows[0] if rows else (None, None)
    if first[0] is not None and first[1] is None:
        return "missing_op", f"it has no {a[p].name} here; the reference's op is missing on it"
    if first[0] is None and first[1] is not None:
        return "extra_op", f"{b[p].name} is an op the reference does not run here"
    return "other_op", "another op"


def _value(v: object) -> str:
    return str(v) if not isinstance(v, tuple) else "[" + ", ".join(map(str, v)) + "]"


def _describe(op: CapturedOp | None, count: int) -> str:
    if op is None:
        return f"nothing more (its capture ends after {count} op(s))"
    shapes = ", ".join(_value(t.shape) for t in op.inputs if t.shape_json) or "no tensors"
    return f"{op.name}({shapes}) at {Path(op.file).name}:{op.line}"


def _op_evidence(op: CapturedOp | None) -> dict[str, Any] | None:
    if op is None:
        return None
    return {"op": op.name, "file": op.file, "line": op.line, "seq": op.seq,
            "inputs": [list(t.shape) for t in op.inputs if t.shape_json]}  # fmt: skip


def _finding(severity: Severity, message: str, site: tuple[str, int, str] | None,
             evidence: dict[str, Any], fix: str) -> Finding:  # fmt: skip
    file, line, function = site if site is not None else (None, None, None)
    return Finding(rule=RULE_ID, severity=severity, title=TITLE, message=message, fix=fix,
                   file=file, line=line, function=function, evidence=evidence)  # fmt: skip
