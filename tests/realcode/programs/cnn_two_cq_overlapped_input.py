"""tt_cnn's two-queue traced executor with overlapped input: host writes on CQ 1, reshard and
replay on CQ 0, ordered by record_event / wait_for_event; the L1 input is freed after the capture
ends and its persistent replacement allocated on the captured address.

Upstream: tenstorrent/tt-metal models/tt_cnn/tt/executor.py@10a7cae4926198a89bef966220c79d4797fa5f16,
classes MultiCQModelOverlappedInputExecutor (the eager reference) and
MultiCQTracedModelOverlappedInputExecutor, as written there.
Changes:
  * the abstract Executor base and get_output_schema/_create_output_schema dropped;
    `_deallocate_structured_tensor` kept for single tensors;
  * the model (a tt_cnn-built CNN) -> a small stand-in with the same ttnn call shape: a
    height-sharded L1 activation through tilize, two 1x1 convolutions as ttnn.linear, untilize;
  * models/tt_cnn/tt/pipeline.py@69d0fafd52eea2e009211ce649f15c3fc74963be Pipeline drives the traced
    executor (compile, enqueue: each output read with cpu(blocking=False) on the executor's read
    queue right after its replay, pop_all: synchronize_device); its pre-allocated host outputs
    path, logging and create_pipeline_from_config dropped;
  * a driver in place of the pytest test: the device fixture (num_command_queues=2) ->
    ttnn.open_device; 3 inputs; eager outputs compared with traced ones bit for bit, exit 1 on
    mismatch.
"""

import sys

import torch

import ttnn

PIXELS, CHANNELS, HIDDEN, INPUTS = 256, 32, 64, 3


def height_sharded(buffer_type, cores, shard_height, width):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(cores - 1, 0))})
    spec = ttnn.ShardSpec(grid, [shard_height, width], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, buffer_type, spec)


