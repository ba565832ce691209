"""Sharded placements on the real allocator and the emulator: height/width/block sharding,
both orientations, TILE and ROW_MAJOR pages, uneven shards, DRAM sharding, and the
conversions between interleaved and sharded. Prints one SEQ line of JSON:
[label, buffer_address(), buffer_num_pages(), buffer_page_size(), memory layout] per step,
`pages`: [page index, core x, core y, page address] of every page of every sharded step,
the core of each L1 bank (`l1_cores`: page k of a 130-page interleaved L1 tensor), and the
allocator's live buffers at the end (address, max_size_per_bank, type, layout).
RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn
L1, DRAM = ttnn.BufferType.L1, ttnn.BufferType.DRAM
TML, SO = ttnn.TensorMemoryLayout, ttnn.ShardOrientation
dev = ttnn.open_device(device_id=0, trace_region_size=1 << 20)
seq, pages = [], {}
def mk(shape, layout=ttnn.TILE_LAYOUT, mem=ttnn.DRAM_MEMORY_CONFIG):
    return ttnn.Tensor(np.zeros(shape, dtype=np.float32), ttnn.bfloat16, dev, layout, mem)
def mc(layout, btype, start, end, shard, orientation=SO.ROW_MAJOR):
    grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(*start), ttnn.CoreCoord(*end))})
    return ttnn.MemoryConfig(layout, btype, ttnn.ShardSpec(grid, shard, orientation))
def note(label, t):
    layout = str(t.memory_config().memory_layout).split(".")[-1].split(":")[-1]
    seq.append([label, t.buffer_address(), t.buffer_num_pages(), t.buffer_page_size(), layout])
    if t.is_sharded() and t.memory_config().buffer_type == L1:
        pages[label] = sorted([p.page_index, p.core_x, p.core_y, p.page_address]
                              for p in ttnn._ttnn.reports.get_buffer_pages([dev]) if p.address == t.buffer_address())
    return t
x = note("x DRAM 128x64", mk((128, 64)))
h = note("h height L1 4 cores [32,64]", ttnn.to_memory_config(x, mc(TML.HEIGHT_SHARDED, L1, (0, 0), (3, 0), [32, 64])))
w = note("w width L1 4 cores [64,64]", ttnn.to_memory_config(mk((64, 256)), mc(TML.WIDTH_SHARDED, L1, (0, 0), (3, 0), [64, 64])))
b = note("b block L1 2x2 [64,64]", ttnn.to_memory_config(mk((128, 128)), mc(TML.BLOCK_SHARDED, L1, (0, 0), (1, 1), [64, 64])))
bc = note("bc block L1 2x2 COL_MAJOR", ttnn.to_memory_config(mk((128, 128)), mc(TML.BLOCK_SHARDED, L1, (0, 0), (1, 1), [64, 64], SO.COL_MAJOR)))
cfg = ttnn.create_sharded_memory_config((1, 1, 256, 64), ttnn.CoreGrid(y=2, x=4), ttnn.ShardStrategy.HEIGHT)
c = note("c create_sharded_memory_config 4x2 HEIGHT", ttnn.to_memory_config(mk((1, 1, 256, 64)), cfg))
rm = note("rm height ROW_MAJOR", ttnn.to_memory_config(mk((64, 64), ttnn.ROW_MAJOR_LAYOUT), mc(TML.HEIGHT_SHARDED, L1, (0, 0), (1, 0), [32, 64])))
rmw = note("rmw width ROW_MAJOR", ttnn.to_memory_config(mk((64, 128), ttnn.ROW_MAJOR_LAYOUT), mc(TML.WIDTH_SHARDED, L1, (0, 0), (1, 0), [64, 64])))
d = note("d width DRAM 8 banks [32,64]", ttnn.to_memory_config(mk((32, 512)), mc(TML.WIDTH_SHARDED, DRAM, (0, 0), (7, 0), [32, 64])))
un = note("un uneven height [96,64] in [64,64]", ttnn.to_memory_config(mk((96, 64)), mc(TML.HEIGHT_SHARDED, L1, (0, 0), (3, 0), [64, 64])))
i2s = note("i2s interleaved_to_sharded", ttnn.interleaved_to_sharded(x, mc(TML.HEIGHT_SHARDED, L1, (0, 0), (1, 0), [64, 64])))
rs = note("rs reshard 4 -> 2 cores", ttnn.reshard(h, mc(TML.HEIGHT_SHARDED, L1, (0, 0), (1, 0), [64, 64])))
s2i = note("s2i sharded_to_interleaved L1", ttnn.sharded_to_interleaved(h, ttnn.L1_MEMORY_CONFIG))
back = note("back to DRAM interleaved", ttnn.to_memory_config(h, ttnn.DRAM_MEMORY_CONFIG))
del w, b
reuse = note("reuse: width L1 after del w, b", ttnn.to_memory_config(mk((64, 256)), mc(TML.WIDTH_SHARDED, L1, (0, 0), (3, 0), [64, 64])))
il = mk((32 * 130, 32), mem=ttnn.L1_MEMORY_CONFIG)
l1_cores = {p.page_index: [p.core_x, p.core_y] for p in ttnn._ttnn.reports.get_buffer_pages([dev]) if p.address == il.buffer_address()}
buffers = sorted([b_.address, b_.max_size_per_bank, str(b_.buffer_type).split(".")[-1], str(b_.buffer_layout).split(".")[-1]]
                 for b_ in ttnn._ttnn.reports.get_buffers([dev]))
print("SEQ " + json.dumps({"seq": seq, "pages": pages, "l1_cores": [l1_cores[i] for i in range(130)], "buffers": buffers}))
ttnn.close_device(dev)
