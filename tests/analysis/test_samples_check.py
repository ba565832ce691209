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
    "readback_in_capture", "host_write_in_capture", "creation_in_capture", "trace_churn", "dynamic_trace_region",
    "cache_cleared_before_capture", "sync_in_capture", "alloc_after_capture",
    "stale_input", "freed_input", "aliasing", "baked_value", "host_op_in_capture",
    "trace_lifecycle", "overlapping_traces", "multi_trace", "trace_region_too_small",
    "compile_in_capture", "prep_differs", "compile_after_capture", "two_cq_missing_wait",
    "pipelined_io_read_event", "nonblocking_read_before_sync", "acknowledged_corruptible",
    "free_under_replay", "dynamic_traces_overlap",
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
    """(rule, line) of each finding: its own line is the innermost of the frames shown from
    the line to change down to the ttnn call (`change here:`, `which calls`), or the one
    location under the head when the call is not inside a helper."""
    lines = out.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = re.match(r"(error|warning|info) (TR\d{3})  ", line)
        if m:
            own = -1
            for below in lines[i + 1:]:
                if below.startswith("  fix:") or re.match(r"(error|warning|info) TR\d{3}  ", below):
                    break
                loc = re.match(rf"  (?:change here: |which calls )?\S*{sample}\.py:(\d+)", below)
                if loc:
                    own = int(loc.group(1))
            found.append((m.group(2), own))
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
    """The SARIF multitool's native program: $SARIF_MULTITOOL, scripts/test's install in
    .tools/, or sarif-multitool on PATH. npm's `sarif-multitool` is a node wrapper that hands
    its arguments to a shell, which splits `--rule-kind Gh;Sarif` at the `;` (and drops the
    rest): the native program beside it is what runs here."""
    import os
    import shutil

    found = (os.environ.get("SARIF_MULTITOOL")
             or next((str(p) for p in [ROOT / ".tools/sarif-multitool/node_modules/.bin/sarif-multitool"]
                      if p.exists()), None)
             or shutil.which("sarif-multitool"))  # fmt: skip
    if not found:
        return None
    real = Path(found).resolve()
    if real.suffix == ".js":  # npm's wrapper: node_modules/@microsoft/sarif-multitool*/bin.js
        native = sorted(real.parent.parent.glob("sarif-multitool-*/Sarif.Multitool"))
        native += [real.parent / "Sarif.Multitool"]
        return next((str(p) for p in native if p.exists()), None)
    return str(real)


def test_sarif_of_every_sample_passes_the_multitool_with_github_rules(sessions, tmp_path, capsys):
    """GIVEN every sample's SARIF WHEN the SARIF multitool validates them with GitHub's
    ingestion rules (GH1xxx, GH2xxx) and its own THEN it reports no error and no warning."""
    import os
    import shutil

    tool = _multitool()
    if not tool:
        if os.environ.get("CI") == "true" and shutil.which("npm"):
            pytest.fail("CI: the SARIF multitool is missing though npm exists (scripts/test"
                        " installs it into .tools/)")  # fmt: skip
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
    # the tool did analyze them, with both rule sets: its notes name our logs' rules
    assert any(r["ruleId"] == "SARIF2006" for r in results)
    assert {f"{sample}.sarif" for sample in HAZARDS + CLEAN} <= {
        Path(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]).name
        for r in results if r.get("locations")
    }
    # and GitHub's rules are on: a result without a location is an error (GH1015)
    broken = json.loads((logs / "freed_input.sarif").read_text())
    del broken["runs"][0]["results"][0]["locations"]
    (logs / "freed_input.sarif").write_text(json.dumps(broken))
    subprocess.run([tool, "validate", str(logs / "freed_input.sarif"), "--rule-kind", "Gh;Sarif",
                    "-o", str(out), "--log", "ForceOverwrite"],
                   capture_output=True, text=True, timeout=300)  # fmt: skip
    again = [r for run in json.loads(out.read_text())["runs"] for r in run.get("results", [])]
    assert "GH1015" in {r["ruleId"] for r in again if r.get("level") == "error"}


# -- the other JSON contracts and the 80-column layout, on every sample -----------------------

DOCS = ROOT / "docs"


