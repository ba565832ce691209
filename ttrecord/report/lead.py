"""Where a finding's fix goes: the line to change, which is often not the ttnn call itself.

A finding is pinned to the user's line that called ttnn; when that line is inside a helper,
the line a user edits is usually up the stack, in the function that holds the capture (move
the call out of begin/end, copy into the captured input there). So every reader shows the
finding's frames outermost first and marks one as the line to change: the outermost frame in
the function that began the finding's capture (the `begin_trace_capture` call site), else the
outermost frame below the module level, else the finding's own line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ttrecord.findings import Finding
    from ttrecord.store.reader import Session

Frame = tuple[str | None, int | None, str | None]  # file, line, function
Site = tuple[str, str]  # file, function of a begin_trace_capture


def frames(f: Finding) -> list[Frame]:
    """The finding's user frames, outermost first, ending with its own line."""
    own = (f.file, f.line)
    callers = [c for c in f.callers if (c[0], c[1]) != own]  # a stack may start at the line itself
    return [*reversed(callers), (f.file, f.line, f.function)]


def change_index(f: Finding, capture_sites: dict[tuple[int | None, int | None], Site]) -> int:
    """Index into `frames(f)` of the line to change (see the module's docstring)."""
    chain = frames(f)
    if len(chain) == 1:
        return 0
    site = capture_sites.get((f.device, f.trace))
    if site is None and len(capture_sites) == 1:  # one capture in the run: its function
        site = next(iter(capture_sites.values()))
    if site is not None:
        for i, (file, _line, function) in enumerate(chain):
            if (file, function) == site:
                return i
    for i, (_file, _line, function) in enumerate(chain):
        if function != "<module>":
            return i
    return 0


def capture_sites(session: Session, findings: list[Finding]) -> dict[tuple[int | None, int | None], Site]:
    """The `begin_trace_capture` call site of each capture a finding names (one look-up per
    such capture), keyed by (device, trace id); all of them when the run has a single one."""
    traces = session.traces()
    wanted = {(f.device, f.trace) for f in findings if f.trace is not None}
    out: dict[tuple[int | None, int | None], Site] = {}
    for t in traces:
        key = (t.device, t.trace_id)
        if key in out or (len(traces) > 1 and key not in wanted):
            continue
        ev = session.event(t.begin_seq)
        site = ev.callsite if ev is not None else None
        if site is not None:
            out[key] = (site.file, site.function)
    return out


def change_indexes(session: Session, findings: list[Finding]) -> list[int]:
    sites = capture_sites(session, findings)
    return [change_index(f, sites) for f in findings]
