"""Where a finding goes when its line is a helper that correct calls share.

A rule pins a finding to the user's line of the call that made the hazard. When that line is in
a helper (`device_input()`, `copy_host_to_device()`) that the program also calls correctly from
elsewhere (the eager loop, the warm-up, the clean replay loop), the helper is not where the fix
goes: the caller whose call is the mistake is. So, for the rules that judge what a call made
(TR004, TR005), a finding moves up its call path to the nearest caller frame that no harmless
call at the same line came through; the helper line stays in `evidence["helper"]`. A helper
whose every call is a finding, or whose harmless calls came the same way, keeps the finding.
"""

from __future__ import annotations

from collections.abc import Sequence

from ttrecord.analysis.context import Context
from ttrecord.events import Event
from ttrecord.findings import Finding

# Rules whose culprit is the call that made a tensor (an allocation, a new tensor instead of a copy).
PLACED_BY_CALL_PATH = ("TR004", "TR005")


def place(findings: Sequence[Finding], ctx: Context) -> None:
    """Moves each finding of `PLACED_BY_CALL_PATH` to the frame of its call path that tells it
    from the harmless calls at its line (in place)."""
    culprits: dict[str, set[int]] = {}
    tops: dict[int, Event | None] = {}
    for f in findings:
        if f.rule in PLACED_BY_CALL_PATH and f.file and f.events and "between" not in f.evidence:
            top = _top_call(ctx, f.events[0])
            tops[id(f)] = top
            # Layout luck is not a mistake the helper's other calls are told from: placed like
            # the rest, it leaves those calls harmless.
            if top is not None and "layout_luck" not in f.evidence:
                culprits.setdefault(f.rule, set()).add(top.seq)
    # Per (site, rule): the distinct callers of its harmless calls; per (site, rule, path): the
    # depth found. A decode loop repeats one mistake per step: each is decided once.
    harmless_at: dict[tuple, set[tuple]] = {}
    depth_of: dict[tuple, int | None] = {}
    for f in findings:
        top = tops.get(id(f))
        if top is None or top.callsite is None or "helper" in f.evidence:
            continue
        s = top.callsite
        if (s.file, s.line) != (f.file, f.line) or not f.stack:
            continue
        site = (s.file, s.line, s.function, top.name)
        if (site, f.rule) not in harmless_at:
            harmless_at[site, f.rule] = {p for seq, p in ctx.facts.call_paths(site)
                                         if seq not in culprits.get(f.rule, ())}  # fmt: skip
        own = tuple((str(fr[0]), int(fr[1]), str(fr[2])) for fr in f.stack)
        if (site, f.rule, own) not in depth_of:
            depth_of[site, f.rule, own] = _depth(own, harmless_at[site, f.rule])
        depth = depth_of[site, f.rule, own]
        if depth is None:
            continue
        f.evidence["helper"] = f"{f.file}:{f.line} in {f.function}"
        f.file, f.line, f.function = own[depth - 1]
        f.stack = list(own[depth:])


def _depth(own: tuple, harmless: set[tuple]) -> int | None:
    """How many frames up the culprit's path the first frame is that no harmless call came
    through, or None. Harmless calls that came the culprit's own way (the first, safe turns of
    the same loop) cannot tell it apart: only the other paths through the helper count."""
    others = [p for p in harmless if p != own]
    if not others:
        return None
    return next((d for d in range(1, len(own) + 1) if all(p[:d] != own[:d] for p in others)), None)


def _top_call(ctx: Context, seq: int) -> Event | None:
    """The user's call an event belongs to (itself, or its outermost recorded caller)."""
    ev = ctx.calls.get(seq) or ctx.facts.event(seq)
    while ev is not None and ev.parent is not None:
        parent = ctx.calls.get(ev.parent)
        if parent is None:
            break
        ev = parent
    return ev
