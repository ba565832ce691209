"""Rule: `report` shows a long run's identical traces as one row (ids and count), not one
row per trace."""

from __future__ import annotations

from ttrecord.cli.main import main
from ttrecord.testing import SessionBuilder
import pytest

pytestmark = pytest.mark.slow

X, Y = 0x100000, 0x100800


def test_identical_traces_are_one_row(tmp_path, capsys):
    # GIVEN 50 captures of the same line, each replayed once and released
    b = SessionBuilder()
    b.open_device()
    x = b.alloc(X)
    for _ in range(50):
        tid = b.begin_trace(line=20)
        y = b.alloc(Y)
        b.op("ttnn.relu", [x], [y], line=21)
        b.end_trace(tid, line=22)
        b.execute(tid, line=23)
        b.release(tid, line=24)
        b.free(y)
    path = b.write(tmp_path / "many.db")
    main(["report", "-q", path])
    out = capsys.readouterr().out
    # THEN one row stands for all 50, with their ids and count
    table = out[out.index("Traces"):]
    table = table[: table.index("\n\n")] if "\n\n" in table else table  # the table alone
    assert "0–49 (50×)" in table
    assert table.count("released") == 1
