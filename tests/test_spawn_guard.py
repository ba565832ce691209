"""The `spawns` marker is checked, not trusted: a test that starts a process without it fails
(even when the code under test swallows the error), and a marked one runs as usual."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.spawns  # (pytester)
ROOT = Path(__file__).resolve().parents[1]

SUITE = '''
import subprocess, sys
import pytest

def test_unmarked_start():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_unmarked_start_swallowed():
    try:
        subprocess.run(["true"])
    except Exception:
        pass

@pytest.mark.spawns
def test_marked_start():
    assert subprocess.run([sys.executable, "-c", "print(7)"], capture_output=True, text=True).stdout == "7\\n"

def test_starts_nothing():
    assert sum(range(4)) == 6


@pytest.fixture(scope="module")
def background():
    import threading, time
    done = []
    def record():  # as tests/recorder/conftest.py's `samples` records in its threads
        time.sleep(0.3)
        done.append(subprocess.run([sys.executable, "-c", "pass"]).returncode)
    thread = threading.Thread(target=record)
    thread.start()
    yield done, thread
    thread.join()

@pytest.mark.spawns
def test_marked_starts_background_work(background):
    pass

def test_unmarked_runs_while_a_fixture_s_thread_starts_a_process(background):
    import time
    time.sleep(0.6)
    background[1].join()
    assert background[0] == [0]
'''


QUIET = ("-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:syrupy",
         "-p", "no:hypothesispytest", "-p", "no:xdist", "-p", "no:randomly")  # fmt: skip


def test_an_unmarked_test_that_starts_a_process_fails(pytester: pytest.Pytester, monkeypatch):
    # GIVEN a suite under the project's guard, two of whose tests start a process unmarked
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest("from tests.spawn_guard import *  # noqa: F403")
    pytester.makepyfile(test_suite=SUITE)
    # WHEN it runs
    result = pytester.runpytest_subprocess(*QUIET, "-v")
    # THEN those two fail, saying what to mark; the marked one, the idle one and the one
    # that runs while another thread (a session fixture's) starts a process pass
    result.assert_outcomes(failed=2, passed=4)
    result.stdout.fnmatch_lines(["*test_marked_start PASSED*"])
    result.stdout.fnmatch_lines(["*starts a process*spawns*"])
