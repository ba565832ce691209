"""TR019 ranks diverge: the rule's declaration (a rule over the sessions of one multi-host run;
one session alone has nothing to compare, so its per-session detector finds nothing)."""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis import rank_divergence
from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import Rule
from ttrecord.events import Event
from ttrecord.findings import Finding, Severity


def _per_session(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """Nothing: the rule compares ranks (`rank_divergence.detect`, run by a check of several
    sessions of one launch)."""
    return []


RULE = Rule(
    id=rank_divergence.RULE_ID,
    title=rank_divergence.TITLE,
    severity=Severity.ERROR,
    levels="error / warning",
    summary="the ranks of one multi-host run captured different op sequences",
    reported_when=(
        "`check` of the sessions of one `mpirun`/`tt-run` launch finds a rank whose capture "
        "differs from the other ranks' (op names and tensor signatures, aligned as `diff` "
        "aligns them): another shape, an op or collective more or missing, another number of "
        "captures; error when a collective follows the divergence (the replay hangs), else "
        "warning"
    ),
    at="the first divergent op on the diverging rank (the reference rank's op and line in the message)",
    why=(
        "Every rank replays its own trace and a collective completes only when all ranks reach "
        "it with matching tensors: captures that differ hang the replay on every rank."
    ),
    fix=(
        "Make every rank take the same path through the captured code (same shapes, same ops, "
        "every collective); branch on rank outside the capture."
    ),
    detect=_per_session,
)
