"""Fixtures every test folder shares."""

from __future__ import annotations

import pytest

from tests.recorded_samples import SampleCache, shared_folder


@pytest.fixture(scope="session")
def sample_cache(tmp_path_factory: pytest.TempPathFactory) -> SampleCache:
    """Samples recorded once per test run, shared by all xdist workers (tests/recorded_samples.py)."""
    return SampleCache(shared_folder(tmp_path_factory.getbasetemp()))


# Whole modules that start a `ttrecord run` (a child interpreter importing torch), a browser or
# a pytester session per test. Together with every test that reads the recorded samples, they
# are the `slow` tests `scripts/test --fast` leaves out (the rest run in under a minute).
SLOW_MODULES = {
    "tests/recorder/test_program_environment.py", "tests/recorder/test_exit_status.py",
    "tests/recorder/test_sessions_command.py", "tests/recorder/test_crash_and_hang.py",
    "tests/recorder/test_many_live_buffers.py", "tests/recorder/test_double_free.py",
    "tests/recorder/test_record_formats.py", "tests/recorder/test_audit_region_recording.py",
    "tests/recorder/test_log_survives_kill.py", "tests/recorder/test_interrupt.py",
    "tests/recorder/test_cli_errors.py", "tests/recorder/test_check_after_run.py",
    "tests/recorder/test_verify_replay.py", "tests/recorder/test_samples_recorded.py",
    "tests/recorder/test_allocation_order.py", "tests/recorder/test_program_cache_misses.py",
    "tests/recorder/test_verify_mesh.py", "tests/recorder/test_sharded_buffers.py",
    "tests/reliability/test_full_disk.py", "tests/reliability/test_read_only.py",
    "tests/reliability/test_warnings_api.py", "tests/reliability/test_program_transparency.py",
    "tests/reliability/test_ctrl_c.py", "tests/report_html/test_report_html_file.py",
    "tests/report_html/test_report_html_browser.py", "tests/tui/test_tui_cli.py",
    "tests/test_samples.py", "tests/test_progress.py", "tests/drift/test_code_edits.py",
    "tests/drift/test_capture_rows.py", "tests/export/test_export_cli.py",
    "tests/export/test_export_visualizer_app.py", "tests/tui/test_tui_live_follow.py",
    "tests/analysis/test_decode_loop_mistakes.py", "tests/analysis/test_audit_end_to_end.py",
    "tests/plugin", "tests/tui/test_v1_sessions.py", "tests/test_packaging.py",
    "tests/tui/test_tui_damaged.py", "tests/tui/test_tui_robustness.py",
    "tests/tui/test_tui_run_live.py", "tests/emulator/test_tt_transformers_decode.py",
    "tests/recorder/test_log_memory.py", "tests/reliability/test_supervisor_death.py",
    "tests/recorder/test_hot_paths_agree.py",
    "tests/realcode",
    "tests/reliability/test_fd_reuse.py", "tests/reliability/test_non_utf8_paths.py",
    "tests/reliability/test_recover_damaged.py", "tests/reliability/test_hostile_files.py",
    "tests/reliability/test_output_policy.py", "tests/reliability/test_group_signals.py",
    "tests/reliability/test_storage_faults.py",
    "tests/gate", "tests/report_html/test_report_html_findings_lead.py",
}  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: left out of the fast lane (scripts/test --fast)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    slow = pytest.mark.slow
    for item in items:
        path = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        if "sample_cache" in getattr(item, "fixturenames", ()) or any(
                path == m or path.startswith(m + "/") for m in SLOW_MODULES):  # fmt: skip
            item.add_marker(slow)
