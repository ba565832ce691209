"""`ttrecord report` shows each trace's trace-buffer size and the trace region's high-water
mark against `trace_region_size`, in total and per DRAM bank (the numbers TR016 decides on),
in the text report and in its JSON; a run summary stored before the sizes were counted is
still read."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import jsonschema
import pytest

from tests.recorder.inprocess import record_inprocess
from ttrecord import emulator
from ttrecord.analysis import check
from ttrecord.cli.main import main
from ttrecord.events import SessionStatus
from ttrecord.store.writer import SessionWriter

DOCS = Path(__file__).resolve().parents[2] / "docs"
REGION = 65536  # 8,192 B in each of the 8 DRAM banks
BANKS = 8


def _record(tmp_path: Path) -> tuple[str, dict]:
    """A run with three traces that fit (6, 4 and 8 ops; the second released before the third
    is captured) and a fourth (3 ops) whose end_trace_capture raises because the region is
    full, which the program catches. Returns the session and what the emulator allocated."""
    facts: dict = {"traces": {}, "live": []}

    def body(ttnn):
        import torch

        dev = ttnn.open_device(device_id=0, trace_region_size=REGION)
        x = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                            device=dev)  # fmt: skip
        y = ttnn.relu(x)  # prep: compiled before any capture

        def capture(ops: int) -> int:
            tid = ttnn.begin_trace_capture(dev, cq_id=0)
            for _ in range(ops):
                ttnn.relu(x, output_tensor=y)
            ttnn.end_trace_capture(dev, tid, cq_id=0)
            trace = dev.traces[int(tid)]
            desc = trace.buffer.desc
            facts["traces"][int(tid)] = (trace.size, desc.size_per_bank, desc.num_pages, desc.page_size)
            facts["live"].append(dev.trace_buffers_size)
            return tid

        a = capture(6)
        b = capture(4)
        ttnn.execute_trace(dev, b, cq_id=0, blocking=True)
        ttnn.release_trace(dev, b)
        facts["live"].append(dev.trace_buffers_size)
        c = capture(8)
        facts["before_misfit"] = dev.trace_buffers_size
        try:
            capture(3)
        except RuntimeError as exc:
            facts["error"] = str(exc)
        ttnn.release_trace(dev, a)
        ttnn.release_trace(dev, c)
        ttnn.close_device(dev)

    events = record_inprocess(emulator, body, tmp_path)
    writer = SessionWriter(tmp_path / "s.db")
    writer.start(script="model.py", argv=["model.py"], backend="emulator")
    writer.add(events)
    writer.finish(SessionStatus.OK, exit_code=0)
    writer.close()
    return str(tmp_path / "s.db"), facts


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return _record(tmp_path_factory.mktemp("sizes"))


def _expected(facts: dict) -> dict:
    """The table's numbers, from what the emulator allocated."""
    traces = facts["traces"]
    for size, per_bank, pages, page in traces.values():
        assert size == pages * page == per_bank * BANKS  # whole bank rows: one total
    match = re.search(r"Creating trace buffers of size (\d+)B on MeshDevice \d+, but only (\d+)B",
                      facts["error"])  # fmt: skip
    assert match and int(match.group(2)) == REGION
    needed = int(match.group(1))
    return {"traces": {t: (s, pb) for t, (s, pb, _, _) in traces.items()},
            "high_water": max(facts["live"]), "needed": needed,
            "misfit_own": needed - facts["before_misfit"]}  # fmt: skip


def _rows(out: str) -> dict[str, list[str]]:
    """The "Trace region" table's rows: label -> cells."""
    table = out[out.index("Trace region, device"):]
    table = table[: table.index("└")]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("│").split("│")]
        if line.startswith("│") and len(cells) == 4:
            rows[cells[0]] = cells[1:]
    return rows


def _b(n: int) -> str:
    return f"{n:,} B"


