"""`ttrecord tui`: a missing path is a one-line error, and the CLI never loads Textual."""

import subprocess
import sys

from ttrecord.cli.main import main
import pytest

pytestmark = pytest.mark.spawns


def test_missing_session_is_a_one_line_error(workdir, capsys):
    """GIVEN a path that does not exist WHEN `ttrecord tui` is run on it THEN it exits 2 with
    one line naming the path, before any UI starts."""
    assert main(["tui", "nope.db"]) == 2
    err = capsys.readouterr().err
    assert err == "ttrecord tui: nope.db: no such file or folder\n"


def test_cli_parser_does_not_import_textual():
    """GIVEN the CLI WHEN its parser is built (every command's module loaded) THEN Textual and
    the UI package are still not imported: only `ttrecord tui` loads them, inside run()."""
    code = (
        "import sys; from ttrecord.cli.main import build_parser; build_parser();"
        " print(sorted(m for m in sys.modules if m.startswith(('textual', 'ttrecord.tui'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_not_on_a_terminal_is_a_one_line_error(workdir):
    """GIVEN a readable session WHEN `ttrecord tui` runs with stdout piped THEN it exits 2 at
    once with one line on stderr and writes no escape codes (instead of starting the UI)."""
    from tui_sessions import build_empty

    session = build_empty(workdir)
    proc = subprocess.run([sys.executable, "-m", "ttrecord.cli.main", "tui", str(session)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("ttrecord tui: standard output is not a terminal")
    assert "\x1b" not in proc.stderr
