"""YOLOv4's performant runner: trace + 2 command queues. Input writes on CQ 1 into a DRAM-sharded
tensor, to_memory_config / reshard into L1 on CQ 0 ordered by events; two warm-up runs written
as two copies of the same block; the model frees its L1 input (the first conv's
deallocate_activation) and the runner allocates the persistent input on that address inside the
capture; every conv layer goes through one wrapper line (Conv.__call__ -> ttnn.conv2d).

Upstream: tenstorrent/tt-metal models/demos/yolov4/runner/performant_runner.py@0c362fca6df7feb57325e7255d816bb37a1a979a
(YOLOv4PerformantRunner), with models/demos/yolov4/runner/performant_runner_infra.py@10c71c4d54bfc1af4fd2079f8c944d873ce48b6c
(YOLOv4PerformanceRunnerInfra) and models/demos/yolov4/tt/common.py@04981738ecd74e5d3b8887e97c348410ba847955 (Conv).
Changes:
  * TtYOLOv4 (downsample1-5, neck, head, ~100 convs) -> a stand-in of the same call shape: four
    Conv layers (the first one deallocate_activation=True, as YOLOv4's first conv), relu in place
    of mish, sigmoid on the confidence head; two outputs, as dealloc_output expects; weights
    made from a seeded torch model instead of load_torch_model / create_yolov4_model_parameters;
  * get_model_result / gen_yolov4_boxes_confs / get_region_boxes (box post-processing) -> the two
    outputs read with to_torch; validate() keeps its assert_with_pcc checks (inlined, boxes
    pcc 0.99, confs 0.71) against the torch model;
  * resolution (320, 320) -> (16, 16); the L1 input sharded on 8 cores (not 8x8); is_wormhole_b0
    check and loguru lines dropped; the DRAM shard spec uses device.dram_grid_size() as upstream;
  * a driver in place of test_yolov4_performant.py: ttnn.open_device(num_command_queues=2,
    trace_region_size=...); 3 new images through runner.run(..., check_pcc=True), exit 1 when a
    PCC check fails; release.
"""

import sys

import torch

import ttnn

RESOLUTION = (16, 16)
CORES = 8


def divup(a, b):
    return (a + b - 1) // b


def pcc(a, b):
    a, b = a.double().flatten(), b.double().flatten()
    return torch.corrcoef(torch.stack([a, b]))[0, 1].item()


def assert_with_pcc(expected, actual, pcc_threshold):
    value = pcc(expected, actual)
    if value < pcc_threshold:
        print(f"PCC {value:.5f} below {pcc_threshold}")
        sys.exit(1)
    return True, f"{value:.5f}"


class Params(dict):
    __getattr__ = dict.__getitem__


class Conv:
    def __init__(self, device, conv_param, conv_pth, activation="") -> None:
        self.conv_param = conv_param
        self.conv_pth = conv_pth
        self.device = device
        self.cache = {}

        self.compute_config = ttnn.init_device_compute_kernel_config(
            device.arch(),
            math_fidelity=ttnn.MathFidelity.LoFi,
            fp32_dest_acc_en=False,
            packer_l1_acc=False,
            math_approx_mode=False,
        )
        self.conv_output_dtype = conv_param.dtype
        self.conv_config = ttnn.Conv2dConfig(
            weights_dtype=ttnn.bfloat8_b,
            activation=activation,
            shard_layout=conv_param.shard_layout,
            reshard_if_not_optimal=conv_param.reshard_if_not_optimal,
            deallocate_activation=conv_param.deallocate_activation,
            enable_act_double_buffer=True,
            enable_split_reader=True if conv_param.shard_layout == ttnn.TensorMemoryLayout.HEIGHT_SHARDED else False,  # noqa: SIM210 - as upstream
            output_layout=ttnn.TILE_LAYOUT,
        )
        if conv_param.act_block_h is not None:
            self.conv_config.act_block_h_override = conv_param.act_block_h

        if "bias" in conv_pth:
            bias = ttnn.from_device(conv_pth.bias)
            self.bias = bias
        else:
            self.bias = None

        weight = ttnn.from_device(conv_pth.weight)
        self.weight = weight

        self.conv_kwargs = {
            "in_channels": conv_param.in_channels,
            "out_channels": conv_param.out_channels,
            "batch_size": conv_param.batch_size,
            "input_height": conv_param.input_height,
            "input_width": conv_param.input_width,
            "kernel_size": conv_param.kernel_size,
            "stride": conv_param.stride,
            "padding": conv_param.padding,
            "dilation": conv_param.dilation,
            "groups": conv_param.groups,
            "device": device,
            "conv_config": self.conv_config,
        }

    def __call__(self, input_tensor):
        [x, [output_height, output_width], [self.weight, self.bias]] = ttnn.conv2d(
            input_tensor=input_tensor,
            weight_tensor=self.weight,
            bias_tensor=self.bias,
            **self.conv_kwargs,
            compute_config=self.compute_config,
            return_output_dim=True,
            return_weights_and_bias=True,
            dtype=self.conv_output_dtype,
        )
        return x, output_height, output_width


