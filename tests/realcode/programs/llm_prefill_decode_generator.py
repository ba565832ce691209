"""An LLM generator with prefill traces keyed by the padded sequence length and one decode trace:
each prefill trace is captured after two copies of the same warm-up block (compile runs), its
inputs (tokens, user id, page table) refreshed with copy_host_to_device before every replay;
the decode trace's inputs (tokens, positions, rotary indices, page table) likewise; the prefill
output read with a blocking to_torch, the decode output with cpu(blocking=False) + record_event,
both before the next replay.

Upstream: tenstorrent/tt-metal models/demos/llama3_70b_galaxy/tt/generator.py@c9bcbd99fc1febdac3c0646fee3f9c9333b1463f
(Generator: prefill_forward_text, prefill_forward_single_user_text, _easy_trace_prefill,
_capture_trace_prefill, _prefill_forward_trace_text, decode_forward_text,
_decode_forward_no_trace_text, _capture_trace_text, _decode_forward_trace_text, _easy_trace_text,
read_decode_output, _get_prefill_user_page_table) and copy_host_to_device from
models/tt_transformers/tt/common.py (same repository).
Changes:
  * loguru lines, the chunked-prefill branch (prompts here are shorter than a chunk), chat/text
    completion and __del__ dropped; `release` added to release the traces at the end;
  * the Llama 70B galaxy model (TtTransformer with its CCL, prefetcher and sampling) -> a
    small single-device stand-in with the generator's model interface (switch_mode,
    is_prefill_setup/is_decode_setup, tt_ccl.support_seqlens, prepare_*_inputs_host,
    prepare_inputs_*, transform_prefill_inputs_device, ttnn_*_forward, process_output_*): one
    attention block on a paged KV cache (paged_fill_cache with the user id as a device tensor in
    prefill, paged_update_cache / paged SDPA decode at the device-side positions in decode) and
    an LM head; logits, argmax on the host;
  * get_padded_prefill_len pads to 32 or 64 (not 128 / 1024); the user page table padded to
    the 32 users of a decode batch, as upstream;
  * a driver in place of the demo: ttnn.open_device; 4 users prefilled (prompt lengths giving
    both trace keys), then 3 decode steps with reset_inputs=True (host sampling); the same with
    a generator whose model supports no traced sequence length and enable_trace=False (the
    eager reference, on its own KV cache); tokens compared, exit 1 on mismatch.
"""

import math
import sys
from collections import defaultdict

import torch

import ttnn

USERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 32, 64, 2, 1, 32, 64
BLOCK, BLOCKS_PER_USER, STEPS = 32, 3, 3
PROMPT_LENS = [20, 50, 31, 64]


def get_padded_prefill_len(seq_len: int) -> int:
    return 32 if seq_len <= 32 else 64


def get_block_size(kv_cache):
    return kv_cache[0].shape[2]


def num_blocks_in_seq(seq_len, block_size):
    return math.ceil(seq_len / block_size)


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


class TtCCL:
    def __init__(self, support_seqlens):
        self.support_seqlens = support_seqlens


