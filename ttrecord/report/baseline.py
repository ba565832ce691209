"""`check --baseline OLD`: which findings are fixed, still there or new since an older check.

As ruff's and semgrep's baselines do, a finding is matched by a fingerprint that survives
lines moving: its rule, its file (relative to the session's working folder, so two checkouts
match), the source text of its line with whitespace collapsed, its function, and its index
among findings that share all of those. A line edited is a new finding; a line moved is not.
The baseline is an older session (its stored findings, or a fresh analysis that is not
stored in it) or the JSON `check --format json` wrote, whose findings carry their fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ttrecord.errors import TtrecordError

if TYPE_CHECKING:
    from ttrecord.analysis.check import CheckResult
    from ttrecord.findings import Finding


def _relative(file: str | None, cwd: str | None) -> str:
    if not file:
        return ""
    if cwd and os.path.isabs(file):
        try:
            return Path(file).relative_to(cwd).as_posix()
        except ValueError:
            pass
    return Path(file).as_posix()


def fingerprints(result: CheckResult) -> list[str]:
    """One fingerprint per finding of `result`, in its order."""
    seen: dict[tuple[str, ...], int] = {}
    out = []
    for f in result.findings:
        text = " ".join((result.source_line(f.file, f.line) or "").split())
        key = (f.rule, _relative(f.file, result.cwd), text, f.function or "")
        index = seen.get(key, 0)
        seen[key] = index + 1
        digest = hashlib.sha256("\0".join((*key, str(index))).encode()).hexdigest()[:16]
        out.append(f"{f.rule}:{digest}")
    return out


@dataclass
class Comparison:
    """The current findings against a baseline's: `state[i]` is "new" or "still there" for
    the current finding i; `fixed` the baseline's findings no longer found (JSON-ready)."""

    baseline: str
    state: list[str]
    fixed: list[dict[str, Any]]

    @property
    def new(self) -> int:
        return self.state.count("new")

    @property
    def still(self) -> int:
        return self.state.count("still there")

    def line(self) -> str:
        return (f"Against baseline {self.baseline}: {len(self.fixed)} fixed,"
                f" {self.still} still there, {self.new} new.")  # fmt: skip


def _entry(f: Finding, fingerprint: str) -> dict[str, Any]:
    return {"id": f.rule, "severity": str(f.severity), "title": f.title, "file": f.file,
            "line": f.line, "function": f.function, "fingerprint": fingerprint}  # fmt: skip


def load(path: str) -> list[dict[str, Any]]:
    """The baseline's findings as entries with a fingerprint: from a session or check JSON."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise TtrecordError(f"--baseline {path}: cannot be read ({exc.strerror or exc})") from None
    if head.startswith(b"SQLite format 3"):
        from ttrecord.analysis.check import check_session

        old = check_session(path, store=False)
        return [_entry(f, p) for f, p in zip(old.findings, fingerprints(old), strict=True)]
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        entries = doc["findings"]
        if not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in entries):
            raise ValueError("a finding without a fingerprint")
    except (ValueError, KeyError, TypeError) as exc:
        raise TtrecordError(f"--baseline {path}: neither a session nor the JSON of"
                            f" `ttrecord check --format json` ({exc})") from None  # fmt: skip
    return [dict(e) for e in entries]


def compare(result: CheckResult, baseline_path: str, old: list[dict[str, Any]]) -> Comparison:
    remaining: dict[str, int] = {}
    for entry in old:
        remaining[entry["fingerprint"]] = remaining.get(entry["fingerprint"], 0) + 1
    state = []
    for fp in fingerprints(result):
        if remaining.get(fp, 0) > 0:
            remaining[fp] -= 1
            state.append("still there")
        else:
            state.append("new")
    fixed = []
    for entry in old:
        if remaining.get(entry["fingerprint"], 0) > 0:
            remaining[entry["fingerprint"]] -= 1
            fixed.append(entry)
    return Comparison(baseline_path, state, fixed)
