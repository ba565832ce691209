"""tt_cnn's single-queue traced executor: the model's L1 input is freed inside the capture and a
persistent input of the same spec allocated there again, on the captured address.

Upstream: tenstorrent/tt-metal models/tt_cnn/tt/executor.py@10a7cae4926198a89bef966220c79d4797fa5f16,
classes ModelExecutor (the eager reference) and TracedModelExecutor, as written there.
Changes:
  * the abstract Executor base and get_output_schema/_create_output_schema dropped
    (nothing here reads them); `_deallocate_structured_tensor` kept for single tensors;
  * the model (a tt_cnn-built CNN) -> a small stand-in with the same ttnn call shape: a
    height-sharded L1 activation through tilize, two 1x1 convolutions as ttnn.linear, untilize;
  * models/tt_cnn/tt/pipeline.py@69d0fafd52eea2e009211ce649f15c3fc74963be Pipeline drives the traced
    executor (compile, enqueue: each output read with cpu(blocking=False) on the executor's read
    queue right after its replay, pop_all: synchronize_device); its pre-allocated host outputs
    path, logging and create_pipeline_from_config dropped;
  * a driver in place of the pytest test: the device fixture -> ttnn.open_device; 3 inputs; the
    eager outputs (ModelExecutor) compared with the traced ones bit for bit, exit 1 on mismatch.
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


class ModelExecutor:
    def __init__(self, model, device, l1_input_memory_config, cq_id=0):
        self.model = model
        self.device = device
        self.cq_id = cq_id
        self.l1_input_memory_config = l1_input_memory_config

    def _execute_single(self, input_tensor):
        l1_input_tensor = ttnn.to_device(input_tensor, device=self.device, memory_config=self.l1_input_memory_config)
        output_tensor = self.model(l1_input_tensor)
        if l1_input_tensor.is_allocated():
            ttnn.deallocate(l1_input_tensor, force=True)
        return output_tensor

    def execute(self, host_inputs):
        for host_input in host_inputs:
            yield self._execute_single(host_input)


class TracedModelExecutor:
    def __init__(self, model, device, dram_input_memory_config, l1_input_memory_config, cq_id=0):
        self.model = model
        self.device = device
        self.cq_id = cq_id

        self.dram_input_memory_config = dram_input_memory_config
        self.l1_input_memory_config = l1_input_memory_config

        self.dram_input_tensor = None
        self.l1_input_tensor = None
        self.output_tensor = None
        self._compilation_output_tensor = None

        self.trace_id = None
        self.input_trace_addr = None

    def compile(self, host_input):
        self._validate_input(host_input)
        self._allocate_persistent_tensors(host_input)
        self._run_model_for_compilation(host_input)
        self._capture_execution_trace(host_input)
        ttnn.synchronize_device(self.device)

    def _validate_input(self, host_input):
        if host_input.storage_type() != ttnn.StorageType.HOST:
            raise ValueError("Input tensor must be on host")

    def _allocate_persistent_tensors(self, host_input):
        self.dram_input_tensor = ttnn.allocate_tensor_on_device(
            host_input.shape, host_input.dtype, host_input.layout, self.device, self.dram_input_memory_config
        )

    def _run_model_for_compilation(self, host_input):
        l1_input_for_compile = self._prepare_l1_input(host_input)
        self._compilation_output_tensor = self.model(l1_input_for_compile)
        ttnn.deallocate(l1_input_for_compile)

    def _capture_execution_trace(self, host_input):
        l1_input_for_trace, spec = self._prepare_input_for_trace_capture(host_input)

        self.trace_id = ttnn.begin_trace_capture(self.device, cq_id=self.cq_id)

        self.output_tensor = self.model(l1_input_for_trace)
        ttnn.deallocate(l1_input_for_trace)

        self._validate_trace_address_consistency(spec)
        ttnn.end_trace_capture(self.device, self.trace_id, cq_id=self.cq_id)

    def _prepare_input_for_trace_capture(self, host_input):
        l1_input_for_trace = self._prepare_l1_input(host_input)
        self.input_trace_addr = l1_input_for_trace.buffer_address()
        spec = l1_input_for_trace.spec

        _deallocate_structured_tensor(self._compilation_output_tensor, force=True)

        return l1_input_for_trace, spec

    def _validate_trace_address_consistency(self, spec):
        self.l1_input_tensor = ttnn.allocate_tensor_on_device(spec, self.device)
        actual_addr = self.l1_input_tensor.buffer_address()

        if self.input_trace_addr != actual_addr:
            raise RuntimeError(
                f"L1 input tensor address mismatch: trace captured {self.input_trace_addr}, "
                f"but persistent tensor allocated at {actual_addr}"
            )

    def _prepare_l1_input(self, host_input):
        ttnn.copy_host_to_device_tensor(host_input, self.dram_input_tensor, cq_id=self.cq_id)
        return ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config)

    def _execute_single(self, input_tensor):
        # Transfer input to device and reshard to L1
        ttnn.copy_host_to_device_tensor(input_tensor, self.dram_input_tensor, cq_id=self.cq_id)

        # Reuse persistent L1 tensor by resharding in-place
        self.l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config, self.l1_input_tensor)

        # Validate address consistency with captured trace
        actual_addr = self.l1_input_tensor.buffer_address()
        if actual_addr != self.input_trace_addr:
            raise RuntimeError(
                f"L1 input tensor address mismatch during execution: "
                f"expected {self.input_trace_addr}, got {actual_addr}"
            )

        ttnn.execute_trace(self.device, self.trace_id, cq_id=self.cq_id, blocking=False)
        return self.output_tensor

    def execute(self, host_inputs):
        for host_input in host_inputs:
            yield self._execute_single(host_input)

    def get_read_cq(self):
        return self.cq_id

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
    device = ttnn.open_device(device_id=0, trace_region_size=100000)
    dram_config = height_sharded(ttnn.BufferType.DRAM, 8, PIXELS // 8, CHANNELS)
    l1_config = height_sharded(ttnn.BufferType.L1, 4, PIXELS // 4, CHANNELS)
    model = Model(device)
    images = [torch.randn(1, 1, PIXELS, CHANNELS) for _ in range(INPUTS)]
    host_inputs = [ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT) for x in images]

    eager = [ttnn.to_torch(output) for output in ModelExecutor(model, device, l1_config).execute(host_inputs)]

    pipe = Pipeline(TracedModelExecutor(model, device, dram_config, l1_config))
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
