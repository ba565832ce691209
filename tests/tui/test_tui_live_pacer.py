"""The analysis of a running session re-runs only when events arrived, and no sooner than
max(min_interval, share × its last duration): following a long run costs a bounded share."""

from ttrecord.tui.live import AnalysisPacer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_runs_at_once_then_waits_for_new_events_and_the_pause():
    clock = Clock()
    pacer = AnalysisPacer(min_interval=1.0, share=4.0, clock=clock)
    assert pacer.due(10)
    started = pacer.started(10)
    assert not pacer.due(20)  # one at a time
    clock.now += 0.1
    pacer.finished(started)  # took 0.1 s: the pause is max(1.0, 0.4) = 1.0 s
    assert not pacer.due(20)
    clock.now += 0.99
    assert not pacer.due(20)
    clock.now += 0.02
    assert pacer.due(20)
    assert not pacer.due(10)  # no new events since the last analysis: nothing to do


def test_a_slow_analysis_spaces_the_next_one_by_its_share():
    clock = Clock()
    pacer = AnalysisPacer(min_interval=1.0, share=4.0, clock=clock)
    started = pacer.started(1000)
    clock.now += 2.5  # a long analysis
    pacer.finished(started)
    clock.now += 9.9
    assert not pacer.due(2000)
    clock.now += 0.2
    assert pacer.due(2000)  # 10 s = 4 × 2.5 s after it finished: at most 20% of a core
