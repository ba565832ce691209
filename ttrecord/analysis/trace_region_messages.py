"""The known wordings of ttnn's "the trace does not fit" errors, in one table (TR016 reads them).

`end_trace_capture` raises one of these when a capture's trace buffer has no room:
- a fixed region (`trace_region_size` > 0): the sum of live trace buffers exceeds the region.
  ttnn 0.81.1 and later say "on MeshDevice M"; single-device tt-metal before the mesh rewrite
  (and its docs, still quoted in model READMEs) said "on device D";
- a dynamic region (`trace_region_size=0`, tt-metal PRs #36999 and #50503, all four present in
  0.81.1's libtt_metal.so): the buffer, placed top-down in DRAM, lands below the highest DRAM
  address the capture allocated, freed, or both, or below a live trace's mark.
Version-dependent wording lives here so a new ttnn only adds a row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_N = r"(\d+)"


@dataclass(frozen=True)
class Wording:
    """One known message: what it means and the pattern naming its numbers."""

    kind: str  # "region_full" (fixed region) or "dynamic_<cause>" (trace_region_size=0)
    pattern: re.Pattern[str]
    fields: tuple[str, ...]


WORDINGS: tuple[Wording, ...] = (
    Wording("region_full", re.compile(
        rf"Creating trace buffers of size {_N}B on MeshDevice {_N}, but only {_N}B is allocated"
        r" for trace region"), ("needed", "device", "allocated")),
    Wording("region_full", re.compile(
        rf"Creating trace buffers of size {_N}B on device {_N}, but only {_N}B is allocated for"
        r" trace region"), ("needed", "device", "allocated")),
    Wording("dynamic_capture_dram", re.compile(
        rf"Trace buffer at address {_N} overlaps with DRAM activity during trace capture\."
        rf" Allocation high water mark: {_N}, Deletion high water mark: {_N}"),
        ("address", "allocation_mark", "deletion_mark")),
    Wording("dynamic_deallocated", re.compile(
        rf"Trace buffer at address {_N} overlaps with buffers deallocated during trace capture"
        rf" \(deletion high water mark: {_N}\)"), ("address", "deletion_mark")),
    Wording("dynamic_allocated", re.compile(
        rf"Trace buffer at address {_N} overlaps with buffers allocated during trace capture"
        rf" \(allocation high water mark: {_N}\)"), ("address", "allocation_mark")),
    Wording("dynamic_live_trace", re.compile(
        rf"Trace buffer at address {_N} overlaps with DRAM activity captured by another live"
        rf" trace \(maximum live trace high water mark: {_N}\)"), ("address", "live_trace_mark")),
)  # fmt: skip

# What each dynamic cause means, for the finding's message.
CAUSES = {
    "dynamic_capture_dram": "DRAM the capture both allocated and freed",
    "dynamic_deallocated": "DRAM the capture freed",
    "dynamic_allocated": "DRAM the capture allocated",
    "dynamic_live_trace": "DRAM a live trace's capture used",
}


@dataclass(frozen=True)
class TraceFit:
    """A parsed "does not fit" message."""

    kind: str
    values: dict[str, int]
    text: str  # the matched sentence, quoted in the finding

    @property
    def dynamic(self) -> bool:
        return self.kind.startswith("dynamic_")

    @property
    def mark(self) -> int:
        """The highest address the dynamic trace buffer had to clear."""
        v = self.values
        return max(v.get("allocation_mark", 0), v.get("deletion_mark", 0), v.get("live_trace_mark", 0))


def parse(error: str) -> TraceFit | None:
    """The first known wording in an exception text, or None."""
    for w in WORDINGS:
        m = w.pattern.search(error)
        if m:
            return TraceFit(w.kind, dict(zip(w.fields, (int(g) for g in m.groups()))), m.group(0))
    return None
