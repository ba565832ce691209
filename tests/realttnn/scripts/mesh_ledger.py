"""A 1x2 mesh (two mocked p150s: run with p150x2_cluster_desc.yaml) and its 1x1 submeshes:
prints one SEQ line of JSON with each device's id as the tensors on it and `get_buffers` report
it, then, recorded, lets the session show which buffers the ledger saw live until when (a
tensor on a submesh, a trace buffer on it, a sharded tensor on the parent mesh).
RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn


def mk(dev, mem=ttnn.DRAM_MEMORY_CONFIG, rows=64):
    return ttnn.Tensor(np.zeros((rows, 64), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT, mem)


def ids(devices):
    return sorted({int(i.device_id) for i in ttnn._ttnn.reports.get_buffers(devices)})


mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), trace_region_size=100000)
out = {"mesh": [mesh.id(), [int(d) for d in mesh.shape], list(mesh.get_device_ids())]}
parent = mk(mesh)
out["parent_tensor_device"] = parent.device().id()
out["parent_get_buffers"] = ids([mesh])
subs = mesh.create_submeshes(ttnn.MeshShape(1, 1))
on_sub = mk(subs[1])
out["sub"] = [subs[1].id(), [int(d) for d in subs[1].shape], list(subs[1].get_device_ids())]
out["sub_tensor_device"] = on_sub.device().id()
out["sub_get_buffers"] = ids([subs[1]])
out["parent_get_buffers_after_sub"] = ids([mesh])
grid = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(3, 0))})
sharded = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                            ttnn.ShardSpec(grid, [32, 64], ttnn.ShardOrientation.ROW_MAJOR))
shards = ttnn.to_memory_config(mk(mesh, rows=128), sharded)
trace_id = ttnn.begin_trace_capture(subs[1], cq_id=0)  # snapshots here: nothing inside
ttnn.end_trace_capture(subs[1], trace_id, cq_id=0)
ttnn.release_trace(subs[1], trace_id)
print("SEQ " + json.dumps(out), flush=True)
ttnn.deallocate(on_sub)  # MARK:free_sub
ttnn.deallocate(shards)
ttnn.deallocate(parent)
ttnn.close_mesh_device(mesh)
