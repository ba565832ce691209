"""Rule: the visualizer export is a TT-NN report folder whose tables match the report schema.

Checked with sqlite3 against the table definitions kept in ttnn_report_tables.py (the real
ttnn package is not installed here): every table exists with the same columns, in the same
order, with the same declared types, and the unique ids are unique.
"""

import json
import sqlite3

from ttnn_report_tables import REPORT_TABLES, UNIQUE_COLUMNS
from ttrecord.export import visualizer
from ttrecord.store.reader import Session


def test_export_has_every_report_table_with_its_columns(sample_session, tmp_path):
    # GIVEN the sample session WHEN exported to a folder
    out = tmp_path / "report"
    with Session.open(sample_session) as s:
        visualizer.export(s, out)
    # THEN the folder has the two files the visualizer looks for
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "db.sqlite"]
    assert json.loads((out / "config.json").read_text())["report_name"] == "model"
    conn = sqlite3.connect(out / "db.sqlite")
    # AND each report table has exactly the report's columns and types, in order
    for table, columns in REPORT_TABLES.items():
        info = conn.execute(f"PRAGMA table_info({table})").fetchall()
        assert [(row[1], row[2].upper()) for row in info] == columns, table
    # AND ids the report keeps unique are unique
    for table, column in UNIQUE_COLUMNS.items():
        total, distinct = conn.execute(
            f"SELECT count(*), count(DISTINCT {column}) FROM {table}").fetchone()  # fmt: skip
        assert total == distinct and total > 0, table


def test_references_between_tables_resolve(sample_session, tmp_path):
    # GIVEN the sample session WHEN exported
    with Session.open(sample_session) as s:
        visualizer.export(s, tmp_path / "report")
    conn = sqlite3.connect(tmp_path / "report" / "db.sqlite")

    def dangling(sql: str) -> int:
        return conn.execute(sql).fetchone()[0]

    # THEN every operation and tensor a row names exists (the checks ttnn's importer makes)
    for table in ("operation_arguments", "input_tensors", "output_tensors", "stack_traces",
                  "errors", "buffers"):  # fmt: skip
        assert dangling(f"SELECT count(*) FROM {table} WHERE operation_id NOT IN"
                        " (SELECT operation_id FROM operations)") == 0, table  # fmt: skip
    for table in ("input_tensors", "output_tensors"):
        assert dangling(f"SELECT count(*) FROM {table} WHERE tensor_id NOT IN"
                        " (SELECT tensor_id FROM tensors)") == 0, table  # fmt: skip
    assert dangling("SELECT count(*) FROM buffers WHERE device_id NOT IN"
                    " (SELECT device_id FROM devices)") == 0  # fmt: skip
    assert dangling("SELECT count(*) FROM stack_traces WHERE source_file_id IS NOT NULL AND"
                    " source_file_id NOT IN (SELECT id FROM source_files)") == 0  # fmt: skip
