"""Session text is data in every command (issue problem 6: markup in names was interpreted,
`[/]` crashed report and diff, ANSI/OSC escapes reached the terminal)."""

from __future__ import annotations


import pytest

from tests.reliability.hostile import build_hostile, unsafe
from ttrecord.cli.main import main

COMMANDS = {
    "report": lambda s, d: ["report", s],
    "check-text": lambda s, d: ["check", s],
    "check-json": lambda s, d: ["check", s, "--format", "json"],
    "check-sarif": lambda s, d: ["check", s, "--format", "sarif"],
    "diff": lambda s, d: ["diff", s, s],
    "diff-json": lambda s, d: ["diff", s, s, "--format", "json"],
    "sessions": lambda s, d: ["sessions", d],
    "export-perfetto": lambda s, d: ["export", "perfetto", s, "-o", f"{d}/t.json", "-f"],
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    return build_hostile(folder)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_shows_hostile_text_as_data(hostile, capsys, name):
    """GIVEN a session full of markup, ANSI/OSC escapes, bidi controls and 1 MB strings WHEN
    each command reads it THEN no traceback, exit 0/1, and no raw control character or bidi
    control in what it prints."""
    code = main(COMMANDS[name](str(hostile), str(hostile.parent)))
    out, err = capsys.readouterr()
    assert code in ((0, 1, 3) if name.startswith("check") else (0, 1)), err  # 3: run did not finish
    assert "Traceback" not in err
    if not name.endswith(("json", "sarif")):
        assert unsafe(out + err) == []


def test_markup_in_names_is_shown_literally(hostile, capsys, monkeypatch):
    """GIVEN a script named `model[fast][b]…` WHEN report and sessions show it THEN the
    brackets appear as typed."""
    main(["report", str(hostile)])
    out = capsys.readouterr().out
    assert "model[fast][b]" in out and "[bold red]loud[/]" in out
    monkeypatch.setenv("COLUMNS", "400")  # one line per row
    main(["sessions", str(hostile.parent)])
    assert "model[fast][b]\\x1b]0;t\\x07\\u202e.py" in capsys.readouterr().out


def test_huge_strings_are_cut_in_terminal_output(hostile, capsys):
    """GIVEN a 1 MB error message WHEN report prints it THEN it is cut with a note."""
    main(["report", str(hostile)])
    out = capsys.readouterr().out
    assert len(out) < 200_000
    assert "more characters)" in out
