"""Each variant the alternatives benchmark times really does its work on the op loop.

A variant that silently did nothing (a recorder not wired in, a tracer never called, a graph
capture that saw no node) would make its overhead look small; these checks keep the
benchmark honest.
"""

import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import alternatives as alt  # noqa: E402
from ttrecord.emulator import decorators  # noqa: E402
from ttrecord.recorder.log import LogReader  # noqa: E402


@pytest.fixture
def b():
    backend = alt.emulator_backend()
    yield backend
    backend.raw.close_device(backend.dev)


def test_recorded_profiled_and_captured_loops_see_every_op(b):
    """GIVEN the emulator op loop of 4 iterations (12 ops)
    WHEN it runs through the recorder, under the setprofile tracer, inside graph capture and
    through the timed namespaces THEN the log holds a begin record per op, the tracer a call per
    op, the capture an allocation per op, and the timed ops count time inside the emulator"""
    tmp = tempfile.mkdtemp()
    traced, recorder = alt.recorded_ttnn(b.raw, b.dev, tmp, callsites=True, tag="t")
    alt.op_loop(traced, b.x, 4)
    recorder.log.flush()
    records = list(_flat(LogReader(str(Path(tmp) / "log-Truet")).read()))
    begins = [r for r in records if r[0] == "B"]
    assert [r[6] for r in begins] == ["add", "relu", "multiply"] * 4
    assert all(r[11] is not None for r in begins)  # a call site for every call

    profile, calls = alt.make_profiler()
    sys.setprofile(profile)
    try:
        alt.op_loop(b.raw, b.x, 4)
    finally:
        sys.setprofile(None)
    # ops are FastOperation objects (as in real ttnn): one __call__ each, plus their insides
    ops = [c for c in calls if c[:2] == ("call", decorators.__file__) and c[3] == "__call__"]
    assert len(ops) == 12 and all(c[2] > 0 for c in ops)
    assert len(calls) > 10 * len(ops)

    b.graph.begin_graph_capture(b.run_mode)
    alt.op_loop(b.raw, b.x, 4)
    nodes = b.graph.end_graph_capture()
    assert sum(n["node_type"] == "buffer_allocate" for n in nodes) == 12

    inside = [0]
    timed = alt.timed_ops(b.raw, inside)
    recorded_timed = alt.recorded_namespace(timed, recorder)
    before = len(list(_flat(LogReader(str(Path(tmp) / "log-Truet")).read())))
    alt.op_loop(recorded_timed, b.x, 2)
    recorder.log.flush()
    assert inside[0] > 0
    assert len(list(_flat(LogReader(str(Path(tmp) / "log-Truet")).read()))) > before


def test_switching_a_recorder_part_off_removes_only_its_records(b):
    """GIVEN three recorders on the emulator WHEN one has its allocator snapshots switched off
    and one its log writes THEN the first logs the op records but no alloc/free records, the
    second logs nothing, while the untouched one logs ops, allocs and frees"""
    tmp = tempfile.mkdtemp()
    recorders = {}
    for tag in ("full", "snapshots", "log"):
        module, recorder = alt.recorded_ttnn(b.raw, b.dev, tmp, callsites=False, tag=tag)
        if tag != "full":
            alt.without(recorder, tag)
        recorders[tag] = (module, recorder)
    for module, recorder in recorders.values():
        alt.op_loop(module, b.x, 3)
        recorder.finish()

    def kinds(tag: str) -> list[str]:
        records = LogReader(str(Path(tmp) / f"log-False{tag}")).read()
        return [r[5] for r in _flat(records) if r[0] in ("B", "P")]

    assert kinds("snapshots") == ["op"] * 9
    assert kinds("log") == []
    assert {"op", "alloc", "free"} <= set(kinds("full"))


def _flat(records):
    """Records, with lists of records written together (one log frame) unpacked."""
    for r in records:
        if isinstance(r, list):
            yield from r
        else:
            yield r
