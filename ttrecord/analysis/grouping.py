"""One finding per mistake: group repeats by rule and call site, fold consequences under causes.

Detectors report each occurrence they see; a decode loop repeats a mistake on every step, and
one mistake has consequences other rules also see (a freed input lets another tensor land on
its range, TR004; rebinding the input variable frees the captured input, TR005). A reader
wants the one line to fix, so after the detectors run:
1. occurrences of one rule at one call site become one finding, with how many times, the first
   and the last (`evidence["occurrences"]`); a latent finding by layout luck (`layout_luck`,
   TR004 and TR014) stays apart from the same rule's other forms there, one per call path;
2. a finding another finding caused is folded under it (`evidence["folded"]`), and the primary
   takes the worst severity: the primary is the one whose fix removes the others.
   - findings of different rules on one call path (the line and every caller above it): one
     fix there removes them all; two calls through one helper line are different paths; an
     info is primary only over other infos;
   - every other fold is declared by the consequence's rule (`Rule.folds_under`) and happens
     only when both findings carry the same evidence of the cause's event (`Finding.links`):
     an allocation on the range a freed input held (TR004 under TR005), a replay's input
     overwritten and read only because it was never refreshed (TR004 under TR005), the
     captured input dropped by the rebinding that made a new tensor (TR005 under TR005), an
     earlier new tensor superseded before the same stale replay (TR005 under TR005), a trace
     left unreleased because the program stopped itself after replaying it on a stale input
     (TR009 under TR005), a verified replay that diverged (TR011 under an error on its trace).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ttrecord.analysis.rules import FoldsUnder, Rule
from ttrecord.findings import Finding, Severity

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
        if "layout_luck" in f.evidence:  # latent by placement: its own finding, per call path
            key += ("layout_luck", tuple(tuple(fr) for fr in f.stack))
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


def _call_path(f: Finding) -> tuple:
    return (f.file, f.line, f.function, tuple(tuple(fr) for fr in f.stack))


def _values(f: Finding, key: str) -> set:
    """The evidence values a finding carries under `key` ("trace": the trace it is about)."""
    if key == "trace" and key not in f.links:
        return {f.trace} if f.trace is not None else set()
    v = f.links.get(key)
    if v is None or v is False:
        return set()
    return set(v) if isinstance(v, (set, frozenset)) else {v}


def _declarations() -> dict[str, tuple[FoldsUnder, ...]]:
    from ttrecord.analysis.registry import rules

    return {rule_id: rule.folds_under for rule_id, rule in rules().items()}


def _fold(findings: list[Finding], declared: dict[str, tuple[FoldsUnder, ...]] | None = None) -> list[Finding]:
    declared = _declarations() if declared is None else declared
    into: dict[int, Finding] = {}  # id(folded finding) -> the finding it was folded into

    def root(f: Finding) -> Finding:
        seen = 0
        while id(f) in into and seen < len(findings):
            f, seen = into[id(f)], seen + 1
        return f

    def fold(primary: Finding, f: Finding, why: str) -> None:
        _fold_into(primary, f, why)
        into[id(f)] = primary

    # 1. Findings of different rules on one call path (the user's line and every caller above
    # it): one fix there removes them all. Two calls through one helper line are not one path.
    by_path: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.file and "between" not in f.evidence:
            by_path.setdefault(_call_path(f), []).append(f)
    for same in by_path.values():
        if len(same) > 1:
            # An info never stands for a warning or an error: its message says nothing harmed.
            primary = min(same, key=lambda f: (f.severity is Severity.INFO, _rank(f.rule)))
            for f in same:
                if f is not primary:
                    fold(primary, f, "reported on the same call path: the same fix removes it")
    # 2. Consequences under the cause their rule declares, matched by shared evidence.
    index: dict[tuple[str, str, Any], list[Finding]] = {}
    wanted = {(d.cause, d.cause_link) for decls in declared.values() for d in decls}
    for f in findings:
        for rule_id, key in wanted:
            if rule_id in ("*", f.rule):
                for v in _values(f, key):
                    index.setdefault((rule_id, key, v), []).append(f)
    order = sorted(findings, key=lambda f: any(d.errors_only for d in declared.get(f.rule, ())))
    for f in order:
        if id(f) in into:
            continue
        for decl in declared.get(f.rule, ()):
            cause = _cause_of(f, decl, index, root)
            if cause is not None:
                fold(cause, f, decl.why)
                break
    return [f for f in findings if id(f) not in into]


def _cause_of(f: Finding, decl: FoldsUnder, index: dict[tuple[str, str, Any], list[Finding]],
              root: Callable[[Finding], Finding]) -> Finding | None:  # fmt: skip
    for v in sorted(_values(f, decl.link), key=repr):
        for c in index.get((decl.cause, decl.cause_link, v), ()):
            primary = root(c)
            if primary is f or c is f or root(f) is primary:
                continue
            if decl.errors_only and primary.severity.rank < 2:
                continue
            return primary
    return None


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
    for carried in f.evidence.get("folded", []):  # what was folded under it goes along
        if len(entries) < _MAX_FOLDED:
            entries.append(carried)
    primary.events += [s for s in f.events[:1] if s not in primary.events]
    if f.severity.rank > primary.severity.rank:
        primary.severity = f.severity
