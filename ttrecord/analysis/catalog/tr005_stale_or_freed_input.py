"""TR005 stale or freed trace input: the rule's declaration."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis import sub_devices, trace_inputs
from ttrecord.analysis.context import Context
from ttrecord.events import Event
from ttrecord.findings import Finding
from ttrecord.analysis.rules import FoldsUnder, Rule
from ttrecord.findings import Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    return trace_inputs.detect_stale_inputs(events, ctx) + sub_devices.detect_semaphores(events, ctx)


RULE = Rule(
    id="TR005",
    title="Stale or freed trace input",
    severity=Severity.ERROR,
    levels="error",
    summary="stale or freed trace input",
    reported_when=(
        "a trace input is freed and the trace is replayed afterwards while no tensor of its spec "
        "on its range was written since (an input freed inside the capture and allocated again on"
        " exactly its range with its spec before `end_trace_capture` is still that input: its"
        " holder's free counts, e.g. a rebinding that drops it, and a replay while that holder was"
        " never written is reported at the replay: nothing refreshed the input); or before a replay a"
        " host-to-device call made a *new* device tensor with an input's shape, dtype and buffer"
        " type, nothing used that tensor before the replay, nothing was written into the captured"
        " input since the previous replay, and something shows it was meant as the input: the"
        " same call path made or filled the captured input before the capture, it replaced the"
        " captured input's last reference, or nothing ever used it (else it is the program's own"
        " tensor and what a replay does to it is TR004's); or a global semaphore a captured"
        " collective op was given is freed, or reset to another value than it was created with,"
        " after that op was captured and before a replay of the trace (the finding names it)"
    ),
    at="the free (e.g. `ttnn.deallocate`) / the write that made the new tensor / the `execute_trace` that replays an input nothing refreshed / the semaphore's free or reset",
    why=(
        "A buffer the trace reads is freed after capture, or new input data goes to a new tensor "
        "instead of into the captured buffer before execute_trace: the replay computes on stale or"
        " foreign data."
    ),
    fix=(
        "Keep the captured input tensors alive and write new data into them with "
        "ttnn.copy_host_to_device_tensor(host, captured_input) or ttnn.copy(new, captured_input) "
        "before execute_trace."
    ),
    detect=detect,
    folds_under=(
        FoldsUnder("TR005", "dropped_input", "stale_input",
                   "the captured input lost its last reference when the program made a new"
                   " tensor instead of copying into it"),
        FoldsUnder("TR005", "superseded_in", "stale_replays",
                   "another new tensor of this input's spec was made later before the same"
                   " replay: the replay ignores both, and copying into the captured input fixes it"),
    ),
    facts=("trace_input_lifetimes",),
    rank=60,
    evidence="`captured_input`, `new_tensor` (buffers), `shape`, `dtype`, `input`, `read_by`, `execute`, `held_by` (the in-capture reallocation holding an input nothing refreshed: `event`, `at`); for global semaphores `semaphores`, `addresses`, `event` (`free` or `reset`), `used_by`, `replayed_at`",
)
