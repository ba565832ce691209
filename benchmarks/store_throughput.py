"""Event throughput of the session writer, and bytes per event on disk.

Events go through `SessionWriter.add` exactly as the recorder's supervisor sends them. The
baseline is generating the same events without writing, measured in the same run, so the
figure is the writer's own cost.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from benchmarks.synthetic import decode_events, write_session


def measure(n_events: int = 300_000) -> dict:
    t0 = time.perf_counter()
    generated = sum(1 for _ in decode_events(n_events))
    gen_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.db"
        t0 = time.perf_counter()
        written = write_session(path, n_events)
        total_s = time.perf_counter() - t0
        size = path.stat().st_size
    write_s = max(total_s - gen_s, 1e-9)
    return {
        "benchmark": "store_throughput",
        "events": written,
        "events_per_s": round(written / write_s),
        "events_per_s_incl_generation": round(written / total_s),
        "generation_share": round(gen_s / total_s, 3),
        "bytes_per_event": round(size / written, 1),
        "target_events_per_s": 200_000,
        "generated": generated,
    }


def main() -> list[dict]:
    result = measure()
    print(json.dumps(result))
    return [result]


if __name__ == "__main__":
    main()
