"""A session without its indexes (still recording, or its recorder was killed) is read from an
indexed copy: the file is never written, no copy is left behind, and every reader's queries run
on indexes (a reader on the unindexed file took minutes at a few hundred thousand events)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.tui.tui_sessions import build_alloc_after_capture
from ttrecord.cli.main import main
from ttrecord.store import liveness, schema, snapshot
from ttrecord.store.reader import Session


def _unfinished(folder: Path) -> Path:
    """The alloc-after-capture session as it looks before its recording finishes."""
    path = build_alloc_after_capture(folder)
    conn = sqlite3.connect(path)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index' AND name LIKE 'idx_%'").fetchall():
        conn.execute(f"DROP INDEX [{name}]")
    conn.execute("UPDATE session SET status = 'running'")
    conn.commit()
    conn.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """TMPDIR of this test alone, to see what a reader leaves in it."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr("tempfile.tempdir", None)
    return folder


def test_unindexed_session_is_read_from_an_indexed_copy(tmp_path, private_tmp):
    path = _unfinished(tmp_path)
    before = _digest(path)
    with Session.open(path) as session:
        assert session.snapshot
        names = {r[0] for r in session.query("SELECT name FROM sqlite_master WHERE type='index'")}
        assert {snapshot.index_name(t, c) for t, c in schema.INDEXES} <= names
        plan = " ".join(str(r) for r in session.query(
            "EXPLAIN QUERY PLAN SELECT 1 FROM tensors WHERE seq = 5 AND buffer = 1"))  # fmt: skip
        assert "USING INDEX" in plan
        assert list(private_tmp.iterdir()) == []  # unlinked while open
        assert session.event_count() > 0
    assert _digest(path) == before
    assert list(private_tmp.iterdir()) == []


def test_finished_session_is_read_in_place(tmp_path, private_tmp):
    path = build_alloc_after_capture(tmp_path)
    with Session.open(path) as session:
        assert not session.snapshot
        assert snapshot.missing_indexes(session._conn) == []


def test_listing_and_live_views_read_the_file_itself(tmp_path, private_tmp):
    path = _unfinished(tmp_path)
    with Session.open(path, snapshot=False) as session:
        assert not session.snapshot
    fd = liveness.lock_log(liveness.log_path(path))  # as a running `ttrecord run` holds it
    try:
        with Session.open(path, live=True) as session:
            assert not session.snapshot  # sees events as they arrive
        with Session.open(path) as session:
            assert session.snapshot  # an export or a report of a live run: bounded
    finally:
        import os

        os.close(fd)
    with Session.open(path, live=True) as session:
        assert session.snapshot  # nobody records it any more: nothing to follow


def test_no_room_for_the_copy_reads_the_file_itself(tmp_path, monkeypatch):
    path = _unfinished(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr("tempfile.mkstemp", _no_space)
    with Session.open(path) as session:
        assert not session.snapshot
        assert session.event_count() > 0


def _no_space(*args, **kwargs):
    raise OSError(28, "No space left on device")


def test_readers_give_the_same_answers_from_the_copy(tmp_path, capsys):
    finished = build_alloc_after_capture(tmp_path)
    unfinished = tmp_path / "unfinished.db"
    shutil.copy(finished, unfinished)
    conn = sqlite3.connect(unfinished)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='index' AND name LIKE 'idx_%'").fetchall():
        conn.execute(f"DROP INDEX [{name}]")
    conn.commit()
    conn.close()
    outputs = []
    for path in (finished, unfinished):
        assert main(["check", str(path), "--format", "json"]) == 1  # the TR004 error
        report = json.loads(capsys.readouterr().out)
        outputs.append(sorted((f["id"], f["message"]) for f in report["findings"]))
    assert outputs[0] and outputs[0] == outputs[1]
