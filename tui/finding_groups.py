"""Findings grouped by rule and call site for the overview's list, with counts and traces.

The analysis already folds repeats of one mistake into one finding (`occurrences` in its
evidence), but a session checked by an older ttrecord, or a rule that reports once per trace,
can still store hundreds of findings at one line: 998 rows of the same TR004 hide the other
rules. One row per (rule, call site) with how many times and on which traces keeps the list
readable; the row opens to its findings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ttrecord.findings import Finding


@dataclass(frozen=True)
class FindingGroup:
    findings: tuple[Finding, ...]  # in the order given (most severe first)

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def severity(self) -> str:
        return str(max((f.severity for f in self.findings), key=lambda s: s.rank))

    @property
    def count(self) -> int:
        """Occurrences of the mistake: each finding's own count, summed."""
        return sum(f.occurrences for f in self.findings)

    @property
    def traces(self) -> str:
        return traces_text(self.findings)


def group_findings(findings: Iterable[Finding]) -> list[FindingGroup]:
    """One group per (rule, file, line), in the order of each group's first finding."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        key = (f.rule, f.file, f.line) if f.file else (f.rule, None, None, id(f))
        groups.setdefault(key, []).append(f)
    return [FindingGroup(tuple(fs)) for fs in groups.values()]


def _trace_ids(f: Finding) -> list[int]:
    ids = [f.trace] if f.trace is not None else []
    occ = f.evidence.get("occurrences")
    if isinstance(occ, dict):
        for end in ("first", "last"):
            at = occ.get(end)
            if isinstance(at, dict) and isinstance(at.get("trace"), int):
                ids.append(at["trace"])
    return ids


def traces_text(findings: Sequence[Finding]) -> str:
    """The traces the findings are about: "0", "0, 3", "0–997" (first to last), or ""."""
    ids = sorted({t for f in findings for t in _trace_ids(f)})
    if not ids:
        return ""
    if len(ids) == 1:
        return str(ids[0])
    if len(ids) <= 3 and not any(f.occurrences > 1 for f in findings):
        return ", ".join(map(str, ids))
    return f"{ids[0]}–{ids[-1]}"