class Model:
    """Stand-in CNN: two 1x1 convolutions over a height-sharded activation."""

    def __init__(self, device):
        self.w1 = ttnn.from_torch(torch.randn(CHANNELS, HIDDEN) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        self.w2 = ttnn.from_torch(torch.randn(HIDDEN, CHANNELS) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        self.hidden_config = height_sharded(ttnn.BufferType.L1, 8, PIXELS // 8, HIDDEN)

    def __call__(self, x):
        t = ttnn.tilize(x)
        h = ttnn.linear(t, self.w1, activation="relu", memory_config=self.hidden_config)
        y = ttnn.linear(h, self.w2)
        return ttnn.untilize(y)


def _deallocate_structured_tensor(tensor_struct, force=False):
    if isinstance(tensor_struct, ttnn.Tensor):
        if tensor_struct.is_allocated():
            ttnn.deallocate(tensor_struct, force=force)
    elif isinstance(tensor_struct, (list, tuple)):
        for t in tensor_struct:
            _deallocate_structured_tensor(t, force=force)


class MultiCQModelOverlappedInputExecutor:
    CQ_OPS_AND_OUTPUT_READ = 0
    CQ_INPUT_WRITE = 1

    def __init__(self, model, device, dram_input_memory_config, l1_input_memory_config):
        self.model = model
        self.device = device
        self.dram_input_memory_config = dram_input_memory_config
        self.l1_input_memory_config = l1_input_memory_config

        self.dram_input_tensor = None
        self.op_event = None

    def compile(self, host_input):
        if host_input.storage_type() != ttnn.StorageType.HOST:
            raise ValueError("Input tensor must be on host")

        self.dram_input_tensor = ttnn.allocate_tensor_on_device(
            host_input.shape, host_input.dtype, host_input.layout, self.device, self.dram_input_memory_config
        )

        self.op_event = ttnn.record_event(self.device, self.CQ_OPS_AND_OUTPUT_READ)

        compilation_output = self._compile_model(host_input)
        _deallocate_structured_tensor(compilation_output, force=True)
        ttnn.synchronize_device(self.device)

    def _compile_model(self, host_input):
        # Transfer input to device DRAM
        ttnn.wait_for_event(self.CQ_INPUT_WRITE, self.op_event)
        ttnn.copy_host_to_device_tensor(host_input, self.dram_input_tensor, cq_id=self.CQ_INPUT_WRITE)
        write_event = ttnn.record_event(self.device, self.CQ_INPUT_WRITE)

        # Reshard to L1 and run model
        ttnn.wait_for_event(self.CQ_OPS_AND_OUTPUT_READ, write_event)
        l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config)
        output_tensor = self.model(l1_input_tensor)
        self.op_event = ttnn.record_event(self.device, self.CQ_OPS_AND_OUTPUT_READ)
        if l1_input_tensor.is_allocated():
            ttnn.deallocate(l1_input_tensor, force=True)
        return output_tensor

    def _execute_single(self, input_tensor):
        # Transfer input to device DRAM
        ttnn.wait_for_event(self.CQ_INPUT_WRITE, self.op_event)
        ttnn.copy_host_to_device_tensor(input_tensor, self.dram_input_tensor, cq_id=self.CQ_INPUT_WRITE)
        write_event = ttnn.record_event(self.device, self.CQ_INPUT_WRITE)

        # Execute model
        ttnn.wait_for_event(self.CQ_OPS_AND_OUTPUT_READ, write_event)
        l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config)
        output_tensor = self.model(l1_input_tensor)
        self.op_event = ttnn.record_event(self.device, self.CQ_OPS_AND_OUTPUT_READ)
        if l1_input_tensor.is_allocated():
            ttnn.deallocate(l1_input_tensor, force=True)

        return output_tensor

    def execute(self, host_inputs):
        for host_input in host_inputs:
            yield self._execute_single(host_input)


class MultiCQTracedModelOverlappedInputExecutor:
    CQ_OPS_AND_OUTPUT_READ = 0
    CQ_INPUT_WRITE = 1

    def __init__(self, model, device, dram_input_memory_config, l1_input_memory_config):
        self.model = model
        self.device = device
        self.dram_input_memory_config = dram_input_memory_config
        self.l1_input_memory_config = l1_input_memory_config

        self.dram_input_tensor = None
        self.l1_input_tensor = None
        self.output_tensor = None
        self._compilation_output_tensor = None

        self.trace_id = None
        self.op_event = None

    def compile(self, host_input):
        if host_input.storage_type() != ttnn.StorageType.HOST:
            raise ValueError("Input tensor must be on host")

        self.dram_input_tensor = ttnn.allocate_tensor_on_device(
            host_input.shape, host_input.dtype, host_input.layout, self.device, self.dram_input_memory_config
        )

        self.op_event = ttnn.record_event(self.device, self.CQ_OPS_AND_OUTPUT_READ)

        self._compile_model(host_input)
        self._capture_trace(host_input)
        ttnn.synchronize_device(self.device)

    def _compile_model(self, host_input):
        # Transfer input to device DRAM
        ttnn.wait_for_event(self.CQ_INPUT_WRITE, self.op_event)
        ttnn.copy_host_to_device_tensor(host_input, self.dram_input_tensor, cq_id=self.CQ_INPUT_WRITE)
        write_event = ttnn.record_event(self.device, self.CQ_INPUT_WRITE)

        # Reshard to L1 and run model
        ttnn.wait_for_event(self.CQ_OPS_AND_OUTPUT_READ, write_event)
        l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config)
        self.op_event = ttnn.record_event(self.device, self.CQ_OPS_AND_OUTPUT_READ)

        self._compilation_output_tensor = self.model(l1_input_tensor)

        # Cleanup L1 input tensor only
        ttnn.deallocate(l1_input_tensor)

    def _capture_trace(self, host_input):
        # Transfer input to device DRAM
        ttnn.wait_for_event(self.CQ_INPUT_WRITE, self.op_event)
        ttnn.copy_host_to_device_tensor(host_input, self.dram_input_tensor, cq_id=self.CQ_INPUT_WRITE)
        write_event = ttnn.record_event(self.device, self.CQ_INPUT_WRITE)

        # Prepare L1 input for trace
        ttnn.wait_for_event(self.CQ_OPS_AND_OUTPUT_READ, write_event)
        l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config)
        ttnn.record_event(self.device, self.CQ_OPS_AND_OUTPUT_READ)

        # Record tensor details for validation
        input_trace_addr = l1_input_tensor.buffer_address()
        spec = l1_input_tensor.spec

        # Force cleanup of the compilation output tensor so that the persistent L1 input tensor
        # allocated below lands on the captured address.
        _deallocate_structured_tensor(self._compilation_output_tensor, force=True)

        # Capture trace
        self.trace_id = ttnn.begin_trace_capture(self.device, cq_id=self.CQ_OPS_AND_OUTPUT_READ)
        self.output_tensor = self.model(l1_input_tensor)
        ttnn.end_trace_capture(self.device, self.trace_id, cq_id=self.CQ_OPS_AND_OUTPUT_READ)

        if l1_input_tensor.is_allocated():
            ttnn.deallocate(l1_input_tensor, force=True)

        # Allocate persistent L1 input tensor and validate address
        self.l1_input_tensor = ttnn.allocate_tensor_on_device(spec, self.device)
        actual_addr = self.l1_input_tensor.buffer_address()
        if input_trace_addr != actual_addr:
            raise RuntimeError(f"L1 input tensor address mismatch: expected {input_trace_addr}, got {actual_addr}")
        self.op_event = ttnn.record_event(self.device, self.CQ_OPS_AND_OUTPUT_READ)

    def _execute_single(self, input_tensor):
        # Transfer input to device DRAM
        ttnn.wait_for_event(self.CQ_INPUT_WRITE, self.op_event)
        ttnn.copy_host_to_device_tensor(input_tensor, self.dram_input_tensor, cq_id=self.CQ_INPUT_WRITE)
        write_event = ttnn.record_event(self.device, self.CQ_INPUT_WRITE)

        # Execute traced model
        ttnn.wait_for_event(self.CQ_OPS_AND_OUTPUT_READ, write_event)
        self.l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config, self.l1_input_tensor)
        ttnn.execute_trace(self.device, self.trace_id, cq_id=self.CQ_OPS_AND_OUTPUT_READ, blocking=False)
        self.op_event = ttnn.record_event(self.device, self.CQ_OPS_AND_OUTPUT_READ)

        return self.output_tensor

    def execute(self, host_inputs):
        for host_input in host_inputs:
            yield self._execute_single(host_input)

    def get_read_cq(self):
        return self.CQ_OPS_AND_OUTPUT_READ

    def cleanup(self):
        if self.trace_id is not None:
            ttnn.release_trace(self.device, self.trace_id)


