"""Folding by declared cause (`grouping`, `Rule.folds_under`): a consequence folds under a
finding only when both carry the evidence of the cause's event, never because they share a line."""

from __future__ import annotations

from ttrecord.analysis.grouping import group
from ttrecord.analysis.registry import rules
from ttrecord.findings import Finding, Severity

TRACE = (0, 1)  # (device, trace id)
INPUT = (0, "DRAM", 0x1000)


def _f(rule: str, line: int, severity: Severity = Severity.ERROR, stack: list | None = None,
       trace: int | None = 1, **links: object) -> Finding:  # fmt: skip
    f = Finding(rule=rule, severity=severity, title=rule, message=f"{rule} at {line}", fix="",
                file="/p/model.py", line=line, function="f", stack=stack or [], events=[line],
                trace=trace)  # fmt: skip
    f.links.update(links)
    return f


def test_every_declared_cause_names_a_registered_rule_and_says_why() -> None:
    registered = rules()
    declared = [(rid, d) for rid, r in registered.items() for d in r.folds_under]
    assert {rid for rid, _ in declared} >= {"TR004", "TR005", "TR009", "TR011"}
    for rid, d in declared:
        assert d.cause == "*" or d.cause in registered, (rid, d)
        assert d.link and d.cause_link and d.why, (rid, d)


def test_unreleased_trace_folds_under_the_stale_input_only_when_the_program_stopped_itself() -> None:
    stale = _f("TR005", 40, stale_input={(TRACE, INPUT)}, replayed_stale={TRACE})
    stopped = _f("TR009", 10, stopped_unreleased={TRACE})
    out = group([stale, stopped])
    assert out == [stale]
    assert [e["rule"] for e in stale.folded] == ["TR009"]
    assert "stopped itself" in stale.folded[0]["why"]
    # The same never-released trace in a run that exited 0 carries no link: it stays its own.
    plain = _f("TR009", 10)
    stale2 = _f("TR005", 40, stale_input={(TRACE, INPUT)}, replayed_stale={TRACE})
    assert group([stale2, plain]) == [stale2, plain]


def test_unreleased_trace_does_not_fold_under_another_traces_stale_input() -> None:
    stale = _f("TR005", 40, stale_input={((0, 2), INPUT)}, replayed_stale={(0, 2)}, trace=2)
    stopped = _f("TR009", 10, stopped_unreleased={TRACE})
    assert group([stale, stopped]) == [stale, stopped]


def test_allocation_read_as_a_stale_input_folds_under_that_input_not_another() -> None:
    stale = _f("TR005", 40, stale_input={(TRACE, INPUT)})
    mine = _f("TR004", 20, read_as_input={(TRACE, INPUT)})
    other = _f("TR004", 22, read_as_input={(TRACE, (0, "DRAM", 0x2000))})
    out = group([stale, mine, other])
    assert out == [stale, other]
    assert [e["line"] for e in stale.folded] == [20]


def test_superseded_new_tensor_folds_under_the_latest_before_the_same_replay() -> None:
    latest = _f("TR005", 40, stale_input={(TRACE, INPUT)}, stale_replays={(TRACE, INPUT, 99)})
    earlier = _f("TR005", 30, stale_input={(TRACE, INPUT)}, superseded_in={(TRACE, INPUT, 99)})
    other_replay = _f("TR005", 35, stale_input={(TRACE, INPUT)}, superseded_in={(TRACE, INPUT, 77)})
    assert group([earlier, latest, other_replay]) == [latest, other_replay]


def test_findings_through_one_helper_line_from_two_call_paths_stay_apart() -> None:
    # One helper line, called from two different places: two mistakes, two fixes.
    a = _f("TR005", 66, stack=[("/p/model.py", 305, "capture")], stale_input={(TRACE, INPUT)})
    b = _f("TR004", 66, severity=Severity.INFO, stack=[("/p/model.py", 338, "replay")])
    assert group([a, b]) == [a, b]
    # The same call path: one fix there removes both.
    c = _f("TR005", 66, stack=[("/p/model.py", 305, "capture")])
    d = _f("TR004", 66, severity=Severity.INFO, stack=[("/p/model.py", 305, "capture")])
    assert group([c, d]) == [c]
    assert c.folded[0]["rule"] == "TR004"


def test_diverged_replay_folds_under_an_error_on_its_trace_only() -> None:
    cause = _f("TR004", 20)
    diverged = _f("TR011", 50)
    elsewhere = _f("TR011", 51, trace=2)
    note = _f("TR004", 21, severity=Severity.INFO, trace=2)
    assert group([cause, diverged, note, elsewhere]) == [cause, note, elsewhere]


def test_a_chain_of_folds_ends_at_the_root_cause_with_everything_under_it() -> None:
    stale = _f("TR005", 40, stale_input={(TRACE, INPUT)}, replayed_stale={TRACE},
               stale_replays={(TRACE, INPUT, 9)})  # fmt: skip
    earlier = _f("TR005", 30, severity=Severity.ERROR, superseded_in={(TRACE, INPUT, 9)})
    stopped = _f("TR009", 10, stopped_unreleased={TRACE})
    diverged = _f("TR011", 50)
    out = group([stopped, earlier, stale, diverged])
    assert out == [stale]
    assert sorted(e["rule"] for e in stale.folded) == ["TR005", "TR009", "TR011"]
