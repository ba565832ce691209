"""ttnn's "the trace does not fit" errors as TR016 reads them.

`end_trace_capture` raises one of these when a capture's trace buffer has no room:
- a fixed region (`trace_region_size` > 0): the sum of live trace buffers exceeds the region.
  ttnn 0.81.1 and later say "on MeshDevice M"; single-device tt-metal before the mesh rewrite
  (and its docs, still quoted in model READMEs) said "on device D";
- a dynamic region (`trace_region_size=0`, tt-metal PRs #36999 and #50503, all four present in
  0.81.1's libtt_metal.so): the buffer, placed top-down in DRAM, lands below the highest DRAM
  address the capture allocated, freed, or both, or below a live trace's mark.
The wordings themselves are one table, `ttnn_versions.TRACE_FIT_WORDINGS` (with the release
each appeared in), so a new ttnn only adds a row there; this module says what each means.
"""

from __future__ import annotations

from dataclasses import dataclass

from ttrecord.ttnn_versions import TRACE_FIT_WORDINGS, TraceFitWording, parse_trace_fit

WORDINGS: tuple[TraceFitWording, ...] = TRACE_FIT_WORDINGS

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
    found = parse_trace_fit(error)
    if found is None:
        return None
    wording, values, text = found
    return TraceFit(wording.kind, values, text)
