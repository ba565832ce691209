"""Reports of recorded samples, and a headless Chromium to open them in.

Chromium comes from the Debian package `chromium`, which scripts/chromium installs (scripts/test
runs it). Without it these tests skip, except under CI=true, where a missing browser fails.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from report_browser import Browser, find_chromium
from report_samples import html_report


@pytest.fixture(scope="session")
def chromium() -> str:
    binary = find_chromium()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed: scripts/chromium installs it")
        pytest.skip("chromium is not installed (run scripts/chromium)")
    return binary


@pytest.fixture
def browser(chromium):
    b = Browser(chromium)
    yield b
    b.close()


@pytest.fixture(scope="session")
def sample_reports(tmp_path_factory, sample_cache) -> dict[str, Path]:
    """name -> HTML report of that sample, recorded once per test run."""
    folder = tmp_path_factory.mktemp("samples")
    names = ("alloc_after_capture", "clean_decode", "readback_in_capture", "overlapping_traces",
             "crash_in_replay")  # fmt: skip
    return {n: html_report(sample_cache.get(n).copy_to(folder, f"{n}.db")) for n in names}
