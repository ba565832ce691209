"""What a hazard rule declares (`Rule`) and the helpers detectors use to build findings.

Each rule is one module of `ttrecord.analysis.catalog` with a `RULE = Rule(...)`;
`ttrecord.analysis.registry` finds them. Ids, severities and titles are stable: CI
configurations, SARIF consumers and stored sessions refer to them. The `fix` text is the default
fix a reporter shows when a rule is listed on its own (SARIF rule metadata); each finding
carries a fix hint specific to what was found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ttrecord.analysis.context import Context
from ttrecord.events import BufferRef, Event
from ttrecord.findings import Finding, Severity, _library


Detector = Callable[[Sequence[Event], Context], "list[Finding]"]
# (map's (device, buffer type), its buffers in allocation order, captured traces by end seq,
# ranges each trace reads or writes by traces.id, execute seqs by traces.id) -> for each buffer
# id to highlight, (its row, the trace ranges it sits on). See `trace_overlap.highlight`.
Highlight = Callable[..., "dict[int, tuple[Any, ...]]"]


@dataclass(frozen=True)
class FoldsUnder:
    """A finding of another rule this rule's findings may be a consequence of.

    A consequence folds under a cause only when the cause's event produced it, which both
    findings show by carrying the same evidence: the consequence's `links[link]` and the
    cause's `links[cause_link]` share a value (the same buffer, the same input, the replay or
    the stop the cause led to). Two findings sharing a line prove nothing, so no declaration
    matches on lines. `cause` "*" is any rule; `errors_only` limits causes to errors.
    """

    cause: str  # the cause's rule id, or "*"
    link: str  # the key in the consequence's `Finding.links`
    cause_link: str  # the key in the cause's `Finding.links`
    why: str  # shown with the folded finding: how the cause produced it
    errors_only: bool = False


@dataclass(frozen=True)
class Rule:
    """One hazard rule as its module declares it (see `ttrecord.analysis.registry`)."""

    id: str  # stable: CI configurations, SARIF consumers and stored sessions refer to it
    title: str
    severity: Severity  # the default level (SARIF defaultConfiguration); findings may differ
    levels: str  # the severity policy as documented, e.g. "error / info"
    summary: str  # one line for the README's rule table
    reported_when: str  # the exact rule, for docs/check.md
    at: str  # the line a finding is pinned to ("the read")
    why: str  # the rule and why it breaks replay (SARIF fullDescription)
    fix: str  # the default fix (SARIF help); each finding carries its own specific one
    detect: Detector
    facts: tuple[str, ...] = ()  # named loaders in `loading.LOADERS` beyond the core events
    highlight: Highlight | None = None  # what it marks in the memory map, if anything
    # Which finding stays primary when several rules point at one line: the lowest rank, the
    # cause (a readback in a capture before the allocation it made corruptible).
    rank: int = 1000
    # Its findings' own evidence keys, for docs/check-json.md (markdown; each top-level key in
    # backticks, nested ones in parentheses): a test checks findings carry no other key.
    evidence: str = ""
    folds_under: tuple[FoldsUnder, ...] = ()  # the causes its findings fold under (`grouping`)

    @property
    def help(self) -> str:
        return self.fix

    def evidence_keys(self) -> frozenset[str]:
        """The top-level keys `evidence` names (backticked, outside parentheses); `trace_N`
        stands for `trace_0`, `trace_1`, …"""
        text, depth, top = self.evidence, 0, []
        for ch in text:
            depth += ch == "("
            if depth == 0:
                top.append(ch)
            depth -= ch == ")" and depth > 0
        return frozenset(re.findall(r"`(\w+)`", "".join(top)))


# Evidence keys any finding may carry besides its rule's own (docs/check-json.md).
COMMON_EVIDENCE = frozenset({"trace", "region", "device", "occurrences", "folded", "between", "helper", "mesh", "chips"})


def undeclared_evidence(rule: Rule, evidence: dict[str, Any]) -> list[str]:
    """Top-level keys of a finding's evidence its rule does not declare (nor every rule has)."""
    declared = rule.evidence_keys() | COMMON_EVIDENCE
    return sorted(k for k in evidence
                  if k not in declared and not ("trace_N" in declared and re.fullmatch(r"trace_\d+", k)))  # fmt: skip


def hexdec(value: int) -> str:
    """An address or size as users see it in ttnn logs and the allocator report: hex and decimal."""
    return f"{value:#x} ({value})"


def range_evidence(buf: BufferRef) -> dict[str, Any]:
    return {
        "device": buf.device,
        "buffer_type": buf.buffer_type,
        "address": hexdec(buf.address),
        "end": hexdec(buf.end),
        "size": hexdec(buf.size),
        "range": f"[{buf.address:#x}, {buf.end:#x})",
    }


@lru_cache(maxsize=4096)  # asked once per line named in every message
def short_file(path: str | None) -> str:
    return Path(path).name if path else "?"


def where(ctx: Context, ev: Event) -> str:
    site = ctx.site(ev)
    return f"{short_file(site.file)}:{site.line}" if site else f"event {ev.seq}"


def finding(rule: str, ctx: Context, culprit: Event, message: str, *, fix: str | None = None,
            related: list[int] | tuple[int, ...] = (), evidence: dict[str, Any] | None = None,
            trace: int | None = None, severity: Severity | None = None) -> Finding:  # fmt: skip
    """A finding pinned to the user's line of `culprit` (the call that caused the hazard)."""
    from ttrecord.analysis.registry import rule_by_id

    meta = rule_by_id(rule)
    site = ctx.site(culprit)
    evidence = dict(evidence or {})
    if site is None:
        # No call made it (a free by a dropped Python reference): pinned to the interval
        # between the two recorded calls around it, and said so.
        before, after = ctx.facts.calls_around(culprit.seq)
        anchor = before or after
        site = anchor.callsite if anchor is not None else None
        evidence["between"] = {
            "after": f"`{before.name}` at {where(ctx, before)}" if before else "the start of the run",
            "before": f"`{after.name}` at {where(ctx, after)}" if after else "the end of the run",
        }
        message += (
            f" No ttnn call did this (event {culprit.seq}): it happened between"
            f" {evidence['between']['after']} and {evidence['between']['before']}, for example"
            " where the program dropped its last reference to a tensor; the line shown is the"
            " last recorded call before it."
        )
    events = [culprit.seq] + [s for s in dict.fromkeys(related) if s != culprit.seq]
    file, line, function = (site.file, site.line, site.function) if site else (None, None, None)
    stack = [(f[0], f[1], f[2]) for f in site.stack] if site else []
    if file and _library(file):
        # The call is inside installed library code (an executor or tracer class from a
        # package): the fix goes where the user's code calls into it; the library line is
        # kept as the helper frame.
        i = next((i for i, f in enumerate(stack) if f and f[0] and not _library(f[0])), None)
        if i is not None:
            evidence["helper"] = f"{file}:{line} in {function}"
            (file, line, function), stack = stack[i][:3], stack[i + 1 :]
    return Finding(
        rule=rule,
        severity=severity or meta.severity,
        title=meta.title,
        message=message,
        fix=fix or meta.help,
        file=file,
        line=line,
        function=function,
        stack=stack,
        events=events,
        evidence=evidence,
        device=culprit.device,
        trace=trace if trace is not None else culprit.trace,
    )
