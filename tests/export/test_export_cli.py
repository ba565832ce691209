"""Rule: `ttrecord export FORMAT SESSION.db [-o OUT]` writes the file or folder, or says why not in one line."""

import json
import subprocess
import sys

from ttrecord.cli.main import main


def _run(*argv):
    return subprocess.run([sys.executable, "-m", "ttrecord", *argv], capture_output=True,
                          text=True, timeout=60)  # fmt: skip


def test_both_formats_write_next_to_the_session_by_default(sample_session, capsys):
    # GIVEN a session WHEN exported in each format without -o
    assert main(["export", "perfetto", str(sample_session)]) == 0
    assert main(["export", "visualizer", str(sample_session)]) == 0
    out = capsys.readouterr().out.splitlines()
    # THEN each output is named after the session and the CLI says what it wrote
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
    assert main(["export", "perfetto", str(sample_session), "-o", str(out), "--force"]) == 0
    # THEN only --force replaced it
    assert "traceEvents" in out.read_text()


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
