"""`report` lists, per trace, every Python scalar and shape argument its captured top-level ops
were called with: op, parameter, value and line, in text and in JSON (`baked_values`), also
values seen only in the capture (which TR007 cannot prove to differ)."""

import json
from pathlib import Path

import jsonschema

from ttrecord.analysis.baked_list import baked_values
from ttrecord.analysis.context import Context
from ttrecord.report import summary, summary_json
from ttrecord.testing import SessionBuilder

from analysis_helpers import W, X

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report-json.schema.json").read_text())


def _session() -> SessionBuilder:
    b = SessionBuilder()
    b.open_device(line=5)
    x, w = b.alloc(X), b.alloc(W)
    b.op("ttnn.multiply", [x], [b.alloc(X + 0x4000)], line=20, args={"1": 0.5})  # prep
    tid = b.begin_trace(line=30)
    b.op("ttnn.multiply", [x], [b.alloc(X + 0x8000)], line=20, args={"1": 0.5, "cq_id": 0})
    b.op("ttnn.slice", [x], [b.alloc(X + 0xC000)], line=21, args={"1": (0, 0), "step": 3})
    b.op("ttnn.add", [x, w], [b.alloc(X + 0x10000)], line=22)
    b.end_trace(tid, line=31)
    b.execute(tid, line=40)
    b.release(tid, line=41)
    return b


def test_every_captured_scalar_and_shape_is_listed_with_its_line():
    b = _session()
    ctx = Context(b.events)
    (t,) = ctx.traces
    assert baked_values(ctx, t) == [
        {"op": "multiply", "parameter": "positional argument 1", "value": 0.5, "line": "model.py:20"},
        {"op": "slice", "parameter": "positional argument 1", "value": [0, 0], "line": "model.py:21"},
        {"op": "slice", "parameter": "step", "value": 3, "line": "model.py:21"},
    ]  # the queue selector is not a baked value; add has none


def test_report_shows_them_in_text_and_json(tmp_path):
    path = _session().write(tmp_path / "s.db")
    doc = summary_json.document(str(path), quiet=True)
    (trace,) = doc["traces"]
    assert [(v["op"], v["parameter"], v["value"]) for v in trace["baked_values"]] == [
        ("multiply", "positional argument 1", 0.5), ("slice", "positional argument 1", [0, 0]),
        ("slice", "step", 3)]  # fmt: skip
    jsonschema.validate(json.loads(json.dumps(trace)), SCHEMA["properties"]["traces"]["items"])
    out = tmp_path / "report.txt"
    with out.open("w") as f:
        summary.render_report(str(path), f, quiet=True)
    text = out.read_text()
    assert "Values baked into trace 0" in text
    assert "step" in text and "model.py:21" in text


def test_the_baked_value_sample_lists_the_captured_temperature(sample_cache, tmp_path):
    """samples/baked_value.py: the capture bakes 1.0 / temperature (4.0, the capture's own) into
    `multiply` at line 21; the report's list names it, with the parameter and the line."""
    import shutil

    path = tmp_path / "baked.db"
    shutil.copy(sample_cache.get("baked_value").path, path)
    doc = summary_json.document(str(path), quiet=True)
    (trace,) = doc["traces"]
    listed = [(v["op"], v["parameter"], v["value"], v["line"]) for v in trace["baked_values"]]
    assert listed == [("multiply", "positional argument 1", 0.25, "baked_value.py:21")]  # 1 / 4.0
