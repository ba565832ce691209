"""The recorded program sees what it sees under plain `python` (issue problem 10): a battery of
programs runs both ways and everything they can observe is compared."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.recorder.conftest import REPO
from tests.reliability.conftest import PROLOGUE, fake_env, run_cli

pytestmark = pytest.mark.spawns

BATTERY = {
    "excepthook": PROLOGUE + """\
import sys
def hook(kind, value, tb):
    print("hook called:", kind.__name__, value, tb.tb_frame.f_code.co_filename.endswith("prog.py"))
sys.excepthook = hook
raise ValueError("boom")
""",
    "process_state": PROLOGUE + """\
import faulthandler, signal, sys
print("faulthandler", faulthandler.is_enabled())
for name in ("SIGUSR1", "SIGUSR2", "SIGTERM", "SIGHUP", "SIGPIPE"):
    print(name, signal.getsignal(getattr(signal, name)))
print("SIGINT default", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
print("orig_argv", sys.orig_argv[1:])
print("argv", sys.argv)
print("main", __name__, __file__.endswith("prog.py"))
""",
    "traceback_through_ttnn": PROLOGUE + """\
def step():
    ttnn.fail("inside ttnn")
step()
""",
    "exit_code": PROLOGUE + "import sys\nttnn.relu(ttnn.Tensor(device))\nsys.exit(5)\n",
}


def _traceback(stderr: str) -> str:
    """The traceback block (ttrecord's own lines around it left out)."""
    lines = [ln for ln in stderr.splitlines() if not ln.startswith(("ttrecord:", "  ttrecord "))]
    return "\n".join(lines)


@pytest.mark.parametrize("name", sorted(BATTERY))
def test_program_sees_the_same_as_under_plain_python(tmp_path, name):
    """GIVEN a program WHEN run by plain python and by `ttrecord run` THEN stdout, the exit
    code and any traceback are identical."""
    prog = tmp_path / "prog.py"
    prog.write_text(BATTERY[name])
    plain = subprocess.run([sys.executable, str(prog), "a", "b"], cwd=tmp_path,
                           env=fake_env(tmp_path), capture_output=True, text=True,
                           timeout=60)  # fmt: skip
    recorded = run_cli(tmp_path, "run", "--backend", "ttnn", "-o", str(tmp_path / "s.db"),
                       str(prog), "a", "b")  # fmt: skip
    assert recorded.stdout == plain.stdout
    assert recorded.returncode == plain.returncode
    assert _traceback(recorded.stderr) == _traceback(plain.stderr)


def _nohup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def test_a_signal_ignored_at_start_stays_ignored_in_the_program(tmp_path):
    """GIVEN `ttrecord run` started with SIGHUP ignored (as `nohup` and many CI runners start
    it) WHEN the program reads its signal dispositions THEN it sees SIGHUP ignored, as under
    plain python (the relay installs no handler for it, so exec does not reset it)."""
    prog = tmp_path / "prog.py"
    prog.write_text(BATTERY["process_state"])
    plain = subprocess.run([sys.executable, str(prog), "a", "b"], cwd=tmp_path,
                           env=fake_env(tmp_path), capture_output=True, text=True, timeout=60,
                           preexec_fn=_nohup)  # fmt: skip
    recorded = run_cli(tmp_path, "run", "--backend", "ttnn", "-o", str(tmp_path / "s.db"),
                       str(prog), "a", "b", preexec_fn=_nohup)  # fmt: skip
    assert "SIGHUP 1\n" in plain.stdout  # SIG_IGN
    assert recorded.stdout == plain.stdout


def test_spawned_workers_import_the_emulator(tmp_path):
    """GIVEN a program recorded against the emulator that starts a multiprocessing spawn
    worker importing ttnn WHEN recorded THEN the worker gets the emulator (no ImportError, no
    two-minute wait) and the program ends normally."""
    pytest.importorskip("torch")
    prog = tmp_path / "spawner.py"
    prog.write_text("""\
import multiprocessing as mp
import ttnn

def work(x):
    import ttnn
    return f"{ttnn.__name__}:{x}"

if __name__ == "__main__":
    with mp.get_context("spawn").Pool(1) as pool:
        print(pool.map(work, [1, 2]), flush=True)
""")
    env = {"PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "ttrecord", "run", "--backend", "emulator",
                           "-o", str(tmp_path / "s.db"), str(prog)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=90,
                          env={**__import__("os").environ, **env})  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "['ttrecord.emulator:1', 'ttrecord.emulator:2']" in proc.stdout
