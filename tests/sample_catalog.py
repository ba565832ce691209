"""The samples as the tests see them, read from samples/ itself: which ones mark hazards
(`# expect: TR0NN [severity]` on the line a finding is pinned to), which ones are clean, and
how each is run. The severity a marker leaves unsaid is its rule's declared default
(`Rule.severity`), so no list of rules or samples is kept here by hand but the few samples
about how a run ends."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ttrecord.analysis.registry import rules

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples"
# `# expect: TR010` or, for a finding of another severity than the rule's default, `TR010 info`
EXPECT = re.compile(r"#\s*expect:\s*(TR\d{3})(?:\s+(error|warning|info))?")
# Samples about how a run ends or drifts (a crash, a hang, an uncaught Python error, threads,
# addresses that move between runs): their effect is tested on its own, not by `check`'s markers.
NOT_CHECKED = ("address_drift", "crash_in_replay", "hang_in_replay", "python_error", "threads")
# Rules no single sample run can show: TR011 needs `run --verify-replay` to compare a replay,
# TR019 the sessions of several ranks (samples/multihost/, tests/multihost/test_mpiexec.py).
WITHOUT_SAMPLE = {"TR011", "TR019"}


@cache
def markers(sample: str) -> tuple[tuple[str, int, str], ...]:
    """(rule, line, severity) of each marker of a sample, the severity as the finding has it."""
    lines = (SAMPLES_DIR / f"{sample}.py").read_text().splitlines()
    return tuple((m.group(1), n, m.group(2) or str(rules()[m.group(1)].severity))
                 for n, text in enumerate(lines, 1) for m in EXPECT.finditer(text))  # fmt: skip


NAMES = sorted(p.stem for p in SAMPLES_DIR.glob("*.py"))
HAZARDS = [n for n in NAMES if markers(n)]
CLEAN = [n for n in NAMES if not markers(n) and n not in NOT_CHECKED]
# How each sample runs with plain python: its script, and one extra run with a flag.
RUNS = {n: [f"{n}.py"] for n in NAMES} | {
    "address_drift_extra": ["address_drift.py", "--extra-alloc"],
    "sharded_same_cores": ["sharded_disjoint_cores.py", "--same-cores"],
}
