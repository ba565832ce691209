"""A long `--format json` report is written in chunks, with the very bytes `json.dumps` of the
whole document gives (the documented structure, on one line)."""

import io
import json

from ttrecord.analysis.drift import CaptureSpec, diff_targets
from ttrecord.report import drift_json as jsonfmt
from ttrecord.jsonstream import ArrayWriter

from drift_programs import one_capture, two_captures


def test_a_streamed_report_has_the_bytes_of_the_whole_document(tmp_path, monkeypatch):
    # GIVEN reports with changed, inserted and removed ops, streamed as if they were long
    path = two_captures(tmp_path / "s.db", extra_before_second=True)
    other_a = one_capture(tmp_path / "a.db")
    other_b = one_capture(tmp_path / "b.db", extra_op=True, skip_relu=True)
    monkeypatch.setattr(jsonfmt, "INDENT_MAX_ROWS", 0)
    monkeypatch.setattr("ttrecord.jsonstream.CHUNK", 2)  # several chunks even here
    for a, b in ((CaptureSpec(str(path), 1), CaptureSpec(str(path), 2)),
                 (CaptureSpec(other_a), CaptureSpec(other_b))):  # fmt: skip
        report = diff_targets(a, b)
        for all_ops in (False, True):
            out = io.StringIO()
            # WHEN written
            jsonfmt.write_json(report, out, all_ops=all_ops)
            # THEN it is json.dumps of to_json, on one line
            expected = json.dumps(jsonfmt.to_json(report, all_ops=all_ops)) + "\n"
            assert out.getvalue() == expected
            assert len(jsonfmt.to_json(report, all_ops=all_ops)["ops"]) > 1


def test_the_array_writer_separates_chunks_as_json_does():
    for n in (0, 1, 2, 3, 7):
        for separators in ((",", ":"), (", ", ": ")):
            out = io.StringIO()
            writer = ArrayWriter(out, separators=separators, chunk=2)
            items = [{"i": i, "s": "é\n\"", "f": i / 3} for i in range(n)]
            for item in items:
                writer.add(item)
            writer.close()
            assert out.getvalue() == json.dumps(items, separators=separators)
