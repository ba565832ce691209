"""`ttrecord check --format sarif`: SARIF 2.1.0, for GitHub code scanning and editors.

Every registered rule is listed in the tool's rules (id, title, why, help = the fix), so a viewer
can explain a rule id even without results. Each result points at the user's line; files under
the session's working folder are given relative to it (base id SRCROOT) so that code scanning
matches them to the repository, other files as absolute file URIs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from ttrecord import __version__
from ttrecord.analysis.registry import rules
from ttrecord.findings import Finding, Severity
from ttrecord.report import CheckResult
from ttrecord.report.baseline import fingerprints
from ttrecord.report.patches import sarif_fix
from ttrecord.report.result import extras

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# The project's documentation (docs/ of the repository). SARIF requires absolute URIs for the
# tool's informationUri and a rule's helpUri (multitool rule SARIF1005), so this is the one place
# to change when the documentation moves; the same base as the JSON schemas' $id.
DOCS_URL = "https://ttrecord.dev/docs/"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _artifact(file: str, cwd: str | None) -> dict[str, Any]:
    path = Path(file)
    if cwd and path.is_absolute():
        try:
            rel = path.relative_to(cwd)
        except ValueError:
            pass
        else:
            return {"uri": PurePosixPath(*rel.parts).as_posix(), "uriBaseId": "SRCROOT"}
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": PurePosixPath(*path.parts).as_posix(), "uriBaseId": "SRCROOT"}


def _rule(rule_id: str) -> dict[str, Any]:
    r = rules()[rule_id]
    return {
        "id": r.id,
        "name": "".join(w.capitalize() for w in r.title.replace("/", " ").split()),
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": r.why},
        "help": {"text": r.fix},
        "helpUri": f"{DOCS_URL}check.md#rules",  # the catalog table, one row per rule id
        "defaultConfiguration": {"level": _LEVEL[r.severity]},
    }


def _result(f: Finding, index: dict[str, int], cwd: str | None, script: str | None = None,
            session: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": _LEVEL[f.severity],
        "message": {"text": f"{f.message} Fix: {f.fix}"},
        "properties": {
            "title": f.title,
            "events": list(f.events),
            "evidence": f.evidence,
            "fix": f.fix,
            "device": f.device,
            "trace": f.trace,
            "occurrences": f.occurrences,
        },  # fmt: skip
    }
    # Every result has a location (code scanning rejects one without): the finding's line, or
    # for the rare finding with no recorded call at all, the recorded program itself, or (a
    # program run as `-m module`) the session file the finding comes from.
    file = f.file or (script if script and not script.startswith("-m ") else None) or session
    if file:
        location: dict[str, Any] = {
            "physicalLocation": {
                "artifactLocation": _artifact(file, cwd),
                **({"region": {"startLine": f.line}} if f.file and f.line and f.line > 0 else {}),
            }
        }
        if f.function:
            location["logicalLocations"] = [{"name": f.function, "kind": "function"}]
        result["locations"] = [location]
    # Consequences folded under this finding, each at its own line (one mistake, one result).
    related = [
        {"id": i, "message": {"text": f"{item['rule']} {item['title']}: {item['why']}. {item['message']}"},
         "physicalLocation": {"artifactLocation": _artifact(item["file"], cwd),
                              **({"region": {"startLine": item["line"]}} if item.get("line") else {})}}
        for i, item in enumerate(f.folded) if item.get("file")
    ]  # fmt: skip
    if related:
        result["relatedLocations"] = related
    frames = [
        {"location": {"physicalLocation": {"artifactLocation": _artifact(file, cwd),
                                           "region": {"startLine": line}},
                      "message": {"text": func}}}
        for file, line, func in f.stack if file and line and line > 0
    ]  # fmt: skip
    if frames:
        result["stacks"] = [{"message": {"text": "call stack"}, "frames": frames}]
    return result


def _results(result: CheckResult, index: dict[str, int]) -> list[dict[str, Any]]:
    """Each finding with its fingerprint (code scanning matches alerts across runs by it) and,
    against a baseline, its state."""
    baseline = extras(result).baseline
    out = []
    for i, (f, fp) in enumerate(zip(result.findings, fingerprints(result), strict=True)):
        item = _result(f, index, result.cwd, result.script, os.path.abspath(result.path))
        item["partialFingerprints"] = {"ttrecordFinding/v1": fp}
        went = (extras(result).keep_going or [None] * len(result.findings))[i]
        if went is not None:  # recorded with --keep-going: real ttnn stops here
            item["properties"]["keepGoing"] = went
        patch = (extras(result).patches or [None] * len(result.findings))[i]
        if patch is not None:  # the mechanical fix, as code scanning shows fixes
            item["fixes"] = [sarif_fix(patch, _artifact(patch.file, result.cwd))]
        if baseline is not None:
            item["baselineState"] = "new" if baseline.state[i] == "new" else "unchanged"
        out.append(item)
    return out


def document(result: CheckResult) -> dict[str, Any]:
    more = extras(result)
    rule_ids = sorted(rules())
    index = {r: i for i, r in enumerate(rule_ids)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "ttrecord",
                "version": __version__,
                "informationUri": f"{DOCS_URL}check.md",
                "rules": [_rule(r) for r in rule_ids],
            }
        },
        "results": _results(result, index),
        "invocations": [
            {
                "executionSuccessful": True,
                "properties": {
                    "session": result.path,
                    "status": result.status,
                    "runFinished": result.finished,
                    "backend": result.backend,
                    "nothingToJudge": more.empty.why if more.empty is not None else None,
                    "changedOnDisk": more.changed_on_disk,
                },
            }
        ],  # fmt: skip
    }
    if result.cwd:
        run["originalUriBaseIds"] = {"SRCROOT": {"uri": Path(result.cwd).as_uri() + "/"}}
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def render(result: CheckResult, out: TextIO) -> None:
    json.dump(document(result), out, indent=2, default=repr)
    out.write("\n")
