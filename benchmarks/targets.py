"""The "Targets" table at the top of benchmarks/RESULTS.md, built from one run's JSON lines.

Each target names the row and figure of the run that measures it, its goal and whether lower
or higher is better; the table says what the code does now, against the targets of now.
`python -m benchmarks --write-results` runs everything and rewrites the table between
`<!-- targets:begin -->` and `<!-- targets:end -->`; `--from run.jsonl` builds it from a saved
run instead of running again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BEGIN = "<!-- targets:begin -->"
END = "<!-- targets:end -->"
RESULTS = Path(__file__).with_name("RESULTS.md")

Row = dict[str, Any]


@dataclass(frozen=True)
class Target:
    what: str
    goal: float
    unit: str
    at_most: bool  # lower is better (a time, a size); else higher is better (a rate)
    row: Callable[[Row], bool]  # which row of the run measures it
    figure: str  # the figure of that row
    scale: float = 1.0  # figure x scale = the target's unit

    def measured(self, rows: Iterable[Row]) -> tuple[float, Row] | None:
        row = next((r for r in rows if self.row(r) and isinstance(r.get(self.figure), (int, float))), None)
        return (row[self.figure] * self.scale, row) if row is not None else None


def _bench(name: str, **match: Any) -> Callable[[Row], bool]:
    return lambda r: r.get("benchmark") == name and all(r.get(k) == v for k, v in match.items())


TARGETS = [
    # issue 34: recording at native speed
    Target("Recording, added per op, with call sites (CPU)", 15, "µs", True,
           _bench("recording_overhead"), "relu_added_us_callsites"),
    Target("Recording, added per op, without call sites (CPU)", 8, "µs", True,
           _bench("recording_overhead"), "relu_added_us_no_callsites"),
    Target("Recording, added instructions per op, emulator's small op (C hot path)", 25, "%", True,
           _bench("recorder_instructions", hot_path="c"), "relu_added_callsites_instructions_pct"),
    Target("`execute_trace`, added per call in a replay loop", 3, "µs", True,
           _bench("recorder_instructions", hot_path="c"), "execute_trace_added_us"),
    Target("`copy_host_to_device_tensor`, added per call", 3, "µs", True,
           _bench("recorder_instructions", hot_path="c"), "h2d_copy_added_us"),
    Target("Weight loading, recorded ÷ bare (instructions)", 1.5, "×", True,
           _bench("recorder_instructions", hot_path="c"), "weight_load_ratio_instructions"),
    Target("Event throughput into SQLite (CPU time)", 200_000, "events/s", False,
           _bench("store_throughput"), "events_per_s"),
    Target("`ttrecord run` pipeline: log read, decoded and written, per second of supervisor CPU",
           200_000, "events/s", False, _bench("pipeline"), "supervisor_events_per_s"),
    Target("A 600-step traced decode loop under `ttrecord run` ÷ plain python (CPU, all processes)",
           1.3, "×", True, _bench("decode_loop"), "ratio"),
    # issue 27: check stays linear
    Target("`ttrecord check` on 1,000,000 events", 5, "s", True, _bench("check_speed"), "analyze_s"),
    Target("`ttrecord check` on 1,000,000 events with ~1,000 captures (CPU)", 5, "s", True,
           _bench("check_captures", code="after"), "many_cpu_s"),
    Target("`check`, many captures ÷ few at equal length", 1.5, "×", True,
           _bench("check_captures", code="after"), "many_over_few"),
    Target("UI first paint on the same size of session", 1.5, "s", True,
           _bench("tui_startup"), "startup_s"),
    Target("`ttrecord diff` of two 100,000-op captures", 3, "s", True, _bench("diff_speed"), "total_s"),
    Target("HTML report of 1,000,000 events opens in Chromium", 3, "s", True,
           _bench("html_report", session="decode-1M"), "open_s"),
    Target("HTML report file of 1,000,000 events", 20, "MB", True,
           _bench("html_report", session="decode-1M"), "size_mb"),
    Target("Readers of an unfinished session, unindexed ÷ indexed (`report --html`)", 3, "×", True,
           _bench("unfinished_readers", command="report --html"), "ratio"),
    Target("Native recorder, per recorded call without a stack", 5, "µs", True,
           _bench("native_recording", case="per_event_no_stack"), "us"),
    Target("Native recorder, per recorded call with a stack", 20, "µs", True,
           _bench("native_recording", case="per_event_stack"), "us"),
    Target("Emulator 32x32 bf16 `ttnn.add` (what overheads are measured against)", 400, "µs",
           True, _bench("emulator_op_cost"), "add_32x32_bf16_us"),
]  # fmt: skip


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def table(rows: list[Row], earlier: dict[str, str] | None = None) -> str:
    """The Targets table (markdown) for one run's rows; a target the run did not measure keeps
    its line from `earlier` (target -> line of a previous table) when given."""
    lines = ["| target | goal | measured | | load |", "|---|---|---|---|---|"]
    for t in TARGETS:
        goal = f"{'≤' if t.at_most else '≥'} {_number(t.goal)} {t.unit}"
        found = t.measured(rows)
        if found is None:
            kept = (earlier or {}).get(t.what)
            lines.append(kept or f"| {t.what} | {goal} | not measured in this run | | |")
            continue
        value, row = found
        met = value <= t.goal if t.at_most else value >= t.goal
        load = row.get("load_avg_1m", "")
        name = f"{row['benchmark']}.{t.figure}"
        lines.append(f"| {t.what} | {goal} | {_number(value)} {t.unit} (`{name}`) |"
                     f" {'met' if met else '**not met**'} | {load} |")  # fmt: skip
    return "\n".join(lines)


def replace_table(text: str, new: str) -> str:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no {BEGIN} … {END} block in RESULTS.md")
    return text[: start + len(BEGIN)] + "\n" + new + "\n" + text[end:]


def current_lines(text: str) -> dict[str, str]:
    """Target -> its line in the Targets table of RESULTS.md's text (measured ones only)."""
    start, end = text.find(BEGIN), text.find(END)
    if not 0 <= start < end:
        return {}
    names = {t.what for t in TARGETS}
    found = {}
    for line in text[start + len(BEGIN):end].splitlines():
        what = line[2:].split(" | ", 1)[0]
        if line.startswith("| ") and what in names and "not measured" not in line:
            found[what] = line
    return found


def write(rows: list[Row], path: Path = RESULTS, keep: bool = False) -> None:
    """Rewrite the table; with `keep`, the targets this run did not measure keep their lines."""
    text = path.read_text(encoding="utf-8")
    earlier = current_lines(text) if keep else None
    path.write_text(replace_table(text, table(rows, earlier)), encoding="utf-8")
