"""tt-metal's tt_cnn executors (models/tt_cnn/tt/executor.py), their ttnn call sequences
reproduced with the device fixture swapped for open_device, run a sharded CNN-style model on
the emulator with no stand-ins: every traced executor returns what the eager executor returns.

The executors below follow the upstream classes call for call: DRAM input allocated once,
host writes with copy_host_to_device_tensor (on CQ 1 for the multi-queue ones, ordered by
record_event/wait_for_event), reshard into L1, the compile run, capture with the L1 input
freed by the model and allocated again at the captured address (inside the capture for the
single-queue and pipelined executors, right after it for the overlapped-input one), replays
that reshard the new input into the persistent L1 tensor, and for pipelined IO the output
resharded into a persistent DRAM output tensor.
"""

from __future__ import annotations

import pytest
import torch

from ttrecord import emulator as ttnn

PIXELS, CHANNELS, HIDDEN = 512, 32, 64


def height_sharded(buffer_type, cores, width, layout_rows=PIXELS):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(cores - 1, 0))})
    spec = ttnn.ShardSpec(grid, [layout_rows // cores, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, buffer_type, spec)


class Model:
    """Per-pixel conv stack on a height-sharded ROW_MAJOR activation; frees its input like
    tt_cnn models do once the first op has consumed it."""

    def __init__(self, device):
        torch.manual_seed(1)
        self.w1 = ttnn.from_torch(torch.randn(CHANNELS, HIDDEN) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        self.w2 = ttnn.from_torch(torch.randn(HIDDEN, CHANNELS) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        self.hidden = height_sharded(ttnn.BufferType.L1, 8, HIDDEN)
        self.out = height_sharded(ttnn.BufferType.L1, 8, CHANNELS)

    def __call__(self, x):
        t = ttnn.tilize(x)
        ttnn.deallocate(x)
        h = ttnn.linear(t, self.w1, activation="relu", memory_config=self.hidden)
        y = ttnn.add(ttnn.linear(h, self.w2), t)
        return ttnn.untilize(y, memory_config=self.out)


class ModelExecutor:
    def __init__(self, model, device, l1_config):
        self.model, self.device, self.l1_config = model, device, l1_config

    def compile(self, host_input):
        ttnn.deallocate(self._run(host_input), force=True)
        ttnn.synchronize_device(self.device)

    def _run(self, host_input):
        return self.model(ttnn.to_device(host_input, device=self.device, memory_config=self.l1_config))

    def execute(self, host_inputs):
        for host_input in host_inputs:
            yield self._run(host_input)

    def cleanup(self):
        pass


class TracedModelExecutor:
    def __init__(self, model, device, dram_config, l1_config, cq_id=0):
        self.model, self.device, self.cq = model, device, cq_id
        self.dram_config, self.l1_config = dram_config, l1_config

    def compile(self, host_input):
        self.dram_input = ttnn.allocate_tensor_on_device(host_input.shape, host_input.dtype, host_input.layout,
                                                         self.device, self.dram_config)
        warm = self.model(self._l1_input(host_input))
        l1 = self._l1_input(host_input)
        self.address, spec = l1.buffer_address(), l1.spec
        ttnn.deallocate(warm, force=True)
        self.trace_id = ttnn.begin_trace_capture(self.device, cq_id=self.cq)
        self.output = self.model(l1)
        self.l1_input = ttnn.allocate_tensor_on_device(spec, self.device)
        assert self.l1_input.buffer_address() == self.address
        ttnn.end_trace_capture(self.device, self.trace_id, cq_id=self.cq)
        ttnn.synchronize_device(self.device)

    def _l1_input(self, host_input):
        ttnn.copy_host_to_device_tensor(host_input, self.dram_input, cq_id=self.cq)
        return ttnn.reshard(self.dram_input, self.l1_config)

    def execute(self, host_inputs):
        for host_input in host_inputs:
            ttnn.copy_host_to_device_tensor(host_input, self.dram_input, cq_id=self.cq)
            self.l1_input = ttnn.reshard(self.dram_input, self.l1_config, self.l1_input)
            assert self.l1_input.buffer_address() == self.address
            ttnn.execute_trace(self.device, self.trace_id, cq_id=self.cq, blocking=False)
            yield self.output

    def cleanup(self):
        ttnn.release_trace(self.device, self.trace_id)


class MultiCQTracedModelOverlappedInputExecutor:
    OPS, WRITE = 0, 1

    def __init__(self, model, device, dram_config, l1_config):
        self.model, self.device = model, device
        self.dram_config, self.l1_config = dram_config, l1_config

    def _write(self, host_input):
        ttnn.wait_for_event(self.WRITE, self.op_event)
        ttnn.copy_host_to_device_tensor(host_input, self.dram_input, cq_id=self.WRITE)
        write_event = ttnn.record_event(self.device, self.WRITE)
        ttnn.wait_for_event(self.OPS, write_event)

    def compile(self, host_input):
        self.dram_input = ttnn.allocate_tensor_on_device(host_input.shape, host_input.dtype, host_input.layout,
                                                         self.device, self.dram_config)
        self.op_event = ttnn.record_event(self.device, self.OPS)
        self._write(host_input)
        l1 = ttnn.reshard(self.dram_input, self.l1_config)
        self.op_event = ttnn.record_event(self.device, self.OPS)
        warm = self.model(l1)
        self._write(host_input)
        l1 = ttnn.reshard(self.dram_input, self.l1_config)
        ttnn.record_event(self.device, self.OPS)
        address, spec = l1.buffer_address(), l1.spec
        ttnn.deallocate(warm, force=True)
        self.trace_id = ttnn.begin_trace_capture(self.device, cq_id=self.OPS)
        self.output = self.model(l1)
        ttnn.end_trace_capture(self.device, self.trace_id, cq_id=self.OPS)
        if l1.is_allocated():
            ttnn.deallocate(l1, force=True)
        self.l1_input = ttnn.allocate_tensor_on_device(spec, self.device)
        assert self.l1_input.buffer_address() == address
        self.op_event = ttnn.record_event(self.device, self.OPS)
        ttnn.synchronize_device(self.device)

    def execute(self, host_inputs):
        for host_input in host_inputs:
            self._write(host_input)
            self.l1_input = ttnn.reshard(self.dram_input, self.l1_config, self.l1_input)
            ttnn.execute_trace(self.device, self.trace_id, cq_id=self.OPS, blocking=False)
            self.op_event = ttnn.record_event(self.device, self.OPS)
            yield self.output

    def cleanup(self):
        ttnn.release_trace(self.device, self.trace_id)


class MultiCQTracedModelPipelinedIOExecutor:
    OPS, IO = 0, 1

    def __init__(self, model, device, dram_config, l1_config, dram_output_config):
        self.model, self.device = model, device
        self.dram_config, self.l1_config, self.dram_output_config = dram_config, l1_config, dram_output_config

    def compile(self, host_input):
        self.dram_input = ttnn.allocate_tensor_on_device(host_input.shape, host_input.dtype, host_input.layout,
                                                         self.device, self.dram_config)
        self.first_op_event = ttnn.record_event(self.device, self.OPS)
        self.read_event = ttnn.record_event(self.device, self.IO)
        self._transfer(host_input)
        ttnn.wait_for_event(self.OPS, self.write_event)
        l1 = ttnn.reshard(self.dram_input, self.l1_config)
        self.first_op_event = ttnn.record_event(self.device, self.OPS)
        warm = self.model(l1)
        self.dram_output = ttnn.allocate_tensor_on_device(warm.shape, warm.dtype, ttnn.ROW_MAJOR_LAYOUT, self.device,
                                                          self.dram_output_config)
        ttnn.wait_for_event(self.OPS, self.read_event)
        ttnn.reshard(warm, self.dram_output_config, output_tensor=self.dram_output)
        self.last_op_event = ttnn.record_event(self.device, self.OPS)
        self._transfer(host_input)
        ttnn.wait_for_event(self.OPS, self.write_event)
        l1 = ttnn.reshard(self.dram_input, self.l1_config)
        address, spec = l1.buffer_address(), l1.spec
        ttnn.deallocate(warm, force=True)
        self.trace_id = ttnn.begin_trace_capture(self.device, cq_id=self.OPS)
        self.output = self.model(l1)
        self.l1_input = ttnn.allocate_tensor_on_device(spec, self.device)
        assert self.l1_input.buffer_address() == address
        ttnn.end_trace_capture(self.device, self.trace_id, cq_id=self.OPS)
        ttnn.synchronize_device(self.device)

    def _transfer(self, host_input):
        ttnn.wait_for_event(self.IO, self.first_op_event)
        ttnn.copy_host_to_device_tensor(host_input, self.dram_input, cq_id=self.IO)
        self.write_event = ttnn.record_event(self.device, self.IO)

    def _run_and_move_output(self):
        ttnn.wait_for_event(self.OPS, self.write_event)
        self.l1_input = ttnn.reshard(self.dram_input, self.l1_config, self.l1_input)
        self.first_op_event = ttnn.record_event(self.device, self.OPS)
        ttnn.execute_trace(self.device, self.trace_id, cq_id=self.OPS, blocking=False)
        ttnn.wait_for_event(self.OPS, self.read_event)
        ttnn.reshard(self.output, self.dram_output_config, output_tensor=self.dram_output)
        self.last_op_event = ttnn.record_event(self.device, self.OPS)

    def _read(self):
        ttnn.wait_for_event(self.IO, self.last_op_event)
        out = ttnn.to_torch(self.dram_output)  # read before the next replay overwrites it
        self.read_event = ttnn.record_event(self.device, self.IO)
        return out

    def execute(self, host_inputs):
        self._transfer(host_inputs[0])
        for host_input in host_inputs[1:]:
            self._run_and_move_output()
            self._transfer(host_input)
            yield self._read()
        self._run_and_move_output()
        yield self._read()

    def cleanup(self):
        ttnn.release_trace(self.device, self.trace_id)


@pytest.fixture
def device2cq():
    dev = ttnn.open_device(device_id=0, l1_small_size=24576, trace_region_size=200000, num_command_queues=2)
    try:
        yield dev
    finally:
        ttnn.close_device(dev)


def _inputs(n=3):
    torch.manual_seed(7)
    return [ttnn.from_torch(torch.randn(1, 1, PIXELS, CHANNELS), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
            for _ in range(n)]


def _configs(device):
    dram_cores = device.dram_grid_size().x
    return (height_sharded(ttnn.BufferType.DRAM, dram_cores, CHANNELS), height_sharded(ttnn.BufferType.L1, 4, CHANNELS),
            height_sharded(ttnn.BufferType.DRAM, dram_cores, CHANNELS))



# The overlapped-input executor allocates its L1 input after end_trace_capture: real ttnn warns.
@pytest.mark.filterwarnings("ignore::ttrecord.emulator.errors.TraceAllocationWarning")
@pytest.mark.parametrize("kind", ["traced", "overlapped_input", "pipelined_io"])
def test_traced_executor_returns_the_eager_outputs(device2cq, kind):
    dram, l1, dram_out = _configs(device2cq)
    model = Model(device2cq)
    inputs = _inputs()
    eager_executor = ModelExecutor(model, device2cq, l1)
    eager_executor.compile(inputs[0])
    eager = [ttnn.to_torch(out) for out in eager_executor.execute(inputs)]
    executor = {
        "traced": lambda: TracedModelExecutor(model, device2cq, dram, l1),
        "overlapped_input": lambda: MultiCQTracedModelOverlappedInputExecutor(model, device2cq, dram, l1),
        "pipelined_io": lambda: MultiCQTracedModelPipelinedIOExecutor(model, device2cq, dram, l1, dram_out),
    }[kind]()
    executor.compile(inputs[0])
    traced = [out if isinstance(out, torch.Tensor) else ttnn.to_torch(out) for out in executor.execute(inputs)]
    executor.cleanup()
    assert len(traced) == len(eager) == 3
    for got, want in zip(traced, eager):
        assert torch.equal(got, want)
    assert not torch.equal(eager[0], eager[1])  # the inputs differ, so replays really recomputed


def test_the_eager_model_computes_the_torch_reference(device2cq):
    _, l1, _ = _configs(device2cq)
    model = Model(device2cq)
    x = torch.randn(1, 1, PIXELS, CHANNELS).bfloat16()
    out = ttnn.to_torch(model(ttnn.to_device(ttnn.from_torch(x, layout=ttnn.ROW_MAJOR_LAYOUT), device2cq, memory_config=l1)))
    w1, w2 = ttnn.to_torch(model.w1).float(), ttnn.to_torch(model.w2).float()
    h = torch.relu(x.float() @ w1).bfloat16().float()
    ref = ((h @ w2).bfloat16().float() + x.float()).bfloat16()
    assert torch.allclose(out.float(), ref.float(), atol=0.05)
