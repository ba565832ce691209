"""Fixtures for emulator tests: a fresh p150 device per test, closed afterwards."""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0, trace_region_size=1_000_000)
    try:
        yield dev
    finally:
        ttnn.close_device(dev)


@pytest.fixture
def tile():
    """Make a bf16 TILE device tensor from a torch tensor (or a fill value and shape)."""

    def make(dev, value, shape=(32, 32), dtype=ttnn.bfloat16, memory_config=None):
        data = value if isinstance(value, torch.Tensor) else torch.full(shape, float(value))
        return ttnn.from_torch(
            data, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=dev, memory_config=memory_config
        )

    return make
