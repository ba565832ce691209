"""The Llama generation class vLLM drives on Tenstorrent hardware: per request, an eager paged
prefill (paged_fill_cache per user, through that user's page-table rows), then decode steps with
`decode_forward(..., enable_trace=True, read_from_device=False)` and `read_decode_output` after
each; the decode trace is captured by `_easy_trace` on the first decode call of the first
request and replayed for every later step and request, its inputs (tokens, rotary indices,
cache positions, page table) refreshed with copy_host_to_device_tensor; `__del__` releases it.

Upstream: myply/tt-metal models/demos/t3000/llama2_70b/tt/llama_generation.py@b20ac21c061c4614bf09b6fa7a35fb6b85096865
(TtLlamaModelForGeneration, a copy of tenstorrent/tt-metal's file of that era: capture_trace,
delete_trace, decode_forward_trace, read_decode_output, decode_forward, _easy_trace,
prefill_forward, prefill_forward_single_user (its non-chunked branch), _process_logits,
__del__, _get_prefill_user_page_table, get_padded_prefill_len, get_block_size, num_blocks_in_seq).
Changes:
  * TtLlamaModel_optimized (80 layers on a T3000 mesh) -> a one-layer stand-in with the calls the
    generator makes: prepare_device_inputs_decode (tokens, rotary indices, cache positions and
    page table put on the device, the embedding, its interleaved_to_sharded and the rotary
    lookup computed there), prepare_inputs (the host tensors for decode; the device inputs for
    prefill), tt_embd, rope_setup_decode.get_rot_mats, and __call__ (decode: paged_update_cache
    of K and V at the cache positions and paged SDPA decode; prefill: paged_fill_cache of the
    user's K and V and causal attention over the prompt); sizes: 8 users, hidden 64, 2 heads,
    vocabulary 128, blocks of 32;
  * the mesh (T3000) -> one device; ConcatMeshToTensor in _process_logits dropped; get_model_config
    -> the one WORD_EMBEDDING_OUTPUT_MEMCFG the generator reads; chunked prefill dropped;
  * the driver stands for vLLM's TT model runner: two requests of 8 prompts of different
    lengths, each with its own page table (the blocks vLLM gave it), 4 decode steps each, greedy sampling on the host; run once with enable_trace=False
    on its own KV cache (the eager reference) and once traced; tokens compared, exit 1 on
    mismatch; `del` of the generator releases the trace through __del__ as upstream.
"""

import math
import sys

import torch

import ttnn

USERS, HIDDEN, HEADS, HEAD_DIM, VOCAB = 8, 64, 2, 32, 128
BLOCK, BLOCKS_PER_USER = 32, 2
MAX_SEQ = BLOCK * BLOCKS_PER_USER
STEPS = 4