def test_text_report_shows_each_trace_buffer_and_the_high_water_mark_total_and_per_bank(
    recorded, capsys, monkeypatch
):
    # GIVEN a recorded run whose traces the emulator put in a 65,536 B trace region
    path, facts = recorded
    want = _expected(facts)
    monkeypatch.delenv("COLUMNS", raising=False)  # piped: 80 columns
    # WHEN reported
    assert main(["report", path, "-q"]) == 0
    out = capsys.readouterr().out
    # THEN a trace-region table per device gives every size in total and per bank
    # (the device by the chip the program opened: "device 0 (mesh 1)" for open_device(device_id=0))
    assert re.search(rf"^Trace region, device 0 \(mesh \d+\), {BANKS} DRAM banks$", out, re.M)
    rows = _rows(out)
    (a, b, c), misfit = sorted(want["traces"]), max(want["traces"]) + 1
    for tid in (a, b, c):
        total, per_bank = want["traces"][tid]
        assert rows[f"trace {tid}"] == [_b(total), _b(per_bank), f"{100 * total / REGION:.0f}%"]
    assert rows[f"trace {a}"][:2] == ["24,576 B", "3,072 B"]  # 6 ops of 4,096 B
    own = want["misfit_own"]
    assert rows[f"trace {misfit}: did not fit"] == [_b(own), _b(own // BANKS), f"{100 * own / REGION:.0f}%"]
    assert rows[f"needed with trace {misfit}"][:2] == [_b(want["needed"]), _b(want["needed"] // BANKS)]
    hw = want["high_water"]
    assert hw == 57344  # traces a and c live together (b was released first)
    assert rows["high-water mark"] == [_b(hw), _b(hw // BANKS), f"{100 * hw / REGION:.0f}%"]
    assert rows["trace_region_size"] == [_b(REGION), _b(REGION // BANKS), "100%"]
    # and the report stays readable piped: no line over 80 columns or ending in a space
    assert [ln for ln in out.splitlines() if len(ln) > 80 or ln != ln.rstrip()] == []


def _validator() -> jsonschema.Draft202012Validator:
    from referencing import Registry, Resource

    schemas = [json.loads(p.read_text()) for p in sorted(DOCS.glob("*-json.schema.json"))]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    return jsonschema.Draft202012Validator(
        json.loads((DOCS / "report-json.schema.json").read_text()), registry=registry
    )


def test_json_report_has_the_same_sizes_and_validates(recorded, capsys):
    path, facts = recorded
    want = _expected(facts)
    assert main(["report", path, "--format", "json", "-q"]) == 0
    doc = json.loads(capsys.readouterr().out)
    _validator().validate(doc)
    buffers = {t["trace"]: t["trace_buffer"] for t in doc["traces"]}
    for tid, (total, per_bank) in want["traces"].items():
        assert buffers[tid] == {"total": total, "per_bank": per_bank, "fits": True}
    misfit = max(want["traces"]) + 1
    own = want["misfit_own"]
    assert buffers[misfit] == {"total": own, "per_bank": own // BANKS, "fits": False}
    assert doc["trace_regions"] == [{
        "device": doc["devices"][0]["id"], "dram_banks": BANKS,
        "size": {"total": REGION, "per_bank": REGION // BANKS},
        "high_water": {"total": want["high_water"], "per_bank": want["high_water"] // BANKS},
        "did_not_fit": {"trace": misfit, "needed": want["needed"],
                        "needed_per_bank": want["needed"] // BANKS},
    }]  # fmt: skip
    # the sizes agree with TR016's finding on the same run
    (tr016,) = [f for f in doc["findings"] if f["id"] == "TR016"]
    assert tr016["evidence"]["needed"] == want["needed"]
    assert tr016["evidence"]["high_water"] == want["high_water"]


def _strip_sizes(path: str) -> None:
    """Make the stored run summary look like one stored before sizes were counted."""
    with sqlite3.connect(path) as conn:
        (text,) = conn.execute("SELECT summary FROM run_summary").fetchone()
        summary = json.loads(text)
        del summary["regions"]
        for t in summary["traces"]:
            for key in ("buffer_bytes", "buffer_per_bank", "fits"):
                del t[key]
        conn.execute("UPDATE run_summary SET summary = ?", (json.dumps(summary),))


def test_summary_stored_without_sizes_is_read_and_an_older_analysis_is_recomputed(
    recorded, tmp_path, capsys, monkeypatch
):
    # GIVEN a checked session whose stored summary has no sizes, under a current stamp
    src, _facts = recorded
    path = str(tmp_path / "old.db")
    Path(path).write_bytes(Path(src).read_bytes())
    assert main(["check", path, "-q"]) == 1  # TR016 error; findings and summary stored
    capsys.readouterr()
    _strip_sizes(path)
    calls = []
    real = check.analyze_session
    monkeypatch.setattr(check, "analyze_session", lambda s, on_step=None: calls.append(1) or real(s, on_step))
    # WHEN reported THEN it is read as it is (no analysis): traces without sizes, no table
    assert main(["report", path, "-q"]) == 0
    out = capsys.readouterr().out
    assert calls == [] and "Traces" in out and "Trace region, device" not in out
    assert main(["report", path, "--format", "json", "-q"]) == 0
    doc = json.loads(capsys.readouterr().out)
    _validator().validate(doc)
    assert doc["trace_regions"] == [] and {t["trace_buffer"] for t in doc["traces"]} == {None}
    # WHEN the stored summary came from another analysis version THEN it is recomputed
    monkeypatch.setattr(check, "analysis_version", lambda: "an-older-version")
    assert main(["report", path, "-q"]) == 0
    assert calls == [1] and "high-water mark" in capsys.readouterr().out
