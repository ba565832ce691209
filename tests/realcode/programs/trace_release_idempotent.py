"""A trace executed through the keyword form of execute_trace and released twice: releasing an
already released trace is a no-op in ttnn, and the captured output stays allocated.

Upstream: tenstorrent/tt-metal tests/ttnn/unit_tests/base_functionality/test_single_device_trace.py@08d1f6c6b9d19ab440120255932712b9060a491d
(test_trace_allocation_tracking_release_trace_is_idempotent).
Changes:
  * the `device` fixture (device_params trace_region_size=200000) -> ttnn.open_device(...) and
    close_device; the test's assert on output.is_allocated() exits 1 instead;
  * the input (allocated, never written upstream) is filled with copy_host_to_device_tensor
    before the replay, and the replayed output is checked against -input (exit 1 on mismatch).
"""

import sys

import torch

import ttnn


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=200000)
    shape = (1, 1, 32, 32)
    input_dev = ttnn.allocate_tensor_on_device(ttnn.Shape(shape), ttnn.bfloat16, ttnn.TILE_LAYOUT, device)
    ttnn.neg(input_dev)

    trace_id = ttnn.begin_trace_capture(device, cq_id=0)
    output = ttnn.neg(input_dev)
    ttnn.end_trace_capture(device, trace_id, cq_id=0)

    values = torch.randn(shape).bfloat16()
    ttnn.copy_host_to_device_tensor(ttnn.from_torch(values, layout=ttnn.TILE_LAYOUT), input_dev)
    # The keyword form must work identically with and without allocation tracking.
    ttnn.execute_trace(mesh_device=device, trace_id=trace_id, cq_id=0, blocking=True)
    ttnn.release_trace(device, trace_id)
    ttnn.release_trace(device, trace_id)

    ok = output.is_allocated() and torch.equal(ttnn.to_torch(output), -values)
    ttnn.close_device(device)
    print(f"output allocated and equal to -input after two releases: {ok}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
