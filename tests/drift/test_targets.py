"""Which captures a command line names, and one-line errors for everything else."""

import pytest

from drift_programs import Program, one_capture, two_captures
from ttrecord.analysis.drift import CaptureSpec, resolve_targets
from ttrecord.errors import TtrecordError


def test_file_colon_number_picks_captures_in_begin_order(run_diff_json, tmp_path):
    """GIVEN S with two captures and B with one WHEN `diff S.db:2 B.db:1`
    THEN A is S's second capture (trace 1) and B is B's first."""
    s = two_captures(tmp_path / "s.db", extra_before_second=True)
    b = one_capture(tmp_path / "b.db")
    _, report = run_diff_json(f"{s}:2", f"{b}:1")
    assert (report["a"]["capture"], report["a"]["trace_id"]) == (2, 1)
    assert (report["b"]["capture"], report["b"]["trace_id"]) == (1, 0)
    assert report["a"]["begin_seq"] > report["b"]["begin_seq"]


@pytest.mark.parametrize(
    ("targets", "captures", "prep", "expected"),
    [
        (["a.db", "b.db"], [], False, (("a.db", None), ("b.db", None))),
        (["a.db:2", "b.db:1"], [], False, (("a.db", 2), ("b.db", 1))),
        (["a.db", "b.db"], [3], False, (("a.db", 3), ("b.db", 3))),
        (["a.db", "b.db"], [1, 2], False, (("a.db", 1), ("b.db", 2))),
        (["s.db"], [1, 2], False, (("s.db", 1), ("s.db", 2))),
        (["s.db"], [], True, (("s.db", None), None)),
        (["s.db:2"], [], True, (("s.db", 2), None)),
        (["s.db"], [2], True, (("s.db", 2), None)),
    ],
)
def test_resolving_targets(targets, captures, prep, expected):
    """GIVEN each accepted form of the command line WHEN resolved THEN the two sides."""
    a, b = resolve_targets(targets, captures, prep)
    got = ((a.path, a.number), (b.path, b.number) if b else None)
    assert got == expected


def test_library_callers_get_the_same_one_line_error():
    """GIVEN a library caller (the UI) naming three sessions WHEN resolved
    THEN a TtrecordError with exit code 2 says what to give instead."""
    with pytest.raises(TtrecordError, match="give one or two session files") as info:
        resolve_targets(["a.db", "b.db", "c.db"])
    assert info.value.exit_code == 2


def test_a_file_really_named_with_a_colon_is_not_split(tmp_path):
    """GIVEN an existing file `x.db:2` WHEN parsed THEN it is the path, with no number."""
    odd = tmp_path / "x.db:2"
    odd.write_bytes(b"")
    assert CaptureSpec.parse(str(odd)) == CaptureSpec(str(odd), None)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["s.db"], "one session: name two captures"),
        (["s.db:1", "b.db", "--capture", "2"], "either as FILE:N or with --capture"),
        (["s.db", "b.db", "--prep"], "--prep compares one capture"),
        (["s.db", "b.db", "--capture", "0"], "capture numbers start at 1"),
        (["s.db", "b.db", "--capture", "1", "--capture", "2", "--capture", "3"], "at most two"),
        (["s.db", "missing.db"], "missing.db: no such file"),
        (["s.db:3", "b.db"], "s.db: has 2 captures; there is no capture 3"),
        (["none.db", "b.db"], "none.db: no trace capture in this session"),
        (["text.db", "b.db"], "not a ttrecord session"),
        (["b.db", "--prep", "--capture", "1", "--limit", "0"], "--limit must be at least 1"),
        (["eager.db", "--prep"], "capture 1 has no prep run"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run_diff, tmp_path, monkeypatch, args, message):
    """GIVEN command lines that do not name two readable op sequences
    WHEN run THEN exit 2 with one line on stderr saying why, and nothing on stdout."""
    monkeypatch.chdir(tmp_path)
    two_captures(tmp_path / "s.db", extra_before_second=False)
    one_capture(tmp_path / "b.db")
    Program().write(tmp_path / "none.db")
    (tmp_path / "text.db").write_text("hello\n")
    eager = Program()  # a capture with no eager run of its ops before it
    w = eager.call("ttnn.from_torch", 3)
    trace = eager.b.begin_trace(line=20)
    eager.step(w, w)
    eager.b.end_trace(trace, line=21)
    eager.write(tmp_path / "eager.db")
    code, out, err = run_diff(*args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("ttrecord diff: ")
    assert message in err
