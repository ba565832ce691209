"""A finding: one hazard the analysis found, in the form every front end shows it."""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def __str__(self) -> str:
        return self.value

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


@dataclass(slots=True)
class Finding:
    rule: str  # stable id of a registered rule (analysis/registry.py, analysis/catalog/)
    severity: Severity
    title: str
    message: str  # one paragraph, in the user's terms
    fix: str  # the ttnn idiom to use instead
    file: str | None = None
    line: int | None = None
    function: str | None = None
    stack: list[tuple[str, int, str]] = field(default_factory=list)
    events: list[int] = field(default_factory=list)  # related event seqs, the culprit first
    evidence: dict[str, Any] = field(default_factory=dict)  # addresses, sizes, values, ...
    device: int | None = None
    trace: int | None = None
    id: int | None = None  # assigned by the store
    # What the analysis knows about the mistake behind the finding, to fold its consequences
    # under it (`ttrecord.analysis.grouping`); never stored or shown.
    links: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def callers(self) -> list[tuple[str, int, str]]:
        """The recorded callers of the finding's line in user code (innermost first): where a
        helper is called, often where the fix goes. Library frames (site-packages, the
        standard library: a test runner, an executor framework) are left out."""
        return [(f[0], f[1], f[2]) for f in self.stack if f and f[0] and f[1] and not _library(f[0])]

    @property
    def occurrences(self) -> int:
        """How many times the mistake happened (findings are grouped by rule and call site)."""
        occ = self.evidence.get("occurrences")
        return int(occ.get("count", 1)) if isinstance(occ, dict) else 1

    @property
    def folded(self) -> list[dict[str, Any]]:
        """Consequences of this mistake that were reported under it instead of on their own."""
        value = self.evidence.get("folded")
        return value if isinstance(value, list) else []


@functools.lru_cache(maxsize=4096)
def _library(file: str) -> bool:
    """Installed or standard-library code (site-packages, the interpreter's lib folder). Cached:
    every finding asks, and `sysconfig.get_paths` costs most of a millisecond."""
    import sys
    import sysconfig

    if "site-packages" in file or "dist-packages" in file or file.startswith("<"):
        return True
    stdlib = sysconfig.get_paths().get("stdlib") or ""
    return bool(stdlib) and file.startswith(stdlib) or file.startswith(sys.base_prefix + "/lib/")