def conv_param(cin, cout, kernel, padding, deallocate_activation=False):
    h, w = RESOLUTION
    return Params(dtype=ttnn.bfloat16, shard_layout=None, reshard_if_not_optimal=False,
                  deallocate_activation=deallocate_activation, act_block_h=None, in_channels=cin,
                  out_channels=cout, batch_size=1, input_height=h, input_width=w,
                  kernel_size=(kernel, kernel), stride=(1, 1), padding=(padding, padding),
                  dilation=(1, 1), groups=1)


LAYERS = {"c1": (16, 32, 3, 1, True), "c2": (32, 32, 3, 1, False), "boxes": (32, 4, 1, 0, False), "confs": (32, 8, 1, 0, False)}


class TorchYOLO(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleDict({name: torch.nn.Conv2d(cin, cout, k, padding=p) for name, (cin, cout, k, p, _) in LAYERS.items()})

    def forward(self, x):
        x = torch.relu(self.convs["c1"](torch.nn.functional.pad(x, (0, 0, 0, 0, 0, 16 - x.shape[1]))))
        x = torch.relu(self.convs["c2"](x))
        return self.convs["boxes"](x), torch.sigmoid(self.convs["confs"](x))


class TtYOLOv4:
    def __init__(self, parameters, device):
        self.conv1 = Conv(device, parameters.c1.conv_param, parameters.c1)
        self.conv2 = Conv(device, parameters.c2.conv_param, parameters.c2)
        self.conv_boxes = Conv(device, parameters.boxes.conv_param, parameters.boxes)
        self.conv_confs = Conv(device, parameters.confs.conv_param, parameters.confs)

    def __call__(self, input_tensor):
        output_tensor, _, _ = self.conv1(input_tensor)
        output_tensor = ttnn.relu(output_tensor)
        output_tensor_2, _, _ = self.conv2(output_tensor)
        ttnn.deallocate(output_tensor)
        output_tensor_2 = ttnn.relu(output_tensor_2)
        boxes, _, _ = self.conv_boxes(output_tensor_2)
        confs, _, _ = self.conv_confs(output_tensor_2)
        ttnn.deallocate(output_tensor_2)
        confs = ttnn.sigmoid(confs)
        return [boxes, confs]


def create_yolov4_model_parameters(torch_model, device):
    parameters = Params()
    for name, (cin, cout, k, p, dealloc) in LAYERS.items():
        conv = torch_model.convs[name]
        weight = torch.nn.functional.pad(conv.weight.detach(), (0, 0, 0, 0, 0, cin - conv.weight.shape[1]))
        parameters[name] = Params(
            conv_param=conv_param(cin, cout, k, p, dealloc),
            weight=ttnn.from_torch(weight, dtype=ttnn.bfloat16, device=device),
            bias=ttnn.from_torch(conv.bias.detach().reshape(1, 1, 1, -1), dtype=ttnn.bfloat16, device=device),
        )
    return parameters


def get_model_result(output_tensor, resolution):
    return [ttnn.to_torch(t).float() for t in output_tensor]


def torch_result(torch_output, resolution):
    return [t.permute(0, 2, 3, 1).reshape(1, 1, resolution[0] * resolution[1], -1) for t in torch_output]


class YOLOv4PerformanceRunnerInfra:
    def __init__(self, device, batch_size, act_dtype, weight_dtype, model_location_generator=None, resolution=RESOLUTION):
        torch.manual_seed(0)
        self.resolution = resolution
        self.pcc_passed = False
        self.pcc_message = "Did you forget to call validate()?"
        self.device = device
        self.batch_size = batch_size
        self.act_dtype = act_dtype
        self.weight_dtype = weight_dtype

        self.torch_model = torch_model = TorchYOLO()

        input_shape = (1, *resolution, 3)

        torch_input_tensor = torch.randn(input_shape, dtype=torch.float32)
        self.input_tensor = ttnn.from_torch(torch_input_tensor, ttnn.bfloat16)
        self.torch_input_tensor = torch_input_tensor.permute(0, 3, 1, 2)

        parameters = create_yolov4_model_parameters(torch_model, device)
        self.ttnn_yolov4_model = TtYOLOv4(parameters, device)

        with torch.no_grad():
            self.torch_output_tensor = torch_model(self.torch_input_tensor)
        self.ref_boxes, self.ref_confs = torch_result(self.torch_output_tensor, resolution)

    def run(self):
        self.output_tensor = self.ttnn_yolov4_model(self.input_tensor)

    def _setup_l1_sharded_input(self, device, torch_input_tensor=None):
        core_grid = ttnn.CoreGrid(y=1, x=CORES)
        # torch tensor
        torch_input_tensor = self.torch_input_tensor if torch_input_tensor is None else torch_input_tensor

        n, c, h, w = torch_input_tensor.shape
        # sharded mem config for fold input
        num_cores = core_grid.x * core_grid.y
        shard_h = (n * w * h + num_cores - 1) // num_cores
        grid_size = core_grid
        grid_coord = ttnn.CoreCoord(grid_size.x - 1, grid_size.y - 1)
        shard_grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), grid_coord)})
        shard_spec = ttnn.ShardSpec(shard_grid, (shard_h, 16), ttnn.ShardOrientation.ROW_MAJOR)
        input_mem_config = ttnn.MemoryConfig(
            ttnn.types.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.types.BufferType.L1, shard_spec
        )
        torch_input_tensor = torch_input_tensor.permute(0, 2, 3, 1)
        torch_input_tensor = torch_input_tensor.reshape(1, 1, h * w * n, c)
        tt_inputs_host = ttnn.from_torch(torch_input_tensor, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
        tt_inputs_host = ttnn.pad(tt_inputs_host, [1, 1, n * h * w, 16], [0, 0, 0, 0], 0)
        return tt_inputs_host, input_mem_config

    def setup_dram_sharded_input(self, device, torch_input_tensor=None, mesh_mapper=None, mesh_composer=None):
        tt_inputs_host, input_mem_config = self._setup_l1_sharded_input(device)
        dram_grid_size = device.dram_grid_size()
        dram_shard_spec = ttnn.ShardSpec(
            ttnn.CoreRangeSet(
                {ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(dram_grid_size.x - 1, dram_grid_size.y - 1))}
            ),
            [
                divup(tt_inputs_host.volume() // tt_inputs_host.shape[-1], (dram_grid_size.x * dram_grid_size.y)),
                16,
            ],
            ttnn.ShardOrientation.ROW_MAJOR,
        )
        sharded_mem_config_DRAM = ttnn.MemoryConfig(
            ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.DRAM, dram_shard_spec
        )

        return tt_inputs_host, sharded_mem_config_DRAM, input_mem_config

    def validate(self, output_tensor=None):
        output_tensor = self.output_tensor if output_tensor is None else output_tensor
        result_boxes, result_confs = get_model_result(output_tensor, self.resolution)

        valid_pcc = 0.99
        self.pcc_passed, self.pcc_message = assert_with_pcc(self.ref_boxes, result_boxes, valid_pcc)

        valid_pcc = 0.71
        self.pcc_passed, self.pcc_message = assert_with_pcc(self.ref_confs, result_confs, valid_pcc)

    def dealloc_output(self):
        ttnn.deallocate(self.output_tensor[0])
        ttnn.deallocate(self.output_tensor[1])


class YOLOv4PerformantRunner:
    def __init__(self, device, device_batch_size=1, act_dtype=ttnn.bfloat16, weight_dtype=ttnn.bfloat16, model_location_generator=None, resolution=RESOLUTION):
        self.device = device
        self.resolution = resolution
        self.runner_infra = YOLOv4PerformanceRunnerInfra(
            device,
            device_batch_size,
            act_dtype,
            weight_dtype,
            model_location_generator,
            resolution=resolution,
        )

        (
            self.tt_inputs_host,
            sharded_mem_config_DRAM,
            self.input_mem_config,
        ) = self.runner_infra.setup_dram_sharded_input(device)
        self.tt_image_res = self.tt_inputs_host.to(device, sharded_mem_config_DRAM)

        self._capture_yolov4_trace_2cqs()

    def _capture_yolov4_trace_2cqs(self):
        # Initialize the op event so we can write
        self.op_event = ttnn.record_event(self.device, 0)

        # First run configures convs JIT
        ttnn.wait_for_event(1, self.op_event)
        ttnn.copy_host_to_device_tensor(self.tt_inputs_host, self.tt_image_res, 1)
        self.write_event = ttnn.record_event(self.device, 1)
        ttnn.wait_for_event(0, self.write_event)
        self.runner_infra.input_tensor = ttnn.to_memory_config(self.tt_image_res, self.input_mem_config)
        spec = self.runner_infra.input_tensor.spec
        self.op_event = ttnn.record_event(self.device, 0)
        self.runner_infra.run()
        self.runner_infra.validate()
        self.runner_infra.dealloc_output()

        # Optimized run
        ttnn.wait_for_event(1, self.op_event)
        ttnn.copy_host_to_device_tensor(self.tt_inputs_host, self.tt_image_res, 1)
        self.write_event = ttnn.record_event(self.device, 1)
        ttnn.wait_for_event(0, self.write_event)
        self.runner_infra.input_tensor = ttnn.to_memory_config(self.tt_image_res, self.input_mem_config)
        self.op_event = ttnn.record_event(self.device, 0)
        self.runner_infra.run()
        self.runner_infra.validate()

        # Capture
        ttnn.wait_for_event(1, self.op_event)
        ttnn.copy_host_to_device_tensor(self.tt_inputs_host, self.tt_image_res, 1)
        self.write_event = ttnn.record_event(self.device, 1)
        ttnn.wait_for_event(0, self.write_event)
        self.runner_infra.input_tensor = ttnn.to_memory_config(self.tt_image_res, self.input_mem_config)
        self.op_event = ttnn.record_event(self.device, 0)
        self.runner_infra.dealloc_output()
        trace_input_addr = self.runner_infra.input_tensor.buffer_address()
        self.tid = ttnn.begin_trace_capture(self.device, cq_id=0)
        self.runner_infra.run()
        self.input_tensor = ttnn.allocate_tensor_on_device(spec, self.device)
        ttnn.end_trace_capture(self.device, self.tid, cq_id=0)
        assert trace_input_addr == self.input_tensor.buffer_address()

    def _execute_yolov4_trace_2cqs_inference(self, tt_inputs_host=None):
        tt_inputs_host = self.tt_inputs_host if tt_inputs_host is None else tt_inputs_host
        ttnn.wait_for_event(1, self.op_event)
        ttnn.copy_host_to_device_tensor(tt_inputs_host, self.tt_image_res, 1)
        self.write_event = ttnn.record_event(self.device, 1)
        ttnn.wait_for_event(0, self.write_event)
        # TODO: Add in place support to ttnn to_memory_config
        self.input_tensor = ttnn.reshard(self.tt_image_res, self.input_mem_config, self.input_tensor)
        self.op_event = ttnn.record_event(self.device, 0)
        ttnn.execute_trace(self.device, self.tid, cq_id=0, blocking=False)
        ttnn.synchronize_device(self.device)

        ttnn_output_tensor = self.runner_infra.output_tensor

        return get_model_result(ttnn_output_tensor, self.resolution)

    def _validate(self, input_tensor, result_output_tensor):
        result_boxes, result_confs = result_output_tensor

        with torch.no_grad():
            torch_output_tensor = self.runner_infra.torch_model(input_tensor)
        ref_boxes, ref_confs = torch_result(torch_output_tensor, self.resolution)

        assert_with_pcc(ref_boxes, result_boxes, 0.99)
        assert_with_pcc(ref_confs, result_confs, 0.71)

    def run(self, torch_input_tensor, check_pcc=False):
        n, h, w, c = torch_input_tensor.shape
        torch_input_tensor = torch_input_tensor.reshape(1, 1, h * w * n, c)
        tt_inputs_host = ttnn.from_torch(torch_input_tensor, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
        tt_inputs_host = ttnn.pad(tt_inputs_host, [1, 1, n * h * w, 16], [0, 0, 0, 0], 0)
        output = self._execute_yolov4_trace_2cqs_inference(tt_inputs_host)

        if check_pcc:
            torch_input_tensor = torch_input_tensor.reshape(n, h, w, c)
            torch_input_tensor = torch_input_tensor.permute(0, 3, 1, 2)
            self._validate(torch_input_tensor, output)

        return output

    def release(self):
        ttnn.release_trace(self.device, self.tid)


def main():
    device = ttnn.open_device(device_id=0, l1_small_size=24576, trace_region_size=200000, num_command_queues=2)
    runner = YOLOv4PerformantRunner(device)
    torch.manual_seed(1)
    for _ in range(3):
        runner.run(torch.randn(1, *RESOLUTION, 3), check_pcc=True)
    runner.release()
    ttnn.close_device(device)
    print("traced outputs pass the PCC checks for 3 images")


if __name__ == "__main__":
    main()
