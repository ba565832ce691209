"""tt-transformers' decode trace with sampling on device: the compile run, inputs copied to
the device with copy_host_to_device, one decode trace per data-parallel model; with argmax on
device the trace feeds itself (the sampled tokens copied into the captured tokens input and the
positions advanced with plus_one inside the trace), so later steps replay without any host write
until the page table changes; the tokens are read back (blocking) before the next replay.

Upstream: tenstorrent/tt-metal models/tt_transformers/tt/generator.py@000ec121bba05be4a441d406318338dfff4b70d4
(Generator.decode_forward_text, _decode_forward_no_trace_text, _capture_trace_text,
_easy_trace_text) with copy_host_to_device from models/tt_transformers/tt/common.py and the
argmax_on_device tail of Transformer.ttnn_decode_forward and _increment_decode_positions_device
from models/tt_transformers/tt/model.py (same repository).
Changes:
  * loguru lines, prefill, the vision/multimodal paths and chat/text completion dropped; one
    data-parallel model (the generator's per-model loops kept); `release` added;
  * the Transformer -> a single-device stand-in with the generator's model interface
    (prepare_decode_inputs_host, prepare_inputs_decode, ttnn_decode_forward,
    process_output_decode): embedding, one attention block on a paged KV cache written with
    paged_update_cache at the device-side positions, LM head, untilize; with argmax_on_device the
    upstream tail (argmax, _increment_decode_positions_device with plus_one, ttnn.copy of the
    sampled tokens into the tokens input);
  * read_decode_output reads the tokens with a blocking to_torch;
  * a driver in place of the demo: ttnn.open_device; 32 users (a decode batch) decoding 4 steps from their first
    token, traced, and the same with enable_trace=False (the eager reference, on its own KV cache,
    the tokens and positions passed from the host each step); tokens compared, exit 1 on mismatch.
"""

import sys

import torch

import ttnn

USERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 32, 64, 2, 1, 32, 64
BLOCK, BLOCKS_PER_USER, STEPS = 32, 1, 4


def copy_host_to_device(host_tensors, device_tensors=None, mesh_device=None):
    """
    Helper function which copies host tensors to device tensors.
    If no device_tensors are provided, it creates new device tensors and returns them.
    """
    if device_tensors is None:
        assert mesh_device is not None, "mesh_device is required when device_tensors is None"
        ret = []
        for i in range(len(host_tensors)):
            on_device = ttnn.to_device(host_tensors[i], device=mesh_device) if host_tensors[i] else None
            ret.append(on_device)
        return ret
    else:
        for i in range(len(host_tensors)):
            if host_tensors[i] is None:
                assert device_tensors[i] is None
                continue
            ttnn.copy_host_to_device_tensor(host_tensors[i], device_tensors[i])
        return device_tensors


class SamplingParams:
    def __init__(self, temperature, top_k, top_p):
        self.temperature, self.top_k, self.top_p = temperature, top_k, top_p


class ModelArgs:
    def __init__(self, mesh_device):
        self.mesh_device = mesh_device
        self.max_batch_size = USERS


