"""`ttrecord check --format json`: one object with the session, its findings and a summary.

The shape is a stable interface for scripts and CI:
{"version", "session", "backend", "status", "findings": [{"id", "severity", "title", "message",
"file", "line", "function", "callers", "occurrences", "folded", "events", "evidence", "fix"}],
"summary": {...}}. Its JSON Schema is docs/check-json.schema.json (described in
docs/check-json.md); additions keep VERSION, changes to existing keys bump it.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from ttrecord.findings import Finding
from ttrecord.report import CheckResult
from ttrecord.report.baseline import fingerprints
from ttrecord.report.result import extras

VERSION = 1  # the contract version of this document


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "id": f.rule,
        "severity": str(f.severity),
        "title": f.title,
        "message": f.message,
        "file": f.file,
        "line": f.line,
        "function": f.function,
        "callers": [list(frame) for frame in f.stack],  # innermost first: where a helper is called
        "occurrences": f.occurrences,  # the same mistake at this line, grouped
        "folded": f.folded,  # consequences of this mistake, reported under it
        "events": list(f.events),
        "evidence": f.evidence,
        "fix": f.fix,
    }


def document(result: CheckResult) -> dict[str, Any]:
    more = extras(result)
    findings: list[dict[str, Any]] = []
    states = more.baseline.state if more.baseline is not None else [None] * len(result.findings)
    past = more.keep_going or [None] * len(result.findings)
    for f, fp, state, went in zip(result.findings, fingerprints(result), states, past, strict=True):
        item = finding_dict(f)
        item["fingerprint"] = fp  # matches it across runs (`check --baseline`)
        if state is not None:
            item["baseline_state"] = state
        if went is not None:  # recorded with --keep-going: real ttnn stops here
            item["keep_going"] = went
        patch = more.patches[len(findings)] if more.patches else None
        if patch is not None:  # a unified diff against the stored source, for `patch -p0`
            item["patch"] = patch.diff(result.cwd)
        findings.append(item)
    doc: dict[str, Any] = {
        "version": VERSION,
        "session": result.path,
        "backend": result.backend,
        "status": result.status,
        "nothing_to_judge": more.empty.why if more.empty is not None else None,
        "changed_on_disk": more.changed_on_disk,
        "findings": findings,
        "summary": result.summary(),
    }
    if more.baseline is not None:
        b = more.baseline
        doc["baseline"] = {"path": b.baseline, "new": b.new, "still_there": b.still,
                           "fixed": b.fixed}  # fmt: skip
    return doc


def render(result: CheckResult, out: TextIO) -> None:
    json.dump(document(result), out, indent=2, default=repr)
    out.write("\n")
