"""Rule: ttnn-visualizer's own backend serves every report view from the export.

ttnn-visualizer is not a dependency of ttrecord (it brings Flask, SQLAlchemy and more), so this
test runs only when TTRECORD_VISUALIZER_PYTHON names an interpreter that has it installed,
e.g. `python -m venv /tmp/viz && /tmp/viz/bin/pip install ttnn-visualizer` and then
`TTRECORD_VISUALIZER_PYTHON=/tmp/viz/bin/python pytest tests/export`. It registers the
exported folder as a report in the visualizer's Flask app and calls the API the UI calls.
"""

import json
import os
import subprocess
import textwrap

import pytest

from ttrecord.export import visualizer
from ttrecord.store.reader import Session

pytestmark = pytest.mark.spawns

PYTHON = os.environ.get("TTRECORD_VISUALIZER_PYTHON")

CLIENT = textwrap.dedent("""
    import json, sys, tempfile
    from ttnn_visualizer.app import create_app
    from ttnn_visualizer.extensions import db
    from ttnn_visualizer.models import InstanceTable
    from ttnn_visualizer.tests.fixture_settings import base_test_settings

    app = create_app(settings_override=base_test_settings(tempfile.mkdtemp()))
    with app.app_context():
        db.session.add(InstanceTable(instance_id="t", active_report={}, profiler_path=sys.argv[1]))
        db.session.commit()
    client = app.test_client()
    out = {}
    for url, extra in json.loads(sys.argv[2]):
        r = client.get("/api" + url, query_string={"instanceId": "t", **extra})
        out[url] = [r.status_code, r.get_json(silent=True)]
    print(json.dumps(out))
""")


@pytest.mark.skipif(not PYTHON, reason="TTRECORD_VISUALIZER_PYTHON is not set")
def test_visualizer_api_reads_the_export(sample_session, tmp_path):
    # GIVEN the sample session exported as a report
    with Session.open(sample_session) as s:
        visualizer.export(s, tmp_path / "report")
    urls = [["/operations", {}], ["/operations/6", {}], ["/tensors", {}], ["/devices", {}],
            ["/operation-buffers", {"buffer_type": 0}], ["/errors", {}],
            ["/report-metadata", {}], ["/config", {}]]  # fmt: skip
    # WHEN ttnn-visualizer's backend serves it
    proc = subprocess.run([PYTHON, "-c", CLIENT, str(tmp_path / "report" / "db.sqlite"),
                           json.dumps(urls)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    api = json.loads(proc.stdout.strip().splitlines()[-1])
    # THEN every view answers, with the operations, tensors, buffers and errors of the run
    assert {url: status for url, (status, _) in api.items()} == {url: 200 for url, _ in urls}
    assert [op["name"] for op in api["/operations"][1]][:2] == [
        "ttnn.copy_host_to_device_tensor", "ttnn.matmul"]  # fmt: skip
    op6 = api["/operations/6"][1]
    assert [t["address"] for t in op6["inputs"]] == [1048704, 1050752]
    assert op6["stack_trace"].lstrip().startswith('File "') and "line 9" in op6["stack_trace"]
    assert {b["address"] for b in op6["buffers"]} >= {1048704, 1050752, 1054848}
    assert api["/errors"][1][0]["error_type"] == "TT_FATAL"
    assert api["/config"][1]["report_name"] == "model"
