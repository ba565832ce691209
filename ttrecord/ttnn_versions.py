"""What differs between ttnn releases, one table per fact.

ttrecord runs on whatever ttnn the user has (PyPI serves 0.65.0 through 0.81.1). The facts
below were read from the released libraries themselves (the strings in `libtt_metal.so` and
`_ttnn*.so`, the Python files of each wheel) and, where the mock device can run a release, from
running it (`tests/realttnn/setup --ttnn X.Y.Z`). Each table maps the first release a form
appeared in to that form; `for_release` picks the entry for a given release. Where a fact can
be seen on the running library (a binding exists or not), `detect` asks the library instead,
so a release missing from a table is never assumed to behave like 0.81.1.

Message parsers accept every known form: a session's text may come from any release.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")

Release = tuple[int, int, int]

# The releases the contract lanes run (docs/support.md is generated from their results).
TESTED = ("0.66.0", "0.75.0", "0.81.1")
# The release the emulator's API and the full contract lane follow.
REFERENCE = "0.81.1"

_RELEASE = re.compile(r"^\s*(\d+)\.(\d+)\.(\d+)")


def release(text: str | None) -> Release | None:
    """The X.Y.Z a version string starts with ("0.81.1 (cp312-..., sfpi 7.89.0)" too)."""
    m = _RELEASE.match(text or "")
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def for_release(table: Mapping[str, T], version: str | Release | None) -> T | None:
    """The entry of the newest release in `table` at or before `version` (None: older than all,
    or no version known)."""
    key = version if isinstance(version, tuple) else release(version)
    if key is None:
        return None
    best: tuple[Release, T] | None = None
    for since, value in table.items():
        r = release(since)
        if r is not None and r <= key and (best is None or r > best[0]):
            best = (r, value)
    return best[1] if best else None


# --- TT_FATAL and log texts (the `info:` line of a TT_FATAL, or a tt-metal log line) ------

# A read inside a capture (`Tensor.cpu`, `ttnn.from_device`): fd_mesh_command_queue.cpp.
READ_IN_CAPTURE: dict[str, str] = {
    "0.66.0": "Reads are not supported during trace capture.",
}
# A write inside a capture (hardware; the mock device accepts writes).
WRITE_IN_CAPTURE: dict[str, str] = {
    "0.66.0": "Writes are not supported during trace capture.",
}
# A program-cache miss inside a capture: mesh_workload.cpp. 0.66.0 has no such check (its
# capture records the compile and fails later); the clean error came with tt-metal PR #46535.
BINARIES_IN_CAPTURE: dict[str, str | None] = {
    "0.66.0": None,
    "0.75.0": "Cannot load new binaries during trace capture.",
}
# The warning logged when a buffer is allocated while a trace is alive.
UNSAFE_ALLOCATION_WARNING: dict[str, str] = {
    "0.66.0": "Allocating device buffers is unsafe due to the existence of an active trace.",
    "0.78.0": "Allocating device buffers is potentially unsafe due to the existence of an active"
              " trace.",
}
# `end_trace_capture` when the capture does not fit: THE table of every known wording (TR016
# reads it through `analysis.trace_region_messages`; the two per-release views below are built
# from it). A new wording is one row: its kind, its pattern (named groups for its numbers), and
# the first release that prints it (None: only single-device tt-metal before the PyPI releases,
# still quoted in model READMEs).
_N = r"(?P<{}>\d+)"


@dataclass(frozen=True)
class TraceFitWording:
    kind: str  # "region_full" (fixed trace_region_size) or "dynamic_<cause>" (trace_region_size=0)
    pattern: str
    since: str | None

    @property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)


TRACE_FIT_WORDINGS: tuple[TraceFitWording, ...] = (
    TraceFitWording("region_full", "Creating trace buffers of size " + _N.format("needed") + "B on MeshDevice "
                    + _N.format("device") + ", but only " + _N.format("allocated") + "B is allocated for trace region",
                    "0.66.0"),
    TraceFitWording("region_full", "Creating trace buffers of size " + _N.format("needed") + "B on device "
                    + _N.format("device") + ", but only " + _N.format("allocated") + "B is allocated for trace region",
                    None),
    # trace_region_size=0 (tt-metal PR #36999): the top-down trace buffer is checked against the
    # DRAM the capture allocated, freed, or both ...
    TraceFitWording("dynamic_capture_dram", "Trace buffer at address " + _N.format("address")
                    + r" overlaps with DRAM activity during trace capture\. Allocation high water mark: "
                    + _N.format("allocation_mark") + ", Deletion high water mark: " + _N.format("deletion_mark"),
                    "0.75.0"),
    TraceFitWording("dynamic_deallocated", "Trace buffer at address " + _N.format("address")
                    + r" overlaps with buffers deallocated during trace capture \(deletion high water mark: "
                    + _N.format("deletion_mark") + r"\)", "0.75.0"),
    TraceFitWording("dynamic_allocated", "Trace buffer at address " + _N.format("address")
                    + r" overlaps with buffers allocated during trace capture \(allocation high water mark: "
                    + _N.format("allocation_mark") + r"\)", "0.75.0"),
    # ... and against each live trace's mark (tt-metal #48869, PR #50503)
    TraceFitWording("dynamic_live_trace", "Trace buffer at address " + _N.format("address")
                    + r" overlaps with DRAM activity captured by another live trace \(maximum live trace high"
                    r" water mark: " + _N.format("live_trace_mark") + r"\)", "0.76.0"),
)  # fmt: skip


def _by_release(kinds: Callable[[str], bool], oldest: str) -> dict[str, tuple[str, ...]]:
    """Per release that changed them, the patterns of the wordings `kinds` selects."""
    def key(text: str) -> Release:
        r = release(text)
        assert r is not None, text
        return r

    releases = sorted({w.since for w in TRACE_FIT_WORDINGS if w.since} | {oldest}, key=key)
    return {r: tuple(w.pattern for w in TRACE_FIT_WORDINGS if kinds(w.kind) and w.since and key(w.since) <= key(r))
            for r in releases}  # fmt: skip


# Views of TRACE_FIT_WORDINGS per release: the fixed-region message each release prints, and the
# dynamic-region checks each makes (one form per check; none before 0.75.0).
TRACE_REGION_TOO_SMALL: dict[str, str] = {
    w.since: w.pattern for w in TRACE_FIT_WORDINGS if w.kind == "region_full" and w.since
}
DYNAMIC_TRACE_REGION_OVERLAP: dict[str, tuple[str, ...]] = _by_release(lambda k: k.startswith("dynamic_"), "0.66.0")


@dataclass(frozen=True)
class TraceRegionMisfit:
    needed: int  # all trace buffers with the new one, total over banks
    mesh: int
    allocated: int  # the trace region's size, per the message


def parse_trace_fit(text: str) -> tuple[TraceFitWording, dict[str, int], str] | None:
    """The first known "does not fit" wording in `text`: the row, its numbers and the matched
    sentence; None when `text` holds none (every row is tried: a session's text may come from
    any release)."""
    for w in TRACE_FIT_WORDINGS:
        m = w.regex.search(text)
        if m:
            return w, {k: int(v) for k, v in m.groupdict().items()}, m.group(0)
    return None


def parse_trace_region_too_small(text: str) -> TraceRegionMisfit | None:
    """The numbers of an `end_trace_capture` "trace region too small" message, in any known
    release's form; None when `text` is not such a message."""
    found = parse_trace_fit(text)
    if found is None or found[0].kind != "region_full":
        return None
    v = found[1]
    return TraceRegionMisfit(v["needed"], v["device"], v["allocated"])


