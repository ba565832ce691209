"""A finding: one hazard the analysis found, in the form every front end shows it."""

from __future__ import annotations

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
    rule: str  # stable id, TR001 ... TR010
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
