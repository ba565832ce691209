"""The recorded program sees what plain `python` would give it: argv, __name__, sys.path[0],
stdin/stdout; `-m package.module` works like `python -m`."""

from __future__ import annotations

import json

from tests.recorder.conftest import Recorded, record, run_ttrecord
import pytest

pytestmark = pytest.mark.spawns

PROBE = """\
import json, os, sys
import ttnn
line = sys.stdin.readline().strip()
print(json.dumps({"argv": sys.argv, "file": __file__, "name": __name__, "path0": sys.path[0],
                  "stdin": line, "emulator": getattr(ttnn, "__emulator__", False)}))
"""


def test_script_sees_argv_name_path_and_stdin(tmp_path, write_script):
    """GIVEN a script in a subfolder WHEN recorded with arguments and stdin THEN it sees its
    own argv (the path as typed, flags included), an absolute __file__, __name__ ==
    '__main__', its folder as sys.path[0], the stdin line, and ttnn is the emulator."""
    script = write_script("sub/probe.py", PROBE)
    out = tmp_path / "probe.db"
    proc = run_ttrecord(["run", "--backend", "emulator", "-o", str(out), "sub/probe.py",
                         "--backend", "x", "-o", "y"], cwd=tmp_path, input="hello\n")  # fmt: skip
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {"argv": ["sub/probe.py", "--backend", "x", "-o", "y"], "file": str(script),
                    "name": "__main__", "path0": str(tmp_path / "sub"), "stdin": "hello",
                    "emulator": True}  # fmt: skip


def test_dash_m_runs_a_module(tmp_path, write_script):
    """GIVEN a package module WHEN recorded with -m pkg.mod args THEN it runs as __main__ with
    its args, and the session names the module and records its ttnn calls."""
    write_script("pkg/__init__.py", "")
    write_script("pkg/mod.py", PROBE + "d = ttnn.open_device(device_id=0)\nttnn.close_device(d)\n")
    out = tmp_path / "mod.db"
    proc = run_ttrecord(["run", "--backend", "emulator", "-o", str(out), "-m", "pkg.mod", "a",
                         "--flag"], cwd=tmp_path, input="x\n")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (seen["argv"][1:], seen["name"]) == (["a", "--flag"], "__main__")
    rec = Recorded(proc, out)
    names = [r["name"] for r in rec.rows("SELECT name FROM events WHERE parent IS NULL"
                                         " AND kind LIKE 'device_%' ORDER BY seq")]  # fmt: skip
    assert rec.session()["script"] == "-m pkg.mod"
    assert names == ["open_device", "close_device"]


def test_auto_backend_and_default_output(tmp_path, write_script):
    """GIVEN no importable real ttnn and no -o WHEN recorded with the default backend THEN
    auto picks the emulator, says why once on stderr and in the session, which is
    ttrecord-<stem>-<timestamp>.db in the current folder, and the next commands are printed;
    recording again to that explicit path is refused without --force."""
    script = write_script("named.py", "import ttnn\n")
    proc = run_ttrecord(["run", str(script)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    made = list(tmp_path.glob("ttrecord-named-*.db"))
    assert len(made) == 1
    reason = "ttnn is not importable: No module named 'ttnn'"
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("ttrecord: backend")]
    assert lines == [f"ttrecord: backend emulator ({reason})"]
    row = Recorded(proc, made[0]).session()
    assert (row["backend"], row["backend_reason"]) == ("emulator", reason)
    assert f"ttrecord check {made[0].name}" in proc.stderr
    assert f"ttrecord tui {made[0].name}" in proc.stderr
    again = record(script, tmp_path, name=made[0].stem)
    assert again.proc.returncode == 125 and "use --force" in again.proc.stderr


FORKS = """\
import multiprocessing as mp
import torch
import ttnn

def work(q):
    dev = ttnn.open_device(device_id=1)
    t = ttnn.from_torch(torch.ones(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=dev)
    q.put(float(ttnn.to_torch(ttnn.relu(t))[0, 0]))

if __name__ == "__main__":
    dev = ttnn.open_device(device_id=0)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=work, args=(q,))
    p.start()
    print("worker says", q.get())
    p.join()
    ttnn.close_device(dev)
"""


def test_forked_workers_do_not_write_into_the_session(tmp_path, write_script):
    """GIVEN a program whose forked worker uses ttnn WHEN recorded THEN the worker runs, and
    the session holds only the parent's calls, each once, and a note that the forked process's
    calls are not recorded."""
    script = write_script("forks.py", FORKS)
    rec = record(script, tmp_path)
    assert rec.proc.returncode == 0, rec.proc.stderr
    assert "worker says 1.0" in rec.proc.stdout
    names = [r["name"] for r in rec.rows("SELECT name FROM events WHERE parent IS NULL"
                                         " AND kind NOT IN ('alloc', 'free', 'note')"
                                         " ORDER BY seq")]  # fmt: skip
    assert names == ["open_device", "close_device"]
    notes = rec.rows("SELECT args FROM events WHERE kind = 'note' AND name = 'fork'")
    assert len(notes) == 1 and "not recorded" in notes[0]["args"]