def parse_dynamic_trace_region_overlap(text: str) -> int | None:
    """The trace buffer's address in a dynamic-trace-region refusal (any release's form)."""
    found = parse_trace_fit(text)
    return found[1]["address"] if found is not None and found[0].kind.startswith("dynamic_") else None


def is_unsafe_allocation_warning(text: str) -> bool:
    """Whether a log line is ttnn's allocation-while-a-trace-is-alive warning (any release)."""
    return any(w in text for w in UNSAFE_ALLOCATION_WARNING.values())


def is_read_in_capture(text: str) -> bool:
    return any(w in text for w in READ_IN_CAPTURE.values())


def is_binaries_in_capture(text: str) -> bool:
    return any(w and w in text for w in BINARIES_IN_CAPTURE.values())


# --- the trace allocation tracker (tt-metal PR #50156, reworked in #53725/#53734/#53735) ----


@dataclass(frozen=True)
class Tracker:
    module: str  # where ttnn keeps it
    env: tuple[str, ...]  # its environment variables (read once at import)
    acknowledge: str  # the per-tensor opt-out, dotted from `ttnn`
    scope: str  # the context manager that exempts allocations, dotted from `ttnn`


TRACKER: dict[str, Tracker | None] = {
    # none in 0.66.0, 0.75.0 or 0.76.0: no TT_METAL_TRACE_ALLOC_* in their libraries or Python
    "0.66.0": None,
    "0.78.0": Tracker(
        module="ttnn.unsafe_allocation_tracker",
        env=("TT_METAL_TRACE_ALLOC_TRACKING", "TT_METAL_TRACE_ALLOC_TRACEBACKS",
             "TT_METAL_TRACE_ALLOC_REFERRER_DEPTH", "TT_METAL_TRACE_ALLOC_SKIP_PROGRAM_CACHE"),
        acknowledge="mark_corruptible",
        scope="corruptible_allocation_scope",
    ),
    "0.81.1": Tracker(
        module="ttnn.tools.trace_allocation_tracker",
        env=("TT_METAL_TRACE_ALLOC_TRACKING", "TT_METAL_TRACE_ALLOC_TRACEBACKS",
             "TT_METAL_TRACE_ALLOC_REFERRER_DEPTH", "TT_METAL_TRACE_ALLOC_SKIP_PROGRAM_CACHE"),
        acknowledge="tools.trace_allocation_tracker.acknowledge_corruptible",
        scope="tools.trace_allocation_tracker.corruptible_allocation_scope",
    ),
}

