"""Rule: without --ttrecord the plugin changes nothing: no recording, no folder, no ttnn swap."""

import subprocess
import sys

from plugin_suite import QUIET
import pytest

pytestmark = pytest.mark.spawns


def test_run_without_flag_is_untouched(pytester):
    # GIVEN a suite that uses the ttrecord marker and checks nothing replaced modules
    pytester.makepyfile(test_plain="""
        import sys
        import pytest

        @pytest.mark.ttrecord(audit_region="f")
        def test_marked():
            assert "ttnn" not in sys.modules
            assert not any(m.startswith("ttrecord.recorder") for m in sys.modules)

        def test_plain():
            assert True
    """)
    # WHEN pytest runs it with strict markers and without --ttrecord
    result = pytester.runpytest_subprocess(*QUIET, "--strict-markers")
    # THEN both tests pass (the marker is registered), and no session folder appears
    result.assert_outcomes(passed=2)
    assert not (pytester.path / ".ttrecord").exists()
    result.stdout.no_fnmatch_line("ttrecord: backend*")
    result.stdout.no_fnmatch_line("*= ttrecord =*")


def test_plugin_module_imports_only_the_standard_library_and_pytest():
    # GIVEN a fresh interpreter WHEN it imports the plugin module
    code = ("import sys; before = set(sys.modules); import ttrecord.pytest_plugin; "
            "print(sorted(m for m in set(sys.modules) - before "
            "if m.split('.')[0] in ('ttrecord', 'torch', 'numpy', 'sqlite3', 'wrapt', 'rich')))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # THEN nothing heavy came with it
    assert out.stdout.strip() == "['ttrecord', 'ttrecord.audit', 'ttrecord.pytest_plugin']"
