"""Tenstorrent's own trace code, recorded on the emulator and checked as a careful engineer would.

Each program in programs/ is written from real tt-metal / tt-transformers trace code (its header
names the upstream file, the commit read and every change). A clean program must run to the end
(it checks traced == eager, or upstream's own PCC check, and exits non-zero on a mismatch) and
get no error or warning from `ttrecord check`. Each program also has mutants: one realistic
mistake injected by replacing exact pieces of its text (VARIANTS), written into a temporary folder
at test time; a mutant must get exactly one error, with the declared rule, at the line where the
fix goes (found by a text unique in the mutated program, so the expectation does not rot when
lines move). `python tests/realcode/test_realcode.py PROGRAM/VARIANT FOLDER` writes one mutant
out to reproduce it by hand. Programs that use two command
queues also run under the emulator's adversarial queue order, where any missing event goes the
wrong way, and must still compute traced == eager.

Every program and mutant is recorded once per test run, by the one test that asserts on it.
KNOWN_GAPS lists the cases that fail today because of an emulator or analysis gap; each is a
strict xfail, so fixing the gap turns it into a failure that asks for the entry's removal.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.spawns

PROGRAMS = Path(__file__).resolve().parent / "programs"
TTRECORD = Path(sys.executable).with_name("ttrecord")
TIMEOUT = 300


@dataclass(frozen=True)
class Variant:
    """One mistake injected into a clean program: each (old, new) edit replaces a text occurring
    exactly once in it; `rule` is expected exactly once as an error, on the line of the mutated
    program that contains `at` (a text occurring exactly once there)."""

    program: str
    id: str
    rule: str
    at: str
    edits: tuple[tuple[str, str], ...]

    @property
    def key(self) -> str:
        return f"{self.program}/{self.id}"


def mutant(program: str, id: str, old: str, new: str, rule: str, at: str, *more: tuple[str, str]) -> Variant:
    return Variant(program, id, rule, at, ((old, new), *more))


VARIANTS = [
    # tests/ttnn test_single_device_trace.py
    mutant("single_device_trace", "input_as_new_tensor",
            "ttnn.copy_host_to_device_tensor(ttnn_input_tensor_0, input_0_dev)",
            "input_0_dev = ttnn.from_torch(torch_input_tensor_0, layout=ttnn.TILE_LAYOUT, device=device)",
            "TR005", "input_0_dev = ttnn.from_torch("),
    mutant("single_device_trace", "readback_in_capture",
            "    output_tensor = run_op_chain(input_0_dev, input_1_dev)\n",
            "    output_tensor = run_op_chain(input_0_dev, input_1_dev)\n"
            "    print(\"captured output\", ttnn.to_torch(output_tensor).float().mean().item())\n",
            "TR001", "print(\"captured output\""),
    mutant("single_device_trace", "no_compile_run",
            "    run_op_chain(input_0_dev, input_1_dev)\n\n    # Capture Trace",
            "    # Capture Trace",
            "TR013", "return ttnn.neg(ttnn.add("),
    # tests/ttnn test_single_device_trace.py, two traces
    mutant("single_device_multi_trace", "second_chain_not_compiled",
           "    run_op_chain_1(input_0_dev, input_1_dev, weight_dev)\n\n", "\n",
           "TR013", "return ttnn.gelu(ttnn.add(ttnn.tanh("),
    mutant("single_device_multi_trace", "input_as_new_tensor",
           "        ttnn.copy_host_to_device_tensor(ttnn_input_tensor_1, input_1_dev)\n",
           "        input_1_dev = ttnn.from_torch(torch_input_tensor_1, layout=ttnn.TILE_LAYOUT, device=device)\n",
           "TR005", "input_1_dev = ttnn.from_torch(torch_input_tensor_1"),
    # tests/ttnn test_single_device_trace.py, release twice
    mutant("trace_release_idempotent", "execute_after_release",
           "    ttnn.execute_trace(mesh_device=device, trace_id=trace_id, cq_id=0, blocking=True)\n    ttnn.release_trace(device, trace_id)\n",
           "    ttnn.release_trace(device, trace_id)\n    ttnn.execute_trace(mesh_device=device, trace_id=trace_id, cq_id=0, blocking=True)\n",
           "TR009", "ttnn.execute_trace(mesh_device=device"),
    mutant("trace_release_idempotent", "no_compile_run",
           "    ttnn.neg(input_dev)\n\n", "\n",
           "TR013", "    output = ttnn.neg(input_dev)"),
    # models/tt_cnn TracedModelExecutor
    mutant("cnn_traced_executor", "reshard_not_in_place",  # and the executor's address check gone with it
            "self.l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config, self.l1_input_tensor)\n"
            "\n        # Validate address consistency with captured trace\n        actual_addr = self.l1_input_tensor.buffer_address()\n"
            "        if actual_addr != self.input_trace_addr:\n",
            "self.l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config)\n"
            "\n        actual_addr = self.l1_input_tensor.buffer_address()\n        if actual_addr is None:\n",
            "TR005", "self.l1_input_tensor = ttnn.reshard("),
    mutant("cnn_traced_executor", "release_before_execute",
            "    traced = [ttnn.to_torch(output) for output in pipe.enqueue(host_inputs).pop_all()]\n    pipe.cleanup()\n",
            "    pipe.cleanup()\n    traced = [ttnn.to_torch(output) for output in pipe.enqueue(host_inputs).pop_all()]\n",
            "TR009", "ttnn.execute_trace(self.device"),
    # tt_cnn TracedModelExecutor running a Conv-wrapper model
    mutant("cnn_conv_wrapper_traced_executor", "release_before_execute",
           "    traced = [ttnn.to_torch(output) for output in pipe.enqueue(host_inputs).pop_all()]\n    pipe.cleanup()\n",
           "    pipe.cleanup()\n    traced = [ttnn.to_torch(output) for output in pipe.enqueue(host_inputs).pop_all()]\n",
           "TR009", "ttnn.execute_trace(self.device"),
    mutant("cnn_conv_wrapper_traced_executor", "debug_read_between_layers",
           "            x, _, _ = conv(x)\n",
           "            x, _, _ = conv(x)\n            print(\"layer\", i, ttnn.to_torch(x).float().abs().mean().item())\n",
           "TR001", "print(\"layer\", i,"),
    # models/tt_cnn MultiCQTracedModelOverlappedInputExecutor
    mutant("cnn_two_cq_overlapped_input", "missing_wait_for_write",
            "        # Execute traced model\n        ttnn.wait_for_event(self.CQ_OPS_AND_OUTPUT_READ, write_event)\n",
            "        # Execute traced model\n",
            "TR012", "self.l1_input_tensor = ttnn.reshard(self.dram_input_tensor, self.l1_input_memory_config, self.l1_input_tensor)"),
    mutant("cnn_two_cq_overlapped_input", "missing_wait_for_ops",
            "        # Transfer input to device DRAM\n        ttnn.wait_for_event(self.CQ_INPUT_WRITE, self.op_event)\n"
            "        ttnn.copy_host_to_device_tensor(input_tensor, self.dram_input_tensor, cq_id=self.CQ_INPUT_WRITE)\n"
            "        write_event = ttnn.record_event(self.device, self.CQ_INPUT_WRITE)\n\n        # Execute traced model\n",
            "        # Transfer input to device DRAM\n"
            "        ttnn.copy_host_to_device_tensor(input_tensor, self.dram_input_tensor, cq_id=self.CQ_INPUT_WRITE)  # unordered\n"
            "        write_event = ttnn.record_event(self.device, self.CQ_INPUT_WRITE)\n\n        # Execute traced model\n",
            "TR012", "cq_id=self.CQ_INPUT_WRITE)  # unordered"),
    # models/tt_dit utils/tracing.py Tracer
    mutant("dit_tracer_denoise", "step_size_baked",  # a per-step Python scalar read by the traced function
           "        return ttnn.subtract(latent, ttnn.multiply(eps, DT))\n",
           "        return ttnn.subtract(latent, ttnn.multiply(eps, DT * self.schedule[0]))\n",
           "TR007", "ttnn.multiply(eps, DT * self.schedule[0])",
           ("        self.w2 = ttnn.from_torch(torch.randn(DIM, DIM) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)\n",
            "        self.w2 = ttnn.from_torch(torch.randn(DIM, DIM) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)\n"
            "        self.schedule = [1.0]\n"),
           ("        eager.append(ttnn.to_torch(latent))\n",
            "        eager.append(ttnn.to_torch(latent))\n        step.schedule[0] *= 0.5\n"),
           ("        traced.append(ttnn.to_torch(latent))\n",
            "        traced.append(ttnn.to_torch(latent))\n        step.schedule[0] *= 0.5\n")),
    mutant("dit_tracer_denoise", "outputs_kept_across_calls",  # the Tracer's caveat 2: outputs are overwritten in place
           "        latent = tracer(latent, host(t_emb))\n        traced.append(ttnn.to_torch(latent))\n",
           "        latent = tracer(latent, host(t_emb))\n        traced.append(latent)\n",
           "TR006", "traced = [ttnn.to_torch(t) for t in traced]",
           ("    tracer.release_trace()\n", "    traced = [ttnn.to_torch(t) for t in traced]\n    tracer.release_trace()\n")),
    # models/tt_dit utils/tracing.py @traced_function on a method
    mutant("dit_traced_function_method", "guidance_decay_in_python",  # Python state read by the traced method
           "        return ttnn.add(latent, ttnn.multiply(h, guidance_scale))\n",
           "        self.decay *= 0.9\n        return ttnn.add(latent, ttnn.multiply(h, guidance_scale * self.decay))\n",
           "TR007", "ttnn.multiply(h, guidance_scale * self.decay)",
           ("        self.mesh_device = mesh_device\n", "        self.mesh_device = mesh_device\n        self.decay = 1.0\n")),
    mutant("dit_traced_function_method", "debug_read_in_forward",
           "        shift = ttnn.silu(ttnn.linear(t_emb, self.w_t))\n",
           "        shift = ttnn.silu(ttnn.linear(t_emb, self.w_t))\n        print(\"shift\", ttnn.to_torch(shift).float().mean().item())\n",
           "TR001", "print(\"shift\""),
    # models/demos/whisper whisper_executor.py
    mutant("whisper_decoder_executor", "output_tensor_dropped",  # and the executor's address check gone with it
           "            device_input, self.l1_input_memory_config, output_tensor=self.l1_input_tensor\n",
           "            device_input, self.l1_input_memory_config\n",
           "TR005", "self.l1_input_tensor = ttnn.to_memory_config(",
           ("        if actual_addr != self.input_trace_addr:\n            raise RuntimeError(\n                f\"L1 input tensor address mismatch during execution: \"",
            "        if actual_addr is None:\n            raise RuntimeError(\n                f\"L1 input tensor address mismatch during execution: \"")),
    mutant("whisper_decoder_executor", "inputs_staged_after_capture",  # all decoder inputs uploaded up front
           "    for values in steps:\n        output = executor.execute(device_input(values))\n",
           "    staged = [device_input(values) for values in steps]\n    for staged_input in staged:\n        output = executor.execute(staged_input)\n",
           "TR004", "staged = [device_input(values) for values in steps]"),
    # tests/ttnn test_multi_device_trace.py
    mutant("multi_device_single_trace", "missing_event_before_read",
           "        event_sync(mesh_device, trace_cq, data_movement_cq)\n", "",
           "TR012", "ttnn_torch_output_tensor = ttnn.to_torch(\n            output_tensor,"),
    mutant("multi_device_single_trace", "input_as_new_tensor",
           "        ttnn.copy_host_to_device_tensor(ttnn_input_tensor_1, input_1_dev, cq_id=data_movement_cq)\n",
           "        input_1_dev = ttnn.to_device(ttnn_input_tensor_1, mesh_device)\n",
           "TR005", "input_1_dev = ttnn.to_device(ttnn_input_tensor_1, mesh_device)"),
    mutant("multi_device_multi_trace", "missing_event_before_execute",
           "        event_sync(mesh_device, data_movement_cq, trace_cq)\n        # Execute trace\n",
           "        # Execute trace\n",
           "TR012", "ttnn.execute_trace(mesh_device, tid, cq_id=trace_cq, blocking=False)"),
    mutant("multi_device_multi_trace", "missing_event_before_read",
           "        event_sync(mesh_device, trace_cq, data_movement_cq)\n        # Perform host All-Gather\n",
           "        # Perform host All-Gather\n",
           "TR012", "ttnn_torch_output_tensor = ttnn.to_torch(\n            output_tensor,\n"),
    # models/demos/yolov4 performant runner
    mutant("yolov4_performant_runner", "missing_wait_for_write",
           "        self.write_event = ttnn.record_event(self.device, 1)\n        ttnn.wait_for_event(0, self.write_event)\n"
           "        # TODO: Add in place support to ttnn to_memory_config\n",
           "        self.write_event = ttnn.record_event(self.device, 1)\n"
           "        # TODO: Add in place support to ttnn to_memory_config\n",
           "TR012", "self.input_tensor = ttnn.reshard(self.tt_image_res, self.input_mem_config, self.input_tensor)"),
    mutant("yolov4_performant_runner", "to_memory_config_not_in_place",  # what the TODO above the reshard asks for
           "        self.input_tensor = ttnn.reshard(self.tt_image_res, self.input_mem_config, self.input_tensor)\n",
           "        self.input_tensor = ttnn.to_memory_config(self.tt_image_res, self.input_mem_config)\n",
           "TR005", "self.input_tensor = ttnn.to_memory_config(self.tt_image_res, self.input_mem_config)"),
    # llama3_70b_galaxy generator: prefill traces per sequence length, decode trace
    mutant("llm_prefill_decode_generator", "prefill_inputs_as_new_tensors",
           "        device_inputs = copy_host_to_device(\n            host_tensors=host_inputs,\n            device_tensors=device_inputs,\n        )\n",
           "        device_inputs = copy_host_to_device(host_inputs, mesh_device=self.mesh_device)\n",
           "TR005", "        device_inputs = copy_host_to_device(host_inputs, mesh_device=self.mesh_device)\n\n        ttnn.execute_trace"),
    mutant("llm_prefill_decode_generator", "decode_read_before_event",
           "        ttnn.event_synchronize(read_event)\n", "",
           "TR012", "tokens = torch.argmax(ttnn.to_torch(logits)"),
    # tt-transformers llm_runtime TraceCompiler
    mutant("llm_runtime_trace_compiler", "refresh_rebinds_new_tensor",
           "            ttnn.copy_host_to_device_tensor(host_tokens(self.pending), artifact.persistent_inputs.values[\"tokens\"])\n",
           "            artifact.persistent_inputs.values[\"tokens\"] = ttnn.to_device(host_tokens(self.pending), self.model.device)\n",
           "TR005", "artifact.persistent_inputs.values[\"tokens\"] = ttnn.to_device("),
    mutant("llm_runtime_trace_compiler", "debug_read_in_capture",
           "    def capture(self, persistent):\n        return self.model.forward(persistent.values[\"tokens\"])\n",
           "    def capture(self, persistent):\n        output = self.model.forward(persistent.values[\"tokens\"])\n"
           "        print(self.operation, \"logits mean\", ttnn.to_torch(output).float().mean().item())\n        return output\n",
           "TR001", "print(self.operation, \"logits mean\""),
    # models/experimental/acestep pipeline: capture, replay, release per generation
    mutant("acestep_traced_denoise", "latent_not_read_back",  # the comment above the line says why it must be
           "            xt = solver.euler_step(tracer.inputs[\"xt\"], ttnn.clone(vt), t_curr - t_prev)\n",
           "            xt = solver.euler_step(xt, ttnn.clone(vt), t_curr - t_prev)\n",
           "TR004", "xt = solver.euler_step(xt, ttnn.clone(vt), t_curr - t_prev)"),
    mutant("acestep_traced_denoise", "trace_not_released",
           "        tracer.release_trace()\n        return xt\n", "        return xt\n",
           "TR009", "trace_ids = tuple(ttnn.begin_trace_capture(d, cq_id=cq_id) for d in self._devices)"),
    # tt_transformers generator decode trace with sampling on device
    mutant("tt_transformers_decode_on_device_sampling", "reset_into_new_tensors",
           "                copy_host_to_device(\n                    host_tensors=host_inputs_i,\n"
           "                    device_tensors=self.trace_inputs_text[i],\n                )\n",
           "                self.trace_inputs_text[i] = copy_host_to_device(host_inputs_i, mesh_device=self.model_args[i].mesh_device)\n",
           "TR005", "self.trace_inputs_text[i] = copy_host_to_device(host_inputs_i"),
    mutant("tt_transformers_decode_on_device_sampling", "debug_logits_print",
           "        tt_logits = ttnn.untilize(tt_logits, use_multicore=True)\n",
           "        tt_logits = ttnn.untilize(tt_logits, use_multicore=True)\n"
           "        print(\"max logit\", ttnn.to_torch(tt_logits).float().max().item())\n",
           "TR001", "print(\"max logit\""),
    # models/demos/vit perf_e2e_vit.py run_trace_2cq_model: output copied to DRAM, read on CQ 1
    mutant("vit_trace_2cq_dram_output", "read_before_dram_copy",
           "        ttnn.wait_for_event(1, last_op_event)\n        outputs.append(", "        outputs.append(",
           "TR012", "outputs.append(ttnn.from_device(output_tensor_dram, blocking=False, cq_id=1))"),
    mutant("vit_trace_2cq_dram_output", "dram_copy_before_read_done",
           "        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=False)\n        ttnn.wait_for_event(0, read_event)\n",
           "        ttnn.execute_trace(device, trace_id, cq_id=0, blocking=False)\n",
           "TR012", "output_tensor_dram = ttnn.to_memory_config(test_infra.output_tensor, ttnn.DRAM_MEMORY_CONFIG)\n        last_op_event"),
    mutant("vit_trace_2cq_dram_output", "reshard_not_in_place",
           "        input_l1_tensor = ttnn.reshard(tt_image_res, input_mem_config, input_l1_tensor)\n",
           "        input_l1_tensor = ttnn.reshard(tt_image_res, input_mem_config)\n",
           "TR005", "input_l1_tensor = ttnn.reshard(tt_image_res, input_mem_config)"),
    # models/demos/sentence_bert performant runner: four inputs, copied warm-up blocks
    mutant("sentence_bert_four_input_runner", "token_ids_reshard_not_in_place",
           "        self.ttnn_token_ids = ttnn.reshard(self.tt_tokens, self.input_mem_config, self.ttnn_token_ids)\n",
           "        self.ttnn_token_ids = ttnn.reshard(self.tt_tokens, self.input_mem_config)\n",
           "TR005", "self.ttnn_token_ids = ttnn.reshard(self.tt_tokens, self.input_mem_config)"),
    mutant("sentence_bert_four_input_runner", "missing_wait_for_write",
           "        self.write_event = ttnn.record_event(self.device, 1)\n        ttnn.wait_for_event(0, self.write_event)\n"
           "        self.ttnn_input_ids = ttnn.reshard(",
           "        self.write_event = ttnn.record_event(self.device, 1)\n        self.ttnn_input_ids = ttnn.reshard(",
           "TR012", "self.ttnn_input_ids = ttnn.reshard("),
    mutant("sentence_bert_four_input_runner", "outputs_kept_across_requests",  # the runner returns the trace's output
           "        traced.append(ttnn.to_torch(output))\n", "        traced.append(output)\n",
           "TR006", "traced = [ttnn.to_torch(t) for t in traced]",
           ("    runner.release()\n", "    traced = [ttnn.to_torch(t) for t in traced]\n    runner.release()\n")),
    # models/demos/deepseek_v3 paged_update_cache trace mode: warm-up and main traces of in-place updates
    mutant("paged_update_cache_trace_mode", "warmup_released_before_execute",
           "            ttnn.execute_trace(mesh_device, trace_id_warmup, blocking=False)\n            ttnn.release_trace(mesh_device, trace_id_warmup)\n",
           "            ttnn.release_trace(mesh_device, trace_id_warmup)\n            ttnn.execute_trace(mesh_device, trace_id_warmup, blocking=False)\n",
           "TR009", "ttnn.execute_trace(mesh_device, trace_id_warmup, blocking=False)"),
    mutant("paged_update_cache_trace_mode", "debug_read_in_op_fn",
           "        lambda: paged_update_cache_ttnn(kvpe_cache, tt_kvpe, update_idxs_tensor, page_table, mesh_shape, row_idx),\n",
           "        lambda: print(ttnn.to_torch(paged_update_cache_ttnn(kvpe_cache, tt_kvpe, update_idxs_tensor, page_table, mesh_shape, row_idx)).abs().sum()),\n",
           "TR001", "lambda: print(ttnn.to_torch("),
    # models/demos/t3000/llama2_70b llama_generation.py as vLLM drives it: _easy_trace reused across requests
    mutant("llama_vllm_easy_trace_requests", "kv_cache_per_request",
           "    kv_cache = [[ttnn.from_torch(torch.zeros(USERS * BLOCKS_PER_USER, 1, BLOCK, HEAD_DIM), dtype=ttnn.bfloat16,\n"
           "                                 layout=ttnn.TILE_LAYOUT, device=device) for _ in range(2)]]\n"
           "    outputs = []\n    for prompts, prompt_lens, page_table in requests:\n",
           "    outputs = []\n    for prompts, prompt_lens, page_table in requests:\n"
           "        kv_cache = [[ttnn.from_torch(torch.zeros(USERS * BLOCKS_PER_USER, 1, BLOCK, HEAD_DIM), dtype=ttnn.bfloat16,\n"
           "                                     layout=ttnn.TILE_LAYOUT, device=device) for _ in range(2)]]\n",
           "TR005", "kv_cache = [[ttnn.from_torch("),
    mutant("llama_vllm_easy_trace_requests", "positions_as_new_tensor",
           "        ttnn.copy_host_to_device_tensor(updated_cache_idxs_tt, cache_idxs_tt)\n",
           "        self.trace_inputs[\"cache_idxs_tt\"] = ttnn.to_device(updated_cache_idxs_tt, self.mesh_device)\n",
           "TR005", "self.trace_inputs[\"cache_idxs_tt\"] = ttnn.to_device("),
    # tests/nightly/t3000/ccl test_minimal_all_gather_async.py: sub-device manager, global semaphores, trace
    mutant("ccl_all_gather_async_sub_device_trace", "trace_not_released",  # upstream's own form
           "        ttnn.release_trace(t3k_mesh_device, trace_id)\n", "",
           "TR009", "trace_id = ttnn.begin_trace_capture(t3k_mesh_device, cq_id=0)"),
    mutant("ccl_all_gather_async_sub_device_trace", "output_buffer_made_per_call",
           "            persistent_output_buffer=persistent_output_buffers[i],\n",
           "            persistent_output_buffer=ttnn.from_torch(torch.zeros(ag_output_shape), device=t3k_mesh_device, layout=ttnn.TILE_LAYOUT,\n"
           "                                                     dtype=ag_input_dtype, memory_config=mem_config_ag,\n"
           "                                                     mesh_mapper=ttnn.ReplicateTensorToMesh(t3k_mesh_device)),\n",
           "TR002", "persistent_output_buffer=ttnn.from_torch("),
    # models/demos/ufld_v2 performant runner, data parallel on a mesh (from_host_shards inputs)
    mutant("ufld_data_parallel_mesh_runner", "missing_wait_for_write",
           "        self.write_event = ttnn.record_event(self.device, 1)\n        ttnn.wait_for_event(0, self.write_event)\n"
           "        if self.input_tensor.is_sharded():\n",
           "        self.write_event = ttnn.record_event(self.device, 1)\n        if self.input_tensor.is_sharded():\n",
           "TR012", "self.input_tensor = ttnn.reshard(self.tt_image_res, self.input_mem_config, self.input_tensor)"),
    mutant("ufld_data_parallel_mesh_runner", "interleaved_input_never_refreshed",  # the runner copies only a sharded input
           "        input_mem_config = ttnn.create_sharded_memory_config(\n            [n, c, h, w],\n            core_grid,\n"
           "            ttnn.ShardStrategy.HEIGHT,\n        )\n",
           "        input_mem_config = ttnn.L1_MEMORY_CONFIG\n",
           "TR005", "ttnn.execute_trace(self.device, self.tid, cq_id=0, blocking=False)"),
    mutant("ufld_data_parallel_mesh_runner", "reshard_not_in_place",
           "            self.input_tensor = ttnn.reshard(self.tt_image_res, self.input_mem_config, self.input_tensor)\n",
           "            self.input_tensor = ttnn.reshard(self.tt_image_res, self.input_mem_config)\n",
           "TR005", "self.input_tensor = ttnn.reshard(self.tt_image_res, self.input_mem_config)"),
    # tests/ttnn/tracy test_trace_runs.py: the warm-up is a copy of the captured statement, its
    # output read back and deallocated before the capture
    mutant("tracy_matmul_copied_warm_up", "no_warm_up",
           "    warm = ttnn.matmul(a, b, core_grid=ttnn.CoreGrid(y=8, x=8))\n"
           "    eager = ttnn.to_torch(warm)\n    ttnn.deallocate(warm)\n",
           "    eager = (torch_a.float() @ torch_b.float()).bfloat16()\n",
           "TR013", "out = ttnn.matmul("),
    mutant("tracy_matmul_copied_warm_up", "warm_up_in_l1",
           "warm = ttnn.matmul(a, b, core_grid=ttnn.CoreGrid(y=8, x=8))",
           "warm = ttnn.matmul(a, b, core_grid=ttnn.CoreGrid(y=8, x=8), memory_config=ttnn.L1_MEMORY_CONFIG)",
           "TR013", "out = ttnn.matmul("),
    mutant("tracy_matmul_copied_warm_up", "readback_in_capture",
           "        out = ttnn.matmul(a, b, core_grid=ttnn.CoreGrid(y=8, x=8))\n",
           "        out = ttnn.matmul(a, b, core_grid=ttnn.CoreGrid(y=8, x=8))\n"
           "        print(\"captured\", ttnn.to_torch(out).float().mean().item())\n",
           "TR001", "print(\"captured\""),
]

# program, or program/variant id, or program@adversarial -> why it fails today (each one an entry
# of the gap list kept with the analysis and emulator work).
KNOWN_GAPS: dict[str, str] = {}


def _program_names() -> list[str]:
    return sorted(p.stem for p in PROGRAMS.glob("*.py"))


def _uses_two_queues(name: str) -> bool:
    return "num_command_queues=2" in (PROGRAMS / f"{name}.py").read_text()


def _params(keys: list[str], values: list[object] | None = None) -> list:
    params = []
    for key, value in zip(keys, values or keys):
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[key])] if key in KNOWN_GAPS else []
        params.append(pytest.param(value, id=key, marks=marks))
    return params


@dataclass
class Recording:
    run: subprocess.CompletedProcess
    findings: list[dict]

    def describe(self) -> str:
        lines = [f"program exit {self.run.returncode}", self.run.stdout[-2000:], self.run.stderr[-3000:]]
        lines += [f"{f['severity']} {f['id']} {f['file']}:{f['line']} {f['message']}" for f in self.findings]
        return "\n".join(lines)

    def at(self, *severities: str) -> list[dict]:
        return [f for f in self.findings if f["severity"] in severities]


def record(program: Path, folder: Path, **env: str) -> Recording:
    """`ttrecord run --backend emulator` the program, then `ttrecord check --format json`."""
    session = folder / f"{program.stem}.db"
    child_env = {**os.environ, **env}
    child_env.pop("TTRECORD_EMULATOR_FAULT", None)
    run = subprocess.run([str(TTRECORD), "run", "--backend", "emulator", "-o", str(session), str(program)],
                         cwd=folder, capture_output=True, text=True, timeout=TIMEOUT, env=child_env)  # fmt: skip
    assert session.exists(), f"no session recorded\n{run.stdout}\n{run.stderr}"
    check = subprocess.run([str(TTRECORD), "check", str(session), "--format", "json", "--allow-incomplete"],
                           capture_output=True, text=True, timeout=TIMEOUT)  # fmt: skip
    assert check.returncode in (0, 1), f"check failed ({check.returncode}): {check.stderr}"
    return Recording(run, json.loads(check.stdout)["findings"])


@pytest.mark.parametrize("name", _params(_program_names()))
def test_clean_program_runs_and_gets_no_error_or_warning(name: str, tmp_path: Path) -> None:
    rec = record(PROGRAMS / f"{name}.py", tmp_path)
    assert rec.run.returncode == 0, rec.describe()
    assert rec.at("error", "warning") == [], rec.describe()


_TWO_QUEUE = [n for n in _program_names() if _uses_two_queues(n)]


@pytest.mark.parametrize("name", _params([f"{n}@adversarial" for n in _TWO_QUEUE], _TWO_QUEUE))
def test_two_queue_program_computes_the_same_under_adversarial_queues(name: str, tmp_path: Path) -> None:
    rec = record(PROGRAMS / f"{name}.py", tmp_path, TTRECORD_EMULATOR_QUEUES="adversarial")
    assert rec.run.returncode == 0, rec.describe()  # the program exits 1 when traced != eager


def mutate(variant: Variant, folder: Path) -> tuple[Path, int]:
    """The mutated program written into `folder`, and the line its finding is expected on."""
    mutated = (PROGRAMS / f"{variant.program}.py").read_text()
    for old, new in variant.edits:
        assert mutated.count(old) == 1, f"{variant.key}: {old!r} is not there exactly once"
        mutated = mutated.replace(old, new)
    assert mutated.count(variant.at) == 1, f"{variant.key}: the expected line's text is not unique"
    line = mutated[: mutated.index(variant.at)].count("\n") + 1
    path = folder / f"{variant.program}.py"
    path.write_text(mutated)
    return path, line


@pytest.mark.parametrize("variant", _params([v.key for v in VARIANTS], list(VARIANTS)))
def test_injected_mistake_gives_one_error_at_the_fix(variant: Variant, tmp_path: Path) -> None:
    path, line = mutate(variant, tmp_path)
    rec = record(path, tmp_path)
    errors = rec.at("error")
    assert [(f["id"], f["line"]) for f in errors] == [(variant.rule, line)], rec.describe()
    assert Path(errors[0]["file"]).name == path.name, rec.describe()


def test_every_program_is_sourced_and_has_two_mutants() -> None:
    names = _program_names()
    assert len(names) >= 15
    for name in names:
        header = (PROGRAMS / f"{name}.py").read_text().split('"""')[1]
        assert re.search(r"Upstream: \S+ \S+@[0-9a-f]{40}", header), f"{name}: no upstream path@commit"
        assert "Changes:" in header, f"{name}: no list of changes"
        assert sum(v.program == name for v in VARIANTS) >= 2, f"{name}: fewer than two mutants"


def test_known_gaps_name_real_cases() -> None:
    cases = {*_program_names(), *(f"{n}@adversarial" for n in _TWO_QUEUE), *(v.key for v in VARIANTS)}
    assert set(KNOWN_GAPS) <= cases, set(KNOWN_GAPS) - cases
    assert len({v.key for v in VARIANTS}) == len(VARIANTS)


if __name__ == "__main__":  # write one mutant out, to reproduce a case by hand
    if len(sys.argv) != 3 or sys.argv[1] not in {v.key for v in VARIANTS}:
        sys.exit("usage: python tests/realcode/test_realcode.py PROGRAM/VARIANT FOLDER")
    folder = Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    written, expected = mutate(next(v for v in VARIANTS if v.key == sys.argv[1]), folder)
    print(f"{written} (expected finding on line {expected})")
