"""Where the ops tt-metal's models call put their outputs and which temporaries they allocate,
on the real allocator and the emulator. One SEQ line of JSON: per op, its output's
buffer_address() (null for an in-place op's unchanged input), shape, the live buffers it added
(address, max_size_per_bank) and the buffer_allocate/buffer_deallocate nodes ttnn.graph saw.
Each op runs once before it is measured (a first call can allocate program buffers).
RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import gc
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn

dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
DRAM, L1 = ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG


def mk(shape, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16, mem=DRAM, np_dtype=np.float32):
    return ttnn.Tensor(np.zeros(shape, dtype=np_dtype), dtype, dev, layout, mem)


def sharded(cores, shard, layout=ttnn.TensorMemoryLayout.HEIGHT_SHARDED):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(cores - 1, 0))})
    return ttnn.MemoryConfig(layout, ttnn.BufferType.L1, ttnn.ShardSpec(grid, shard, ttnn.ShardOrientation.ROW_MAJOR))


a = mk((1, 1, 64, 64))
rm = mk((1, 1, 64, 64), ttnn.ROW_MAJOR_LAYOUT)
rm_odd = mk((1, 1, 20, 40), ttnn.ROW_MAJOR_LAYOUT)
ids = mk((1, 32), ttnn.ROW_MAJOR_LAYOUT, ttnn.uint32, np_dtype=np.uint32)
table = mk((64, 64), ttnn.ROW_MAJOR_LAYOUT)
pos = mk((32,), ttnn.ROW_MAJOR_LAYOUT, ttnn.int32, np_dtype=np.int32)
hs = ttnn.to_memory_config(a, sharded(2, [32, 64]))
heads = mk((1, 4, 32, 32))
OPS = [
    ("tilize", lambda: ttnn.tilize(rm)),
    ("untilize", lambda: ttnn.untilize(a)),
    ("tilize_with_val_padding", lambda: ttnn.tilize_with_val_padding(rm_odd, [1, 1, 32, 64], 0.0)),
    ("pad", lambda: ttnn.pad(a, [(0, 0), (0, 0), (0, 0), (0, 32)], 0.0)),
    ("typecast", lambda: ttnn.typecast(a, ttnn.float32)),
    ("embedding", lambda: ttnn.embedding(ids, table, layout=ttnn.TILE_LAYOUT)),
    ("rms_norm", lambda: ttnn.rms_norm(a, epsilon=1e-5)),
    ("concat", lambda: ttnn.concat([a, a], dim=3)),
    ("slice", lambda: ttnn.slice(a, [0, 0, 0, 0], [1, 1, 32, 64])),
    ("permute", lambda: ttnn.permute(a, (0, 1, 3, 2))),
    ("repeat", lambda: ttnn.repeat(a, [1, 2, 1, 1])),
    ("interleaved_to_sharded", lambda: ttnn.interleaved_to_sharded(a, sharded(2, [32, 64]))),
    ("sharded_to_interleaved", lambda: ttnn.sharded_to_interleaved(hs, L1)),
    ("reshard", lambda: ttnn.reshard(hs, sharded(1, [64, 64]))),
    ("nlp_concat_heads", lambda: ttnn.experimental.nlp_concat_heads(heads)),
    ("plus_one", lambda: ttnn.plus_one(pos)),
]


def snap():
    return {(b.address, b.max_size_per_bank) for b in ttnn._ttnn.reports.get_buffers([dev])}


out = {}
for name, call in OPS:
    r = call()  # first call (program compile)
    del r
    gc.collect()
    before = snap()
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    if hasattr(ttnn.graph, "disable_python_io_recording"):
        ttnn.graph.disable_python_io_recording()
    try:
        r = call()
        error = None
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        r, error = None, str(e).splitlines()[0][:120]
    nodes = [[n["node_type"], n["params"].get("address"), n["params"].get("max_size_per_bank")]
             for n in ttnn.graph.end_graph_capture() if n["node_type"] in ("buffer_allocate", "buffer_deallocate")]
    address = r.buffer_address() if r is not None and hasattr(r, "buffer_address") else None
    out[name] = {"address": address, "shape": list(r.shape) if r is not None else None,
                 "new_buffers": sorted(snap() - before), "graph": nodes, "error": error}
    del r
    gc.collect()
print("SEQ " + json.dumps(out))
ttnn.close_device(dev)
