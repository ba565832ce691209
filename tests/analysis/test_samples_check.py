"""End to end: each sample recorded with `ttrecord run --backend emulator`, then `ttrecord check`
reports exactly the rule ids at exactly the lines marked `# expect: TR00N` in the sample, and
nothing on the clean samples, in all three output formats.

The samples are recorded once per test session, several at a time (each recording is a child
process that imports torch).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest

from tests.recorded_samples import SAMPLE_FLAGS
from ttrecord.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
TTRECORD = Path(sys.executable).with_name("ttrecord")
HAZARDS = [
    "readback_in_capture", "host_write_in_capture", "sync_in_capture", "alloc_after_capture",
    "stale_input", "freed_input", "aliasing", "baked_value", "host_op_in_capture",
    "trace_lifecycle", "overlapping_traces", "multi_trace", "trace_region_too_small",
    "compile_in_capture", "prep_differs", "compile_after_capture", "two_cq_missing_wait",
    "pipelined_io_read_event", "nonblocking_read_before_sync",
]  # fmt: skip
CLEAN = ["clean_decode", "tracer_class", "alloc_after_capture_safe", "reallocated_input",
         "input_reallocated_after_capture", "sharded_cnn_executor", "mesh_paged_decode",
         "two_cq_overlapped_input"]  # fmt: skip
# `# expect: TR010` or, for a finding of another severity than the rule's usual one,
# `# expect: TR010 info`
EXPECT = re.compile(r"#\s*expect:\s*(TR\d{3})(?:\s+(error|warning|info))?")
CHECK_SCHEMA = json.loads((ROOT / "docs" / "check-json.schema.json").read_text())
ERRORS = {"TR001", "TR002", "TR003", "TR004", "TR005", "TR007", "TR009", "TR010", "TR012", "TR013", "TR016"}


def expected(sample: str) -> list[tuple[str, int]]:
    lines = (SAMPLES / f"{sample}.py").read_text().splitlines()
    return sorted((m.group(1), n) for n, text in enumerate(lines, 1) for m in EXPECT.finditer(text))


def expected_severities(sample: str) -> list[str]:
    text = (SAMPLES / f"{sample}.py").read_text()
    return [m.group(2) or ("error" if m.group(1) in ERRORS else "warning")
            for m in EXPECT.finditer(text)]  # fmt: skip


@pytest.fixture(scope="module")
def sessions(tmp_path_factory, sample_cache) -> dict[str, Path]:
    if not TTRECORD.exists() or not SAMPLES.is_dir():
        pytest.skip("needs the ttrecord script and samples/")
    folder = tmp_path_factory.mktemp("recorded")

    def record(sample: str) -> tuple[str, Path]:
        run = sample_cache.get(sample, *SAMPLE_FLAGS.get(sample, []))  # once per test run
        return sample, run.copy_to(folder, f"{sample}.db")

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(record, HAZARDS + CLEAN))


def _check(path: Path, fmt: str, capsys) -> tuple[int, str]:
    code = main(["check", str(path), "--format", fmt])
    return code, capsys.readouterr().out


def _json(out: str) -> list[tuple[str, int]]:
    return sorted((f["id"], f["line"]) for f in json.loads(out)["findings"])


def _sarif(out: str, sample: str) -> list[tuple[str, int]]:
    results = json.loads(out)["runs"][0]["results"]
    found = []
    for r in results:
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == f"samples/{sample}.py"  # relative to the run's cwd
        found.append((r["ruleId"], loc["region"]["startLine"]))
    return sorted(found)


def _text(out: str, sample: str) -> list[tuple[str, int]]:
    lines = out.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = re.match(r"(error|warning|info) (TR\d{3})  ", line)
        if m:
            loc = re.search(rf"{sample}\.py:(\d+)", lines[i + 1])
            found.append((m.group(2), int(loc.group(1)) if loc else -1))
    return sorted(found)


@pytest.mark.parametrize("sample", HAZARDS + CLEAN)
def test_check_reports_exactly_the_marked_lines_in_every_format(sample, sessions, capsys):
    path = sessions[sample]
    assert path.exists(), f"{sample} was not recorded"
    want = expected(sample)
    assert (want == []) == (sample in CLEAN)
    code, out = _check(path, "json", capsys)
    jsonschema.Draft202012Validator(CHECK_SCHEMA).validate(json.loads(out))
    assert _json(out) == want
    severities = expected_severities(sample)
    assert sorted(f["severity"] for f in json.loads(out)["findings"]) == sorted(severities)
    assert code == (1 if "error" in severities else 0)
    assert _sarif(_check(path, "sarif", capsys)[1], sample) == want
    text = _check(path, "text", capsys)[1]
    assert _text(text, sample) == want
    if not want:
        assert "No trace hazards found" in text


def _multitool() -> str | None:
    """The SARIF multitool (`npm install @microsoft/sarif-multitool`): $SARIF_MULTITOOL or on PATH."""
    import os
    import shutil

    return os.environ.get("SARIF_MULTITOOL") or shutil.which("sarif-multitool")


def test_sarif_of_every_sample_passes_the_multitool_with_github_rules(sessions, tmp_path, capsys):
    tool = _multitool()
    if not tool:
        pytest.skip("needs the SARIF multitool (npm install @microsoft/sarif-multitool; "
                    "SARIF_MULTITOOL=path or sarif-multitool on PATH)")  # fmt: skip
    logs = tmp_path / "sarif"
    logs.mkdir()
    for sample in HAZARDS + CLEAN:
        (logs / f"{sample}.sarif").write_text(_check(sessions[sample], "sarif", capsys)[1])
    out = tmp_path / "validation.sarif"
    proc = subprocess.run(
        [tool, "validate", str(logs), "--rule-kind", "Gh;Sarif", "--level", "Error;Warning;Note",
         "-o", str(out), "--log", "ForceOverwrite"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.exists(), proc.stdout + proc.stderr
    results = [r for run in json.loads(out.read_text())["runs"] for r in run.get("results", [])]
    # Notes remain by design: SARIF2006 (URIs reachable: no network here), SARIF2002/2003/2010/
    # 2011/2012 (optional message strings, VCS details, columns). Errors or warnings may not.
    bad = [(r["ruleId"], r.get("level"), r["message"].get("arguments")) for r in results
           if r.get("level", "warning") in ("error", "warning")]  # fmt: skip
    assert bad == []
    # the tool did analyze them: its notes name our logs' rules
    assert any(r["ruleId"] == "SARIF2006" for r in results)
