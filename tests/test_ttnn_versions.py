"""Every version-dependent fact and parser of ttrecord.ttnn_versions, proved on the texts of
every release it names: tests/data/ttnn_texts/X.Y.Z.txt holds the trace-related strings of that
release's own libraries (scripts/ttnn_texts.py extracts them from the PyPI wheel)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from ttrecord import ttnn_versions as tv

TEXTS = Path(__file__).parent / "data" / "ttnn_texts"
VERSIONS = sorted((p.stem for p in TEXTS.glob("*.txt")), key=tv.release)


def _text(version: str) -> str:
    return (TEXTS / f"{version}.txt").read_text()


def _fill(fmt: str, values=(1048576, 1, 524288)) -> str:
    """A fmt-style "{}" message as the library prints it."""
    it = itertools.cycle(values)
    return re.sub(r"\{\}", lambda _: str(next(it)), fmt)


def _line(text: str, start: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith(start)]
    assert lines, f"no line starting {start!r}"
    return lines[0]


def test_every_tested_release_has_its_texts():
    assert set(tv.TESTED) <= set(VERSIONS), "extract them with scripts/ttnn_texts.py"


@pytest.mark.parametrize("version", VERSIONS)
def test_trace_region_message_parses_in_every_release(version):
    text = _text(version)
    fmt = _line(text, "Creating trace buffers of size")
    misfit = tv.parse_trace_region_too_small(
        "TT_FATAL @ /project/tt_metal/impl/trace/trace.cpp:1: false\ninfo:\n"
        + _fill(fmt, (2097152, 3, 1048576)) + "\nbacktrace: ...")
    assert misfit == tv.TraceRegionMisfit(needed=2097152, mesh=3, allocated=1048576)
    assert re.search(tv.for_release(tv.TRACE_REGION_TOO_SMALL, version), _fill(fmt))


@pytest.mark.parametrize("version", VERSIONS)
def test_tt_fatal_texts_match_the_release(version):
    text = _text(version)
    read = tv.for_release(tv.READ_IN_CAPTURE, version)
    assert read in text and tv.is_read_in_capture(f"TT_FATAL @ x.cpp:851: !trace_id_\ninfo:\n{read}\n")
    assert tv.for_release(tv.WRITE_IN_CAPTURE, version) in text
    binaries = tv.for_release(tv.BINARIES_IN_CAPTURE, version)
    if binaries is None:
        assert "Cannot load new binaries" not in text
    else:
        assert binaries in text and tv.is_binaries_in_capture(_line(text, binaries))
    assert not tv.is_read_in_capture("Cannot load new binaries during trace capture.")


@pytest.mark.parametrize("version", VERSIONS)
def test_unsafe_allocation_warning_is_the_release_form(version):
    text = _text(version)
    warning = tv.for_release(tv.UNSAFE_ALLOCATION_WARNING, version)
    line = _line(text, "Allocating device buffers is")
    assert line.startswith(warning), (line, warning)
    others = set(tv.UNSAFE_ALLOCATION_WARNING.values()) - {warning}
    assert not any(line.startswith(o) for o in others)
    assert tv.is_unsafe_allocation_warning("[warning] " + line)


@pytest.mark.parametrize("version", VERSIONS)
def test_dynamic_trace_region_message(version):
    text = _text(version)
    patterns = tv.for_release(tv.DYNAMIC_TRACE_REGION_OVERLAP, version)
    lines = [ln for ln in text.splitlines() if ln.startswith("Trace buffer at address")]
    assert len(lines) == len(patterns)  # one form per check the release makes
    for line in lines:
        message = _fill(line, (4277141504, 1, 2))
        assert sum(bool(re.search(p, message)) for p in patterns) == 1, line
        assert tv.parse_dynamic_trace_region_overlap(message) == 4277141504


@pytest.mark.parametrize("version", VERSIONS)
def test_trace_allocation_tracker_names(version):
    text = _text(version)
    tracker = tv.for_release(tv.TRACKER, version)
    if tracker is None:
        assert "TT_METAL_TRACE_ALLOC" not in text and "corruptible" not in text
        return
    for env in tracker.env:
        assert env in text
    assert f"def {tracker.acknowledge.rsplit('.', 1)[-1]}(" in text
    assert f"def {tracker.scope.rsplit('.', 1)[-1]}(" in text
    other = {t.acknowledge.rsplit(".", 1)[-1] for t in tv.TRACKER.values() if t} - {
        tracker.acknowledge.rsplit(".", 1)[-1]}
    assert not any(f"def {name}(" in text for name in other)


@pytest.mark.parametrize("version", VERSIONS)
def test_introspection_bindings_exist_in_every_release(version):
    text = _text(version)
    assert "get_buffers" in text.splitlines()  # the nanobind name of ttnn._ttnn.reports.get_buffers
    assert "num_program_cache_entries" in text.splitlines()
    assert "MeshEvent(id=" in text  # MeshEvent's __repr__, the only binding the recorder reads


def test_release_and_table_lookup():
    assert tv.release("0.81.1 (cp312-cp312-manylinux_2_34_x86_64, sfpi 7.89.0)") == (0, 81, 1)
    assert tv.release("0.81 API (0+ttrecord.emulator)") is None
    assert tv.release(None) is None
    table = {"0.66.0": "a", "0.75.0": "b"}
    assert tv.for_release(table, "0.65.1") is None  # older than every entry: nothing assumed
    assert tv.for_release(table, "0.66.0") == "a"
    assert tv.for_release(table, "0.74.9") == "a"
    assert tv.for_release(table, "0.81.1 (build)") == "b"
    assert tv.for_release(table, None) is None


def test_parser_rejects_other_messages():
    assert tv.parse_trace_region_too_small("Reads are not supported during trace capture.") is None
    assert not tv.is_unsafe_allocation_warning("Allocating 2048 B")


def test_describe_joins_release_and_build():
    assert tv.describe("0.81.1", "cp312-cp312-manylinux_2_34_x86_64, sfpi 7.89.0") == (
        "0.81.1 (cp312-cp312-manylinux_2_34_x86_64, sfpi 7.89.0)")
    assert tv.describe("0.81.1", None) == "0.81.1"
    assert tv.describe(None, "x") is None


def test_report_json_splits_release_and_build():
    from types import SimpleNamespace

    from ttrecord.report.summary_json import _ttnn_release

    real = SimpleNamespace(backend="ttnn", ttnn_version="0.66.0 (cp312-cp312-manylinux_2_34_x86_64)")
    assert _ttnn_release(real) == {"ttnn_release": "0.66.0",
                                   "ttnn_build": "cp312-cp312-manylinux_2_34_x86_64"}
    emulator = SimpleNamespace(backend="emulator", ttnn_version="0.81.1 API (0+ttrecord.emulator)")
    assert _ttnn_release(emulator) == {"ttnn_release": "0.81.1", "ttnn_build": None}
    unknown = SimpleNamespace(backend="ttnn", ttnn_version=None)
    assert _ttnn_release(unknown) == {"ttnn_release": None, "ttnn_build": None}


def test_build_names_the_sfpi_release_the_wheel_ships(tmp_path):
    from types import ModuleType

    pkg = tmp_path / "ttnn"
    (pkg / "tt_metal").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "tt_metal" / "sfpi-version").write_text("# sfpi release 7.89.0\nsfpi_version='7.89.0'\n")
    module = ModuleType("ttnn")
    module.__file__ = str(pkg / "__init__.py")
    assert tv.build_of(module).endswith("sfpi 7.89.0")
    (pkg / "tt_metal" / "sfpi-version").unlink()  # 0.66.0 ships none
    assert "sfpi" not in (tv.build_of(module) or "")


class _OldTensor:
    """A 0.66.0 device tensor: no buffer page methods."""

    def __init__(self, shape, layout, dtype):
        self.padded_shape, self.layout, self.dtype = shape, layout, dtype


class _NewTensor(_OldTensor):
    def buffer_num_pages(self):
        return 7

    def buffer_aligned_page_size(self):
        return 4096


@pytest.mark.parametrize(("tensor", "want"), [
    (_OldTensor([64, 96], "Layout.TILE", "DataType.BFLOAT16"), (6, 2048)),
    (_OldTensor([1, 1, 32, 32], "Layout.TILE", "DataType.FLOAT32"), (1, 4096)),
    (_OldTensor([32, 64], "Layout.ROW_MAJOR", "DataType.BFLOAT16"), (32, 128)),
    (_OldTensor([4, 10], "Layout.ROW_MAJOR", "DataType.BFLOAT16"), (4, 32)),  # 20 B rows, aligned
    (_NewTensor([64, 96], "Layout.TILE", "DataType.BFLOAT16"), (7, 4096)),  # asked, not computed
])
def test_tensor_pages_on_every_release(tensor, want):
    assert tv.tensor_pages(tensor) == want


def test_detect_reads_the_library_not_the_version():
    from types import ModuleType, SimpleNamespace

    fake = ModuleType("ttnn")
    fake._ttnn = SimpleNamespace(reports=SimpleNamespace(get_buffers=len))
    fake.MeshDevice = SimpleNamespace(num_program_cache_entries=len)
    fake.Tensor = SimpleNamespace(deallocate=len)
    found = tv.detect(fake)
    assert found["get_buffers"] and found["num_program_cache_entries"] and found["tensor_deallocate"]
    assert not found["mesh_event"] and not found["is_trace_capture_active"] and not found["tracker"]


def test_the_per_release_views_come_from_the_one_wording_table():
    """TRACE_REGION_TOO_SMALL and DYNAMIC_TRACE_REGION_OVERLAP are views of TRACE_FIT_WORDINGS,
    the table TR016 reads (analysis.trace_region_messages): no wording lives anywhere else."""
    from ttrecord.analysis import trace_region_messages

    assert trace_region_messages.WORDINGS is tv.TRACE_FIT_WORDINGS
    rows = {w.pattern: w for w in tv.TRACE_FIT_WORDINGS}
    for since, pattern in tv.TRACE_REGION_TOO_SMALL.items():
        assert rows[pattern].kind == "region_full" and rows[pattern].since == since
    for version, patterns in tv.DYNAMIC_TRACE_REGION_OVERLAP.items():
        assert all(rows[p].kind.startswith("dynamic_") for p in patterns)
        assert {rows[p].kind for p in patterns} == {
            w.kind for w in tv.TRACE_FIT_WORDINGS
            if w.kind.startswith("dynamic_") and w.since and tv.release(w.since) <= tv.release(version)}
    # the older single-device wording is parsed though no PyPI release prints it
    assert tv.parse_trace_region_too_small(
        "Creating trace buffers of size 751616B on device 0, but only 0B is allocated for trace region"
    ) == tv.TraceRegionMisfit(needed=751616, mesh=0, allocated=0)
