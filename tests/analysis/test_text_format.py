"""`check` in the terminal: each finding with its location, source line, evidence and fix."""

import io

from ttrecord.report import check_session, text
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step


def test_text_shows_location_source_line_and_fix(tmp_path):
    src = tmp_path / "model.py"
    src.write_text("\n".join(f"line_{i} = {i}" for i in range(1, 41)) + "\n")
    b = SessionBuilder(file=str(src))
    tid, x, w, y = captured_step(b)
    kept = b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    b.d2h(kept, line=35)  # the program reads what the replay overwrote
    b.release(tid, line=32)
    out = io.StringIO()
    text.render(check_session(b.write(tmp_path / "s.db")), out)
    shown = out.getvalue()
    assert "error TR004  Allocation over trace memory" in shown
    # the location fits 80 columns: the whole path when it fits, else shortened from the
    # middle with the file name and line kept
    location = next(ln for ln in shown.splitlines() if "model.py:30" in ln)
    assert len(location) <= 80 and location.strip().split(" in ")[0].endswith("/model.py:30")
    assert f"{src}:30" in shown or "…" in location
    assert "30 | line_30 = 30" in shown
    assert "[0x101000, 0x101800)" in shown
    assert "fix: Allocate this tensor before begin_trace_capture" in shown
    assert "1 finding: 1 error (TR004 x1)" in shown
