"""A user's test file for the ttrecord pytest plugin test (copied to test_model.py and run
under `pytest --ttrecord --ttrecord-backend ttnn` with the real ttnn)."""
import numpy as np
import pytest
import ttnn


@pytest.fixture(scope="module")
def dev():
    d = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
    yield d
    ttnn.close_device(d)


def mk(dev):
    return ttnn.Tensor(np.zeros((32, 32), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT,
                       ttnn.DRAM_MEMORY_CONFIG)


def test_clean(dev):
    a = mk(dev)
    assert ttnn.add(a, a).buffer_address() > 0


def test_read_in_capture(dev):
    a = mk(dev)
    tid = ttnn.begin_trace_capture(dev, cq_id=0)
    try:
        a.cpu()  # MARK:read
    except RuntimeError:
        pass
    ttnn.end_trace_capture(dev, tid, cq_id=0)
    ttnn.release_trace(dev, tid)