def _validator(name: str) -> jsonschema.Draft202012Validator:
    """The schema docs/NAME-json.schema.json, with the others it refers to (findings)."""
    from referencing import Registry, Resource

    schemas = [json.loads(p.read_text()) for p in sorted(DOCS.glob("*-json.schema.json"))]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    return jsonschema.Draft202012Validator(
        json.loads((DOCS / f"{name}-json.schema.json").read_text()), registry=registry
    )


def _diff_targets(path: Path, traces: int) -> list[str] | None:
    """Two captures of one session when it has two, else a capture against its prep run."""
    if traces >= 2:
        return [f"{path}:1", f"{path}:2"]
    return [str(path), "--prep"] if traces == 1 else None


def test_report_sessions_and_diff_json_of_every_sample_match_their_schemas(sessions, capsys):
    """GIVEN every sample recorded WHEN report, sessions and diff write JSON THEN each document
    carries version 1 and validates against its schema in docs/ (diffs: every sample with a
    capture, its two captures or the capture against its prep run)."""
    report, diff, sessions_schema = _validator("report"), _validator("diff"), _validator("sessions")
    diffed = 0
    for sample, path in sessions.items():
        assert main(["report", str(path), "--format", "json", "-q"]) == 0
        doc = json.loads(capsys.readouterr().out)
        report.validate(doc)
        assert doc["version"] == 1
        assert sorted((f["id"], f["line"]) for f in doc["findings"]) == expected(sample)
        targets = _diff_targets(path, len(doc["traces"]))
        if targets is None:
            continue
        code = main(["diff", *targets, "--format", "json", "-q"])
        out = capsys.readouterr().out
        if code == 2:  # a capture without a prep run: said on stderr, nothing to validate
            continue
        diff.validate(json.loads(out))
        diffed += 1
    assert diffed >= 10, "most samples capture a trace: their diffs must have been validated"
    folder = next(iter(sessions.values())).parent
    assert main(["sessions", str(folder), "--format", "json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    sessions_schema.validate(listing)
    assert {s["name"] for s in listing["sessions"]} == {f"{n}.db" for n in sessions}
    assert all(s["findings"] == len(expected(s["name"][:-3])) for s in listing["sessions"])


def _layout_problems(out: str, width: int = 80) -> list[str]:
    return [line for line in out.splitlines() if len(line) > width or line != line.rstrip()]


def test_piped_check_report_diff_and_sessions_fit_80_columns_with_line_numbers(
    sessions, capsys, monkeypatch
):
    """GIVEN every sample recorded and output that is not a terminal (80 columns) WHEN check,
    report, diff and sessions print text THEN no line is wider than 80 or ends in a space, and
    every finding's and call site's line number is there in full."""
    monkeypatch.delenv("COLUMNS", raising=False)
    for sample, path in sessions.items():
        want = expected(sample)
        main(["check", str(path), "-q"])
        out = capsys.readouterr().out
        assert _layout_problems(out) == [], sample
        assert _text(out, sample) == want
        main(["report", str(path), "-q"])
        out = capsys.readouterr().out
        assert _layout_problems(out) == [], sample
        # a finding's location ends its head line, or is a line of its own (a message that
        # names other lines may wrap after one of them too)
        heads = rf"^(?:  TR\d{{3}}.*|\s+\S*)\b{sample}\.py:(\d+)$"
        lines = [int(n) for n in re.findall(heads, out, re.M)]
        assert sorted(lines) == sorted(n for _, n in want), sample  # each finding's location line
        main(["report", str(path), "--format", "json", "-q"])
        traces = len(json.loads(capsys.readouterr().out)["traces"])
        targets = _diff_targets(path, traces)
        if targets is None:
            continue
        if main(["diff", *targets, "-q"]) == 2:
            capsys.readouterr()
            continue
        out = capsys.readouterr().out
        assert _layout_problems(out) == [], sample
        source = (SAMPLES / f"{sample}.py").read_text().splitlines()
        for n in re.findall(rf"{sample}\.py:(\d+)", out):  # a call site's line is a real line
            assert 0 < int(n) <= len(source) and "ttnn." in source[int(n) - 1], (sample, n)
    folder = next(iter(sessions.values())).parent
    main(["sessions", str(folder)])
    out = capsys.readouterr().out
    assert _layout_problems(out) == []
    for sample in sessions:
        assert f"{sample}.db" in out
