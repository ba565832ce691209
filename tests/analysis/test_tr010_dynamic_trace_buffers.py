"""TR010 with trace_region_size=0: a trace's command buffer, placed top-down in DRAM by
end_trace_capture, on memory a live trace's captured ops write (tt-metal #48869). Releases
before 0.76 place it silently (samples/dynamic_traces_overlap.py runs the emulator as 0.75.0);
0.76 and later refuse the capture, which is TR016's."""

from __future__ import annotations

from ttrecord.events import Kind, Phase
from ttrecord.findings import Severity
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, W, X, Y, Z, rules_at

TOP = 0x7000_0000  # where the dynamic trace buffers go (top-down)


def _two_traces(second_buffer_at: int, replay_order: tuple[str, ...] = ("a", "b"),
                fixed_region: bool = False) -> tuple[SessionBuilder, int, int]:  # fmt: skip
    """Trace a: x -> h (freed inside the capture) -> y; trace b: an L1 op. Trace a's buffer at
    TOP; trace b's at `second_buffer_at`. Lines: 20/21 capture a, 40/41 capture b, 50 replay a,
    51 replay b."""
    b = SessionBuilder()
    b.open_device(trace_region_size=(1 << 20) if fixed_region else 0)
    x, w = b.alloc(X), b.alloc(W)
    ta = b.begin_trace(line=20)
    h = b.alloc(H)
    b.op("ttnn.add", [x, w], [h], line=10)
    y = b.alloc(Y)
    b.op("ttnn.multiply", [h], [y], line=11)
    b.free(h)
    b.end_trace(ta, line=21)
    b.alloc(TOP, size=1024, parent=b.events[-1].seq, trace=ta, phase=Phase.CAPTURE)  # as recorded
    small, out = b.alloc(0x1000, buffer_type="L1"), None
    tb = b.begin_trace(line=40)
    out = b.alloc(0x2000, buffer_type="L1")
    b.op("ttnn.relu", [small], [out], line=12)
    b.end_trace(tb, line=41)
    b.alloc(second_buffer_at, size=1024, parent=b.events[-1].seq, trace=tb, phase=Phase.CAPTURE)
    for which in replay_order:
        b.execute(ta if which == "a" else tb, line=50 if which == "a" else 51)
    b.release(tb, line=60)
    b.release(ta, line=61)
    return b, ta, tb


def test_a_trace_buffer_on_a_live_traces_freed_intermediate_is_an_error_at_its_capture_end(analyze_both):
    b, ta, tb = _two_traces(H + 1024)
    assert [e for e in b.events if e.kind is Kind.ALLOC][-1].buffer.address == H + 1024
    findings = analyze_both(b)
    assert rules_at(findings) == [("TR010", 41)]
    f = findings[0]
    assert f.severity is Severity.ERROR and f.trace == tb
    assert f.evidence["other_trace"] == ta
    assert f.evidence["other_access"]["range"] == f"[{H:#x}, {H + 2048:#x})"
    assert f.evidence["trace_buffer"]["range"] == f"[{H + 1024:#x}, {H + 2048:#x})"
    assert "`ttnn.add` at model.py:10 creates" in f.message
    assert "replayed at model.py:50 and trace 1 after it at model.py:51" in f.message


def test_without_a_replay_of_the_other_trace_after_the_writer_it_is_latent(analyze_both):
    b, ta, tb = _two_traces(H + 1024, replay_order=("b", "a"))
    (f,) = analyze_both(b)
    assert (f.rule, f.severity) == ("TR010", Severity.INFO)
    assert "Latent in this run" in f.message


def test_a_trace_buffer_clear_of_the_live_traces_memory_is_not_reported(analyze_both):
    b, ta, tb = _two_traces(Z)
    assert analyze_both(b) == []


def test_a_fixed_trace_region_is_not_this_rule(analyze_both):
    b, ta, tb = _two_traces(H + 1024, fixed_region=True)
    assert [r for r in rules_at(analyze_both(b)) if r[0] == "TR010"] == []
