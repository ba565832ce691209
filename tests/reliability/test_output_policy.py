"""One output-path policy for -o/-f in every command (issue 36, failure 6: `check`/`report -f
-o S.db S.db` truncated the session, `report --html -o S.db` overwrote it, `export perfetto -o
S.db` deleted it, a failing `check -f -o user.txt` truncated user.txt, `export visualizer -f`
overwrote a user's config.json, a dangling symlink sent an export into another folder, log data
went through a `S.db.log` symlink, a user's `S.db-wal` or `S.db.recovering` was deleted)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.reliability.conftest import PROLOGUE, fake_env, run_cli, ttrecord_cmd

pytestmark = pytest.mark.spawns

PROGRAM = PROLOGUE + """\
t = ttnn.Tensor(device)
for i in range(20):
    t = ttnn.relu(t)
"""
USER_TEXT = b"my own notes\n" * 10


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("policy")
    (folder / "prog.py").write_text(PROGRAM)
    proc = subprocess.run(ttrecord_cmd("run", "--backend", "ttnn", "-o", "S.db", "prog.py"),
                          cwd=folder, env=fake_env(folder), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return folder / "S.db"


@pytest.fixture
def session(recorded, tmp_path) -> Path:
    shutil.copy(recorded, tmp_path / "S.db")
    (tmp_path / "prog.py").write_text(PROGRAM)
    return tmp_path / "S.db"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


SELF_WRITES = [
    ("check", "-f", "-o", "S.db", "S.db"),
    ("check", "-o", "S.db", "S.db"),
    ("report", "-f", "-o", "S.db", "S.db"),
    ("report", "--html", "-o", "S.db", "S.db"),
    ("report", "--html", "-f", "-o", "S.db", "S.db"),
    ("export", "perfetto", "-o", "S.db", "S.db"),
    ("export", "perfetto", "-f", "-o", "S.db", "S.db"),
    ("export", "perfetto", "-f", "-o", "S.db.log", "S.db"),
    ("check", "-f", "-o", "S.db-wal", "S.db"),
]


@pytest.mark.parametrize("args", SELF_WRITES, ids=" ".join)
def test_the_input_session_is_never_the_output(session, args):
    before = _digest(session)
    proc = run_cli(session.parent, *args)
    _refused(proc)
    assert session.exists() and _digest(session) == before


def test_failing_command_leaves_the_old_output_untouched(session):
    """GIVEN a previous check output WHEN `check -f -o it missing.db` fails THEN it is intact."""
    folder = session.parent
    assert run_cli(folder, "check", "--allow-empty", "-o", "out.txt", "S.db").returncode == 0
    before = _digest(folder / "out.txt")
    proc = run_cli(folder, "check", "-f", "-o", "out.txt", "missing.db")
    assert proc.returncode == 2
    assert _digest(folder / "out.txt") == before
    assert [p.name for p in folder.iterdir() if ".ttrecord-" in p.name] == []


@pytest.mark.parametrize("args", [("check",), ("check", "--format", "json"),
                                  ("check", "--format", "sarif"), ("report",),
                                  ("report", "--format", "json"), ("report", "--html"),
                                  ("export", "perfetto")], ids=" ".join)  # fmt: skip
def test_force_replaces_only_what_ttrecord_wrote(session, args):
    """GIVEN a user's file at the output path WHEN a command is run with -f THEN it is refused
    and the file is intact; GIVEN an earlier output of the same command THEN -f replaces it."""
    folder = session.parent
    user = folder / "user.out"
    user.write_bytes(USER_TEXT)
    cmd = [*args[:2], "S.db"] if args[0] == "export" else [args[0], "S.db", *args[1:]]
    if args[0] == "check":
        cmd.append("--allow-empty")  # an eager session: judged all the same
    proc = run_cli(folder, *cmd, "-f", "-o", "user.out")
    _refused(proc)
    assert user.read_bytes() == USER_TEXT
    first = run_cli(folder, *cmd, "-o", "ours.out")
    assert first.returncode in (0, 1), first.stderr
    again = run_cli(folder, *cmd, "-f", "-o", "ours.out")
    assert again.returncode in (0, 1), again.stderr
    other = folder / "other.db"
    shutil.copy(session, other)
    before = _digest(other)
    _refused(run_cli(folder, *cmd, "-f", "-o", "other.db"))
    assert _digest(other) == before


def test_visualizer_force_replaces_only_its_own_folder(session):
    folder = session.parent
    mine = folder / "mine"
    mine.mkdir()
    (mine / "config.json").write_text('{"my": "settings"}')
    (mine / "db.sqlite").write_bytes(b"my data")
    _refused(run_cli(folder, "export", "visualizer", "S.db", "-f", "-o", "mine"))
    assert (mine / "config.json").read_text() == '{"my": "settings"}'
    assert (mine / "db.sqlite").read_bytes() == b"my data"
    assert run_cli(folder, "export", "visualizer", "S.db", "-o", "viz").returncode == 0
    again = run_cli(folder, "export", "visualizer", "S.db", "-f", "-o", "viz")
    assert again.returncode == 0, again.stderr
    config = json.loads((folder / "viz" / "config.json").read_text())
    assert config["report_path"] == str((folder / "viz").resolve())
    assert sorted(p.name for p in (folder / "viz").iterdir()) == ["config.json", "db.sqlite"]
    assert [p.name for p in folder.iterdir() if ".ttrecord-" in p.name] == []


def test_dangling_symlink_output_is_not_followed(session, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    link = session.parent / "trace.json"
    link.symlink_to(elsewhere / "trace.json")
    for args in (("export", "perfetto", "S.db", "-o", "trace.json"),
                 ("check", "S.db", "-o", "trace.json"),
                 ("report", "S.db", "--html", "-o", "trace.json")):  # fmt: skip
        _refused(run_cli(session.parent, *args))
    assert list(elsewhere.iterdir()) == []


def test_run_never_writes_through_a_log_symlink(tmp_path, tmp_path_factory):
    (tmp_path / "prog.py").write_text(PROGRAM)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    target = elsewhere / "victim"
    target.write_bytes(USER_TEXT)
    (tmp_path / "N.db.log").symlink_to(target)
    proc = subprocess.run(ttrecord_cmd("run", "--backend", "ttnn", "-o", "N.db", "prog.py"),
                          cwd=tmp_path, env=fake_env(tmp_path), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 125 and "symbolic link" in proc.stderr, proc.stderr
    assert target.read_bytes() == USER_TEXT


def test_run_keeps_a_users_stale_wal(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    wal = tmp_path / "N.db-wal"
    wal.write_bytes(USER_TEXT)
    proc = subprocess.run(ttrecord_cmd("run", "--backend", "ttnn", "-o", "N.db", "prog.py"),
                          cwd=tmp_path, env=fake_env(tmp_path), capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert proc.returncode == 125, proc.stderr
    assert wal.read_bytes() == USER_TEXT


def test_recover_keeps_a_users_recovering_file(session):
    import sqlite3

    conn = sqlite3.connect(session, isolation_level=None)
    conn.execute("UPDATE session SET status = 'running'")
    conn.close()
    (session.parent / "S.db.log").write_bytes((16).to_bytes(8, "little") + b"TTRLOG01")
    user = session.with_name("S.db.recovering")
    user.write_bytes(USER_TEXT)
    proc = run_cli(session.parent, "recover", "S.db")
    _refused(proc)
    assert user.read_bytes() == USER_TEXT
    os.unlink(user)