# --- `trace_region_size`: what the number means ----------------------------------------------

# Measured on the mock p150 (8 DRAM banks) by each lane: the trace buffer of an empty capture
# lands `trace_region_size` below the top of every bank in 0.66.0 (the size is per bank), and
# `trace_region_size / 8` below it in 0.75.0 and 0.81.1 (the size is the total over the banks; tt-metal
# PR #35271, then PR #47122 "the total trace budget across DRAM banks").
TRACE_REGION_SIZE_MEANING: dict[str, str] = {
    "0.66.0": "per-bank",
    "0.75.0": "total",  # measured on 0.75.0 and 0.81.1
}


def trace_region_per_bank(size: int, banks: int, version: str | None) -> int:
    """Bytes of each DRAM bank the trace region takes, for `trace_region_size=size`. A release
    older than every entry is not guessed at: the newest known meaning applies."""
    meaning = for_release(TRACE_REGION_SIZE_MEANING, version) or TRACE_REGION_SIZE_MEANING[REFERENCE]
    return size if meaning == "per-bank" else size // banks


# --- the allocator on a mock p150 (measured by the lanes) ----------------------------------

# The first addresses the allocator hands out on a fresh mock p150 (DRAM bottom-up, L1 top-down),
# and the bank-local footprint of a 32x32 bf16 tile tensor (bytes per bank).
ALLOCATOR_P150: dict[str, dict[str, int]] = {
    "0.66.0": {"first_dram": 64, "first_l1": 1570816, "tile_per_bank": 2048},
    "0.75.0": {"first_dram": 1048704, "first_l1": 1570816, "tile_per_bank": 2048},
}

# --- Python bindings (feature detection on the running library) ------------------------------


def _has(module: Any, dotted: str) -> bool:
    obj = module
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:
            return False
    return True


# 0.66.0's Tensor lacks the buffer page methods (see tensor_pages)
TENSOR_PAGE_METHODS: dict[str, bool] = {"0.66.0": False, "0.75.0": True}

# binding -> where it lives, relative to the `ttnn` module
BINDINGS: dict[str, str] = {
    "get_buffers": "_ttnn.reports.get_buffers",
    "num_program_cache_entries": "MeshDevice.num_program_cache_entries",
    "mesh_event": "MeshEvent",
    "tensor_deallocate": "Tensor.deallocate",
}
# Bindings a release may lack: the recorder reads them only where they exist.
OPTIONAL_BINDINGS: dict[str, dict[str, bool]] = {
    # `ttnn.is_trace_capture_active`: not in 0.66.0 … 0.78.0 (no such string in their libraries)
    "is_trace_capture_active": {"0.66.0": False, "0.81.1": True},
    # Tensor.buffer_num_pages / buffer_aligned_page_size / buffer_unique_id (see tensor_pages)
    "Tensor.buffer_num_pages": TENSOR_PAGE_METHODS,
}


