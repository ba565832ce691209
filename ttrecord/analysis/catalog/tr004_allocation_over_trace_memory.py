"""TR004 allocation over trace memory: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import trace_memory, trace_overlap
from ttrecord.analysis.rules import FoldsUnder, Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR004",
    title="Allocation over trace memory",
    severity=Severity.ERROR,
    levels="error / info",
    summary="buffer allocated after capture over memory the trace uses, live across a replay",
    reported_when=(
        "a buffer allocated after `end_trace_capture` of a trace not yet released overlaps a range"
        " that trace reads, writes or creates, and is still allocated when `execute_trace` of that"
        " trace runs (not a tensor of an input's spec on exactly its range: that is the input). "
        "Error when the recording shows the damage used: a value of the buffer is read (by the"
        " host, an op whose result is used, or a replay) after a replay wrote over it, or a replay"
        " read as its input a value the program wrote into the buffer; the message names that"
        " use. Info (latent) otherwise, saying why this run was safe (consumed before the replay,"
        " never read after it, never written) and what would corrupt it; info too when the program"
        " opted out with ttnn's trace allocation tracker for this trace (`acknowledge_corruptible`,"
        " or allocated inside `corruptible_allocation_scope`; the message names where), while an"
        " opt-out made for another trace leaves the overlap an error. Info (latent, layout luck)"
        " also for a buffer allocated while a trace is live on a device and buffer type it uses,"
        " still allocated at a replay of it, that landed clear of its memory: the message gives"
        " where the allocator placed it and the trace's nearest ranges, and says that more memory"
        " in use before it or another order of allocations puts it on the trace's freed"
        " intermediates (ttnn warns at such an allocation, and its trace allocation tracker"
        " refuses the replay); one per call path with the count"
    ),
    at="the call that allocated it",
    why=(
        "A buffer allocated after end_trace_capture (trace not released) overlapping an address "
        "range the trace reads or writes, live across an execute_trace: the replay silently "
        "overwrites it."
    ),
    fix=(
        "Allocate every buffer the program needs before capture, or release the trace "
        "(ttnn.release_trace) before allocating; deallocate post-capture tensors before the next "
        "execute_trace."
    ),
    detect=trace_memory.detect_allocations,
    facts=("allocations_over_traces", "tracker_opt_outs"),
    highlight=trace_overlap.highlight,
    rank=70,
    evidence="`allocated` (the new buffer), `trace_ranges` (the trace's buffers it overlaps), `trace_access`, `captured` (capture lines), `execute` (`event`, `at`); for an error `corrupted` (`replay`, `how` (`host read`, `op input`, `replay input`), `used` or `written` (event seqs), `what`); for latent info `latent` (`why`, `would_corrupt`); for layout luck `layout_luck` (`why`, `would_corrupt`, `count`, `traces`, `clear_of`: `trace`, `ranges`, `span`, `nearest_below`, `nearest_above`, and `other_cores` for a sharded tensor on the trace's addresses on other cores) without `trace_ranges`; with a tracker opt-out `acknowledged` (`how`, `event`, `at`, and `covers_this_trace: false` when it was made for another trace); when the recorder noted who held the buffer at a replay, `held_by` (each reference with the line its frame ran, `self.kv[3] (model.py:42)`) and `held_at` (that replay's line)",
    folds_under=(
        FoldsUnder("TR005", "over_inputs", "freed_input",
                   "this allocation landed on the range the freed input held"),
        FoldsUnder("TR005", "read_as_input", "stale_input",
                   "a replay read the overwritten value as its input only because nothing was"
                   " copied into that captured input before it (the stale input's fix removes it)"),
    ),
)