def user_major_sharded():
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 0))})
    spec = ttnn.ShardSpec(grid, [32, HIDDEN // 2], ttnn.ShardOrientation.ROW_MAJOR)
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.WIDTH_SHARDED, ttnn.BufferType.L1, spec)


class RopeSetupDecode:
    def __init__(self, device):
        angles = torch.arange(MAX_SEQ + STEPS + 1).unsqueeze(1) * (0.1 / (1 + torch.arange(HIDDEN)))
        self.table = ttnn.from_torch(torch.cos(angles), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)

    def get_rot_mats(self, rot_idxs_tt):
        return ttnn.embedding(rot_idxs_tt, self.table, layout=ttnn.TILE_LAYOUT)


class TtLlamaModel:
    """Stand-in: embedding, rotary scaling, one attention layer on a paged KV cache, LM head."""

    def __init__(self, device, model_config):
        torch.manual_seed(11)
        self.device = device
        self.model_config = model_config

        def put(t, layout=ttnn.TILE_LAYOUT):
            return ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=layout, device=device)

        self.embd_weight = put(torch.randn(VOCAB, HIDDEN), layout=ttnn.ROW_MAJOR_LAYOUT)
        self.wq = put(torch.randn(HIDDEN, HEADS * HEAD_DIM) / 8)
        self.wk = put(torch.randn(HIDDEN, HEAD_DIM) / 8)
        self.wv = put(torch.randn(HIDDEN, HEAD_DIM) / 8)
        self.wo = put(torch.randn(HEADS * HEAD_DIM, HIDDEN) / 8)
        self.lm_head = put(torch.randn(HIDDEN, VOCAB) / 8)
        self.rope_setup_decode = RopeSetupDecode(device)

    def tt_embd(self, tt_inp):
        return ttnn.embedding(tt_inp, self.embd_weight, layout=ttnn.TILE_LAYOUT)

    def _host_decode_inputs(self, tokens, start_pos, page_table):
        positions = torch.as_tensor(start_pos, dtype=torch.int32).reshape(USERS)
        tt_inp = ttnn.from_torch(tokens.reshape(1, USERS).int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
        rot_idxs = ttnn.from_torch(positions.reshape(1, USERS), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
        cache_idxs = ttnn.from_torch(positions, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)
        tt_page_table = ttnn.from_torch(page_table, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)
        return tt_inp, rot_idxs, cache_idxs, tt_page_table

    def prepare_inputs(self, tokens, start_pos, valid_seq_len=None, mode="decode", page_table=None):
        if mode == "decode":
            tt_inp, rot_idxs, cache_idxs, tt_page_table = self._host_decode_inputs(tokens, start_pos, page_table)
            return tt_inp, start_pos, None, rot_idxs, cache_idxs, tt_page_table
        tt_inp = ttnn.from_torch(tokens.int(), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=self.device)
        tt_inp_emb = self.tt_embd(tt_inp)
        rot_idxs = ttnn.from_torch(torch.arange(tokens.shape[1]).reshape(1, -1).int(), dtype=ttnn.uint32,
                                   layout=ttnn.ROW_MAJOR_LAYOUT, device=self.device)
        rot_mat = self.rope_setup_decode.get_rot_mats(rot_idxs)
        tt_page_table = ttnn.from_torch(page_table, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT, device=self.device)
        return tt_inp_emb, start_pos, rot_mat, None, None, tt_page_table, None

    def prepare_device_inputs_decode(self, tokens, start_pos, mode="decode", page_table=None, return_tokens=False,
                                     return_rot_idxs=False):
        host = self._host_decode_inputs(tokens, start_pos, page_table)
        tt_inp, rot_idxs_tt, cache_idxs_tt, tt_page_table = (ttnn.to_device(t, self.device) for t in host)
        tt_inp_emb = self.tt_embd(tt_inp)
        tt_inp_emb = ttnn.interleaved_to_sharded(tt_inp_emb, self.model_config["WORD_EMBEDDING_OUTPUT_MEMCFG"])
        rot_mat = self.rope_setup_decode.get_rot_mats(rot_idxs_tt)
        outputs = [tt_inp_emb, start_pos, rot_mat, cache_idxs_tt, tt_page_table]
        if return_tokens:
            outputs.append(tt_inp)
        if return_rot_idxs:
            outputs.append(rot_idxs_tt)
        return tuple(outputs)

    def __call__(self, x, rot_mat, start_pos, user_id=0, last_token_idx=None, cache_idxs=None, page_table=None,
                 kv_cache=None, mode="decode"):
        k_cache, v_cache = kv_cache[0]
        x = ttnn.multiply(ttnn.sharded_to_interleaved(x) if mode == "decode" else x, rot_mat)
        if mode == "decode":
            h = ttnn.reshape(x, [1, 1, USERS, HIDDEN])
            q = ttnn.reshape(ttnn.linear(h, self.wq), [1, USERS, HEADS, HEAD_DIM])
            k = ttnn.reshape(ttnn.linear(h, self.wk), [1, USERS, 1, HEAD_DIM])
            v = ttnn.reshape(ttnn.linear(h, self.wv), [1, USERS, 1, HEAD_DIM])
            ttnn.experimental.paged_update_cache(k_cache, k, update_idxs_tensor=cache_idxs, page_table=page_table)
            ttnn.experimental.paged_update_cache(v_cache, v, update_idxs_tensor=cache_idxs, page_table=page_table)
            attn = ttnn.transformer.paged_scaled_dot_product_attention_decode(
                q, k_cache, v_cache, page_table, cur_pos_tensor=cache_idxs, scale=HEAD_DIM ** -0.5)
            h = ttnn.add(h, ttnn.linear(ttnn.reshape(attn, [1, 1, USERS, HEADS * HEAD_DIM]), self.wo))
            return ttnn.linear(h, self.lm_head)
        seq = x.shape[-2]
        h = ttnn.reshape(x, [1, 1, seq, HIDDEN])
        k = ttnn.linear(h, self.wk)
        v = ttnn.linear(h, self.wv)
        ttnn.experimental.paged_fill_cache(k_cache, k, page_table, batch_idx=user_id)
        ttnn.experimental.paged_fill_cache(v_cache, v, page_table, batch_idx=user_id)
        q = ttnn.reshape(ttnn.permute(ttnn.reshape(ttnn.linear(h, self.wq), [1, seq, HEADS, HEAD_DIM]), (0, 2, 1, 3)),
                         [1, HEADS, seq, HEAD_DIM])
        attn = ttnn.transformer.scaled_dot_product_attention(q, k, v, is_causal=True, scale=HEAD_DIM ** -0.5)
        attn = ttnn.reshape(ttnn.permute(attn, (0, 2, 1, 3)), [1, 1, seq, HEADS * HEAD_DIM])
        h = ttnn.add(h, ttnn.linear(attn, self.wo))
        return ttnn.linear(h, self.lm_head)


class TtLlamaModelForGeneration:
    def __init__(self, device):
        self.max_batch_size = USERS
        self.mesh_device = device
        self.model_config = {"WORD_EMBEDDING_OUTPUT_MEMCFG": user_major_sharded()}
        self.tt_model = TtLlamaModel(device, self.model_config)
        self.vocab_size = VOCAB

    def capture_trace(self, tokens: torch.Tensor, start_pos: int, page_table=None, kv_cache=None):
        # Get inputs on device
        (
            tt_inp_emb,
            start_pos,
            rot_mat,
            cache_idxs_tt,
            tt_page_table,
            tt_inp,
            rot_idxs_tt,
        ) = self.tt_model.prepare_device_inputs_decode(
            tokens,
            start_pos,
            mode="decode",
            page_table=page_table,
            return_tokens=True,
            return_rot_idxs=True,
        )

        # Compile model
        tt_logits = self.tt_model(
            tt_inp_emb,
            rot_mat,
            start_pos,
            cache_idxs=cache_idxs_tt,
            page_table=tt_page_table,
            kv_cache=kv_cache,
            mode="decode",
        )

        # Capture trace
        trace_id = ttnn.begin_trace_capture(self.mesh_device, cq_id=0)

        # Run TT model
        tt_inp_emb = self.tt_model.tt_embd(tt_inp)
        tt_inp_emb = ttnn.interleaved_to_sharded(tt_inp_emb, self.model_config["WORD_EMBEDDING_OUTPUT_MEMCFG"])
        rot_mat = self.tt_model.rope_setup_decode.get_rot_mats(rot_idxs_tt)
        tt_logits = self.tt_model(
            tt_inp_emb,
            rot_mat,
            start_pos,
            cache_idxs=cache_idxs_tt,
            page_table=tt_page_table,
            kv_cache=kv_cache,
            mode="decode",
        )

        ttnn.end_trace_capture(self.mesh_device, trace_id, cq_id=0)

        return trace_id, tt_inp, rot_idxs_tt, cache_idxs_tt, tt_logits, tt_page_table

    def delete_trace(self, trace_id):
        ttnn.release_trace(self.mesh_device, trace_id)

    def decode_forward_trace(
        self,
        tokens: torch.Tensor,
        start_pos: int,
        trace_id,
        tt_inp,
        rot_idxs_tt,
        cache_idxs_tt,
        tt_logits,
        page_table=None,
        tt_page_table=None,
        read_from_device=True,
    ):
        batch = tokens.shape[0]

        # Update preallocated tensors
        (
            updated_tt_inp,
            start_pos,
            _,
            updated_rot_idxs_tt,
            updated_cache_idxs_tt,
            updated_tt_page_table,
        ) = self.tt_model.prepare_inputs(tokens, start_pos, mode="decode", page_table=page_table)
        ttnn.copy_host_to_device_tensor(updated_tt_inp, tt_inp)
        ttnn.copy_host_to_device_tensor(updated_rot_idxs_tt, rot_idxs_tt)
        ttnn.copy_host_to_device_tensor(updated_cache_idxs_tt, cache_idxs_tt)
        if page_table is not None:
            ttnn.copy_host_to_device_tensor(updated_tt_page_table, tt_page_table)

        # Run TT model
        ttnn.execute_trace(self.mesh_device, trace_id, cq_id=0, blocking=False)
        if read_from_device:
            logits = self.read_decode_output(tt_logits, unpadded_batch=batch)
            return logits
        else:
            return tt_logits

    def read_decode_output(self, tt_logits, unpadded_batch=None):
        updated_tt_logits = ttnn.from_device(tt_logits)

        logits = self._process_logits(updated_tt_logits)

        logits = logits.permute(2, 1, 0, 3).squeeze().unsqueeze(1)  # [batch, 1, vocab_size]
        if unpadded_batch is not None:
            logits = logits[:unpadded_batch]  # Remove padded users

        return logits

    def decode_forward(
        self,
        tokens: torch.Tensor,
        start_pos: int,
        page_table=None,
        kv_cache=None,
        enable_trace=False,
        read_from_device=True,
    ):
        batch = tokens.shape[0]

        if not enable_trace:
            # Get inputs on device
            tt_inp_emb, start_pos, rot_mat, cache_idxs_tt, tt_page_table = self.tt_model.prepare_device_inputs_decode(
                tokens, start_pos, mode="decode", page_table=page_table
            )

            tt_logits = self.tt_model(
                tt_inp_emb,
                rot_mat,
                start_pos,
                cache_idxs=cache_idxs_tt,
                page_table=tt_page_table,
                kv_cache=kv_cache,
                mode="decode",
            )
        else:
            tt_logits = self._easy_trace(tokens, start_pos, page_table, kv_cache)

        if read_from_device:
            return self.read_decode_output(tt_logits, unpadded_batch=batch)
        else:
            return tt_logits

    def _easy_trace(self, tokens, start_pos, page_table=None, kv_cache=None):
        """
        Tracing is easy! Just call this method and we'll handle tracing for you.
        """
        if not hasattr(self, "trace_id"):
            trace_id, tt_inp, rot_idxs_tt, cache_idxs_tt, tt_logits, tt_page_table = self.capture_trace(
                tokens, start_pos, page_table=page_table, kv_cache=kv_cache
            )
            self.trace_id = trace_id
            self.trace_inputs = {
                "tt_inp": tt_inp,
                "rot_idxs_tt": rot_idxs_tt,
                "cache_idxs_tt": cache_idxs_tt,
                "tt_page_table": tt_page_table,
            }
            self.trace_output = tt_logits

        trace_logits_rm = self.decode_forward_trace(
            tokens,
            start_pos,
            self.trace_id,
            self.trace_inputs["tt_inp"],
            self.trace_inputs["rot_idxs_tt"],
            self.trace_inputs["cache_idxs_tt"],
            self.trace_output,
            page_table=page_table,
            tt_page_table=self.trace_inputs["tt_page_table"],
            read_from_device=False,
        )

        return trace_logits_rm

    def prefill_forward_single_user(
        self, tokens: torch.Tensor, start_pos: int, user_id: int, last_token_idx=None, page_table=None, kv_cache=None
    ):
        batch, seq_len = tokens.shape
        assert batch == 1
        assert start_pos == 0, "start_pos must be 0 for prefill_forward_single_user"

        (
            tt_inp_emb,
            start_pos,
            rot_mat,
            _rot_idxs_tt,
            _cache_idxs_tt,
            tt_page_table,
            _chunk_page_table,
        ) = self.tt_model.prepare_inputs(
            tokens, start_pos=start_pos, valid_seq_len=seq_len, mode="prefill", page_table=page_table
        )

        tt_logits = self.tt_model(
            tt_inp_emb,
            rot_mat,
            start_pos,
            user_id=user_id,
            last_token_idx=last_token_idx,
            page_table=tt_page_table,
            kv_cache=kv_cache,
            mode="prefill",
        )

        del tt_inp_emb
        del rot_mat
        del tt_page_table

        logits = self._process_logits(tt_logits)
        logits = logits.squeeze(1)
        del tt_logits
        return logits

    def prefill_forward(self, tokens: torch.Tensor, start_pos: int, page_table=None, kv_cache=None, prompt_lens=None):
        batch, batch_seq_len = tokens.shape
        output_logits = torch.zeros(batch, 1, self.vocab_size)
        prompt_lens = prompt_lens if prompt_lens is not None else torch.tensor([batch_seq_len] * batch)

        for user_id in range(batch):
            seq_len = int(prompt_lens[user_id])
            last_token_idx = seq_len - 1

            prefill_seq_len = get_padded_prefill_len(seq_len)
            prefill_ids = torch.cat(
                [tokens[user_id : user_id + 1, :seq_len], torch.zeros(1, prefill_seq_len - seq_len).long()], dim=-1
            )
            if page_table is not None:
                page_table_user = _get_prefill_user_page_table(page_table, kv_cache, seq_len)

            logits = self.prefill_forward_single_user(
                prefill_ids,
                start_pos,
                user_id,
                last_token_idx=last_token_idx,
                page_table=page_table_user if page_table is not None else None,
                kv_cache=kv_cache,
            )

            # Since we give unpadded_seq_len, only the tile containing the last token is returned
            output_logits[user_id] = logits[:, last_token_idx % 32 : last_token_idx % 32 + 1, :]

        return output_logits

    def _process_logits(self, tt_logits):
        logits = ttnn.to_torch(tt_logits)
        return logits[..., : self.vocab_size].float()

    ## Destructor (used to delete ttnn trace if exists)

    def __del__(self):
        if hasattr(self, "trace_id"):
            self.delete_trace(self.trace_id)


def _get_prefill_user_page_table(page_table, kv_cache, prefill_len):
    # Ensure page_table is not padded with extra blocks for paged_fill_cache to work properly
    block_size = get_block_size(kv_cache)
    num_blocks = num_blocks_in_seq(prefill_len, block_size)
    return page_table[:, :num_blocks]


def get_padded_prefill_len(seq_len):
    if seq_len <= 32:
        return 32
    return 2 ** math.ceil(math.log2(seq_len))


def get_block_size(kv_cache):
    return kv_cache[0][0].shape[2]


def num_blocks_in_seq(seq_len, block_size):
    return math.ceil(seq_len / block_size)


def serve(device, enable_trace, requests):
    """vLLM's TT model runner, reduced: prefill each request, then greedy decode steps."""
    generator = TtLlamaModelForGeneration(device)
    kv_cache = [[ttnn.from_torch(torch.zeros(USERS * BLOCKS_PER_USER, 1, BLOCK, HEAD_DIM), dtype=ttnn.bfloat16,
                                 layout=ttnn.TILE_LAYOUT, device=device) for _ in range(2)]]
    outputs = []
    for prompts, prompt_lens, page_table in requests:
        logits = generator.prefill_forward(prompts, 0, page_table=page_table, kv_cache=kv_cache, prompt_lens=prompt_lens)
        tokens = torch.argmax(logits[:, 0, :], dim=-1)
        positions = prompt_lens.clone()
        generated = [tokens]
        for _ in range(STEPS):
            tt_out = generator.decode_forward(tokens.reshape(USERS, 1), positions, page_table=page_table,
                                              kv_cache=kv_cache, enable_trace=enable_trace, read_from_device=False)
            logits = generator.read_decode_output(tt_out, unpadded_batch=USERS)
            tokens = torch.argmax(logits[:, 0, :], dim=-1)
            positions = positions + 1
            generated.append(tokens)
        outputs.append(torch.stack(generated))
    del generator
    return outputs


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=400000)
    torch.manual_seed(0)
    requests = []
    for _ in range(2):
        prompt_lens = torch.randint(3, MAX_SEQ - STEPS - 1, (USERS,))
        prompts = torch.randint(0, VOCAB, (USERS, int(prompt_lens.max())))
        page_table = torch.randperm(USERS * BLOCKS_PER_USER).reshape(USERS, BLOCKS_PER_USER).int()
        requests.append((prompts, prompt_lens, page_table))
    eager = serve(device, False, requests)
    traced = serve(device, True, requests)
    ttnn.close_device(device)
    same = all(torch.equal(a, b) for a, b in zip(eager, traced))
    print(f"traced tokens == eager tokens ({len(requests)} requests, {USERS} users, {STEPS} steps): {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
