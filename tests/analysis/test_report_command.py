"""`ttrecord report`: run status (with the call that died), backend, devices, counts, traces
and findings grouped by severity with their source lines."""

import re

from ttrecord.cli.main import main
from ttrecord.events import SessionStatus
from ttrecord.store.writer import SessionWriter
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step


def _source(tmp_path):
    src = tmp_path / "model.py"
    src.write_text("\n".join(f"step_{i}()" for i in range(1, 41)) + "\n")
    return str(src)


def test_crashed_run_names_the_call_that_died_and_its_line(tmp_path, capsys):
    # GIVEN a run that died (SIGSEGV) inside its second execute_trace, on the emulator
    b = SessionBuilder(file=_source(tmp_path))
    tid, x, w, y = captured_step(b)
    b.execute(tid, line=30)
    dying = b.execute(tid, line=31)
    writer = SessionWriter(tmp_path / "s.db")
    writer.start(script="model.py", argv=["model.py"], backend="emulator")
    writer.add(b.events)
    writer.finish(SessionStatus.CRASHED, exit_code=139, signal=11, last_call=dying.seq)
    writer.close()
    # WHEN reported
    assert main(["report", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr().out
    # THEN status, the dead call with its line and source, the backend and the trace are shown
    assert "status CRASHED (exit code 139, signal 11)" in out
    assert re.search(r"died in `execute_trace` at \S*/model\.py:31 in ", out)
    assert "31 | step_31()" in out
    assert "backend emulator" in out and "no Tenstorrent device" in " ".join(out.split())
    assert "model.py:20-21" in out  # the capture's lines in the traces table
    assert "blackhole" in out


def test_findings_are_grouped_by_severity_with_source_lines(tmp_path, capsys):
    b = SessionBuilder(file=_source(tmp_path))
    tid, x, w, y = captured_step(b)
    kept = b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    b.d2h(kept, line=35)  # the program reads what the replay overwrote
    b.d2h(y, line=32)
    b.d2h(y, line=32)
    b.execute(tid, line=31)
    b.execute(tid, line=31)
    b.d2h(y, line=33)
    b.d2h(y, line=33)
    b.release(tid, line=34)
    assert main(["report", b.write(tmp_path / "s.db")]) == 0
    out = capsys.readouterr().out
    # both are errors (the re-reads at 33 used values later replays overwrote), in line order
    errors = out.index("2 errors")
    assert errors < out.index("TR004 Allocation over trace memory") < out.index("TR006")
    assert "warning" not in out[errors:] and "33 | step_33()" in out
    assert "30 | step_30()" in out


def test_run_that_died_of_a_raising_call_names_that_call(tmp_path, capsys):
    # GIVEN a run that ended with an uncaught TT_FATAL from a read inside the capture
    b = SessionBuilder(file=_source(tmp_path))
    b.open_device()
    x = b.alloc(0x100000)
    b.begin_trace(line=20)
    b.d2h(x, line=22)
    b.raised("RuntimeError: TT_FATAL: Reads are not supported during trace capture.")
    writer = SessionWriter(tmp_path / "s.db")
    writer.start(script="model.py", argv=["model.py"], backend="emulator")
    writer.add(b.events)
    writer.finish(SessionStatus.ERROR, exit_code=1, error_type="RuntimeError",
                  error_message="TT_FATAL: Reads are not supported during trace capture.")  # fmt: skip
    writer.close()
    main(["report", str(tmp_path / "s.db")])
    out = capsys.readouterr().out
    assert "status ERROR (exit code 1)" in out
    assert re.search(r"raised in `to_torch` at \S*/model\.py:22 in ", out)
    assert "TR001 Readback inside trace capture" in out
