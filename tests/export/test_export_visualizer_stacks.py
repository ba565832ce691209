"""Rule: call sites become Python stack traces with their source, and failed calls become errors."""

import sqlite3

from ttrecord.export import visualizer
from ttrecord.store.reader import Session


def test_stack_traces_source_files_and_errors(sample_session, model_file, tmp_path):
    # GIVEN the sample session, whose model file is kept in the session
    model_file.rename(model_file.with_suffix(".moved"))  # read from the session, not disk
    with Session.open(sample_session) as s:
        visualizer.export(s, tmp_path / "report")
    conn = sqlite3.connect(tmp_path / "report" / "db.sqlite")
    # THEN an operation's stack trace is a Python traceback line with the code it ran
    text, source_id = conn.execute(
        "SELECT stack_trace, source_file_id FROM stack_traces WHERE operation_id = 6").fetchone()  # fmt: skip
    assert text == f'  File "{model_file}", line 9, in main\n    y = ttnn.matmul(x, w)'
    # AND the source file it names is in source_files, whole
    path, contents = conn.execute(
        "SELECT path, contents FROM source_files WHERE id = ?", (source_id,)).fetchone()  # fmt: skip
    assert path == str(model_file) and contents.splitlines()[8] == "y = ttnn.matmul(x, w)"
    # AND the readback that raised TT_FATAL is an error on its operation, with its stack
    (error,) = conn.execute(
        "SELECT operation_id, operation_name, error_type, error_message, stack_trace"
        " FROM errors").fetchall()  # fmt: skip
    assert error[:3] == (7, "ttnn.to_torch", "TT_FATAL")
    assert error[3] == "TT_FATAL: Reads are not supported during trace capture."
    assert "line 10" in error[4] and "ttnn.to_torch(y)" in error[4]
    # AND ttrecord's finding travels in report_metadata
    meta = dict(conn.execute("SELECT key, value FROM report_metadata"))
    assert '"rule": "TR001"' in meta["ttrecord_findings"]
    assert meta["backend"] == "emulator"
