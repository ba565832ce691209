"""ttnn.conv2d honours its Conv2dConfig as ttnn 0.81.1 does: deallocate_activation frees an L1
activation (YOLOv4's and tt_cnn's performant runners then allocate their persistent input on
the freed address and assert it), the fused activation is applied, and the weights and bias
it returns are device tensors the next calls read."""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn


@pytest.fixture
def device():
    dev = ttnn.open_device(device_id=0, l1_small_size=24576)
    yield dev
    ttnn.close_device(dev)


def _conv(device, x, w, **config):
    return ttnn.conv2d(
        input_tensor=x, weight_tensor=w, in_channels=16, out_channels=32, batch_size=1, input_height=8,
        input_width=8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), device=device,
        conv_config=ttnn.Conv2dConfig(weights_dtype=ttnn.bfloat16, **config), return_output_dim=True,
        return_weights_and_bias=True)


def _input(device, memory_config):
    torch.manual_seed(0)
    return ttnn.from_torch(torch.randn(1, 1, 64, 16), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device,
                           memory_config=memory_config)


def test_deallocate_activation_frees_the_l1_input_and_its_address_comes_back(device):
    x = _input(device, ttnn.L1_MEMORY_CONFIG)
    address, spec = x.buffer_address(), x.spec
    y, _, _ = _conv(device, x, ttnn.from_torch(torch.randn(32, 16, 3, 3), dtype=ttnn.float32), deallocate_activation=True)
    assert not x.is_allocated()
    assert ttnn.allocate_tensor_on_device(spec, device).buffer_address() == address
    assert y.memory_config().buffer_type == ttnn.BufferType.DRAM  # an interleaved activation: DRAM output


def test_without_deallocate_activation_the_input_stays(device):
    x = _input(device, ttnn.L1_MEMORY_CONFIG)
    _conv(device, x, ttnn.from_torch(torch.randn(32, 16, 3, 3), dtype=ttnn.float32))
    assert x.is_allocated()


def test_a_dram_activation_is_not_freed(device):
    x = _input(device, ttnn.DRAM_MEMORY_CONFIG)
    _conv(device, x, ttnn.from_torch(torch.randn(32, 16, 3, 3), dtype=ttnn.float32), deallocate_activation=True)
    assert x.is_allocated()


def test_fused_relu_and_device_weights_that_the_next_call_reads(device):
    w = ttnn.from_torch(torch.randn(32, 16, 3, 3), dtype=ttnn.float32)
    y, (h, wd), (w2, b2) = _conv(device, _input(device, ttnn.DRAM_MEMORY_CONFIG), w, activation="relu")
    assert (h, wd) == (8, 8)
    assert float(ttnn.to_torch(y).min()) >= 0.0
    assert w2.storage_type() == ttnn.StorageType.DEVICE and b2 is None
    again, _, _ = _conv(device, _input(device, ttnn.DRAM_MEMORY_CONFIG), w2, activation="relu")
    assert torch.equal(ttnn.to_torch(again), ttnn.to_torch(y))
