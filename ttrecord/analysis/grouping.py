"""One finding per mistake: group repeats by rule and call site, fold consequences under causes.

Detectors report each occurrence they see; a decode loop repeats a mistake on every step, and
one mistake has consequences other rules also see (a freed input lets another tensor land on
its range, TR004; rebinding the input variable frees the captured input, TR005). A reader
wants the one line to fix, so after the detectors run:
1. occurrences of one rule at one call site become one finding, with how many times, the first
   and the last (`evidence["occurrences"]`);
2. a finding whose cause another finding names is folded under it (`evidence["folded"]`), and
   the primary takes the worst severity: the primary is the one whose fix removes the others.
   - findings of different rules at the same line: one fix (that line) removes them all;
   - an allocation over a range the trace only reads (TR004) lands on a freed input: folded
     under that input's free (TR005);
   - a captured input freed by a dropped reference, in a run that puts new input data into a
     new tensor instead (TR005 stale): the rebinding that made the new tensor dropped it;
   - a verified replay that diverged (TR011) proves a hazard of that trace changed a result.
"""

from __future__ import annotations

from typing import Any

from ttrecord.analysis.rules import Rule
from ttrecord.findings import Finding

_MAX_FOLDED = 8


def _rank(rule: str) -> int:
    """Which finding stays primary when several rules point at one line: the lowest rank, as
    each rule declares it (`Rule.rank`)."""
    from ttrecord.analysis.registry import rules

    known = rules().get(rule)
    return known.rank if known is not None else Rule.rank


def _where(f: Finding) -> str:
    return f"{f.file}:{f.line}" if f.file else "no call site"


def group(findings: list[Finding]) -> list[Finding]:
    """Findings in detector order in, one per mistake out (same order of first occurrence)."""
    return _fold(_merge(findings))


def _merge(findings: list[Finding]) -> list[Finding]:
    by_site: dict[tuple, Finding] = {}
    out: list[Finding] = []
    for f in findings:
        key: tuple = (f.rule, f.file, f.line, f.function) if f.file else (f.rule, id(f))
        if "between" in f.evidence:  # pinned to an interval: the same only at the same one
            key += (str(f.evidence["between"]),)
        first = by_site.get(key)
        if first is None:
            by_site[key] = f
            out.append(f)
            continue
        _count(first, f)
    return out


def _occurrences(f: Finding) -> dict[str, Any]:
    occ = f.evidence.get("occurrences")
    if not isinstance(occ, dict):
        occ = {"count": 1, "first": _at(f), "last": _at(f)}
    return occ


def _at(f: Finding) -> dict[str, Any]:
    return {"event": f.events[0] if f.events else None, "trace": f.trace}


def _count(primary: Finding, other: Finding) -> None:
    occ = _occurrences(primary)
    more = _occurrences(other)
    occ["count"] += more["count"]
    occ["last"] = more["last"]
    primary.evidence["occurrences"] = occ
    if other.severity.rank > primary.severity.rank:
        primary.severity = other.severity
    for k, v in other.links.items():
        if isinstance(v, set):
            primary.links.setdefault(k, set()).update(v)
        else:
            primary.links.setdefault(k, v)


def _fold(findings: list[Finding]) -> list[Finding]:
    folded: set[int] = set()
    by_line: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.file and "between" not in f.evidence:
            by_line.setdefault((f.file, f.line), []).append(f)
    for same in by_line.values():
        if len(same) > 1:
            primary = min(same, key=lambda f: _rank(f.rule))
            for f in same:
                if f is not primary:
                    _fold_into(primary, f, "reported at the same line: the same fix removes it")
                    folded.add(id(f))
    freed: dict[Any, Finding] = {}
    stale: dict[Any, Finding] = {}
    for f in findings:
        if id(f) in folded:
            continue
        if "freed_input" in f.links:
            freed.setdefault(f.links["freed_input"], f)
        if "stale_input" in f.links:
            stale.setdefault(f.links["stale_input"], f)
    for f in findings:
        if id(f) in folded:
            continue
        if f.links.get("dropped") and f.links.get("freed_input") in stale:
            _fold_into(stale[f.links["freed_input"]], f,
                       "the captured input lost its last reference when the program made a new"
                       " tensor instead of copying into it")  # fmt: skip
            folded.add(id(f))
            continue
        over = f.links.get("over_inputs")
        if over:
            cause = next((freed[k] for k in over if k in freed), None)
            if cause is not None and id(cause) not in folded:
                _fold_into(cause, f, "this allocation landed on the range the freed input held")
                folded.add(id(f))
    errors_by_trace: dict[Any, Finding] = {}
    for f in findings:
        if id(f) not in folded and f.rule != "TR011" and f.severity.rank == 2:
            errors_by_trace.setdefault(f.trace, f)
    for f in findings:
        if f.rule == "TR011" and id(f) not in folded and f.trace in errors_by_trace:
            _fold_into(errors_by_trace[f.trace], f,
                       "a verified replay of this trace diverged from its eager ops")  # fmt: skip
            folded.add(id(f))
    return [f for f in findings if id(f) not in folded]


def _fold_into(primary: Finding, f: Finding, why: str) -> None:
    entries = primary.evidence.setdefault("folded", [])
    if len(entries) < _MAX_FOLDED:
        entries.append({
            "rule": f.rule,
            "severity": str(f.severity),
            "title": f.title,
            "at": _where(f),
            "file": f.file,
            "line": f.line,
            "count": f.occurrences,
            "why": why,
            "message": f.message,
            "evidence": {k: v for k, v in f.evidence.items() if k != "folded"},
        })  # fmt: skip
    primary.events += [s for s in f.events[:1] if s not in primary.events]
    if f.severity.rank > primary.severity.rank:
        primary.severity = f.severity