class Pipeline:
    def __init__(self, executor):
        self.executor = executor
        self.output_tensors = []

    def compile(self, host_input):
        self.executor.compile(host_input)
        return self

    def enqueue(self, host_inputs):
        if not all(input.storage_type() == ttnn.StorageType.HOST for input in host_inputs):
            raise ValueError("All input tensors must be on host")
        self.output_tensors = []
        for t in self.executor.execute(host_inputs):
            host_tensor = t.cpu(blocking=False, cq_id=self.executor.get_read_cq())
            self.output_tensors.append(host_tensor)
        return self

    def pop_all(self):
        ttnn.synchronize_device(self.executor.device)
        return self.output_tensors

    def cleanup(self):
        self.executor.cleanup()


def main():
    torch.manual_seed(0)
    device = ttnn.open_device(device_id=0, trace_region_size=100000, num_command_queues=2)
    dram_config = height_sharded(ttnn.BufferType.DRAM, 8, PIXELS // 8, CHANNELS)
    l1_config = height_sharded(ttnn.BufferType.L1, 4, PIXELS // 4, CHANNELS)
    model = Model(device)
    images = [torch.randn(1, 1, PIXELS, CHANNELS) for _ in range(INPUTS)]
    host_inputs = [ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT) for x in images]

    reference = MultiCQModelOverlappedInputExecutor(model, device, dram_config, l1_config)
    reference.compile(host_inputs[0])
    eager = [ttnn.to_torch(output) for output in reference.execute(host_inputs)]

    pipe = Pipeline(MultiCQTracedModelOverlappedInputExecutor(model, device, dram_config, l1_config))
    pipe.compile(host_inputs[0])
    traced = [ttnn.to_torch(output) for output in pipe.enqueue(host_inputs).pop_all()]
    pipe.cleanup()
    ttnn.close_device(device)

    same = all(torch.equal(a, b) for a, b in zip(traced, eager))
    print(f"traced == eager for {INPUTS} inputs: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
