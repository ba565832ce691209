"""Rule: a buffer no tensor names (kernel binaries of a compile) is found by the allocator's
full view where a hazard is decided: right after a call that grew the program cache while a
trace is live (its child), otherwise at the next decision point (trace capture), never lost."""

from __future__ import annotations

from tests.recorder import fake_ttnn
from tests.recorder.inprocess import record_inprocess

BINARY_EAGER, BINARY_LIVE = 900_000, 950_000


def _backend():
    fake = fake_ttnn.make()
    Device, Tensor = fake.Device, fake.Tensor
    Device.num_program_cache_entries = lambda self: getattr(self, "cache", 0)

    def compile_op(t, binary):
        """A first call of an op: a compile that leaves kernel binaries on the device."""
        dev = t.device_
        dev.cache = getattr(dev, "cache", 0) + 1
        dev.live[binary] = 4096
        return Tensor.new(dev)

    def begin_trace_capture(device, cq_id=0):
        return 1

    def end_trace_capture(device, trace_id, cq_id=0):
        return None

    def release_trace(device, trace_id):
        return None

    for fn in (compile_op, begin_trace_capture, end_trace_capture, release_trace):
        fn.__module__ = "fake_ttnn"
        setattr(fake, fn.__name__, fn)
    return fake


def test_kernel_binaries_are_found_at_decision_points(tmp_path):
    """GIVEN a compile before any trace and one while a trace is live WHEN recorded THEN each
    binary is an ALLOC child of the call that compiled, with its exact address and size."""

    def body(ttnn):
        dev = ttnn.open_device(device_id=0)
        x = ttnn.Tensor(dev)
        ttnn.compile_op(x, BINARY_EAGER)
        tid = ttnn.begin_trace_capture(dev, cq_id=0)
        ttnn.relu(x)
        ttnn.end_trace_capture(dev, tid, cq_id=0)
        ttnn.compile_op(x, BINARY_LIVE)
        ttnn.release_trace(dev, tid)

    events = record_inprocess(_backend(), body, tmp_path)
    calls = {e.name: e for e in events if e.kind.value not in ("alloc", "free")}
    allocs = {e.buffer.address: e for e in events if e.kind.value == "alloc"}
    compiles = [e for e in events if e.name == "compile_op"]
    eager = allocs[BINARY_EAGER]  # the program cache grew: looked for after that very call
    assert eager.parent == compiles[0].seq and eager.buffer.size == 4096
    live = allocs[BINARY_LIVE]
    assert live.parent == compiles[1].seq and live.buffer.size == 4096
    # x (a backend without is_allocated) is freed once, when the body drops it, not before
    x_frees = [e.seq for e in events if e.kind.value == "free" and e.buffer.address == 1000]
    assert len(x_frees) == 1 and x_frees[0] > calls["release_trace"].seq
