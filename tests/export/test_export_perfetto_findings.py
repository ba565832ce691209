"""Rule: each finding is a marked instant on the track and at the time of the event that caused it."""

from export_helpers import slices
from ttrecord.export import perfetto
from ttrecord.store.reader import Session


def test_finding_is_pinned_to_its_culprit(sample_session):
    # GIVEN a session whose TR001 finding names the readback inside the capture
    # WHEN exported
    with Session.open(sample_session) as s:
        trace = perfetto.build(s)
    (finding,) = [e for e in trace["traceEvents"] if e.get("cat", "").startswith("finding")]
    (readback,) = slices(trace, name="to_torch")
    # THEN the finding sits on the readback's track at its start, marked as an error
    assert finding["name"] == "TR001 readback in capture"
    assert (finding["pid"], finding["tid"], finding["ts"]) == (
        readback["pid"], readback["tid"], readback["ts"])  # fmt: skip
    assert finding["s"] == "t" and finding["cname"] == "terrible"
    # AND it says where in the user's code and how to fix it
    assert finding["args"]["where"].endswith("model.py:10")
    assert finding["args"]["severity"] == "error"
    assert finding["args"]["fix"] == "read the output after execute_trace"
