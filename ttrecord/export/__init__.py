"""Exporters: a recorded session written in another tool's format.

Each exporter is one module in this package with a `DESCRIPTION`, an `OUTPUT` kind ("file" or
"folder"), a `DEFAULT_SUFFIX` for the default output name, and
`export(session, out) -> ExportSummary`. Adding a format is one new module and one line in
EXPORTERS; the CLI builds its choices and help from this table, and modules are imported only
when used so `ttrecord --help` stays fast.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType

from ttrecord.errors import TtrecordError

# format name -> module under ttrecord.export
EXPORTERS: dict[str, str] = {
    "perfetto": "perfetto",
    "visualizer": "visualizer",
}


@dataclass
class ExportSummary:
    """What an exporter wrote, for the one line the CLI prints."""

    path: str
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        parts = ", ".join(f"{n} {what}" for what, n in self.counts.items())
        return f"wrote {self.path}" + (f" ({parts})" if parts else "")


def exporter(name: str) -> ModuleType:
    """The module implementing one format, or a one-line error naming the known ones."""
    module = EXPORTERS.get(name)
    if module is None:
        known = ", ".join(sorted(EXPORTERS))
        raise TtrecordError(f"unknown export format {name!r} (known: {known})")
    return importlib.import_module(f"ttrecord.export.{module}")