def detect(ttnn: ModuleType) -> dict[str, bool]:
    """Which of `BINDINGS` the running ttnn has, plus whether its tracker is importable."""
    found = {name: _has(ttnn, path) for name, path in BINDINGS.items()}
    found.update({name: _has(ttnn, name) for name in OPTIONAL_BINDINGS})
    found["tracker"] = any(_tracker_file(ttnn, t.module) for t in TRACKER.values() if t)
    return found


def _tracker_file(ttnn: ModuleType, module: str) -> bool:
    """Whether the tracker's file ships with this ttnn (found without importing it: importing
    reads its environment variables)."""
    base = getattr(ttnn, "__file__", None)
    rel = module.split(".")[1:]
    return bool(base) and (Path(str(base)).parent.joinpath(*rel[:-1], rel[-1] + ".py")).is_file()


# --- a device tensor's pages ----------------------------------------------------------------

# 0.66.0's Tensor has `buffer_address` but no `buffer_num_pages`, `buffer_aligned_page_size`,
# `buffer_unique_id` or `element_size` (added by 0.75.0). Without them the pages are computed
# as its allocator lays them out: one 32x32 tile per page in TILE layout, one row in ROW_MAJOR.
_TILE_BYTES = {"BFLOAT16": 2048, "FLOAT32": 4096, "UINT32": 4096, "INT32": 4096, "UINT16": 2048,
               "UINT8": 1024, "BFLOAT8_B": 1088, "BFLOAT4_B": 576}
_ELEMENT_BYTES = {"BFLOAT16": 2, "FLOAT32": 4, "UINT32": 4, "INT32": 4, "UINT16": 2, "UINT8": 1}


def tensor_pages(t: Any) -> tuple[int, int]:
    """(pages, aligned page size) of a device tensor's buffer, on any release."""
    if hasattr(t, "buffer_num_pages"):  # feature detection, not the version
        return int(t.buffer_num_pages()), int(t.buffer_aligned_page_size())
    dtype = str(t.dtype).rsplit(".", 1)[-1].upper()
    dims = [int(d) for d in t.padded_shape]
    volume = 1
    for d in dims:
        volume *= d
    if "TILE" in str(t.layout).upper():
        return -(-volume // 1024), _TILE_BYTES.get(dtype, 2048)
    width = dims[-1] if dims else 1
    page = width * _ELEMENT_BYTES.get(dtype, 2)
    return volume // max(width, 1), -(-page // 32) * 32  # DRAM pages are 32-byte aligned


# --- the build a session names ---------------------------------------------------------------


def build_of(ttnn: ModuleType | None) -> str | None:
    """The wheel's build (platform tag and the sfpi compiler release it was built for): two
    wheels of one release differ in these, and ttnn has no git hash of its own at run time.
    `ttnn` None: the installed package, found without importing it."""
    parts: list[str] = []
    try:
        import importlib.metadata

        dist = importlib.metadata.distribution("ttnn")
        wheel = dist.read_text("WHEEL") or ""
        tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
        parts.extend(tags[:1])
    except Exception:
        pass
    base = getattr(ttnn, "__file__", None) if ttnn is not None else _installed_init()
    if base:
        sfpi = Path(str(base)).parent / "tt_metal" / "sfpi-version"
        try:
            m = re.search(r"sfpi_version='([^']+)'", sfpi.read_text())  # not in 0.66.0
            if m:
                parts.append(f"sfpi {m[1]}")
        except OSError:
            pass
    return ", ".join(parts) or None


def _installed_init() -> str | None:
    try:
        import importlib.util

        spec = importlib.util.find_spec("ttnn")
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


def describe(version: str | None, build: str | None) -> str | None:
    """The one string a session keeps: "0.81.1 (cp312-cp312-manylinux_2_34_x86_64, sfpi 7.89.0)"."""
    if version is None:
        return None
    return f"{version} ({build})" if build else version
