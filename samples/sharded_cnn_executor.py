"""A sharded CNN-style model run by a two-command-queue traced executor: zero hazards expected.

What it shows: the pattern tt-metal's tt_cnn executors use (models/tt_cnn/tt/executor.py,
MultiCQTracedModelOverlappedInputExecutor), on sharded memory.
  * the host input goes to a persistent DRAM-sharded tensor on command queue 1, and the ops
    queue (0) waits for that write's event before using it;
  * the model reads an L1 height-sharded activation: the DRAM input is resharded into L1;
  * the L1 input is freed once the captured model has consumed it and a persistent L1 input
    of the same spec is allocated before the capture ends: it lands on the captured address
    (checked, as tt_cnn's traced executor does);
  * each replay first reshards the new DRAM input *into* that persistent L1 tensor
    (`ttnn.reshard(dram, l1_config, l1_input)`), then replays with execute_trace.
The traced outputs equal eager outputs of the same model, which the script prints.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

PIXELS, CHANNELS, HIDDEN, INPUTS = 256, 32, 64, 3
CQ_OPS, CQ_INPUT = 0, 1


def height_sharded(buffer_type, cores, shard_height, width):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(cores - 1, 0))})
    spec = ttnn.ShardSpec(grid, [shard_height, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, buffer_type, spec)


class Model:
    """Two 1x1 convolutions (per-pixel linears) over a height-sharded activation."""

    def __init__(self, device):
        self.w1 = ttnn.from_torch(torch.randn(CHANNELS, HIDDEN) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        self.w2 = ttnn.from_torch(torch.randn(HIDDEN, CHANNELS) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        self.hidden_config = height_sharded(ttnn.BufferType.L1, 8, PIXELS // 8, HIDDEN)

    def __call__(self, x):
        t = ttnn.tilize(x)
        h = ttnn.linear(t, self.w1, activation="relu", memory_config=self.hidden_config)
        y = ttnn.linear(h, self.w2)
        return ttnn.untilize(y)


class TracedTwoQueueExecutor:
    """Input writes on CQ 1, reshard + replay on CQ 0, synchronised by events."""

    def __init__(self, model, device, dram_config, l1_config):
        self.model, self.device = model, device
        self.dram_config, self.l1_config = dram_config, l1_config

    def compile(self, host_input):
        self.dram_input = ttnn.allocate_tensor_on_device(
            host_input.shape, host_input.dtype, host_input.layout, self.device, self.dram_config)
        self.op_event = ttnn.record_event(self.device, CQ_OPS)
        l1_input = self._write_and_reshard(host_input)
        warmup = self.model(l1_input)  # compile run
        self.op_event = ttnn.record_event(self.device, CQ_OPS)  # the next input write waits for the reshard above
        ttnn.deallocate(l1_input)

        l1_input = self._write_and_reshard(host_input)
        address, spec = l1_input.buffer_address(), l1_input.spec
        ttnn.deallocate(warmup)
        self.trace_id = ttnn.begin_trace_capture(self.device, cq_id=CQ_OPS)
        self.output = self.model(l1_input)
        ttnn.deallocate(l1_input)
        self.l1_input = ttnn.allocate_tensor_on_device(spec, self.device)  # the freed address again
        if self.l1_input.buffer_address() != address:
            raise RuntimeError(f"L1 input moved: captured {address}, got {self.l1_input.buffer_address()}")
        ttnn.end_trace_capture(self.device, self.trace_id, cq_id=CQ_OPS)
        self.op_event = ttnn.record_event(self.device, CQ_OPS)
        ttnn.synchronize_device(self.device)

    def _write_and_reshard(self, host_input, into=None):
        ttnn.wait_for_event(CQ_INPUT, self.op_event)
        ttnn.copy_host_to_device_tensor(host_input, self.dram_input, cq_id=CQ_INPUT)
        write_event = ttnn.record_event(self.device, CQ_INPUT)
        ttnn.wait_for_event(CQ_OPS, write_event)
        return ttnn.reshard(self.dram_input, self.l1_config, into)

    def execute(self, host_input):
        self.l1_input = self._write_and_reshard(host_input, self.l1_input)
        ttnn.execute_trace(self.device, self.trace_id, cq_id=CQ_OPS, blocking=False)
        self.op_event = ttnn.record_event(self.device, CQ_OPS)
        return self.output

    def cleanup(self):
        ttnn.release_trace(self.device, self.trace_id)


def main():
    torch.manual_seed(0)
    device = ttnn.open_device(device_id=0, trace_region_size=100000, num_command_queues=2)
    dram_config = height_sharded(ttnn.BufferType.DRAM, 8, PIXELS // 8, CHANNELS)
    l1_config = height_sharded(ttnn.BufferType.L1, 4, PIXELS // 4, CHANNELS)
    model = Model(device)
    images = [torch.randn(1, 1, PIXELS, CHANNELS) for _ in range(INPUTS)]
    host_inputs = [ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT) for x in images]

    eager = []
    for host_input in host_inputs:
        l1_input = ttnn.to_device(host_input, device, memory_config=l1_config)
        eager.append(ttnn.to_torch(model(l1_input)))
        ttnn.deallocate(l1_input)

    executor = TracedTwoQueueExecutor(model, device, dram_config, l1_config)
    executor.compile(host_inputs[0])
    traced = [ttnn.to_torch(executor.execute(host_input)) for host_input in host_inputs]
    executor.cleanup()
    ttnn.close_device(device)
    same = all(torch.equal(a, b) for a, b in zip(traced, eager))
    print(f"traced == eager for {INPUTS} inputs: {same}")


if __name__ == "__main__":
    main()
