"""Rule: the streaming ttnn-visualizer export writes the very file the first, in-memory one
wrote (kept as `visualizer_reference`), byte for byte, on every shape of session: the sample
decode loop, a benchmark-style decode loop with captures, and the odd cases (a recorded tensor
id at two places, host values with no identity, sharded tensors, a call that raised, frees
inside and between calls)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

import visualizer_reference
from benchmarks import synthetic
from ttrecord.events import Kind, Phase, TensorRef
from ttrecord.export import visualizer
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder


def _odd_session(path: Path) -> Path:
    b = SessionBuilder()
    b.open_device()
    x, y = b.alloc(1048704), b.alloc(1050752)
    l1 = b.alloc(4096, buffer_type="L1")
    same_id = TensorRef(7, "device", (32, 32), "BFLOAT16", "TILE", "MemoryConfig(...)", x)
    again = TensorRef(7, "device", (32, 32), "BFLOAT16", "TILE", None, y)  # id 7, elsewhere
    sharded = TensorRef(9, "device", (64, 32), "BFLOAT16", "TILE",
                        "MemoryConfig(memory_layout=TensorMemoryLayout::HEIGHT_SHARDED)", l1)
    anon = TensorRef(None, "host", (), "float32", None, None, None)
    b._add(Kind.OP, "ttnn.add", 3, inputs=(same_id, anon), outputs=(again,), args={"alpha": 2})
    b._add(Kind.OP, "ttnn.to_memory_config", 4, inputs=(again,), outputs=(sharded,))
    b._add(Kind.OP, "matmul", 5, inputs=(sharded, anon), outputs=(same_id,),
           args={"program_config": None, "dims": [1, 2]})
    b.free(y)
    z = b.alloc(1050752, size=4096)
    mul = b.op("ttnn.mul", [x, z], [z], line=6)
    b._add(Kind.FREE, "free", None, buffer=x, parent=mul.seq)
    tid = b.begin_trace(line=7)
    b.op("ttnn.exp", [z], [z], line=8)
    b.end_trace(tid, line=9)
    b.execute(tid, line=10)
    b.release(tid, line=11)
    b.raised("TT_FATAL: Reads are not supported during trace capture.")
    b._add(Kind.OP, "ttnn.relu", 12, phase=Phase.EAGER, outputs=(sharded,))
    return Path(b.write(path))


@pytest.fixture(params=["sample", "odd", "decode"])
def session(request, tmp_path, sample_session) -> Path:
    if request.param == "sample":
        return sample_session
    if request.param == "odd":
        return _odd_session(tmp_path / "odd.db")
    path = tmp_path / "bench-decode.db"
    synthetic.write_session(path, 6000)
    return path


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "db.sqlite").read_bytes()).hexdigest()


def _tables(folder: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(folder / "db.sqlite")
    try:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: conn.execute(f"SELECT * FROM {n} ORDER BY rowid").fetchall() for n in names}
    finally:
        conn.close()


def test_streaming_export_writes_the_reference_file(session, tmp_path):
    # GIVEN a session exported by the reference exporter and by the streaming one
    with Session.open(session) as s:
        old = visualizer_reference.export(s, tmp_path / "old")
        new = visualizer.export(s, tmp_path / "new")
    # THEN every table holds the same rows in the same order, the counts agree, the file is
    # the same bytes, and config.json differs only by the folder it names
    tables = _tables(tmp_path / "new")
    assert tables == _tables(tmp_path / "old")
    assert sum(len(rows) for rows in tables.values()) > 20
    assert new.counts == old.counts
    assert _digest(tmp_path / "new") == _digest(tmp_path / "old")
    assert ((tmp_path / "new" / "config.json").read_text().replace(str(tmp_path / "new"), "X")
            == (tmp_path / "old" / "config.json").read_text().replace(str(tmp_path / "old"), "X"))


def test_the_odd_session_has_what_the_comparison_needs(tmp_path):
    # GIVEN the odd session's export THEN it really has a sharded buffer, a fresh id for the
    # tensor whose recorded id was taken, an error and an anonymous host value
    path = _odd_session(tmp_path / "odd.db")
    with Session.open(path) as s:
        visualizer.export(s, tmp_path / "out")
    t = _tables(tmp_path / "out")
    assert any(row[5] == 1 for row in t["buffers"])  # HEIGHT_SHARDED
    assert sorted(r[0] for r in t["tensors"])[:1] == [7] and len({r[0] for r in t["tensors"]}) == len(t["tensors"])
    assert len(t["errors"]) >= 1
    assert any(r[1] == "Shape([])" for r in t["tensors"])
