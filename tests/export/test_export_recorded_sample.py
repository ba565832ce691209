"""Rule: a session recorded by `ttrecord run` on the emulator exports soundly in both formats.

The sample reads a tensor back inside a trace capture (TR001); the emulator raises real
ttnn's TT_FATAL there, so the session ends in error with the readback as a raised call. The
session is never checked: an export shows the findings `check` would report all the same.
"""

import json
import sqlite3
from pathlib import Path

import pytest

from export_helpers import check_trace, encloses, slices
from ttnn_report_tables import REPORT_TABLES
from ttrecord.export import perfetto, visualizer
from ttrecord.store.reader import Session

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "readback_in_capture.py"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, sample_cache) -> Path:
    run = sample_cache.get(SAMPLE)  # recorded once per test run
    out = run.copy_to(tmp_path_factory.mktemp("recorded"), "readback.db")
    assert out.exists(), run.stderr
    with Session.open(out) as s:
        assert s.findings() == [] and s.findings_stamp() is None  # never checked
    return out


def test_recorded_sample_exports_to_perfetto(recorded, tmp_path):
    # GIVEN the recorded sample WHEN exported to Perfetto JSON
    with Session.open(recorded) as s:
        perfetto.export(s, tmp_path / "t.json")
    trace = json.loads((tmp_path / "t.json").read_text())
    # THEN it is sound, the capture encloses the failed readback, and TR001 is pinned on it
    assert check_trace(trace) == []
    (capture,) = slices(trace, name="capture trace 0")
    readback = [e for e in slices(trace, name="to_torch") if e["args"].get("status") == "raised"]
    assert len(readback) == 1 and encloses(capture, readback[0])
    (tr001,) = [e for e in trace["traceEvents"] if e["name"].startswith("TR001")]
    assert tr001["ts"] == readback[0]["ts"]
    assert tr001["args"]["where"] == f"{SAMPLE}:22"


def test_recorded_sample_exports_to_visualizer(recorded, tmp_path):
    # GIVEN the recorded sample WHEN exported as a TT-NN report
    with Session.open(recorded) as s:
        visualizer.export(s, tmp_path / "report")
    conn = sqlite3.connect(tmp_path / "report" / "db.sqlite")
    for table, columns in REPORT_TABLES.items():
        info = conn.execute(f"PRAGMA table_info({table})").fetchall()
        assert [(r[1], r[2].upper()) for r in info] == columns, table
    # THEN the failed readback is an error whose stack starts at the sample's line 22
    (op_id, name, kind) = conn.execute(
        "SELECT operation_id, operation_name, error_type FROM errors").fetchone()  # fmt: skip
    assert (name, kind) == ("ttnn.to_torch", "TT_FATAL")
    (stack,) = conn.execute(
        "SELECT stack_trace FROM stack_traces WHERE operation_id = ?", (op_id,)).fetchone()  # fmt: skip
    assert stack.startswith(f'  File "{SAMPLE}", line 22, in forward\n    print(')
    # AND the device geometry the emulator reported fills the devices row, numbered from 0
    # as ttnn's report importer numbers devices (the recorded id is in report_metadata)
    (device_id, l1_banks, worker_l1) = conn.execute(
        "SELECT device_id, l1_num_banks, worker_l1_size FROM devices").fetchone()  # fmt: skip
    assert (device_id, l1_banks) == (0, 130) and worker_l1 > 0
    assert {t for (t,) in conn.execute("SELECT DISTINCT device_id FROM buffers")} == {0}
    meta = dict(conn.execute("SELECT key, value FROM report_metadata"))
    with Session.open(recorded) as s:
        recorded_id = s.devices()[0].id
    assert json.loads(meta["ttrecord_device_ids"]) == {"0": recorded_id}
    # AND the findings `check` would report travel in the metadata, though it never ran
    assert [f["rule"] for f in json.loads(meta["ttrecord_findings"])] == ["TR001"]
    # AND every device tensor an operation used has its buffer in that operation's snapshot
    missing = conn.execute(
        "SELECT count(*) FROM input_tensors it JOIN tensors t USING (tensor_id)"
        " WHERE t.device_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM buffers b"
        "  WHERE b.operation_id = it.operation_id AND b.address = t.address)").fetchone()[0]  # fmt: skip
    assert missing == 0
