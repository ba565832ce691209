"""TR011 replay differs from eager run: the rule's declaration."""

from __future__ import annotations

from ttrecord.analysis import replay_verification
from ttrecord.analysis.rules import FoldsUnder, Rule
from ttrecord.findings import Severity

RULE = Rule(
    id="TR011",
    title="Replay differs from eager run",
    severity=Severity.ERROR,
    levels="error / info",
    summary=(
        "a verified replay (`run --verify-replay`) computed or overwrote something its eager ops "
        "would not"
    ),
    reported_when=(
        "(sessions recorded with `--verify-replay`) after a replay, an output the program holds "
        "differs from the eager re-run of the op that wrote it, an input an op updates in place "
        "differs from its re-run copy, or a tensor the trace does not own changed (the message "
        "names the write that changed the value, and for a tensor the replay overwrote, the "
        "program's first use of it after); info when a replay could not be verified"
    ),
    at="the `execute_trace`",
    why=(
        "With `ttrecord run --verify-replay`: after a replay, an output differed from an eager "
        "re-run of the captured ops on the same inputs, or a tensor the trace does not own "
        "changed. The replay read or wrote memory that no longer holds what the capture assumed."
    ),
    fix=(
        "Keep every captured input alive and write new data into it in place; allocate nothing "
        "over trace memory while the trace lives."
    ),
    detect=replay_verification.detect,
    rank=160,
    evidence="`replay` (which replay), `reason` (why it was not verified), `first_diverging_op`, `op_line`, `output` (the values that differ), `freed_inputs` (ranges), `corrupted` (values), `changed_by` (which write changed each value, from the value-flow model: the op, host write or replay that last wrote a freed input's range before the replay, or the replay's own op for a corrupted tensor), `compared`",
    folds_under=(
        FoldsUnder("*", "trace", "trace", "a verified replay of this trace diverged from its"
                   " eager ops: an error on this trace changed a result", errors_only=True),
    ),
)
