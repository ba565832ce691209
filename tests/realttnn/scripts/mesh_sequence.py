"""A 1x2 mesh on the real allocator (two mocked p150s, tests/realttnn/p150x2_cluster_desc.yaml)
and the emulator: mesh geometry and ids, lockstep allocation addresses (interleaved and
sharded), per-chip device tensors of a mesh tensor, and the allocator's view. One SEQ line.
RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
out = {"num_devices": mesh.get_num_devices(), "shape": list(mesh.shape), "mesh_id": mesh.id()}


def mk(shape, mem=ttnn.DRAM_MEMORY_CONFIG):
    return ttnn.Tensor(np.zeros(shape, dtype=np.float32), ttnn.bfloat16, mesh, ttnn.TILE_LAYOUT, mem)


grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 0))})
sharded = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                            ttnn.ShardSpec(grid, [32, 64], ttnn.ShardOrientation.ROW_MAJOR))
a = mk((64, 64))
b = mk((32, 32), ttnn.L1_MEMORY_CONFIG)
x = mk((128, 64))
s = ttnn.to_memory_config(x, sharded)
out["seq"] = [[n, t.buffer_address(), t.buffer_num_pages()] for n, t in (("a", a), ("b", b), ("x", x), ("s", s))]
chips = ttnn.get_device_tensors(s)
out["device_tensors"] = [[t.buffer_address(), list(t.shape)] for t in chips]
out["buffers"] = sorted([bf.device_id, bf.address, bf.max_size_per_bank, str(bf.buffer_type).split(".")[-1]]
                        for bf in ttnn._ttnn.reports.get_buffers([mesh]))
print("SEQ " + json.dumps(out))
ttnn.close_mesh_device(mesh)
