"""Audit mode: `--audit-region QUALNAME` turns every call of a function (in the script or in
an imported module) into a would-be capture region, and `ttrecord.region(name)` marks one by
hand; events inside carry the region and REGION_BEGIN/END bracket each instance."""

from __future__ import annotations

from tests.recorder.conftest import PROLOGUE, record
import pytest

pytestmark = pytest.mark.spawns

HELPER = """\
import ttnn

def step(x):
    return ttnn.relu(x)
"""

SCRIPT = "import ttrecord\nimport helper\n" + PROLOGUE + """\
class Decoder:
    def forward(self, x):
        y = ttnn.relu(x)
        return ttnn.to_torch(y)

d = Decoder()
x = tensor()
for i in range(2):
    d.forward(x)
ttnn.relu(x)
with ttrecord.region("manual"):
    ttnn.relu(x)
helper.step(x)
"""


def test_regions_bracket_and_tag_their_events(tmp_path, write_script):
    """GIVEN a method of a class in the script model.py (named model.Decoder.forward) and a
    module function named as audit regions, and a
    ttrecord.region block WHEN recorded THEN each call of them is bracketed by REGION_BEGIN /
    REGION_END with instance numbers, and only the calls inside carry the region."""
    write_script("helper.py", HELPER)
    script = write_script("model.py", SCRIPT)
    rec = record(script, tmp_path, "--audit-region", "model.Decoder.forward",
                 "--audit-region", "helper.step")  # fmt: skip
    assert rec.proc.returncode == 0, rec.proc.stderr
    rows = rec.rows("SELECT kind, name, region, args FROM events WHERE parent IS NULL"
                    " AND kind NOT IN ('alloc', 'free') AND seq > 1 ORDER BY seq")  # fmt: skip
    got = [(r["kind"], r["name"], r["region"]) for r in rows]
    fwd = "model.Decoder.forward"
    assert got == [
        ("h2d", "from_torch", None),
        ("region_begin", fwd, fwd), ("op", "relu", fwd), ("d2h", "to_torch", fwd),
        ("region_end", fwd, fwd),
        ("region_begin", fwd, fwd), ("op", "relu", fwd), ("d2h", "to_torch", fwd),
        ("region_end", fwd, fwd),
        ("op", "relu", None),
        ("region_begin", "manual", "manual"), ("op", "relu", "manual"),
        ("region_end", "manual", "manual"),
        ("region_begin", "helper.step", "helper.step"), ("op", "relu", "helper.step"),
        ("region_end", "helper.step", "helper.step"),
    ]  # fmt: skip
    instances = [r["args"] for r in rows if r["kind"] == "region_begin"]
    assert instances[:2] == ['{"region":"model.Decoder.forward","instance":1}',
                             '{"region":"model.Decoder.forward","instance":2}']  # fmt: skip
    options = rec.session()["options"]
    assert "model.Decoder.forward" in options and "helper.step" in options


def test_region_is_a_no_op_without_the_recorder():
    """GIVEN no recorder WHEN a program uses ttrecord.region THEN the block just runs."""
    import ttrecord

    ran = []
    with ttrecord.region("decode") as r:
        ran.append(r.name)
    assert ran == ["decode"]
