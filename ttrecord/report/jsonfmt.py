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
    return {
        "version": VERSION,
        "session": result.path,
        "backend": result.backend,
        "status": result.status,
        "findings": [finding_dict(f) for f in result.findings],
        "summary": result.summary(),
    }


def render(result: CheckResult, out: TextIO) -> None:
    json.dump(document(result), out, indent=2, default=repr)
    out.write("\n")
