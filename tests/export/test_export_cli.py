"""Rule: `ttrecord export FORMAT SESSION.db [-o OUT]` writes the file or folder, or says why not in one line."""

import json
import re
import subprocess
import sys

import pytest

from ttrecord.cli.main import main

pytestmark = pytest.mark.spawns


def _run(*argv):
    return subprocess.run([sys.executable, "-m", "ttrecord", *argv], capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_both_formats_write_next_to_the_session_by_default(sample_session, capsys):
    # GIVEN a session WHEN exported in each format without -o
    assert main(["export", "perfetto", str(sample_session)]) == 0
    assert main(["export", "visualizer", str(sample_session)]) == 0
    printed = capsys.readouterr().out
    # THEN each output is named after the session and the CLI says what it wrote (a message
    # wider than the 80 columns of a pipe wraps at spaces, later lines indented; only
    # `wrote PATH` stays whole on its line however long the path)
    assert all(len(line) <= 80 or (line.startswith("wrote ") and line.count(" ") == 1)
               for line in printed.splitlines())  # fmt: skip
    out = [m.group(0) for m in re.finditer(r"wrote .*?(?=\nwrote |\Z)", printed, re.S)]
    out = [" ".join(part.split()) for part in out]
    trace = sample_session.with_name("decode.trace.json")
    folder = sample_session.with_name("decode-visualizer")
    assert out[0].startswith(f"wrote {trace} (") and out[1].startswith(f"wrote {folder} (")
    assert json.loads(trace.read_text())["traceEvents"]
    assert (folder / "db.sqlite").is_file() and (folder / "config.json").is_file()


def test_existing_output_needs_force(sample_session, tmp_path, capsys):
    # GIVEN an output that already exists
    out = tmp_path / "t.json"
    out.write_text("keep me")
    # WHEN exported to it without and then with --force
    assert main(["export", "perfetto", str(sample_session), "-o", str(out)]) == 2
    assert "already exists (use --force" in capsys.readouterr().err
    assert out.read_text() == "keep me"
    # (--force replaces only what ttrecord wrote: not this file, an earlier trace yes)
    assert main(["export", "perfetto", str(sample_session), "-o", str(out), "--force"]) == 2
    assert "not written by ttrecord" in capsys.readouterr().err
    out.write_text('{"traceEvents":[]}')
    assert main(["export", "perfetto", str(sample_session), "-o", str(out), "--force"]) == 0
    # THEN only --force replaced it
    assert "traceEvents" in out.read_text() and len(out.read_text()) > 100


def test_bad_input_is_one_line_and_non_zero(tmp_path):
    # GIVEN a missing session, a file that is not a session, and an unknown format
    not_session = tmp_path / "x.db"
    not_session.write_text("hello")
    cases = [
        (["export", "perfetto", str(tmp_path / "missing.db")], "no such file"),
        (["export", "visualizer", str(not_session)], "not a ttrecord session"),
        (["export", "svg", str(not_session)], "invalid choice"),
    ]
    for argv, message in cases:
        # WHEN run as the user runs it
        proc = _run(*argv)
        # THEN it fails with a short message and no traceback
        assert proc.returncode != 0, argv
        assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) <= 3


def test_a_session_that_breaks_while_exported_leaves_no_half_written_trace(tmp_path, monkeypatch):
    # GIVEN a session whose events cannot be read past the first rows (damaged on disk)
    from ttrecord.errors import SessionError
    from ttrecord.export import perfetto
    from ttrecord.store.reader import Session
    from ttrecord.testing import SessionBuilder

    b = SessionBuilder()
    b.open_device()
    x = b.alloc(1048704)
    for line in range(5):
        b.op("ttnn.add", [x], [x], line=line + 1)
    path = b.write(tmp_path / "s.db")

    def broken(self, sql, params=()):
        yield from Session.query(self, sql, params)[:1]
        raise SessionError(f"{self.path}: damaged or truncated session (database disk image is malformed)")

    monkeypatch.setattr(Session, "query_iter", broken)
    out = tmp_path / "t.json"
    # WHEN exported THEN the error propagates and no partial file is left behind
    with Session.open(path) as s, pytest.raises(SessionError, match="malformed"):
        perfetto.export(s, out)
    assert not out.exists()
