"""CPU time of each step of `ttrecord check`'s analysis, per detector, on sessions shaped like
real runs, to show which rule (or the loader) grows faster than the session.

Shapes (see `benchmarks.synthetic`), each at N events (default 1,000,000):
- `decode`: a decode loop captured and replayed every 50 steps (998 captures at 1M events),
  with a scalar argument that changes every step at a captured call site (TR007's worst case);
- `cycles`: 20 rounds of eager steps, a capture and a replay loop (166,000 replays at 1M);
- `model`: 5,000 live weights, 1,000 captures, 100,000 replays, long eager loops between them.
- `queues`: `model` with tt_cnn's two-queue overlapped-input executor as the replay loop
  (input written on CQ 1, events both ways, 100,000 replays on CQ 0); `queues_racy`: the same
  with CQ 0's wait for the write missing (100,000 TR012 races, one finding).

Figures per shape: the loader (`analysis.loading.load`: what the detectors read, and how many
events it materialised), then each detector on the loaded context, CPU seconds each (this
process, so other work on the machine does not count), and the findings per rule.

    python -m benchmarks.rule_speed [N] [--shapes decode,cycles,model]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

from benchmarks import synthetic
from ttrecord.analysis.registry import rules as registered_rules
from ttrecord.analysis.context import Context
from ttrecord.analysis.loading import load
from ttrecord.store.reader import Session

SHAPES = {
    "decode": synthetic.cached_session,
    "cycles": synthetic.cached_cycles,
    "model": synthetic.cached_model_run,
    "queues": synthetic.cached_two_queue_run,
    "queues_racy": lambda n: synthetic.cached_two_queue_run(n, missing_wait=True),
}


def measure(shape: str, n_events: int) -> list[dict]:
    path = SHAPES[shape](n_events)
    rows = []
    with Session.open(path) as session:
        info = session.info()
        events_total = session.event_count()
        captures = len(session.traces())
        replays = session.query("SELECT count(*) FROM events WHERE kind = 'trace_execute'")[0][0]
        c0 = time.process_time()
        events, facts, traces = load(session)
        ctx = Context(events, status=info.status, cwd=info.cwd, backend=info.backend,
                      facts=facts, traces=traces)  # fmt: skip
        load_s = time.process_time() - c0
        base = {"benchmark": "rule_speed", "shape": shape, "events": events_total,
                "captures": captures, "replays": replays}  # fmt: skip
        rows.append({**base, "step": "load", "cpu_s": round(load_s, 3),
                     "events_loaded": len(events)})  # fmt: skip
        for rule in registered_rules().values():
            c0 = time.process_time()
            findings = rule.detect(events, ctx)
            cpu = time.process_time() - c0
            rules = Counter(f.rule for f in findings)
            rows.append({**base, "step": rule.id,
                         "cpu_s": round(cpu, 3), "findings": dict(sorted(rules.items()))})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rule_speed")
    parser.add_argument("events", nargs="?", type=int, default=1_000_000)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    args = parser.parse_args(argv)
    out = []
    for shape in args.shapes.split(","):
        for row in measure(shape, args.events):
            print(json.dumps(row), flush=True)
            out.append(row)
    return out


if __name__ == "__main__":
    main()