class Transformer:
    """Stand-in model: one attention block over a paged KV cache, then the LM head."""

    def __init__(self, device):
        torch.manual_seed(7)
        self.device = device

        def put(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
            return ttnn.from_torch(t, dtype=dtype, layout=layout, device=device)

        self.wqkv = put(torch.randn(HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD_DIM) / 8)
        self.wo = put(torch.randn(HEADS * HEAD_DIM, HIDDEN) / 8)
        self.lm_head = put(torch.randn(HIDDEN, VOCAB) / 8)
        self.embedding = put(torch.randn(VOCAB, HIDDEN), layout=ttnn.ROW_MAJOR_LAYOUT)
        self.pos_table = put(torch.randn(BLOCK * BLOCKS_PER_USER + 8, HIDDEN) / 4, layout=ttnn.ROW_MAJOR_LAYOUT)
        self.norm = put(torch.ones(1, 1, HIDDEN // 32, 32), layout=ttnn.ROW_MAJOR_LAYOUT)

    def prepare_decode_inputs_host(self, tokens, current_pos, page_table=None):
        tokens_host = ttnn.from_torch(tokens.reshape(1, USERS).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
        current_pos_host = ttnn.from_torch(current_pos.int(), dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)
        rot_idxs_host = ttnn.from_torch(current_pos.reshape(1, USERS).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
        page_table_host = ttnn.from_torch(page_table, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)
        return [tokens_host, current_pos_host, rot_idxs_host, None, page_table_host]

    def prepare_inputs_decode(self, tokens, current_pos, page_table=None):
        return copy_host_to_device(self.prepare_decode_inputs_host(tokens, current_pos, page_table), mesh_device=self.device)

    def _increment_decode_positions_device(self, current_pos, rot_mat_idxs):
        ttnn.plus_one(current_pos, skip_negative_entries=True)
        ttnn.plus_one(rot_mat_idxs)

    def ttnn_decode_forward(self, x, current_pos, rot_mat_idxs_global=None, rot_mat_idxs_local=None, page_table=None, kv_cache=None, argmax_on_device=False):
        h = ttnn.unsqueeze_to_4D(ttnn.embedding(x, self.embedding, layout=ttnn.TILE_LAYOUT))
        pos = ttnn.reshape(ttnn.embedding(rot_mat_idxs_global, self.pos_table, layout=ttnn.TILE_LAYOUT), [1, 1, USERS, HIDDEN])
        h = ttnn.add(h, pos)
        xqkv = ttnn.linear(ttnn.rms_norm(h, epsilon=1e-5, weight=self.norm), self.wqkv)
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(xqkv, num_heads=HEADS, num_kv_heads=KV_HEADS)
        k_cache, v_cache = kv_cache
        ttnn.experimental.paged_update_cache(k_cache, k, update_idxs_tensor=current_pos, page_table=page_table)
        ttnn.experimental.paged_update_cache(v_cache, v, update_idxs_tensor=current_pos, page_table=page_table)
        attn = ttnn.transformer.paged_scaled_dot_product_attention_decode(
            q, k_cache, v_cache, page_table, cur_pos_tensor=current_pos, scale=HEAD_DIM ** -0.5)
        h = ttnn.add(h, ttnn.linear(ttnn.experimental.nlp_concat_heads_decode(attn, num_heads=HEADS), self.wo))
        tt_logits = ttnn.linear(ttnn.rms_norm(h, epsilon=1e-5, weight=self.norm), self.lm_head)

        tt_logits = ttnn.untilize(tt_logits, use_multicore=True)

        if argmax_on_device:
            tt_logits = ttnn.argmax(tt_logits, dim=3, keepdim=True, use_multicore=True)

            # Update device tensors for the next iteration
            self._increment_decode_positions_device(current_pos, rot_mat_idxs_global)

            # Update input tokens with sampled tokens for the next iteration
            ttnn.copy(tt_logits.reshape(x.shape), x)

        return tt_logits

    def process_output_decode(self, tt_out, B, S=1, is_tokens=False):
        return ttnn.to_torch(tt_out).reshape(-1)[:B]


class Generator:
    def __init__(self, model, model_args, mesh_device, tokenizer=None, formatter=None):
        self.model = model
        self.model_args = model_args
        self.mesh_device = mesh_device
        self.tokenizer = tokenizer
        self.formatter = formatter
        self.data_parallel = len(self.model)
        self.prev_page_table = None

    def decode_forward_text(
        self,
        tokens,
        start_pos,
        page_table=None,
        kv_cache=None,
        enable_trace=True,
        read_from_device=True,
        sampling_params: SamplingParams = None,  # Should be None if not greedy decoding / sampling on device.
    ):
        assert (
            sampling_params is None or sampling_params.temperature == 0
        ), "Currently only supporting greedy decoding (temperature=0) on device"
        argmax_on_device = sampling_params is not None and sampling_params.temperature == 0

        B = tokens.shape[0]
        tokens = torch.chunk(tokens, self.data_parallel, 0)
        start_pos = torch.chunk(start_pos, self.data_parallel, 0)
        page_table = torch.chunk(page_table, self.data_parallel, 0) if page_table is not None else None

        decode_kwargs = {
            "current_pos": start_pos,
            "tokens": tokens,
            "page_table": page_table,
            "kv_cache": kv_cache,
            "argmax_on_device": argmax_on_device,
        }
        if enable_trace:
            tt_logits = self._easy_trace_text(**decode_kwargs)
        else:
            tt_logits = self._decode_forward_no_trace_text(**decode_kwargs)

        if read_from_device:
            to_host = self.read_decode_output(tt_logits, B, is_tokens=(sampling_params is not None))
            return to_host
        else:
            return tt_logits

    def _decode_forward_no_trace_text(self, tokens, current_pos, page_table=None, kv_cache=None, argmax_on_device=False):
        """
        Performs text decode step.
        Returns tt_logits on device
        """
        tt_logits = []

        tt_tokens = []
        tt_current_pos = []
        tt_rot_mat_idxs_global = []
        tt_rot_mat_idxs_local = []
        tt_page_table = []

        for i in range(self.data_parallel):
            user_page_table = page_table[i] if page_table is not None else None
            model_i = self.model[i]
            (
                tt_tokens_i,
                tt_current_pos_i,
                tt_rot_mat_idxs_global_i,
                tt_rot_mat_idxs_local_i,
                tt_page_table_i,
            ) = model_i.prepare_inputs_decode(tokens[i], current_pos[i], user_page_table)
            tt_tokens.append(tt_tokens_i)
            tt_current_pos.append(tt_current_pos_i)
            tt_rot_mat_idxs_global.append(tt_rot_mat_idxs_global_i)
            tt_rot_mat_idxs_local.append(tt_rot_mat_idxs_local_i)
            tt_page_table.append(tt_page_table_i)

        for i in range(self.data_parallel):
            user_kv_cache = kv_cache[i] if kv_cache is not None else None
            tt_logits_i = self.model[i].ttnn_decode_forward(
                tt_tokens[i],
                tt_current_pos[i],
                rot_mat_idxs_global=tt_rot_mat_idxs_global[i],
                rot_mat_idxs_local=tt_rot_mat_idxs_local[i],
                page_table=tt_page_table[i],
                kv_cache=user_kv_cache,
                argmax_on_device=argmax_on_device,
            )
            tt_logits.append(tt_logits_i)

        return tt_logits

    def _capture_trace_text(self, tokens, current_pos, page_table=None, kv_cache=None, argmax_on_device=False):
        """
        Captures a trace for the decode_forward method.
        """

        # Compile run
        self._decode_forward_no_trace_text(
            tokens, current_pos, page_table=page_table, kv_cache=kv_cache, argmax_on_device=argmax_on_device
        )

        # Get inputs ready for trace run
        device_inputs = []
        tt_out_trace = []
        trace_ids = {}
        for i in range(self.data_parallel):
            user_page_table = page_table[i] if page_table is not None else None
            host_inputs = self.model[i].prepare_decode_inputs_host(
                tokens[i], current_pos[i], page_table=user_page_table
            )

            device_inputs_i = copy_host_to_device(host_inputs, mesh_device=self.model_args[i].mesh_device)
            device_inputs.append(device_inputs_i)

        for i in range(self.data_parallel):
            trace_id = ttnn.begin_trace_capture(self.model_args[i].mesh_device, cq_id=0)
            trace_ids[i] = trace_id
            user_kv_cache = kv_cache[i] if kv_cache is not None else None
            tt_out_trace.append(
                self.model[i].ttnn_decode_forward(
                    *device_inputs[i], kv_cache=user_kv_cache, argmax_on_device=argmax_on_device
                )
            )
            ttnn.end_trace_capture(self.model_args[i].mesh_device, trace_id, cq_id=0)
        return trace_ids, tt_out_trace, *device_inputs

    def _easy_trace_text(self, tokens, current_pos, page_table=None, kv_cache=None, argmax_on_device=False):
        """
        Tracing is easy! Just call this method and we'll handle tracing for you.
        """
        if not hasattr(self, "trace_ids_text"):
            trace_ids, tt_out_trace, *device_inputs = self._capture_trace_text(
                tokens, current_pos, page_table=page_table, kv_cache=kv_cache, argmax_on_device=argmax_on_device
            )
            self.trace_ids_text = trace_ids
            self.trace_inputs_text = device_inputs
            self.trace_output_text = tt_out_trace

        reset_inputs = not argmax_on_device
        if self.prev_page_table is None or any(
            not torch.equal(prev, curr) for prev, curr in zip(self.prev_page_table, page_table)
        ):
            reset_inputs = True
            self.prev_page_table = page_table

        if reset_inputs:
            for i in range(self.data_parallel):
                user_page_table = page_table[i] if page_table is not None else None
                host_inputs_i = self.model[i].prepare_decode_inputs_host(tokens[i], current_pos[i], user_page_table)

                copy_host_to_device(
                    host_tensors=host_inputs_i,
                    device_tensors=self.trace_inputs_text[i],
                )

        for i, trace_id in self.trace_ids_text.items():
            ttnn.execute_trace(self.model_args[i].mesh_device, trace_id, cq_id=0, blocking=False)

        return self.trace_output_text

    def read_decode_output(self, tt_logits, unpadded_batch, is_tokens=False):
        return torch.cat([self.model[i].process_output_decode(tt_logits[i], unpadded_batch, is_tokens=is_tokens) for i in range(self.data_parallel)])

    def release(self):
        if hasattr(self, "trace_ids_text"):
            for i, trace_id in self.trace_ids_text.items():
                ttnn.release_trace(self.model_args[i].mesh_device, trace_id)


def generate(device, enable_trace, first_tokens, page_table):
    model = Transformer(device)
    blocks = USERS * BLOCKS_PER_USER
    kv_cache = [[ttnn.from_torch(torch.zeros(blocks, KV_HEADS, BLOCK, HEAD_DIM), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
                 for _ in range(2)]]
    generator = Generator([model], [ModelArgs(device)], device)
    greedy = SamplingParams(temperature=0.0, top_k=-1, top_p=1.0)
    tokens, current_pos = first_tokens, torch.zeros(USERS, dtype=torch.long)
    out = [tokens.clone()]
    for _ in range(STEPS):
        tokens = generator.decode_forward_text(tokens, current_pos, page_table=page_table, kv_cache=kv_cache,
                                               enable_trace=enable_trace, sampling_params=greedy).long()
        current_pos = current_pos + 1
        out.append(tokens.clone())
    generator.release()
    return torch.stack(out)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=400000)
    torch.manual_seed(0)
    first_tokens = torch.randint(0, VOCAB, (USERS,))
    page_table = torch.randperm(USERS * BLOCKS_PER_USER).reshape(USERS, BLOCKS_PER_USER).int()
    eager = generate(device, False, first_tokens, page_table)
    traced = generate(device, True, first_tokens, page_table)
    ttnn.close_device(device)
    same = torch.equal(eager, traced)
    print(f"traced tokens == eager tokens ({USERS} users, {STEPS} decode steps): {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