class TtTransformer:
    """Stand-in model: one attention block over a paged KV cache, then the LM head."""

    def __init__(self, device, support_seqlens):
        torch.manual_seed(7)
        self.device = device
        self.tt_ccl = TtCCL(support_seqlens)
        self.is_prefill_setup = False
        self.is_decode_setup = False

        def put(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
            return ttnn.from_torch(t, dtype=dtype, layout=layout, device=device)

        self.wqkv = put(torch.randn(HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD_DIM) / 8)
        self.wo = put(torch.randn(HEADS * HEAD_DIM, HIDDEN) / 8)
        self.lm_head = put(torch.randn(HIDDEN, VOCAB) / 8)
        self.embedding = put(torch.randn(VOCAB, HIDDEN), layout=ttnn.ROW_MAJOR_LAYOUT)
        positions = torch.randn(BLOCK * BLOCKS_PER_USER, HIDDEN) / 4
        self.pos_table = put(positions, layout=ttnn.ROW_MAJOR_LAYOUT)
        self.pos_tile = put(positions.reshape(1, 1, -1, HIDDEN))
        self.norm = put(torch.ones(1, 1, HIDDEN // 32, 32), layout=ttnn.ROW_MAJOR_LAYOUT)

    def switch_mode(self, mode):
        self.is_prefill_setup = mode == "prefill"
        self.is_decode_setup = mode == "decode"

    # prefill
    def prepare_prefill_inputs_host(self, tokens, user_id=0, page_table=None):
        tokens_host = ttnn.from_torch(tokens.reshape(1, -1).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
        user_id_host = ttnn.from_torch(torch.tensor([user_id], dtype=torch.int32), dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)
        page_table_host = ttnn.from_torch(page_table, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)
        return [tokens_host, user_id_host, page_table_host]

    def prepare_inputs_prefill(self, tokens, user_id=0, page_table=None):
        device_inputs = copy_host_to_device(self.prepare_prefill_inputs_host(tokens, user_id, page_table), mesh_device=self.device)
        x, _, tt_user_id, page_table_tt = self.transform_prefill_inputs_device(*device_inputs)
        return x, tt_user_id, page_table_tt, None

    def transform_prefill_inputs_device(self, tokens, user_id, page_table):
        x = ttnn.unsqueeze_to_4D(ttnn.embedding(tokens, self.embedding, layout=ttnn.TILE_LAYOUT))
        return x, None, user_id, page_table  # no rotary matrices in this stand-in

    def ttnn_prefill_forward(self, x, rot_mats=None, user_id=None, page_table=None, get_last_token=-1, kv_cache=None):
        seq_len = x.shape[-2]
        x = ttnn.add(x, ttnn.slice(self.pos_tile, [0, 0, 0, 0], [1, 1, seq_len, HIDDEN]))
        xqkv = ttnn.linear(ttnn.rms_norm(x, epsilon=1e-5, weight=self.norm), self.wqkv)
        q, k, v = ttnn.experimental.nlp_create_qkv_heads(xqkv, num_heads=HEADS, num_kv_heads=KV_HEADS, transpose_k_heads=False)
        k_cache, v_cache = kv_cache
        ttnn.experimental.paged_fill_cache(k_cache, k, page_table, batch_idx_tensor=user_id)
        ttnn.experimental.paged_fill_cache(v_cache, v, page_table, batch_idx_tensor=user_id)
        attn = ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True, scale=HEAD_DIM ** -0.5)
        h = ttnn.add(x, ttnn.linear(ttnn.experimental.nlp_concat_heads(attn), self.wo))
        return ttnn.linear(ttnn.rms_norm(h, epsilon=1e-5, weight=self.norm), self.lm_head)

    def process_output_prefill(self, tt_out, last_token_idx, tt_out_logits_saved=None):
        logits = ttnn.to_torch(tt_out).float()[0, 0, last_token_idx, :VOCAB]
        return int(torch.argmax(logits))

    # decode
    def prepare_decode_inputs_host(self, tokens, current_pos, page_table=None):
        tokens_host = ttnn.from_torch(tokens.reshape(1, USERS).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
        current_pos_host = ttnn.from_torch(current_pos.int(), dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)
        rot_idxs_host = ttnn.from_torch(current_pos.reshape(1, USERS).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
        page_table_host = ttnn.from_torch(page_table, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)
        return [tokens_host, current_pos_host, rot_idxs_host, page_table_host]

    def prepare_inputs_decode(self, tokens, current_pos, page_table=None):
        return copy_host_to_device(self.prepare_decode_inputs_host(tokens, current_pos, page_table), mesh_device=self.device)

    def ttnn_decode_forward(self, tokens, current_pos, rot_mat_idxs=None, page_table=None, kv_cache=None, tt_out_logits_saved=None):
        x = ttnn.unsqueeze_to_4D(ttnn.embedding(tokens, self.embedding, layout=ttnn.TILE_LAYOUT))
        pos = ttnn.reshape(ttnn.embedding(rot_mat_idxs, self.pos_table, layout=ttnn.TILE_LAYOUT), [1, 1, USERS, HIDDEN])
        x = ttnn.add(x, pos)
        xqkv = ttnn.linear(ttnn.rms_norm(x, epsilon=1e-5, weight=self.norm), self.wqkv)
        q, k, v = ttnn.experimental.nlp_create_qkv_heads_decode(xqkv, num_heads=HEADS, num_kv_heads=KV_HEADS)
        k_cache, v_cache = kv_cache
        ttnn.experimental.paged_update_cache(k_cache, k, update_idxs_tensor=current_pos, page_table=page_table)
        ttnn.experimental.paged_update_cache(v_cache, v, update_idxs_tensor=current_pos, page_table=page_table)
        attn = ttnn.transformer.paged_scaled_dot_product_attention_decode(
            q, k_cache, v_cache, page_table, cur_pos_tensor=current_pos, scale=HEAD_DIM ** -0.5)
        h = ttnn.add(x, ttnn.linear(ttnn.experimental.nlp_concat_heads_decode(attn, num_heads=HEADS), self.wo))
        return ttnn.linear(ttnn.rms_norm(h, epsilon=1e-5, weight=self.norm), self.lm_head)

    def process_output_decode(self, tt_out):
        logits = tt_out.cpu(blocking=False)
        read_event = ttnn.record_event(self.device, 0)
        return logits, read_event


class Generator:
    def __init__(self, model, model_args, mesh_device, tokenizer=None, formatter=None):
        self.model = model
        self.model_args = model_args
        self.mesh_device = mesh_device
        self.formatter = formatter
        self.trace_id_prefill = defaultdict(lambda: None)
        self.trace_inputs_prefill = defaultdict(lambda: None)
        self.trace_output_prefill = defaultdict(lambda: None)
        self.prev_page_table = None

    def prefill_forward_text(
        self,
        tokens: torch.Tensor,
        page_table=None,
        kv_cache=None,
        prompt_lens=None,
        enable_trace=True,
        sampling_params=SamplingParams(temperature=0.0, top_k=-1, top_p=1.0),  # noqa: B008 - as upstream
        empty_slots=None,
        tt_out_logits_all_users=None,
    ):
        assert sampling_params.temperature == 0, "Currently only supporting greedy decoding (temperature=0) on device"

        if self.model.is_prefill_setup is False:
            self.model.switch_mode("prefill")

        kv_cache = kv_cache[0]
        batch, batch_seq_len = tokens.shape
        output_toks = torch.zeros(batch, 1, 1)
        prompt_lens = prompt_lens if prompt_lens is not None else torch.tensor([batch_seq_len] * batch)
        if page_table is not None:
            assert isinstance(page_table, torch.Tensor), "page_table must be a torch.Tensor when passing into prefill_forward"

        if empty_slots is None:
            empty_slots = list(range(batch))

        for id, user_id in enumerate(empty_slots):
            seq_len = int(prompt_lens[id])
            last_token_idx = seq_len - 1

            prefill_seq_len = get_padded_prefill_len(seq_len)
            if prefill_seq_len not in self.model.tt_ccl.support_seqlens:
                enable_trace = False
            else:
                enable_trace = True
            prefill_ids = torch.cat(
                [tokens[id : id + 1, :seq_len], torch.zeros(1, prefill_seq_len - seq_len).long()], dim=-1
            )
            if page_table is not None:
                page_table_user = self._get_prefill_user_page_table(page_table, kv_cache, prefill_seq_len, user_id)
                # remove the first user from the page table
                page_table = page_table[1:, :]

            prefill_kwargs = {
                "tokens": prefill_ids,
                "page_table": page_table_user if page_table is not None else None,
                "kv_cache": kv_cache,
                "user_id": user_id,
                "last_token_idx": last_token_idx,
            }

            if enable_trace:
                tt_tok = self._easy_trace_prefill(**prefill_kwargs, prefill_seq_len=prefill_seq_len)
            else:
                tt_tok = self.prefill_forward_single_user_text(**prefill_kwargs)

            output_toks[id] = tt_tok

        return output_toks

    def prefill_forward_single_user_text(self, tokens, page_table, user_id, last_token_idx, kv_cache=None, tt_out_logits_saved=None):
        prefill_input, tt_user_id, page_table_tt, _ = self.model.prepare_inputs_prefill(
            tokens,
            user_id=user_id,
            page_table=page_table,
        )

        tt_toks = self.model.ttnn_prefill_forward(
            prefill_input,
            rot_mats=None,
            user_id=tt_user_id,
            page_table=page_table_tt,
            get_last_token=last_token_idx,  # (last_token_idx // 32) * 32,
            kv_cache=kv_cache,
        )

        tt_toks = self.model.process_output_prefill(
            tt_toks, last_token_idx=last_token_idx, tt_out_logits_saved=tt_out_logits_saved
        )

        return tt_toks

    def _easy_trace_prefill(self, tokens, last_token_idx, prefill_seq_len, page_table=None, kv_cache=None, user_id=0, tt_out_logits_saved=None):
        """
        Tracing is easy! Just call this method and we'll handle tracing for you.
        """
        if self.trace_id_prefill[prefill_seq_len] is None:
            trace_id, tt_out_trace, *device_inputs = self._capture_trace_prefill(
                tokens, last_token_idx, page_table=page_table, kv_cache=kv_cache, user_id=user_id
            )
            self.trace_id_prefill[prefill_seq_len] = trace_id
            self.trace_inputs_prefill[prefill_seq_len] = device_inputs
            self.trace_output_prefill[prefill_seq_len] = tt_out_trace

        tt_out_trace = self._prefill_forward_trace_text(
            self.trace_id_prefill[prefill_seq_len],
            self.trace_inputs_prefill[prefill_seq_len],
            self.trace_output_prefill[prefill_seq_len],
            tokens,
            user_id,
            page_table=page_table,
        )
        toks = self.model.process_output_prefill(
            tt_out_trace, last_token_idx=last_token_idx, tt_out_logits_saved=tt_out_logits_saved
        )
        return toks

    def _capture_trace_prefill(self, tokens, last_token_idx, user_id, page_table=None, kv_cache=None):
        """
        Captures a trace for the decode_forward method.
        """

        # Compile run
        # self.prefill_forward_single_user_text(tokens, page_table, user_id, last_token_idx, kv_cache)

        # Get inputs ready for trace run
        host_inputs = self.model.prepare_prefill_inputs_host(tokens, page_table=page_table)
        device_inputs = copy_host_to_device(host_inputs, mesh_device=self.mesh_device)
        transformed_inputs = self.model.transform_prefill_inputs_device(*device_inputs)

        tt_out_trace = self.model.ttnn_prefill_forward(
            *transformed_inputs, kv_cache=kv_cache, get_last_token=last_token_idx
        )
        ttnn.synchronize_device(self.mesh_device)

        device_inputs = copy_host_to_device(host_inputs, mesh_device=self.mesh_device)
        transformed_inputs = self.model.transform_prefill_inputs_device(*device_inputs)
        tt_out_trace = self.model.ttnn_prefill_forward(
            *transformed_inputs, kv_cache=kv_cache, get_last_token=last_token_idx
        )

        device_inputs = copy_host_to_device(host_inputs, mesh_device=self.mesh_device)
        transformed_inputs = self.model.transform_prefill_inputs_device(*device_inputs)

        device_inputs = copy_host_to_device(host_inputs, mesh_device=self.mesh_device)
        trace_id = ttnn.begin_trace_capture(self.mesh_device, cq_id=0)
        transformed_inputs = self.model.transform_prefill_inputs_device(*device_inputs)
        tt_out_trace = self.model.ttnn_prefill_forward(
            *transformed_inputs, kv_cache=kv_cache, get_last_token=last_token_idx
        )
        ttnn.end_trace_capture(self.mesh_device, trace_id, cq_id=0)
        ttnn.synchronize_device(self.mesh_device)
        return trace_id, tt_out_trace, *device_inputs

    def _prefill_forward_trace_text(self, trace_id, device_inputs, tt_out_trace, tokens, user_id, page_table=None):
        """
        Executes the trace for the decode_forward method but does not read back outputs.
        """
        host_inputs = self.model.prepare_prefill_inputs_host(tokens, user_id, page_table)

        device_inputs = copy_host_to_device(
            host_tensors=host_inputs,
            device_tensors=device_inputs,
        )

        ttnn.execute_trace(self.mesh_device, trace_id, cq_id=0, blocking=False)

        return tt_out_trace

    def decode_forward_text(
        self,
        tokens,
        start_pos,
        page_table=None,
        kv_cache=None,
        enable_trace=True,
        read_from_device=True,
        sampling_params: SamplingParams = None,  # Should be None if not greedy decoding / sampling on device.
        reset_inputs=False,
        tt_out_logits_saved=None,
    ):
        assert (
            sampling_params is None or sampling_params.temperature == 0
        ), "Currently only supporting greedy decoding (temperature=0) on device"

        if self.prev_page_table is None:
            self.prev_page_table = page_table
        if torch.any(self.prev_page_table != page_table).item():
            reset_inputs = True
            self.prev_page_table = page_table

        if self.model.is_decode_setup is False:
            self.model.switch_mode("decode")
            reset_inputs = True
        kv_cache = kv_cache[0]
        decode_kwargs = {
            "current_pos": start_pos,
            "tokens": tokens,
            "page_table": page_table,
            "kv_cache": kv_cache,
        }
        if tt_out_logits_saved is not None:
            decode_kwargs["tt_out_logits_saved"] = tt_out_logits_saved

        if enable_trace:
            tt_tok = self._easy_trace_text(**decode_kwargs, reset_inputs=reset_inputs)
        else:
            tt_tok = self._decode_forward_no_trace_text(**decode_kwargs)

        if read_from_device:
            tt_tok, read_event = self.read_decode_output(tt_tok, tokens.shape[0])
            return tt_tok, read_event

        return tt_tok

    def _decode_forward_no_trace_text(self, tokens, current_pos, page_table=None, kv_cache=None, tt_out_logits_saved=None):
        """
        Performs text decode step.
        Returns tt_logits on device
        """
        tt_tokens, tt_current_pos, rot_mat_idxs, tt_page_table = self.model.prepare_inputs_decode(
            tokens, current_pos, page_table
        )
        tt_tok = self.model.ttnn_decode_forward(
            tt_tokens,
            tt_current_pos,
            rot_mat_idxs=rot_mat_idxs,
            page_table=tt_page_table,
            kv_cache=kv_cache,
            tt_out_logits_saved=tt_out_logits_saved,
        )
        return tt_tok

    def _capture_trace_text(self, tokens, current_pos, page_table=None, kv_cache=None):
        """
        Captures a trace for the decode_forward method.
        """

        # Compile run
        self._decode_forward_no_trace_text(tokens, current_pos, page_table=page_table, kv_cache=kv_cache)

        # Get inputs ready for trace run
        host_inputs = self.model.prepare_decode_inputs_host(tokens, current_pos, page_table=page_table)
        device_inputs = copy_host_to_device(host_inputs, mesh_device=self.mesh_device)

        trace_id = ttnn.begin_trace_capture(self.mesh_device, cq_id=0)
        tt_out_tok = self.model.ttnn_decode_forward(*device_inputs, kv_cache=kv_cache)

        ttnn.end_trace_capture(self.mesh_device, trace_id, cq_id=0)
        return trace_id, tt_out_tok, *device_inputs

    def _decode_forward_trace_text(self, trace_id, device_inputs, tt_out_trace, tokens, current_pos, page_table=None):
        """
        Executes the trace for the decode_forward method but does not read back outputs.
        """
        ttnn.execute_trace(self.mesh_device, trace_id, cq_id=0, blocking=False)

        return tt_out_trace

    def _easy_trace_text(self, tokens, current_pos, page_table=None, kv_cache=None, reset_inputs=False):
        """
        Tracing is easy! Just call this method and we'll handle tracing for you.
        """
        tokens = tokens.view(-1, 1)

        if not hasattr(self, "trace_id_text"):
            trace_id, tt_out_tok, *device_inputs = self._capture_trace_text(
                tokens, current_pos, page_table=page_table, kv_cache=kv_cache
            )
            self.trace_id_text = trace_id
            self.trace_inputs_text = device_inputs
            self.trace_output_text = tt_out_tok
        if reset_inputs:
            host_inputs = self.model.prepare_decode_inputs_host(tokens, current_pos, page_table)
            copy_host_to_device(
                host_tensors=host_inputs,
                device_tensors=self.trace_inputs_text,
            )

        trace_tok_rm = self._decode_forward_trace_text(
            self.trace_id_text,
            self.trace_inputs_text,
            self.trace_output_text,
            tokens,
            current_pos,
            page_table=page_table,
        )
        return trace_tok_rm

    def read_decode_output(self, tt_logits, unpadded_batch, is_tokens=True):
        logits, read_event = self.model.process_output_decode(tt_logits)
        return logits, read_event

    def _get_prefill_user_page_table(self, page_table, kv_cache, prefill_len, user_id):
        # Ensure page_table is not padded with extra blocks for paged_fill_cache to work properly
        block_size = get_block_size(kv_cache)
        num_blocks = num_blocks_in_seq(prefill_len, block_size)
        page_table = page_table[:, :num_blocks]
        if page_table.shape[1] < num_blocks:
            # If page table is too short, pad it with -1
            padding = torch.ones(page_table.shape[0], num_blocks - page_table.shape[1], dtype=torch.int32) * -1
            page_table = torch.cat([page_table, padding], dim=1)
        # Pad page table to all users
        padded_page_table = torch.ones(USERS, page_table.shape[1], dtype=torch.int32) * -1
        padded_page_table[user_id, :] = page_table[0, :]
        return padded_page_table

    def release(self):
        for trace_id in self.trace_id_prefill.values():
            ttnn.release_trace(self.mesh_device, trace_id)
        if hasattr(self, "trace_id_text"):
            ttnn.release_trace(self.mesh_device, self.trace_id_text)


def generate(device, support_seqlens, enable_trace, prompts, page_table):
    model = TtTransformer(device, support_seqlens)
    blocks = USERS * BLOCKS_PER_USER
    kv_cache = [[ttnn.from_torch(torch.zeros(blocks, KV_HEADS, BLOCK, HEAD_DIM), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
                 for _ in range(2)]]
    generator = Generator(model, None, device)
    users = len(PROMPT_LENS)
    first = generator.prefill_forward_text(prompts[:users], page_table=page_table, kv_cache=kv_cache,
                                           prompt_lens=torch.tensor(PROMPT_LENS), empty_slots=list(range(users)))
    tokens = torch.zeros(USERS, dtype=torch.long)
    tokens[:users] = first.reshape(-1).long()
    current_pos = torch.zeros(USERS, dtype=torch.long)
    current_pos[:users] = torch.tensor(PROMPT_LENS)
    out = [tokens.clone()]
    for _ in range(STEPS):
        logits, read_event = generator.decode_forward_text(tokens, current_pos, page_table=page_table, kv_cache=kv_cache,
                                                          enable_trace=enable_trace, reset_inputs=True)
        ttnn.event_synchronize(read_event)
        tokens = torch.argmax(ttnn.to_torch(logits).float()[0, 0, :USERS, :VOCAB], dim=-1)
        current_pos = current_pos + 1
        out.append(tokens.clone())
    generator.release()
    return torch.stack(out)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=400000)
    torch.manual_seed(0)
    prompts = torch.randint(0, VOCAB, (USERS, 64))
    page_table = torch.randperm(USERS * BLOCKS_PER_USER).reshape(USERS, BLOCKS_PER_USER).int()
    eager = generate(device, [], False, prompts, page_table)
    traced = generate(device, [32, 64], True, prompts, page_table)
    ttnn.close_device(device)
    same = torch.equal(eager, traced)
    print(f"traced tokens == eager tokens ({len(PROMPT_LENS)} users, {STEPS} decode steps): {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
