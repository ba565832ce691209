"""Fixtures for the drift tests: recorded programs on disk and a way to run `ttrecord diff`."""

from __future__ import annotations

import json

import pytest

from ttrecord.cli.main import main


@pytest.fixture
def run_diff(capsys):
    """Run `ttrecord diff ARGS` in-process; returns (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["diff", *map(str, args)])
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def run_diff_json(run_diff):
    def run(*args: str) -> tuple[int, dict]:
        code, out, err = run_diff(*args, "--format", "json")
        assert err == ""
        return code, json.loads(out)

    return run
