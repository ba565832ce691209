"""TR008: work on host tensors inside the captured region (not recorded, skipped on replay)."""

from ttrecord.events import Kind
from ttrecord.testing import SessionBuilder, host_tensor

from analysis_helpers import H, W, X, rules_at


def _program(host_op_inside: bool) -> SessionBuilder:
    b = SessionBuilder()
    b.open_device()
    x, w = b.alloc(X), b.alloc(W)
    tid = b.begin_trace(line=20)
    if host_op_inside:
        # ttnn.to_layout on a host tensor: both sides are host storage
        b._add(Kind.OP, "ttnn.to_layout", 12, inputs=(host_tensor(),), outputs=(host_tensor(),))
    h = b.alloc(H)
    b.op("ttnn.matmul", [x, w], [h], line=11)
    b.end_trace(tid, line=21)
    b.release(tid, line=22)
    return b


def test_host_op_inside_capture_is_reported(analyze_both):
    findings = analyze_both(_program(host_op_inside=True))
    assert rules_at(findings) == [("TR008", 12)]
    assert findings[0].severity.value == "warning"
    assert findings[0].evidence["tensors"] == ["host [32, 32] BFLOAT16"]


def test_device_ops_only_are_not_reported(analyze_both):
    assert analyze_both(_program(host_op_inside=False)) == []
